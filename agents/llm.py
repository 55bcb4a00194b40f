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

Constrained answers (``constrain``): ``"json_schema"`` sends an OpenAI ``response_format`` JSON schema whose
``move`` field is an enum of the legal move names; ``"grammar"`` sends a llama.cpp GBNF grammar (the request's
``grammar`` field, read by llama.cpp's and llama-cpp-python's servers) whose sentences are the legal move names;
``"auto"`` (the default) tries the schema, then the grammar; ``"none"`` sends neither. A server that answers a
constrained request with HTTP 400 or 422 (or another error whose body names the field: llama-cpp-python answers
500) but the same request without it with a reply has rejected that constraint: the agent remembers it, counts it
(``constraint["rejected"]``) and asks the rest of its life without it. ``prompt``:
``"full"`` (``render``) or ``"compact"`` (``render(..., compact=True)`` and a short system prompt: for models with a
small context window). ``make_agent("llm:KEY=VALUE,...", config)`` sets any option of :data:`OPTIONS`.

    python -m agents.llm --game duel --opponent greedy --base-url http://127.0.0.1:8000/v1 --model my-model
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
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
    legal_moves,
    move_name,
    render,
)

ENV_BASE_URL, ENV_MODEL, ENV_API_KEY = "SABOTEUR_LLM_BASE_URL", "SABOTEUR_LLM_MODEL", "SABOTEUR_LLM_API_KEY"

SYSTEM_PROMPT = (
    "You are playing {title}. Each message describes the game from your seat: the board, your hand, the players "
    "and the recent public events, then lists your legal moves. Answer with exactly one legal move name, copied "
    'from the list (or the JSON object {{"move": "<name>"}}), and nothing else. {moves}'
)
# The compact form's system prompt: the move list explains itself (grouped, with an example).
COMPACT_PROMPT = "You are playing {title}. Answer with exactly one legal move from the list, and nothing else."
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

PROMPTS = ("full", "compact")
CONSTRAINTS = ("auto", "json_schema", "grammar", "none")
_LADDER = {"auto": ("json_schema", "grammar"), "json_schema": ("json_schema",), "grammar": ("grammar",), "none": ()}
# What servers answer a request field they do not support: 400 (OpenAI), 422 (FastAPI's validation); some say so
# with another status, naming the field in the body (llama-cpp-python: HTTP 500 naming response_format).
REJECTED = (400, 422)
FIELDS = {"json_schema": ("response_format", "json_schema"), "grammar": ("grammar",), "none": ()}


def is_llm_name(name: str) -> bool:
    """Whether an agent name is a language model (``llm``, ``llm:KEY=VALUE,...``)."""
    return name == "llm" or name.startswith("llm:")


def move_schema(legal: list[str]) -> dict[str, Any]:
    """The JSON schema of a reply ``{"move": NAME}`` with NAME one of ``legal``."""
    return {"type": "object", "properties": {"move": {"type": "string", "enum": list(legal)}}, "required": ["move"],
            "additionalProperties": False}  # fmt: skip


def move_grammar(legal: list[str]) -> str:
    """A llama.cpp GBNF grammar whose sentences are exactly the names in ``legal``."""
    if not legal:
        raise ValueError("move_grammar() needs at least one legal move")
    quoted = []
    for name in legal:
        if not name.isprintable():
            raise ValueError(f"move name {name!r} has a character a grammar literal cannot hold")
        quoted.append('"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "root ::= " + " | ".join(quoted) + "\n"


class EndpointError(RequestError):
    """An HTTP error that is not re-sent: a 4xx other than 429, or one that may refuse a constraint (``_send``);
    ``status`` keeps the code."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message, "transport")
        self.status = status


@dataclass(frozen=True)
class Option:
    """One setting of ``llm:KEY=VALUE,...``: its type, and its valid range or choices."""

    kind: type
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    above: bool = False  # the value must exceed ``low`` (a time limit), not merely reach it

    def parse(self, key: str, text: str) -> Any:
        if self.kind is str:
            if self.choices and text not in self.choices:
                raise ValueError(f"{key}={text!r} is not valid; valid: {', '.join(self.choices)}")
            if not text:
                raise ValueError(f"{key} is empty")
            return text
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"{key}={text!r} is not {'a whole number' if self.kind is int else 'a number'}; valid: "
                             f"{self.range()}") from None  # fmt: skip
        check_range(key, value, self)
        return value

    def range(self) -> str:
        if self.above:
            return f"> {self.low:g} and <= {self.high:g}"
        return f"{self.low:g}..{self.high:g}"


# Every option of LLMAgent that ``llm:KEY=VALUE,...`` (the registry, tournaments, benchmarks) and the CLI may set.
# The API key is not one of them: an agent's name goes into logs and tables (it comes from $SABOTEUR_LLM_API_KEY).
OPTIONS: dict[str, Option] = {
    "prompt": Option(str, choices=PROMPTS),
    "constrain": Option(str, choices=CONSTRAINTS),
    "max_tokens": Option(int, 1, 32768),
    "move_timeout": Option(float, 0, 86400, above=True),
    "timeout": Option(float, 0, 86400, above=True),
    "retries": Option(int, 0, 10),
    "temperature": Option(float, 0, 2),
    "max_tries": Option(int, 1, 20),
    "fallback": Option(str, choices=("first", "random", "raise")),
    "model": Option(str),
    "base_url": Option(str),
}


def check_range(key: str, value: object, option: Option | None = None) -> None:
    """``ValueError`` naming ``key``, ``value`` and the valid range unless ``value`` is a number in it."""
    opt = option or OPTIONS[key]
    ok_type = (int,) if opt.kind is int else (int, float)
    bad = isinstance(value, bool) or not isinstance(value, ok_type)
    assert opt.low is not None and opt.high is not None
    if not bad:
        v = float(value)  # type: ignore[arg-type]
        bad = not (v <= opt.high and (v > opt.low if opt.above else v >= opt.low))
    if bad:
        raise ValueError(f"{key}={value!r} is out of range; valid: {opt.range()}")


def parse_options(param: str) -> dict[str, Any]:
    """``KEY=VALUE,...`` (the part after ``llm:``) as LLMAgent keyword arguments; ``ValueError`` names the bad part."""
    out: dict[str, Any] = {}
    for part in param.split(","):
        key, eq, text = part.partition("=")
        key = key.strip()
        if not eq or key not in OPTIONS:
            raise ValueError(f"llm option {part!r} is not KEY=VALUE with KEY one of {', '.join(OPTIONS)}")
        if key in out:
            raise ValueError(f"llm option {key!r} is given twice")
        out[key] = OPTIONS[key].parse(key, text.strip())
    return out


def from_options(config: GameConfig, options: dict[str, Any]) -> LLMAgent:
    """An LLMAgent from :func:`parse_options` output (``max_tries`` / ``fallback`` make its ``RetryPolicy``)."""
    kw = dict(options)
    policy = RetryPolicy(kw.pop("max_tries", 3), kw.pop("fallback", "first"))
    return LLMAgent(config, policy=policy, **kw)


class LLMAgent:
    """Plays by asking a chat-completions endpoint for a move name at each decision."""

    name = "llm"

    def __init__(self, config: GameConfig, *, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0, move_timeout: float | None = None,
                 retries: int = 2, backoff: float = 1.0, policy: RetryPolicy | None = None,
                 temperature: float = 0.0, max_tokens: int = 64, system_prompt: str | None = None,
                 prompt: str = "full", constrain: str = "auto") -> None:  # fmt: skip
        self.config = config
        self.base_url = base_url or os.environ.get(ENV_BASE_URL, "")
        self.model = model or os.environ.get(ENV_MODEL, "")
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_API_KEY, "")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url={self.base_url!r} must be an http(s) URL (argument or ${ENV_BASE_URL}), "
                             "e.g. http://127.0.0.1:8000/v1")  # fmt: skip
        if not self.model:
            raise ValueError(f"model is empty: pass model=... or set ${ENV_MODEL}")
        check_range("timeout", timeout)
        check_range("temperature", temperature)
        check_range("retries", retries)
        check_range("max_tokens", max_tokens)
        if move_timeout is not None:
            check_range("move_timeout", move_timeout)
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not 0 <= backoff <= 600:
            raise ValueError(f"backoff={backoff!r} is out of range; valid: 0..600")
        if prompt not in PROMPTS:
            raise ValueError(f"prompt={prompt!r} is not valid; valid: {', '.join(PROMPTS)}")
        if constrain not in CONSTRAINTS:
            raise ValueError(f"constrain={constrain!r} is not valid; valid: {', '.join(CONSTRAINTS)}")
        self.timeout, self.move_timeout, self.retries, self.backoff = float(timeout), move_timeout, retries, backoff
        self.policy = policy or RetryPolicy()
        self.temperature, self.max_tokens = float(temperature), max_tokens
        self.prompt, self.constrain = prompt, constrain
        game = game_format(config).game  # base, sab2 or duel (a variant uses its game's format)
        moves = MOVES[game] + (CLAIM_MOVES[game == "duel"] if config.claims else "")
        default = COMPACT_PROMPT.format(title=TITLES[game]) if prompt == "compact" else SYSTEM_PROMPT.format(
            title=TITLES[game], moves=moves)  # fmt: skip
        self.system_prompt = system_prompt or default
        self.opener = urllib.request.build_opener()  # proxies from the environment, read now
        self.stats = FailureStats()
        # Sums over the agent's life, and the longest prompt (what a context window must hold).
        self.usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                      "max_prompt_tokens": 0}  # fmt: skip
        # Requests sent per constraint ("none": unconstrained), and constraints the endpoint rejected (then dropped).
        self.constraint: dict[str, Any] = {"mode": constrain, "sent": {}, "rejected": {}}
        self.transcript: list[dict[str, Any]] = []
        self.seat: int | None = None
        self.rng = np.random.default_rng()
        # Under the claims rule the claims are among the moves it is offered (and the claims it heard are in its
        # text): it talks by itself, so tournaments and the bluffing benchmark seat it as claims+native:llm.
        self.talks = bool(config.claims)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.seat = seat
        self.rng = np.random.default_rng(seed)
        self.transcript = []

    # ---- the endpoint -------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def constraints(self) -> tuple[str, ...]:
        """The constraints still to try, best first (those the endpoint rejected are gone)."""
        return tuple(m for m in _LADDER[self.constrain] if m not in self.constraint["rejected"])

    def body(self, messages: list[dict[str, str]], legal: list[str] | None = None, mode: str = "none") -> bytes:
        """The JSON request: ``mode`` ``json_schema`` / ``grammar`` constrains the reply to ``legal``."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                "max_tokens": self.max_tokens}  # fmt: skip
        if mode == "json_schema" and legal:
            schema = {"name": "move", "strict": True, "schema": move_schema(legal)}
            body["response_format"] = {"type": "json_schema", "json_schema": schema}
        elif mode == "grammar" and legal:
            body["grammar"] = move_grammar(legal)
        return json.dumps(body).encode()

    def complete(self, messages: list[dict[str, str]], timeout: float | None = None,
                 legal: list[str] | None = None, sent: list[str] | None = None) -> str:  # fmt: skip
        """One chat completion: the reply text, constrained to ``legal`` where the endpoint allows (the constraint
        used is appended to ``sent``). Raises ``RequestError`` (kind ``timeout`` or ``transport``)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        modes = (*self.constraints(), "none") if legal else ("none",)
        refused: list[tuple[str, EndpointError]] = []
        for mode in modes:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RequestError(f"no reply from {self.url} within {limit:g} s", "timeout")
            try:
                reply = self._send(self.body(messages, legal, mode), left, FIELDS[mode])
            except EndpointError as e:
                if mode == "none":
                    raise
                refused.append((mode, e))  # maybe the constraint: ask again without it
                continue
            # The same question got a reply without the refused constraints: they were what the server rejected.
            for m, err in refused:
                self.constraint["rejected"][m] = str(err)[:300]
            self.constraint["sent"][mode] = self.constraint["sent"].get(mode, 0) + 1
            if sent is not None:
                sent.append(mode)
            return reply
        raise AssertionError("unreachable: the unconstrained request returns or raises")

    def _send(self, body: bytes, limit: float, fields: tuple[str, ...] = ()) -> str:
        """POST ``body``; re-send after a connection error, 429 or 5xx, except an error that may refuse one of
        ``fields`` (a status of :data:`REJECTED`, or a body naming the field): ``EndpointError`` at once."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        error = RequestError("no request made")
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            self.usage["requests"] += 1
            try:
                with self.opener.open(request, timeout=limit) as response:
                    raw = response.read(MAX_BODY + 1)
            except urllib.error.HTTPError as e:
                detail = _detail(e)
                if fields and (e.code in REJECTED or any(f in detail for f in fields)):
                    raise EndpointError(f"HTTP {e.code} from {self.url}: {e.reason}{detail}", e.code) from None
                if e.code == 429 or e.code >= 500:
                    error = RequestError(f"HTTP {e.code} from {self.url}: {e.reason}{detail}")
                    continue
                raise EndpointError(f"HTTP {e.code} from {self.url}: {e.reason}{detail}", e.code) from None
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
            if len(raw) > MAX_BODY:
                raise RequestError(f"the response from {self.url} is over {MAX_BODY} bytes")
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
                    if key == "prompt_tokens":
                        self.usage["max_prompt_tokens"] = max(self.usage["max_prompt_tokens"], value)
        if not isinstance(content, str):
            raise RequestError(f"the reply content from {self.url} is {content!r}, not text")
        return content

    # ---- playing ------------------------------------------------------------------------------------------------
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        d = describe(self.config, observation, action_mask, seat=self.seat)
        prompt = render(d, compact=self.prompt == "compact")
        legal = legal_moves(self.config, action_mask) if self.constrain != "none" else None
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": prompt}]
        entry: dict[str, Any] = {"decision": len(self.transcript), "prompt": prompt, "tries": []}
        start = time.monotonic()
        budget = self.move_timeout
        sent: list[str] = []

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
            sent.clear()
            return self.complete(messages, limit, legal, sent)

        def log(record: dict) -> None:
            if "try" in record:  # the constraint this reply was asked under (none when no reply came)
                record["constraint"] = sent[-1] if sent else None
            entry["tries"].append(record)

        action = choose(self.config, action_mask, ask, self.policy, self.stats, self.rng, log)
        entry["action"], entry["move"] = action, move_name(self.config, action)
        entry["seconds"] = round(time.monotonic() - start, 3)
        self.transcript.append(entry)
        return action

    def log_record(self) -> dict[str, Any]:
        """Transcript, token usage, constraints and failure counts (JSON-serialisable) for a log."""
        return {"agent": self.name, "model": self.model, "prompt": self.prompt, "usage": dict(self.usage),
                "constraint": json.loads(json.dumps(self.constraint)), "failures": self.stats.as_dict(),
                "transcript": self.transcript}  # fmt: skip


MAX_BODY = 1 << 20  # a chat completion naming one move is far smaller: a larger body is refused, not parsed


def _detail(e: urllib.error.HTTPError) -> str:
    """A short, printable excerpt of an error response's body (servers say there what they rejected)."""
    try:
        text = e.read(600).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return f" ({text})" if text else ""


def play_games(config: GameConfig, llm: LLMAgent, opponent: str, seeds: range, seat: int | None = None,
               on_game: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Play deal ``seed`` for each seed, ``llm`` in one seat (``seat``, or ``seed mod N`` so that it rotates like a
    tournament's inserted agent) and agent ``opponent`` in the others; per game: seed, seat, returns, the llm's
    decisions, fallbacks and transcript. Agent seeds are sealed (a fresh secret per call, never the public seed)."""
    from agents.registry import make_agent
    from saboteur_env import apply_action, encode_observation, legal_action_mask, new_game, returns

    n, secret, games = config.num_players, draw_secret(), []
    for seed in seeds:
        mine = seed % n if seat is None else seat
        agents = [llm if s == mine else make_agent(opponent, config) for s in range(n)]
        for s, (agent, agent_seed) in enumerate(zip(agents, seat_seeds(n, ("llm", n, seed), secret), strict=True)):
            agent.reset(s, n, agent_seed)
        before = (llm.stats.decisions, llm.stats.fallbacks)
        state = new_game(config, np.random.default_rng(seed))
        while not state.game_over:
            s = int(state.current)
            mask = legal_action_mask(state)
            action = agents[s].act(encode_observation(state, s), mask.astype(np.int8))
            if not mask[action]:  # the agent's promise: never an illegal action, whatever the endpoint says
                raise AssertionError(f"seat {s} played illegal action {action}")
            state = apply_action(state, action, inplace=True)
        game = {"seed": seed, "seat": mine, "returns": returns(state).tolist(),
                "decisions": llm.stats.decisions - before[0], "fallbacks": llm.stats.fallbacks - before[1],
                "transcript": llm.transcript}  # fmt: skip
        games.append(game)
        if on_game:
            on_game(game)
    return games


def _option(key: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return OPTIONS[key].parse(key, text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = key  # argparse names the type in its messages
    return convert


def _count(key: str, low: int, high: int) -> Callable[[str], int]:
    def convert(text: str) -> int:
        if not (text.strip().lstrip("-").isdigit() and low <= int(text) <= high):
            raise argparse.ArgumentTypeError(f"{key}={text!r} is out of range; valid: {low}..{high}")
        return int(text)

    convert.__name__ = key
    return convert


def main(argv: list[str] | None = None) -> int:
    """Play --games deals from --seed: the llm agent in one seat, agent --opponent in the others; prints the counts
    (decisions, valid moves, fallbacks, failures by kind, constraints, tokens) as JSON."""
    ap = argparse.ArgumentParser(prog="python -m agents.llm", description=main.__doc__)
    ap.add_argument("--game", default="duel", choices=("base", "sab2", "duel"))
    ap.add_argument("--players", type=_count("players", 2, 12), default=None, help="default: the game's")
    ap.add_argument("--seat", type=_count("seat", 0, 11), default=None, help="default: seed mod players (rotates)")
    ap.add_argument("--seed", type=_count("seed", 0, 2**31 - 1), default=0)
    ap.add_argument("--games", type=_count("games", 1, 100_000), default=1)
    ap.add_argument("--rounds", type=_count("rounds", 1, 3), default=1, help="rounds per game (1..3)")
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--base-url", type=_option("base_url"), default=None)
    ap.add_argument("--model", type=_option("model"), default=None)
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--timeout", type=_option("timeout"), default=60.0, help="seconds per request")
    ap.add_argument("--move-timeout", type=_option("move_timeout"), default=None, help="seconds per decision")
    ap.add_argument("--max-tokens", type=_option("max_tokens"), default=64, help="reply tokens per request")
    ap.add_argument("--temperature", type=_option("temperature"), default=0.0)
    ap.add_argument("--max-tries", type=_option("max_tries"), default=3)
    ap.add_argument("--fallback", default="first", choices=("first", "random", "raise"))
    ap.add_argument("--prompt", default="full", choices=PROMPTS)
    ap.add_argument("--constrain", default="auto", choices=CONSTRAINTS)
    ap.add_argument("--transcript", default=None, help="write the games and the log record (JSON) to this file")
    args = ap.parse_args(argv)
    try:
        config = GameConfig(game=args.game, num_players=args.players, rounds=args.rounds)
        llm = LLMAgent(config, base_url=args.base_url, model=args.model, api_key=args.api_key, timeout=args.timeout,
                       move_timeout=args.move_timeout, max_tokens=args.max_tokens, temperature=args.temperature,
                       policy=RetryPolicy(args.max_tries, args.fallback), prompt=args.prompt,
                       constrain=args.constrain)  # fmt: skip
        if args.seat is not None and not args.seat < config.num_players:
            raise ValueError(f"--seat {args.seat} is out of range; valid: 0..{config.num_players - 1}")
        from agents.registry import make_agent

        make_agent(args.opponent, config)  # an unknown name fails here, before any request
    except ValueError as e:
        ap.error(str(e))
    games = play_games(config, llm, args.opponent, range(args.seed, args.seed + args.games), args.seat)
    record = llm.log_record()
    stats = llm.stats
    print(json.dumps({"game": args.game, "players": config.num_players, "rounds": args.rounds, "games": len(games),
                      "prompt": args.prompt, "constrain": args.constrain, "decisions": stats.decisions,
                      "valid": stats.decisions - stats.fallbacks, "first_try": stats.first_try,
                      "results": [{k: g[k] for k in ("seed", "seat", "returns")} for g in games],
                      "usage": record["usage"],
                      "constraint": record["constraint"], "failures": record["failures"]}))  # fmt: skip
    if args.transcript:
        with open(args.transcript, "w") as f:
            json.dump({**{k: v for k, v in record.items() if k != "transcript"}, "games": games}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
