"""``llm``: a language model playing through the text interface, over any OpenAI-compatible chat endpoint.

Configuration comes from the constructor (or the CLI below) or the environment: ``SABOTEUR_LLM_BASE_URL`` (e.g.
``http://127.0.0.1:8000/v1``; requests go to ``BASE_URL/chat/completions``), ``SABOTEUR_LLM_MODEL`` and
``SABOTEUR_LLM_API_KEY`` (sent as ``Authorization: Bearer KEY`` when set). Standard library only (urllib).

Each decision sends the seat's text description (``saboteur_env.text.render``) and asks for one legal move name;
``saboteur_env.text.choose`` parses the reply and re-asks with the parser's error, up to ``policy.max_tries``
replies, then plays the policy's fallback. Per request: ``timeout`` seconds and ``retries`` re-sends after a
connection error, HTTP 429 or 5xx (with ``backoff`` seconds doubling); per decision: at most ``move_timeout``
seconds in all. ``stats`` counts failures by kind (unknown, ambiguous, illegal, malformed, timeout, transport) and
fallbacks, apart from the game result, and ``usage`` sums the token counts the endpoint reports (both over the
agent's life); ``transcript`` holds every request and reply of the current game (``log_record()`` gives all three as
JSON for the logs).

    python -m agents.llm --game duel --opponent greedy --base-url http://127.0.0.1:8000/v1 --model my-model
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig
from saboteur_env.common.seeding import draw_secret, seat_seeds
from saboteur_env.text import (
    FailureStats,
    RequestError,
    RetryPolicy,
    choose,
    describe,
    game_format,
    move_name,
    render,
)

ENV_BASE_URL, ENV_MODEL, ENV_API_KEY = "SABOTEUR_LLM_BASE_URL", "SABOTEUR_LLM_MODEL", "SABOTEUR_LLM_API_KEY"

SYSTEM_PROMPT = (
    "You are playing {title}. Each message describes the game from your seat: the board, your hand, the players "
    "and the recent public events, then lists your legal moves. Answer with exactly one legal move name, copied "
    'from the list (or the JSON object {{"move": "<name>"}}), and nothing else. {moves}'
)
TITLES = {"base": "the card game Saboteur", "sab2": "Saboteur 2", "duel": "Saboteur: The Duel"}
_BASE_MOVES = ("'place CARD at (R,C)' places a path card (cells as the board labels them; 'place CARD rot180 at (R,C)'"
               ": turned), 'break TOOL seat+K' / 'repair TOOL seat+K' play a tool card on the K-th player clockwise "
               "from you (seat+0 is you), 'rockfall at (R,C)' removes a path card, 'map goal G' peeks at a goal, "
               "'discard CARD' passes.")  # fmt: skip
MOVES = {
    "base": "Moves: " + _BASE_MOVES,
    "sab2": "Moves: " + _BASE_MOVES + " Also: theft, hands_off / swap_hand / inspect / swap_hats / trap / "
    "free_at_last seat+K, 'stop' (end a pass), 'free TOOL' (option C), 'steal seat+K'.",
    "duel": "Moves: 'place CARD at (R,C)' (add 'bribe' to bribe its troll; 'rot180' after CARD: turned), 'break "
    "TOOL' (the opponent's), 'repair TOOL', 'rockfall at (R,C)', 'map goal G', 'key at (R,C)', 'bribe at (R,C)', "
    "'discard A+B repair TOOL', 'discard CARD', 'pass'.",
}

# With GameConfig(claims=True) (docs/claims.md): free public statements before a move, listed with the moves.
CLAIM_MOVES = (
    " Claims are free public statements made before your move (they may be false, so may others'): 'claim goal G "
    "gold' / 'claim goal G stone', 'accuse seat+K' (is a saboteur), 'clear seat+K' (is not), 'suspect seat+K'; "
    "right after a map or an inspection you may claim or answer 'done claiming'.",
    " Claims are free public statements made before your move (they may be false, so may your opponent's): "
    "'claim goal G gold' / 'claim goal G stone'; right after a map you may claim or answer 'done claiming'.",
)


class LLMAgent:
    """Plays by asking a chat-completions endpoint for a move name at each decision."""

    name = "llm"

    def __init__(self, config: GameConfig, *, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0, move_timeout: float | None = None,
                 retries: int = 2, backoff: float = 1.0, policy: RetryPolicy | None = None,
                 temperature: float = 0.0, max_tokens: int = 64, system_prompt: str | None = None) -> None:  # fmt: skip
        self.config = config
        self.base_url = base_url or os.environ.get(ENV_BASE_URL, "")
        self.model = model or os.environ.get(ENV_MODEL, "")
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_API_KEY, "")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url={self.base_url!r} must be an http(s) URL (argument or ${ENV_BASE_URL}), "
                             "e.g. http://127.0.0.1:8000/v1")  # fmt: skip
        if not self.model:
            raise ValueError(f"model is empty: pass model=... or set ${ENV_MODEL}")
        numbers = (("timeout", timeout, 0.0), ("backoff", backoff, 0.0), ("temperature", temperature, 0.0))
        for key, value, low in numbers:
            bad = isinstance(value, bool) or not isinstance(value, (int, float)) or value < low
            if bad or (key == "timeout" and value == 0):
                raise ValueError(f"{key}={value!r} must be a number >= {low}{' and > 0' if key == 'timeout' else ''}")
        if move_timeout is not None and (not isinstance(move_timeout, (int, float)) or move_timeout <= 0):
            raise ValueError(f"move_timeout={move_timeout!r} must be a number > 0 or None")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise ValueError(f"retries={retries!r} must be an int in 0..10")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens={max_tokens!r} must be an int >= 1")
        self.timeout, self.move_timeout, self.retries, self.backoff = float(timeout), move_timeout, retries, backoff
        self.policy = policy or RetryPolicy()
        self.temperature, self.max_tokens = float(temperature), max_tokens
        game = game_format(config).game  # base, sab2 or duel (a variant uses its game's format)
        moves = MOVES[game] + (CLAIM_MOVES[game == "duel"] if config.claims else "")
        self.system_prompt = system_prompt or SYSTEM_PROMPT.format(title=TITLES[game], moves=moves)
        self.opener = urllib.request.build_opener()  # proxies from the environment, read now
        self.stats = FailureStats()
        self.usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self.transcript: list[dict[str, Any]] = []
        self.seat: int | None = None
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.seat = seat
        self.rng = np.random.default_rng(seed)
        self.transcript = []

    # ---- the endpoint -------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def complete(self, messages: list[dict[str, str]], timeout: float | None = None) -> str:
        """One chat completion: the reply text. Raises ``RequestError`` (kind ``timeout`` or ``transport``)."""
        body = json.dumps({"model": self.model, "messages": messages, "temperature": self.temperature,
                           "max_tokens": self.max_tokens}).encode()  # fmt: skip
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        limit = self.timeout if timeout is None else timeout
        error = RequestError("no request made")
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            self.usage["requests"] += 1
            try:
                with self.opener.open(request, timeout=limit) as response:
                    raw = response.read()
            except urllib.error.HTTPError as e:
                error = RequestError(f"HTTP {e.code} from {self.url}: {e.reason}")
                if e.code == 429 or e.code >= 500:
                    continue
                raise error from None
            except TimeoutError:
                raise RequestError(f"no reply from {self.url} within {limit:g} s", "timeout") from None
            except urllib.error.URLError as e:
                if isinstance(e.reason, TimeoutError):
                    raise RequestError(f"no reply from {self.url} within {limit:g} s", "timeout") from None
                error = RequestError(f"cannot reach {self.url}: {e.reason}")
                continue
            except (ConnectionError, OSError) as e:
                error = RequestError(f"connection to {self.url} failed: {e}")
                continue
            return self._content(raw)
        raise error

    def _content(self, raw: bytes) -> str:
        try:
            data = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise RequestError(f"the response from {self.url} is not a chat completion: {raw[:200]!r}") from None
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    self.usage[key] += value
        if not isinstance(content, str):
            raise RequestError(f"the reply content from {self.url} is {content!r}, not text")
        return content

    # ---- playing ------------------------------------------------------------------------------------------------
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        prompt = render(describe(self.config, observation, action_mask, seat=self.seat))
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": prompt}]
        entry: dict[str, Any] = {"decision": len(self.transcript), "prompt": prompt, "tries": []}
        start = time.monotonic()
        budget = self.move_timeout

        def ask(feedback: str | None) -> str:
            if feedback is not None:
                messages.extend([{"role": "assistant", "content": entry["tries"][-1]["reply"]},
                                 {"role": "user", "content": feedback}])  # fmt: skip
            limit = self.timeout
            if budget is not None:
                left = budget - (time.monotonic() - start)
                if left <= 0:
                    raise RequestError(f"the move time limit of {budget:g} s is used up", "timeout")
                limit = min(limit, left)
            return self.complete(messages, limit)

        action = choose(self.config, action_mask, ask, self.policy, self.stats, self.rng, entry["tries"].append)
        entry["action"], entry["move"] = action, move_name(self.config, action)
        entry["seconds"] = round(time.monotonic() - start, 3)
        self.transcript.append(entry)
        return action

    def log_record(self) -> dict[str, Any]:
        """Transcript, token usage and failure counts (JSON-serialisable) for a log."""
        return {"agent": self.name, "model": self.model, "usage": dict(self.usage), "failures": self.stats.as_dict(),
                "transcript": self.transcript}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Play one game of deal --seed: the llm agent in one seat, a scripted agent in the others; prints the stats."""
    from agents.registry import make_agent
    from saboteur_env import apply_action, encode_observation, legal_action_mask, new_game, returns

    ap = argparse.ArgumentParser(prog="python -m agents.llm", description=main.__doc__)
    ap.add_argument("--game", default="duel", choices=("base", "sab2", "duel"))
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--seat", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--max-tries", type=int, default=3)
    ap.add_argument("--fallback", default="first", choices=("first", "random", "raise"))
    ap.add_argument("--transcript", default=None, help="write the log record (JSON) to this file")
    args = ap.parse_args(argv)
    try:
        config = GameConfig(game=args.game, num_players=args.players, rounds=args.rounds)
        llm = LLMAgent(config, base_url=args.base_url, model=args.model, api_key=args.api_key, timeout=args.timeout,
                       policy=RetryPolicy(args.max_tries, args.fallback))  # fmt: skip
        if not 0 <= args.seat < config.num_players:
            raise ValueError(f"--seat {args.seat} out of range 0..{config.num_players - 1}")
    except ValueError as e:
        ap.error(str(e))
    agents = [llm if s == args.seat else make_agent(args.opponent, config) for s in range(config.num_players)]
    n = config.num_players
    # Sealed seeds (saboteur_env.common.seeding): a fresh secret per run, never the public --seed.
    for s, (agent, agent_seed) in enumerate(zip(agents, seat_seeds(n, ("llm", n, args.seed), draw_secret()),
                                                 strict=True)):  # fmt: skip
        agent.reset(s, n, agent_seed)
    state = new_game(config, np.random.default_rng(args.seed))
    while not state.game_over:
        seat = int(state.current)
        state = apply_action(state, agents[seat].act(encode_observation(state, seat), legal_action_mask(state)),
                             inplace=True)  # fmt: skip
    record = llm.log_record()
    print(json.dumps({"returns": returns(state).tolist(), "usage": record["usage"], "failures": record["failures"]}))
    if args.transcript:
        with open(args.transcript, "w") as f:
            json.dump(record, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
