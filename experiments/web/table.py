"""A table: one game with a person in one seat and agents in the others, and what the page may see of it.

:meth:`Table.payload` is everything sent to the browser. It is built from the person's view
(``saboteur_env.api.player_view``), the public card tables, the person's own legal moves and public round results
(``variant.public_round_result``) only, never from the state itself, so nothing hidden can reach the page
(``tests/test_web.py`` resamples the hidden state and requires the same payload).

Every change goes through :meth:`Table.play` or :meth:`Table.advance` under the table's lock: a move is checked
against the legal moves and the table's version before anything changes, so a bad, stale or concurrent request gets
a :class:`TableError` and leaves the game as it was.

The agents think within a budget: one request lets them move for ``think_seconds`` (an IS-MCTS move stops searching
after ``think_seconds`` too), then the rest of their moves wait for the next ``advance`` (the payload says
``thinking``); a request's cancel flag (the client left) or the store's ``stopping`` flag (the server shuts down)
ends the thinking at once. Browser-supplied agent names are registered agents, ``ismcts:N`` and the shipped
``learned`` policy only; model files (``ppo:PATH``, ``learned:PATH``) and language models (``llm``,
``llm:KEY=VALUE,...``: each of their moves is a request to an endpoint) sit only when the server's command line named
them (``TableStore.model_bots``), so a request never makes the server open a path or call an endpoint. A table with
llm seats writes their transcripts (every prompt and reply, failures, token counts) to ``TableStore.transcripts``
when its game is over and, for a game still in play, when the server stops (never mid-game: the prompts hold the
bots' private views), one JSON file per table, named by the table's id.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.llm import is_llm_name
from experiments.tournament.rounds import agent_seeds, draw_secret
from experiments.web.scene import board_scene, card_svg, round_end_view, to_svg
from experiments.web.words import (
    card_info,
    event_lines,
    hand_kinds,
    map_cells,
    moves,
    new_events,
    seat_name,
    view_events,
)
from saboteur_env import (
    GameConfig,
    apply_action,
    encode_observation,
    final_ranking,
    legal_action_mask,
    new_game,
    player_view,
    returns,
    variants,
)

__all__ = ["BOTS", "Table", "TableError", "TableStore", "bot_names", "ismcts_sims", "make_bot", "round_lines"]

BOTS = {"base": "heuristic", "sab2": "heuristic", "duel": "greedy"}
MAX_LOG = 400
MAX_STEPS = 64  # moves of one change the page animates (a change has at most a round of bot moves)
THINK_SECONDS = 2.0  # the agents' thinking time per request (and the cap of one IS-MCTS move)
MAX_THINKING = 4  # requests whose agents think at once; more are answered at once with the moves deferred


class TableError(ValueError):
    """A request the table refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


ISMCTS_SIMS = 40  # simulations per decision of "ismcts" at a table (about 0.2-0.9 s a move on one core)
MAX_SIMS = 5000


def _short(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: error messages quote what was sent, never all of it."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bot_names(game: str) -> tuple[str, ...]:
    """The agents a person may play against in ``game`` (besides ``ismcts:N``, IS-MCTS with N simulations per
    decision, and the model files the server's command line named). Agents the registry declares oracles (they
    read the hidden state, env.state()) are never seated against a person."""
    from agents import agent_names

    names = agent_names(game, kind="scripted", oracles=False)
    from agents.learned import shipped_configs  # "learned": the policy shipped for the game and player count

    learned = ("learned",) if any(g == game for g, _ in shipped_configs()) else ()
    return (*names, *(("ismcts",) if _has_ismcts() else ()), *learned)


def _has_ismcts() -> bool:
    import importlib.util

    return importlib.util.find_spec("agents.ismcts") is not None


def ismcts_sims(name: str) -> int | None:
    """The simulations of an ``ismcts`` / ``ismcts:N`` name (None for another name); a bad N is a TableError."""
    if name != "ismcts" and not name.startswith("ismcts:"):
        return None
    if not _has_ismcts():
        raise TableError(f"bots: {name[:40]!r}: IS-MCTS (agents/ismcts.py) is not in this checkout")
    if name == "ismcts":
        return ISMCTS_SIMS
    n = name[7:]
    if not (n.isascii() and n.isdigit() and len(n) <= 4 and 1 <= int(n) <= MAX_SIMS):
        raise TableError(f"bots: {name[:40]!r} needs ismcts:N with N an integer 1..{MAX_SIMS} (simulations per move)")
    return int(n)


def make_bot(name: str, config: GameConfig) -> Any:
    """An agent for a seat: ``agents.make_agent``'s names, and IS-MCTS (``ismcts``, ``ismcts:N``)."""
    kind, colon, path = name.partition(":")
    # Before importing torch for nothing ("learned" alone is the shipped policy); a device or FIFO is no model file.
    if kind in ("ppo", "learned") and colon and not Path(path).is_file():
        raise TableError(f"bots: {name[:200]!r} cannot be seated: no model file {path[:200]!r}")
    sims = ismcts_sims(name)
    if sims is not None:
        from agents.ismcts import ISMCTSAgent

        return ISMCTSAgent(config, simulations=sims)
    from agents import make_agent

    return make_agent(name, config)


@dataclass(frozen=True)
class Settings:
    game: str
    players: int
    seat: int
    bots: tuple[str, ...]  # one per seat (the person's entry unused)
    seed: int
    rounds: int


def check_settings(game: object = "base", players: object = None, seat: object = 0, bots: object = None,
                   seed: object = None, rounds: object = 3, model_bots: Collection[str] = ()) -> Settings:  # fmt: skip
    """Validated table settings; :class:`TableError` names the bad value and the valid range. ``model_bots``: the
    ``ppo:PATH`` / ``learned:PATH`` names that may sit (the server's command line's); any other such name is refused
    before any file is looked at, with the same message whether the path exists or not."""
    if not isinstance(game, str) or game not in variants.names() or game not in BOTS:
        raise TableError(f"game={_short(game)} is unknown; valid: {', '.join(BOTS)}")
    variant = variants.get(str(game))

    def integer(name: str, value: object, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise TableError(f"{name}={_short(value)} is out of range; valid: integers {lo}..{hi}")
        return value

    players = integer("players", variant.default_players if players is None else players, variant.min_players,
                      variant.max_players)  # fmt: skip
    seat = integer("seat", seat, 0, players - 1)
    rounds = integer("rounds", rounds, 1, 3)
    # A drawn seed is never shown; 63 bits so that a person cannot find their deal by trying every seed.
    seed = integer("seed", secrets.randbelow(2**63) if seed is None else seed, 0, 2**63 - 1)
    valid = bot_names(str(game))
    chosen = [BOTS[str(game)]] * players if bots is None else [bots] * players if isinstance(bots, str) else bots
    if not isinstance(chosen, list) or len(chosen) not in (1, players):
        raise TableError(f"bots={_short(bots)} must be one agent name or a list of {players}")
    if len(chosen) == 1:
        chosen = chosen * players
    for name in chosen:
        if not isinstance(name, str):
            raise TableError(f"bots: {_short(name)} must be an agent name (a string); valid: {', '.join(valid)}")
        if ismcts_sims(name) is not None or name in valid or name in model_bots:
            continue
        if name.startswith(("ppo:", "learned:")) or is_llm_name(name):  # refused unseen: no path opened, no request
            offered = "; this server offers " + ", ".join(sorted(model_bots)) if model_bots else ""
            raise TableError(f"bots: {_short(name)} is not offered: model files and language models sit only when "
                             f"the server's command line names them (--bots){offered}")  # fmt: skip
        raise TableError(f"bots: {_short(name)} is unknown for game={game!r}; valid: {', '.join(valid)}, ismcts:N")
    if "learned" in chosen:  # shipped for this game, but maybe not for this player count
        from agents.learned import shipped_path

        try:
            shipped_path(GameConfig(game=str(game), num_players=players))  # type: ignore[arg-type]
        except ValueError as err:
            raise TableError(f"bots: 'learned': {err}") from err
    return Settings(str(game), players, seat, tuple(str(n) for n in chosen), seed, rounds)


def round_lines(config: GameConfig, result: dict[str, Any], seat: int | None, names: list[str]) -> list[str]:
    """A round result (``variant.public_round_result`` for ``seat``; ``seat=None``: no "you") in words."""
    who = [seat_name(s, seat, names) for s in range(config.num_players)]
    if config.game == "duel":
        return [f"round {result['round'] + 1} over ({result['reason']})",
                "gained: " + ", ".join(f"{who[s]} {result['gained'][s]}" for s in range(2)),
                "totals: " + ", ".join(f"{who[s]} {result['nuggets'][s]}" for s in range(2))]  # fmt: skip
    if config.game == "sab2":
        from saboteur_env.sab2.cards import ROLE_NAMES

        lines = [f"round {result['round'] + 1} over: the gold was {'' if result['gold_reached'] else 'not '}reached"]
        lines.append("roles: " + ", ".join(f"{who[s]} {ROLE_NAMES[r]}" for s, r in enumerate(result["roles"])))
        lines.append("winners: " + (", ".join(who[s] for s, won in enumerate(result["winners"]) if won) or "nobody"))
        lines.append("gold now: " + ", ".join(f"{who[s]} {g}" for s, g in enumerate(result["gold"])))
        return lines
    from saboteur_env.base.cards import ROLE_NAMES as BASE_ROLES

    lines = [f"round {result['round'] + 1} over: the {result['winner']} won",
             "roles: " + ", ".join(f"{who[s]} {BASE_ROLES[r]}" for s, r in enumerate(result["roles"])),
             "gold cards won: " + ", ".join(f"{who[s]} {n}" for s, n in enumerate(result["gold_cards"]))]
    if "nuggets" in result:  # the omniscient replay
        lines.append("nuggets: " + ", ".join(f"{who[s]} {n}" for s, n in enumerate(result["nuggets"])))
    elif seat is not None:
        lines.append(f"your nuggets this round: {result['my_nuggets']}")
    return lines


class Table:
    """One game; ``play`` and ``advance`` are the only ways to change it. The agents' first moves (before the
    person's first turn) are not made here: :meth:`TableStore.create` makes them."""

    def __init__(self, settings: Settings, think_seconds: float = THINK_SECONDS,
                 stopping: threading.Event | None = None, thinkers: threading.Semaphore | None = None,
                 transcripts: Path | None = None) -> None:  # fmt: skip
        if not (isinstance(think_seconds, (int, float)) and 0 < think_seconds <= 600):
            raise ValueError(f"think_seconds={think_seconds!r} must be in (0, 600]")
        self.settings = settings
        self.think_seconds = float(think_seconds)
        self._stopping = stopping or threading.Event()
        self._thinkers = thinkers or threading.Semaphore(MAX_THINKING)
        self._cancel: threading.Event | None = None  # the running request's flag (set: its client left)
        self._move_deadline = math.inf
        self.id = secrets.token_urlsafe(9)  # letters, digits, - and _: also the name of its transcript file
        self.transcript: Path | None = None if transcripts is None else transcripts / f"table-{self.id}.json"
        s = settings
        self.config = GameConfig(game=s.game, num_players=s.players, rounds=s.rounds)
        self.seat = s.seat
        self.names = [("you" if q == s.seat else f"seat {q} ({s.bots[q]})") for q in range(s.players)]
        if s.game == "duel":
            self.names = [("you" if q == s.seat else f"{('blue', 'green')[q]} ({s.bots[q]})") for q in range(2)]
        self.state = new_game(self.config, np.random.default_rng(s.seed))
        self.agents = {}
        seeds = agent_seeds(draw_secret(), s.seed, s.players)  # sealed: not derived from the public deal seed
        for q in range(s.players):
            if q != s.seat:
                try:
                    agent = make_bot(s.bots[q], self.config)
                except TableError:
                    raise
                except (OSError, ImportError, ValueError, KeyError) as err:  # a model file missing or unreadable
                    raise TableError(f"bots: {s.bots[q][:200]!r} cannot be seated: {err}") from None
                agent.reset(q, s.players, seeds[q])
                if hasattr(agent, "stop"):  # IS-MCTS: its search asks after every iteration whether to end
                    agent.stop = self._should_stop
                self.agents[q] = agent
        self.lock = threading.Lock()
        self.version = 0
        self.actions: list[int] = []
        self.log: list[dict[str, Any]] = []
        self.round_ends: list[dict[str, Any]] = []
        self._events = view_events(player_view(self.state, self.seat))
        self._scene = board_scene(player_view(self.state, self.seat), self.seat, names=self.names)
        self.steps: list[dict[str, Any]] = []  # the moves of the last change, for the page to play one by one

    # ---- changes -------------------------------------------------------------------------------------------------
    def _apply(self, action: int) -> None:
        before = self.state
        after = apply_action(before, action)
        self.state = after
        self.actions.append(action)
        view = player_view(after, self.seat)
        events = view_events(view)
        fresh = new_events(self._events, events)
        self._events = events
        rnd = int(before.round)
        lines = event_lines(self.config, fresh, self.seat, self.names)
        for line in lines:
            self.log.append({"round": rnd, "text": line, "step": len(self.actions)})
        del self.log[:-MAX_LOG]
        now = board_scene(view, self.seat, names=self.names)
        shown = now
        ended = bool(after.round_just_ended or (after.game_over and not before.game_over))
        if ended:
            result = self.config.variant.public_round_result(after.round_results[-1], self.seat)
            if after.game_over:
                end = board_scene(view, self.seat, names=self.names, title=f"end of round {rnd + 1}")
            else:
                # The engine deals the next round in this step: rebuild the board as it ended from the view
                # before the move and the move's public events (exact: cards, rotations, goals, connectivity).
                last = round_end_view(player_view(before, self.seat), fresh, view)
                end = board_scene(last, self.seat, names=self.names, title=f"end of round {rnd + 1}")
            self.round_ends.append({"round": rnd, "svg": to_svg(end, 0.75, seats=False),
                                    "lines": round_lines(self.config, result, self.seat, self.names)})  # fmt: skip
            shown = end  # the step that ends a round shows the board as it ended, not the next deal
        self._step(int(before.current), shown, lines, fresh, ended)
        self._scene = now

    def _step(self, actor: int, scene: dict[str, Any], lines: list[str], fresh: list[Any], round_end: bool) -> None:
        """Record one move for the page's animation: the board after it (the person's view), the cells it changed,
        the goal a map looked at, the seats whose tools, marks or gold it changed, and its log lines."""
        was = self._scene
        cols = self.config.cols
        cells = [c["r"] * cols + c["c"] for c, old in zip(scene["cells"], was["cells"], strict=True) if c != old]
        rows = {r["seat"]: r for r in was["seats"]}
        hit = [r["seat"] for r in scene["seats"]
               if (r["broken"], r["marks"], r["gold"]) != (rows[r["seat"]]["broken"], rows[r["seat"]]["marks"],
                                                           rows[r["seat"]]["gold"])]  # fmt: skip
        self.steps.append({
            "seat": actor, "name": self.names[actor], "mine": actor == self.seat, "lines": lines,
            "step": len(self.actions), "board": to_svg(scene, 1.0, legend=True, seats=False, clickable=True),
            "seats": scene["seats"], "status": scene["status"], "cells": cells, "aim": map_cells(self.config, fresh),
            "hit": sorted(hit), "round_end": round_end,
        })  # fmt: skip
        del self.steps[:-MAX_STEPS]

    @property
    def thinking(self) -> bool:
        """Whether agents are to move (their moves were deferred: :meth:`advance` makes them)."""
        return not self.state.game_over and int(self.state.current) != self.seat

    def _should_stop(self) -> bool:
        """Asked by a thinking agent: its move's time is up, its client left or the server is stopping."""
        cancel = self._cancel
        return (time.monotonic() >= self._move_deadline or self._stopping.is_set()
                or (cancel is not None and cancel.is_set()))  # fmt: skip

    def _advance(self, cancel: threading.Event | None) -> int:
        """Let the agents play until the person is to act or the game is over: one move, then more while less than
        ``think_seconds`` has passed (a move that began in time may take ``think_seconds`` more), and none after
        ``cancel`` or the store's ``stopping`` is set; the moves left wait for the next :meth:`advance`. Returns the
        moves made (none when ``max_thinking`` requests are thinking already)."""
        if not self._thinkers.acquire(blocking=False):  # enough requests are thinking: defer, keep a thread free
            return 0
        self._cancel = cancel
        end = time.monotonic() + self.think_seconds
        made = 0
        try:
            while self.thinking and made <= self.config.max_game_length:
                now = time.monotonic()
                if (made and now >= end) or self._stopping.is_set() or (cancel is not None and cancel.is_set()):
                    break  # (one move at least: a request always makes progress)
                q = int(self.state.current)
                obs = encode_observation(self.state, q)
                mask = legal_action_mask(self.state).view(np.int8).copy()
                self._move_deadline = now + self.think_seconds
                self._apply(int(self.agents[q].act(obs, mask)))
                made += 1
        finally:
            self._move_deadline = math.inf
            self._cancel = None
            self._thinkers.release()
            if made and self.state.game_over:
                self.save_transcript()
        return made

    def save_transcript(self) -> None:
        """The llm seats' transcripts, to the table's file (when the server keeps them). Called when the game is
        over, or when the server stops (:meth:`TableStore.save_transcripts`), never mid-game: the prompts hold the
        bots' hands and roles, and the person at the table may read the server's files."""
        st = self.settings
        if self.transcript is None or not any(is_llm_name(b) for b in st.bots):
            return
        from experiments.llm.logs import save_transcripts

        save_transcripts(self.transcript, self.agents, {
            "table": self.id, "game": st.game, "players": st.players, "seat": st.seat, "bots": list(st.bots),
            "rounds": st.rounds, "moves": len(self.actions), "game_over": bool(self.state.game_over)})  # fmt: skip

    def _check_version(self, version: object) -> None:
        if isinstance(version, bool) or not isinstance(version, int):
            raise TableError(f"version={_short(version)} must be an integer: the payload's version")
        if version != self.version:
            raise TableError(f"version={version} is stale; the table is at version {self.version} (reload)", 409)

    def play(self, action: object, version: object, cancel: threading.Event | None = None) -> None:
        """The person's move (an action id among the legal moves) at the table's ``version``, then the agents'
        moves until the person's next turn (or until their time is up: see :meth:`_advance`)."""
        with self.lock:
            self._check_version(version)
            if self.state.game_over:
                raise TableError("the game is over", 409)
            if self.thinking:
                raise TableError("it is not your turn: the agents are still thinking (advance the table)", 409)
            legal = np.flatnonzero(legal_action_mask(self.state))
            if isinstance(action, bool) or not isinstance(action, int):
                raise TableError(f"action={_short(action)} must be an integer action id")
            if action not in legal:
                raise TableError(f"action={action} is not a legal move now; legal ids: {len(legal)} moves "
                                 f"(e.g. {', '.join(str(a) for a in legal[:5])})")  # fmt: skip
            self.steps = []
            self._apply(int(action))
            if self.state.game_over:  # the person's move ended it: no agent moves after it
                self.save_transcript()
            self._advance(cancel)
            self.version += 1

    def advance(self, version: object, cancel: threading.Event | None = None) -> int:
        """The agents' deferred moves (payload ``thinking``) at the table's ``version``, within their time; the
        version grows when a move was made. Returns the moves made."""
        with self.lock:
            self._check_version(version)
            if not self.thinking:
                raise TableError("the agents have no move to make now" + (
                    ": the game is over" if self.state.game_over else ": it is your turn"), 409)  # fmt: skip
            return self._think(cancel)

    def _think(self, cancel: threading.Event | None) -> int:
        self.steps = []
        made = self._advance(cancel)
        if made:
            self.version += 1
        return made

    # ---- what the page sees --------------------------------------------------------------------------------------
    def payload(self) -> dict[str, Any]:
        with self.lock:
            return self._payload()

    def _payload(self) -> dict[str, Any]:
        cfg, seat = self.config, self.seat
        view = player_view(self.state, seat)
        my_turn = not self.state.game_over and int(self.state.current) == seat
        legal = [int(a) for a in np.flatnonzero(legal_action_mask(self.state))] if my_turn else []
        hand_counts = np.asarray(view.hand)[: hand_kinds(cfg)]
        hand = []
        for k in np.flatnonzero(hand_counts):
            info = card_info(cfg, int(k))
            hand.append({**info, "count": int(hand_counts[k]), "svg": card_svg(cfg, int(k)),
                         "svg180": card_svg(cfg, int(k), 1) if info["path"] else ""})  # fmt: skip
        scene = board_scene(view, seat, names=self.names)
        me = self._me(view)
        final = None
        if self.state.game_over:
            ranks, scores = final_ranking(self.state), returns(self.state)
            final = [{"seat": s, "name": self.names[s], "rank": int(ranks[s]), "score": float(scores[s])}
                     for s in sorted(range(cfg.num_players), key=lambda q: ranks[q])]  # fmt: skip
        return {
            "table": self.id, "version": self.version, "game": cfg.game, "title": cfg.variant.title,
            "players": cfg.num_players, "seat": seat, "names": self.names, "my_turn": my_turn,
            "board": to_svg(scene, 1.0, legend=True, seats=False, clickable=True), "seats": scene["seats"],
            "status": scene["status"], "me": me, "hand": hand,
            "moves": [m.as_dict() for m in moves(cfg, legal, seat, self.names)],
            "log": self.log[-120:], "round_ends": self.round_ends, "final": final, "cols": cfg.cols,
            "steps": self.steps, "thinking": self.thinking,
        }  # fmt: skip

    def _me(self, view: Any) -> list[str]:
        cfg = self.config
        if cfg.game == "base":
            from saboteur_env.base.cards import ROLE_NAMES

            return [f"your role: {ROLE_NAMES[view.role]}", f"your gold: {view.my_nuggets} nuggets"]
        if cfg.game == "sab2":
            from saboteur_env.sab2.cards import ROLE_NAMES as SAB2_ROLES

            lines = [f"your role: {SAB2_ROLES[view.role]}", f"phase: {view.phase.name.lower()}"]
            if view.pending:
                lines.append(f"cards discarded in this pass / still to discard: {view.pending}")
            return lines
        from saboteur_env.duel import cards as dc

        lines = [f"you play {('blue', 'green')[self.seat]}"]
        for slot in np.flatnonzero(view.my_peeks >= 0):
            lines.append(f"goal slot {slot}: {dc.GOAL_CARDS[view.my_peeks[slot]].name}")
        return lines


class TableStore:
    """The tables of one server: at most ``limit``. A finished table makes room for a new one (the oldest first);
    a game in play is never dropped: with ``limit`` games in play a new table is refused (503).

    ``think_seconds``: the agents' time per request (see :class:`Table`); ``model_bots``: the ``ppo:PATH`` /
    ``learned:PATH`` names requests may seat (the command line's); ``stopping``: set when the server shuts down,
    it ends every agent's thinking; at most ``max_thinking`` requests let agents think at once."""

    def __init__(self, limit: int = 64, think_seconds: float = THINK_SECONDS, model_bots: Collection[str] = (),
                 max_thinking: int = MAX_THINKING, transcripts: Path | None = None) -> None:  # fmt: skip
        if not (isinstance(think_seconds, (int, float)) and 0 < think_seconds <= 600):
            raise ValueError(f"think_seconds={think_seconds!r} must be in (0, 600]")
        if not (isinstance(limit, int) and limit >= 1 and isinstance(max_thinking, int) and max_thinking >= 1):
            raise ValueError(f"limit={limit!r} and max_thinking={max_thinking!r} must be integers >= 1")
        self.limit = limit
        self.think_seconds = float(think_seconds)
        self.model_bots = frozenset(model_bots)
        self.transcripts = transcripts  # the folder of the llm seats' transcripts (one file per table)
        if any(is_llm_name(n) for n in self.model_bots) and transcripts is None:
            raise ValueError("a server that offers llm bots keeps their transcripts: give transcripts=FOLDER")
        self.stopping = threading.Event()
        self.thinkers = threading.BoundedSemaphore(max_thinking)
        self.tables: dict[str, Table] = {}
        self.lock = threading.Lock()

    def _make_room(self) -> None:
        """Drop the oldest finished table when full (under ``self.lock``); refuse when every table is in play."""
        if len(self.tables) < self.limit:
            return
        done = [k for k, t in self.tables.items() if t.state.game_over]
        if not done:
            raise TableError(f"the server holds {len(self.tables)} games in play (its limit is {self.limit}); finish "
                             "one or restart the server to start a new table", 503)  # fmt: skip
        del self.tables[done[0]]

    def create(self, cancel: threading.Event | None = None, **settings: object) -> Table:
        """A new table from request settings (:func:`check_settings`); its agents make their first moves within
        their time (``cancel``: the request's flag)."""
        checked = check_settings(**settings, model_bots=self.model_bots)
        with self.lock:
            self._make_room()  # refused before any agent is built
        table = Table(checked, self.think_seconds, self.stopping, self.thinkers, self.transcripts)
        with self.lock:
            self._make_room()
            self.tables[table.id] = table
        with table.lock:
            table._think(cancel)
        return table

    def save_transcripts(self) -> None:
        """Every llm table's transcripts (the server is stopping: the games still in play end here)."""
        with self.lock:
            tables = list(self.tables.values())
        for table in tables:
            with table.lock:
                table.save_transcript()

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise TableError(f"no table {table_id[:40]!r} (tables end when the server stops)", 404)
        return table

    def in_play(self, game: str, players: int, seed: int) -> bool:
        """Whether a game in play was dealt from this seed (its replay would show the hidden cards)."""
        with self.lock:
            tables = list(self.tables.values())
        return any((t.config.game, t.config.num_players, t.settings.seed) == (game, players, seed)
                   and not t.state.game_over for t in tables)  # fmt: skip
