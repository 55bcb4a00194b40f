"""A Saboteur 2 seat's structured view, decoded from its observation vector only (the one gate, docs/rules.md §5.2).

:class:`Sab2View` is what the Saboteur 2 renderers and agents read instead of raw planes. Seat-indexed fields use
offsets (0 = the observing seat, 1 = the next seat clockwise), as the observation does. Board fields are
``(config.rows, config.cols)`` grids in storage coordinates (frame coordinates plus ``config.margin``; flat cell
``i`` is at ``divmod(i, cols)``); ``*_bits`` grids hold one bit per arm (``1 << d`` for ``N=0, E=1, S=2, W=3``)
or, for ``join_bits``, one bit per arm pair of :data:`saboteur_env.common.cards.EDGE_PAIRS`.

===================  =========================  ==============================================================
field                type                       content
===================  =========================  ==============================================================
``open_bits``        (rows, cols) int64         open arms of the card on each cell
``conn_bits``        (rows, cols) int64         arms connected to the start
``join_bits``        (rows, cols) int64         arm pairs joined through the card (6 bits)
``blue_door_bits``   (rows, cols) int64         blue-door arms
``green_door_bits``  (rows, cols) int64         green-door arms
``ladder`` ...       (rows, cols) bool          ``ladder``, ``crystal``, ``start``, ``path`` (a path card),
                                                ``goal_facedown``, ``goal_gold`` / ``goal_stone`` (revealed),
                                                ``peeked_gold`` / ``peeked_stone`` (face-down goals I peeked)
``goal_knowledge``   tuple per goal slot        ``"gold"``, ``"stone"`` (revealed or peeked by me) or None
``goal_revealed``    tuple[bool] per goal slot  the goal card is face up
``role``             Sab2Role                   my role now (after any Swap Your Hats)
``hand``             (55,) int64                my cards per deck kind
``broken``           (P, 3) bool                per seat: broken pickaxe / lantern / cart
``trapped`` ...      (P,) bool                  ``trapped``, ``theft``, ``hats_swapped`` (this round),
                                                ``inspected_by_me``, ``inspected_me``
``hand_sizes`` ...   (P,) int64                 ``hand_sizes``, ``gold`` totals, ``discarded`` (face down,
                                                this round)
``peeked``           (P, 3) bool                per seat: used a map on goal slot 0-2
``inspected_roles``  tuple per seat             the role I saw when I inspected that seat, or None
``last_roles``       tuple per seat or None     roles revealed at the most recent round end (None before the first)
``inspections``      (P, P) bool                public: seat offset i inspected seat offset j this round
``deck_size`` ...    int                        ``deck_size``, ``reserve_size`` (role cards), ``thieves_pending``,
                                                ``round`` (0-based)
``to_act``           int or None                seat offset to act (None once the game is over)
``phase``            Phase                      what the seat to act is deciding
``pending``          int                        while I act: cards discarded in this pass (PASS) or discards
                                                still to make (FREE); 0 otherwise
``free_target``      int or None                my option C target while I discard for it: tool 0-2 or 3 (Trapped!)
``events``           tuple[Sab2ViewEvent]       the last ``history_length`` public events, oldest first
``seat``             int or None                the absolute seat, when the caller knows it (not in the vector)
===================  =========================  ==============================================================

:func:`sab2_view` builds the view only through :func:`encode_observation`, so it cannot hold more than the seat
may know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.cards import Sab2Role
from saboteur_env.sab2.observation import NUM_PLANES, SEAT_COLUMNS, encode_observation, sab2_observation_layout
from saboteur_env.sab2.state import Phase, Sab2Event, Sab2State

ARMS = "NESW"
PLANE_NAMES: tuple[str, ...] = (
    *(f"open_{e}" for e in ARMS),
    *(f"conn_{e}" for e in ARMS),
    *(f"join_{i}" for i in range(6)),
    *(f"blue_door_{e}" for e in ARMS),
    *(f"green_door_{e}" for e in ARMS),
    "ladder", "crystal", "start", "path", "goal_facedown", "goal_gold", "goal_stone", "peeked_gold", "peeked_stone",
)  # fmt: skip
PLANE = {name: i for i, name in enumerate(PLANE_NAMES)}
assert len(PLANE_NAMES) == NUM_PLANES, "PLANE_NAMES must follow encode_observation's board planes"
COLUMN = {name: i for i, name in enumerate(SEAT_COLUMNS)}
CELL_EVENTS = frozenset((Sab2Event.PLACE, Sab2Event.ROCKFALL, Sab2Event.REVEAL))  # the only rows with a cell

GoalKnowledge = Literal["gold", "stone"] | None
_A = TypeVar("_A", bound=np.ndarray)


@dataclass(frozen=True)
class Sab2ViewEvent:
    """One public history row. Offsets are relative to the observing seat; ``arg`` reads 0 where the event has
    none (see :class:`~saboteur_env.sab2.state.Sab2Event` for what it means per type)."""

    type: Sab2Event
    actor: int | None
    kind: int | None
    target: int | None
    cell: int | None  # flat cell index
    arg: int


@dataclass(frozen=True)
class Sab2View:
    """Everything one Saboteur 2 seat knows (decoded from its observation; see the module docstring)."""

    config: GameConfig
    seat: int | None  # absolute seat when known (the observation itself is seat-relative)
    open_bits: NDArray[np.int64]
    conn_bits: NDArray[np.int64]
    join_bits: NDArray[np.int64]
    blue_door_bits: NDArray[np.int64]
    green_door_bits: NDArray[np.int64]
    ladder: NDArray[np.bool_]
    crystal: NDArray[np.bool_]
    start: NDArray[np.bool_]
    path: NDArray[np.bool_]
    goal_facedown: NDArray[np.bool_]
    goal_gold: NDArray[np.bool_]
    goal_stone: NDArray[np.bool_]
    peeked_gold: NDArray[np.bool_]
    peeked_stone: NDArray[np.bool_]
    goal_knowledge: tuple[GoalKnowledge, ...]
    goal_revealed: tuple[bool, ...]
    role: Sab2Role
    hand: NDArray[np.int64]
    broken: NDArray[np.bool_]
    trapped: NDArray[np.bool_]
    theft: NDArray[np.bool_]
    hand_sizes: NDArray[np.int64]
    gold: NDArray[np.int64]
    hats_swapped: NDArray[np.bool_]
    peeked: NDArray[np.bool_]
    discarded: NDArray[np.int64]
    inspected_by_me: NDArray[np.bool_]
    inspected_me: NDArray[np.bool_]
    inspected_roles: tuple[Sab2Role | None, ...]
    last_roles: tuple[Sab2Role, ...] | None
    inspections: NDArray[np.bool_]
    deck_size: int
    reserve_size: int
    thieves_pending: int
    round: int
    to_act: int | None
    phase: Phase
    pending: int
    free_target: int | None
    events: tuple[Sab2ViewEvent, ...]

    @classmethod
    def from_observation(cls, obs: NDArray[np.float32], config: GameConfig, seat: int | None = None) -> Sab2View:
        layout = sab2_observation_layout(config)
        obs = np.asarray(obs)
        if obs.shape != (layout.size,):
            raise ValueError(f"a Saboteur 2 observation for {config.num_players} players has shape "
                             f"({layout.size},), not {obs.shape}")  # fmt: skip
        p = config.num_players
        v = layout.split(obs)
        board = _frozen(v["board"] > 0.5)

        def bits(first: str, n: int = 4) -> NDArray[np.int64]:
            i = PLANE[first]
            weights = (1 << np.arange(n, dtype=np.int64))[:, None, None]
            return _frozen((board[i : i + n].astype(np.int64) * weights).sum(0))

        def plane(name: str) -> NDArray[np.bool_]:
            return board[PLANE[name]]

        goals = [divmod(cell, config.cols) for cell in geometry(config).goal_cells]
        gold_known = plane("goal_gold") | plane("peeked_gold")
        stone_known = plane("goal_stone") | plane("peeked_stone")
        knowledge: list[GoalKnowledge] = ["gold" if gold_known[rc] else "stone" if stone_known[rc] else None
                                          for rc in goals]  # fmt: skip
        seats = v["seats"]

        def column(name: str) -> NDArray[np.float32]:
            return seats[:, COLUMN[name]]

        status = v["status"]
        to_act = status[6 : 6 + p]
        phase = status[6 + p : 6 + p + len(Phase)]
        tail = status[6 + p + len(Phase) :]  # pending, then the option C target one-hot
        return cls(
            config=config,
            seat=seat,
            open_bits=bits("open_N"),
            conn_bits=bits("conn_N"),
            join_bits=bits("join_0", 6),
            blue_door_bits=bits("blue_door_N"),
            green_door_bits=bits("green_door_N"),
            ladder=plane("ladder"),
            crystal=plane("crystal"),
            start=plane("start"),
            path=plane("path"),
            goal_facedown=plane("goal_facedown"),
            goal_gold=plane("goal_gold"),
            goal_stone=plane("goal_stone"),
            peeked_gold=plane("peeked_gold"),
            peeked_stone=plane("peeked_stone"),
            goal_knowledge=tuple(knowledge),
            goal_revealed=tuple(bool(plane("goal_gold")[r, c] or plane("goal_stone")[r, c]) for r, c in goals),
            role=Sab2Role(int(v["role"].argmax())),
            hand=_frozen(np.rint(v["hand"]).astype(np.int64)),
            broken=_frozen(seats[:, COLUMN["broken_pickaxe"] : COLUMN["broken_cart"] + 1] > 0.5),
            trapped=_frozen(column("trapped") > 0.5),
            theft=_frozen(column("theft") > 0.5),
            hand_sizes=_frozen(np.rint(column("hand_size")).astype(np.int64)),
            gold=_frozen(np.rint(column("gold")).astype(np.int64)),
            hats_swapped=_frozen(column("hats_swapped") > 0.5),
            peeked=_frozen(seats[:, COLUMN["peeked_0"] : COLUMN["peeked_2"] + 1] > 0.5),
            discarded=_frozen(np.rint(column("discarded")).astype(np.int64)),
            inspected_by_me=_frozen(column("inspected_by_me") > 0.5),
            inspected_me=_frozen(column("inspected_me") > 0.5),
            inspected_roles=tuple(_one_hot_role(row) for row in v["inspected"]),
            last_roles=_last_roles(v["last_roles"]),
            inspections=_frozen(v["inspections"] > 0.5),
            deck_size=round(float(status[0])),
            reserve_size=round(float(status[1])),
            thieves_pending=round(float(status[2])),
            round=int(status[3:6].argmax()),
            to_act=int(to_act.argmax()) if to_act.max() > 0.5 else None,
            phase=Phase(int(phase.argmax())),
            pending=round(float(tail[0])),
            free_target=int(tail[1:].argmax()) if tail[1:].max() > 0.5 else None,
            events=_events(v["history"], config),
        )

    def cell(self, cell: int) -> tuple[int, int]:
        """Grid ``(row, col)`` of a flat cell index (as in actions and events), to index the board fields."""
        return divmod(cell, self.config.cols)


def _frozen(a: _A) -> _A:
    a.flags.writeable = False  # the view is a snapshot: agents must not edit what they were shown
    return a


def _one_hot(part: NDArray[np.float32]) -> int | None:
    return int(part.argmax()) if part.size and part.max() > 0.5 else None


def _one_hot_role(row: NDArray[np.float32]) -> Sab2Role | None:
    i = _one_hot(row)
    return None if i is None else Sab2Role(i)


def _last_roles(rows: NDArray[np.float32]) -> tuple[Sab2Role, ...] | None:
    roles = [_one_hot_role(row) for row in rows]
    if any(r is None for r in roles):  # all set after a round end, none before
        return None
    return tuple(r for r in roles if r is not None)


def _events(history: NDArray[np.float32], config: GameConfig) -> tuple[Sab2ViewEvent, ...]:
    p, nt = config.num_players, len(Sab2Event)
    rows = history[history[:, 0] > 0.5]  # drop the padding before the first events of the game
    bounds = np.cumsum([1, nt, p, sc.NUM_KINDS, p])

    def one_hot(block: int) -> list[int | None]:
        part = rows[:, bounds[block] : bounds[block + 1]]
        found = part.max(1, initial=0) > 0.5
        return [int(i) if ok else None for i, ok in zip(part.argmax(1).tolist(), found.tolist(), strict=True)]

    types = rows[:, 1 : 1 + nt].argmax(1).tolist()
    r = np.rint(rows[:, -3] * max(1, config.rows - 1)).astype(np.int64)
    c = np.rint(rows[:, -2] * max(1, config.cols - 1)).astype(np.int64)
    cells = (r * config.cols + c).tolist()
    args = np.rint(rows[:, -1] * 10).astype(np.int64).tolist()
    columns = zip(types, one_hot(1), one_hot(2), one_hot(3), cells, args, strict=True)
    # (0, 0) is a real cell, so the type (not the values) says whether a row has one
    return tuple(Sab2ViewEvent(Sab2Event(k), actor, kind, target, cell if k in CELL_EVENTS else None, arg)
                 for k, actor, kind, target, cell, arg in columns)  # fmt: skip


def sab2_view(state: Sab2State, seat: int) -> Sab2View:
    """The structured view of ``seat`` (built through the observation, so it cannot hold more)."""
    return Sab2View.from_observation(encode_observation(state, seat), state.config, seat)


__all__ = ["PLANE", "PLANE_NAMES", "Sab2View", "Sab2ViewEvent", "sab2_view"]
