"""The full game state: numpy arrays plus a few scalars. Mutable, with an explicit cheap :meth:`GameState.clone`.

All randomness of a whole game (every round's deck order, roles, goal layout, and the gold deck) is drawn by
``rules.new_game`` and stored here, so the rules themselves never need a random generator.

The full state holds hidden information (roles, hands, deck order, goals). Agents must only ever see
``observation.encode_observation(state, seat)``; the environment exposes the state only through ``state()``
for centralised critics.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import Geometry, geometry

if TYPE_CHECKING:  # the layouts are reached through the variant at run time (see ``attach_tables``)
    from saboteur_env.base.actions import ActionLayout
    from saboteur_env.common.config import ObservationLayout  # the protocol: base.observation imports this module


class EventType(IntEnum):
    """Public events. Fields of an event row: ``(type, actor, kind, target, cell, arg)``, -1 when unused."""

    PLACE = 0  # kind = path kind, cell, arg = rotation (0 or 1 = 180°)
    BREAK = 1  # kind = broken-tool card, target = seat, arg = tool
    REPAIR = 2  # kind = repair / double repair card, target = seat, arg = tool repaired
    ROCKFALL = 3  # kind = rockfall, cell, arg = kind of the removed path card
    MAP = 4  # kind = map, arg = goal slot (0 top, 1 middle, 2 bottom)
    DISCARD = 5  # kind = discarded card: private to the actor, hidden from everyone else
    REVEAL = 6  # actor = placer, kind = goal kind, cell, arg = rotation
    ROUND_END = 7  # actor = last player, arg = 0 gold-diggers won / 1 saboteurs won


EVENT_FIELDS = ("type", "actor", "kind", "target", "cell", "arg")


def max_events_per_round(deck_size: int) -> int:
    """Public events one round can hold: one per decision (at most one per card), three reveals, the round end."""
    return deck_size + 3 + 1


@dataclass(kw_only=True)
class GameState:
    """State of one game. Array shapes use P = players, HW = rows * cols of the playable area.

    Every field is given at construction (keyword-only); the per-config tables are attached by ``__post_init__``.
    """

    config: GameConfig
    # ---- set-up of every round, drawn once by new_game (hidden) ----
    round_decks: NDArray[np.int16]  # (rounds, 67) card kinds in draw order
    round_roles: NDArray[np.int8]  # (rounds, P+1) roles dealt by seat; the last one is the left-over card
    round_goals: NDArray[np.int16]  # (rounds, 3) goal kind per goal slot (top, middle, bottom)
    gold_deck: NDArray[np.int8]  # (28,) gold card values in deck order
    gold_left: NDArray[np.bool_]  # (28,) card still in the gold deck
    # ---- the current round ----
    round: int = 0
    deck_pos: int = 0  # next card to draw from round_decks[round]
    hands: NDArray[np.int16]  # (P, 27) card counts
    roles: NDArray[np.int8]  # (P,) Role
    leftover_role: int = 0
    broken: NDArray[np.bool_]  # (P, 3) [pickaxe, lantern, cart]
    peeked: NDArray[np.bool_]  # (P, 3) seat used a map on goal slot
    discarded: NDArray[np.int16]  # (P,) face-down discards this round
    discards: NDArray[np.int16]  # (27,) discard pile counts
    # board, flat over HW storage cells (frame cell (r, c) at (r + margin) * cols + c + margin)
    cell_shape: NDArray[np.int16]  # (HW,) cards.SHAPES id, -1 none
    cell_open: NDArray[np.uint8]  # (HW,) open-edge bits
    cell_reach: NDArray[np.uint8]  # (HW,) arms connected to start
    planes: NDArray[np.float32]  # (24, HW) public board planes
    goal_kind: NDArray[np.int16]  # (3,) hidden until revealed
    goal_revealed: NDArray[np.bool_]  # (3,)
    current: int = 0  # seat to act
    last_player: int = 0  # last seat whose turn removed a card from its hand (docs/rules.md A10)
    # ---- whole game ----
    gold_nuggets: NDArray[np.int32]  # (P,) nuggets (private)
    gold_cards: NDArray[np.int16]  # (P,) gold cards won (public)
    last_rewards: NDArray[np.float64]  # (P,) of the last action
    last_round_roles: NDArray[np.int8]  # (P,) revealed, -1 unknown
    events: NDArray[np.int16]  # (capacity, 6) public event rows
    num_events: int = 0
    # ---- observation support, maintained by the rules (public information only) ----
    seat_table: NDArray[np.float32]  # (2P, 11) SEAT_COLUMNS, rows doubled
    hist_ring: NDArray[np.float32]  # (P, 2L, F) event rows per viewer, doubled ring
    hist_pos: int = 0  # next ring row to write (the oldest row)
    num_decisions: int = 0
    game_over: bool = False
    round_just_ended: bool = False  # the last applied action ended a round
    round_results: list[dict[str, Any]] = field(default_factory=list)
    gold_deck_size: int = 28  # gold cards left in the gold deck (public)
    # ---- per-config tables (shared, immutable): geometry, action and observation layouts ----
    # (set by ``attach_tables``, left out of pickles and rebuilt from the config)
    geo: Geometry = field(init=False, repr=False, compare=False)
    layout: ActionLayout = field(init=False, repr=False, compare=False)
    obs_layout: ObservationLayout = field(init=False, repr=False, compare=False)
    # ---- caches derived from the arrays above (replaced, never mutated in place) ----
    board_version: int = 0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        attach_tables(self)

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def deck_size(self) -> int:
        return int(self.round_decks.shape[1]) - self.deck_pos

    def __getstate__(self) -> dict[str, Any]:
        # Per-config tables are rebuilt from the config after unpickling (they hold large lookup tables).
        return {k: v for k, v in self.__dict__.items() if k not in ("geo", "layout", "obs_layout", "_cache")}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._cache = {}
        attach_tables(self)

    def clone(self) -> GameState:
        """An independent copy (arrays copied; caches shared, as they are never mutated in place)."""
        new = copy.copy(self)
        for name in _ARRAY_FIELDS:
            setattr(new, name, getattr(self, name).copy())
        new.round_results = [dict(r) for r in self.round_results]
        new._cache = dict(self._cache)
        return new

    def board_changed(self) -> None:
        """Invalidate the board-derived caches (placement table, observation planes)."""
        self.board_version += 1

    def fingerprint(self) -> str:
        """A digest of the complete state (for golden replays and determinism tests)."""
        import hashlib

        h = hashlib.sha256()
        for name in _ARRAY_FIELDS[:-3]:  # the last three are observation encodings derived from the rest
            h.update(name.encode())
            h.update(np.ascontiguousarray(getattr(self, name)).tobytes())
        h.update(
            repr(
                (self.round, self.deck_pos, self.leftover_role, self.current, self.last_player, self.num_events,
                 self.num_decisions, self.game_over, self.gold_deck_size)
            ).encode()
        )
        return h.hexdigest()[:16]


def attach_tables(state: GameState) -> None:
    """Point the state at its config's shared tables (geometry, layouts)."""
    variant = state.config.variant  # through the variant: this module imports no layout module
    state.geo = geometry(state.config)
    state.layout = variant.action_layout(state.config)
    state.obs_layout = variant.observation_layout(state.config)


_ARRAY_FIELDS = (
    "round_decks",
    "round_roles",
    "round_goals",
    "gold_deck",
    "gold_left",
    "hands",
    "roles",
    "broken",
    "peeked",
    "discarded",
    "discards",
    "cell_shape",
    "cell_open",
    "cell_reach",
    "goal_kind",
    "goal_revealed",
    "gold_nuggets",
    "gold_cards",
    "last_rewards",
    "last_round_roles",
    "events",
    "planes",
    "seat_table",
    "hist_ring",
)
