"""Follow the public event stream and annotate each event with its public board context.

Agents see the last ``history_length`` events in every observation; :class:`ViewTracker` picks out the new ones
(using the public ``event_count``) and replays them on its own :class:`~agents.base.analysis.PublicBoard`, so every
event comes with the tile distances to each goal before and after it. :class:`LogTracker` does the same from the
engine's public event log (for the tournament's reference observer). Both produce :class:`PublicEvent` records in
absolute seats, through the same code.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import DEAD_END_KIND, PublicBoard, board_from_view
from saboteur_env import EventType, GameConfig, PlayerView
from saboteur_env.base.state import GameState

_CACHE: OrderedDict[bytes, tuple] = OrderedDict()  # board bytes -> (reach, distance_maps, frontier, distance)
_CACHE_SIZE = 4096


def analysed(board: PublicBoard) -> PublicBoard:
    """Fill the board's analysis from a process-wide memo (agents of one game share the same boards)."""
    key = board.shape.tobytes()
    hit = _CACHE.get(key)
    if hit is not None:
        board.__dict__.update(zip(("reach", "distance_maps", "frontier", "distance"), hit, strict=True))
        return board
    value = (board.reach, board.distance_maps, board.frontier, board.distance)
    _CACHE[key] = value
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return board


@dataclass(frozen=True)
class PublicEvent:
    """A public event in absolute seats, with the tile distance to each goal slot before and after it."""

    type: EventType
    actor: int
    kind: int  # -1 when hidden (another seat's face-down discard)
    target: int  # seat or -1
    cell: int  # storage cell or -1
    arg: int
    before: NDArray[np.int64]  # (3,) distances before the event
    after: NDArray[np.int64]  # (3,) distances after the event
    dead_end: bool = False  # a dead-end path card placed, or removed by a rockfall


class _Tracker:
    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.board = analysed(PublicBoard(config))
        self.round = 0

    def _reset_board(self) -> None:
        self.board = analysed(PublicBoard(self.config))

    def _apply(self, etype: int, actor: int, kind: int, target: int, cell: int, arg: int) -> PublicEvent:
        before = self.board.distance
        dead_end = False
        if etype in (EventType.PLACE, EventType.ROCKFALL, EventType.REVEAL):
            board = self.board.copy()
            if etype == EventType.ROCKFALL:
                board.remove(cell)
                dead_end = bool(DEAD_END_KIND[arg])
            else:
                board.place(cell, kind, arg)
                dead_end = etype == EventType.PLACE and bool(DEAD_END_KIND[kind])
            self.board = analysed(board)
        ev = PublicEvent(EventType(etype), actor, kind, target, cell, arg, before, self.board.distance, dead_end)
        if etype == EventType.ROUND_END:
            self._reset_board()
            self.round += 1
        return ev


class ViewTracker(_Tracker):
    """New public events from successive observations of one seat."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        super().__init__(config)
        self.seat = seat
        self.seen = 0

    def update(self, view: PlayerView) -> list[PublicEvent]:
        new = max(0, view.event_count - self.seen)
        self.seen = view.event_count
        p, cols = self.config.num_players, self.config.cols
        history = view.history
        lost = new > len(history)
        out = []
        for ev in (history[len(history) - new :] if new else ()) if not lost else history:
            cell = ev.row * cols + ev.col if ev.row >= 0 else -1  # storage coordinates
            out.append(
                self._apply(
                    int(ev.type),
                    (self.seat + ev.actor) % p,
                    ev.kind,
                    (self.seat + ev.target) % p if ev.target >= 0 else -1,
                    cell,
                    ev.arg,
                )
            )
        if lost or not np.array_equal(self.board.shape >= 0, ~(view.empty | view.goal_facedown).ravel()):
            self.board = analysed(board_from_view(view))  # missed events: resynchronise from the view
        return out


class LogTracker(_Tracker):
    """Public events from the engine's event log (spectator: another seat's discards stay hidden)."""

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.seen = 0

    def update(self, state: GameState) -> list[PublicEvent]:
        out = []
        for row in state.events[self.seen : state.num_events].tolist():
            etype, actor, kind, target, cell, arg = row
            if etype == EventType.DISCARD:
                kind = -1
            out.append(self._apply(etype, actor, kind, target, cell, arg))
        self.seen = state.num_events
        return out


def known_gold(view: PlayerView) -> NDArray[np.float64]:
    """P(gold in goal slot g) from what the view shows (reveals and own map results); uniform otherwise."""
    p = np.array([0.0 if k == "stone" else 1.0 for k in view.goal_knowledge])
    if "gold" in view.goal_knowledge:
        p = np.array([1.0 if k == "gold" else 0.0 for k in view.goal_knowledge])
    return p / p.sum()


__all__ = ["LogTracker", "PublicEvent", "ViewTracker", "analysed", "known_gold"]
