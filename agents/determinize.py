"""Determinization: full game states consistent with one seat's information set, built from its views only.

A :class:`Determinizer` follows one seat through the game (``observe(observation)`` at each of its decisions, or
more often) and ``sample(rng)`` returns a complete game state on the compiled core in which that seat's
observation is exactly the one it last saw: same board, own hand, public counts, event history. Everything the
seat cannot see is drawn:

* roles (and the left-over role card / the Saboteur 2 reserve) from a :class:`RoleSampler` - the exact Bayes
  posterior of :class:`agents.base.beliefs.BayesModel` in the base game (which also draws the gold slot),
  uniform over the role assignments consistent with the view in Saboteur 2 (the Duel has no roles);
* other hands, the draw pile, other seats' face-down discards (and Saboteur 2's set-aside cards) from the unseen
  cards: the round's deck composition minus everything public this round and the own hand and discards;
* face-down goals the seat has not seen; later rounds' set-up (fresh shuffles).

Nothing here reads a game state: the input is the observation vector (decoded through the game's view class) and
the seat's own memory of public events (the observation only carries the last ``history_length`` of them, so the
determinizer keeps the log; events it missed are treated as unknown and the card pool is reconciled by count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from saboteur_env import EventType, GameConfig, PlayerView

UNKNOWN = -2  # event type of a row the seat never saw (older than its history window when it looked)


def _fresh_record(config: GameConfig, rng: np.random.Generator) -> Any:
    """A new game's record (``GameState`` / ``Sab2State`` / ``DuelState``) drawn by the compiled core: the same
    draws as the rules' set-up, as the record a determinization fills in."""
    return config.variant.new_game(config, rng).to_reference()


class EventLog:
    """Every public event of the game seen by one seat, in absolute seats: rows ``(type, actor, kind, target,
    cell, arg)`` as the engine logs them, ``kind = -1`` for another seat's face-down discard and ``type =
    UNKNOWN`` for events that scrolled out of the history window between two looks."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        self.config = config
        self.seat = seat
        self.rows: list[tuple[int, int, int, int, int, int]] = []

    def update(self, view: PlayerView) -> None:
        new = view.event_count - len(self.rows)
        if new <= 0:
            return
        history = view.history
        missed = max(0, new - len(history))
        self.rows.extend([(UNKNOWN, -1, -1, -1, -1, -1)] * missed)
        p, cols, seat = self.config.num_players, self.config.cols, self.seat
        for ev in history[len(history) - (new - missed) :]:
            self.rows.append((
                int(ev.type),
                (seat + ev.actor) % p if ev.actor >= 0 else -1,
                ev.kind,
                (seat + ev.target) % p if ev.target >= 0 else -1,
                ev.row * cols + ev.col if ev.row >= 0 else -1,
                ev.arg,
            ))  # fmt: skip

    def round_rows(self, round_index: int) -> tuple[list[tuple[int, int, int, int, int, int]], bool]:
        """The rows of round ``round_index`` (the current one) and whether they are surely all of them."""
        ends = [i for i, r in enumerate(self.rows) if r[0] == EventType.ROUND_END]
        if len(ends) == round_index:
            rows = self.rows[ends[-1] + 1 :] if ends else self.rows
            return rows, all(r[0] != UNKNOWN for r in rows)
        # a round end scrolled away unseen: only the rows after the last unknown one are surely of this round
        last_unknown = max((i for i, r in enumerate(self.rows) if r[0] == UNKNOWN), default=-1)
        return self.rows[last_unknown + 1 :], False


@dataclass(frozen=True)
class RoleSample:
    """One draw of the hidden roles: ``roles`` per absolute seat, ``rest`` the role cards left undealt (the base
    game's left-over card, Saboteur 2's reserve in order), ``gold`` a goal slot drawn jointly (None: not drawn)."""

    roles: tuple[int, ...]
    rest: tuple[int, ...]
    gold: int | None = None


class RoleSampler(Protocol):
    """Where determinizations get their roles (belief models plug in here). ``observe`` is called with every view
    the seat gets (in order); ``sample_roles`` draws one assignment consistent with the latest view."""

    def observe(self, view: Any) -> None: ...

    def sample_roles(self, view: Any, rng: np.random.Generator) -> RoleSample: ...


class Determinizer(Protocol):
    def observe(self, observation: NDArray[np.float32]) -> Any: ...

    def sample(self, rng: np.random.Generator) -> Any: ...


def _deal(pool: NDArray[np.int64], sizes: Sequence[int], rng: np.random.Generator) -> list[NDArray[np.int64]]:
    """Shuffle ``pool`` (card kinds) and cut it into parts of ``sizes`` (the last part takes the rest)."""
    pool = rng.permutation(pool)
    out, pos = [], 0
    for n in sizes:
        out.append(pool[pos : pos + n])
        pos += n
    out.append(pool[pos:])
    return out


def _reconcile(pool: NDArray[np.int64], need: int, full: NDArray[np.int64], rng: np.random.Generator) -> NDArray:
    """A pool of exactly ``need`` cards: drop random cards or add random ones of the deck composition ``full``
    (only when the seat missed events of this round and the public record of played cards is incomplete)."""
    if pool.size > need:
        return rng.permutation(pool)[:need]
    if pool.size < need:
        extra = rng.choice(np.repeat(np.arange(full.size), full), size=need - pool.size, replace=False)
        return np.concatenate([pool, extra])
    return pool


def _new_events(old: list[Any], window: list[Any], length: int) -> int:
    """How many rows at the end of ``window`` are new since the history window ``old`` (games whose observation
    has no event count): the smallest shift that lines the two windows up (a full window that did not change
    counts as no news)."""
    if len(old) < length:  # the old window was not full: it held every event so far
        return len(window) - len(old) if window[: len(old)] == old else len(window)
    for d in range(0 if window == old else 1, len(window) + 1):
        if old[d:] == window[: len(window) - d]:
            return d
    return len(window)


# Each game's package registers its determinizer (agents/<game>/__init__.py); a game without one (a variant on the
# base game's rules, e.g. tests' "base-lite") uses the base game's.
_FACTORIES: dict[str, Callable[[GameConfig, int, RoleSampler | None], Determinizer]] = {}


def register_determinizer(game: str, factory: Callable[[GameConfig, int, RoleSampler | None], Determinizer]) -> None:
    """Make ``factory(config, seat, roles)`` the determinizer of ``game``."""
    _FACTORIES[game] = factory


def make_determinizer(config: GameConfig, seat: int, roles: RoleSampler | None = None) -> Determinizer:
    """The determinizer of ``config.game`` for ``seat`` (the base game's for a game that registered none)."""
    return _FACTORIES.get(config.game, _FACTORIES["base"])(config, seat, roles)


__all__ = ["Determinizer", "EventLog", "RoleSample", "RoleSampler", "make_determinizer", "register_determinizer"]
