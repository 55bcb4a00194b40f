"""The Duel's observation: one seat-relative float32 vector (the only gate for hidden information, docs/rules.md §5.3).

"Me" is the observing seat, "opp" the other one; colours are given relative too (``my_colour`` says which start is
mine). Named slices (``DuelObservationLayout.split``):

================  ===============  =================================================================================
slice             shape            content
================  ===============  =================================================================================
``board``         (44, rows, cols) planes: open arms NESW (4), joined arm pairs (6), arms I reach (4), arms the
                                   opponent reaches (4), doors of my colour (4), doors of the other colour (4), key,
                                   troll, troll bribed by me, bribed by opp, ladder to my start, ladder to opp's,
                                   gold nuggets / 3, gold arms (4), counter mine, counter opp, my start, opp start,
                                   face-down goal, revealed goal, empty cell
``hand``          (39,)            my cards per kind
``my_peeks``      (6, 18)          one-hot goal card of each goal slot I peeked at (private)
``peeked``        (2, 6)           goal slots peeked by me / by the opponent (public)
``tools``         (2, 3)           broken pickaxe / lantern / cart in front of me / the opponent
``hand_sizes``    (2,)             me, opponent
``supply``        (4,)             draw pile size, counters left, keys left, goals left in the pool
``nuggets``       (2,)             score pile nuggets me / opp (public)
``pile_cards``    (2,)             score pile cards me / opp
``round``         (3,)             one-hot round
``status``        (2,)             I am to act, my colour is green
``history``       (L, 77)          last ``history_length`` public events, newest last: valid, type (13), actor is
                                   me, card kind (59), row, col (0..1) and argument / 3 (slot, tool bits,
                                   nuggets, cards discarded, rotation or reason: at most 2)
================  ===============  =================================================================================
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_PAIRS
from saboteur_env.common.config import GameConfig
from saboteur_env.common.slices import named_slices
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelEvent, DuelState

NUM_PLANES = 44
EVENT_SIZE = 1 + len(DuelEvent) + 1 + dc.NUM_KINDS + 3


class DuelObservationLayout:
    """Named slices of the duel observation for one configuration."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.history_length = config.history_length
        self.shapes: dict[str, tuple[int, ...]] = {
            "board": (NUM_PLANES, config.rows, config.cols),
            "hand": (dc.NUM_DECK_KINDS,),
            "my_peeks": (dc.GOALS_PER_ROUND, dc.NUM_GOALS),
            "peeked": (2, dc.GOALS_PER_ROUND),
            "tools": (2, 3),
            "hand_sizes": (2,),
            "supply": (4,),
            "nuggets": (2,),
            "pile_cards": (2,),
            "round": (3,),
            "status": (2,),
            "history": (config.history_length, EVENT_SIZE),
        }
        self.slices, self.size = named_slices(self.shapes)
        self.row_parts: dict[str, tuple[int, ...]] = {}  # no block mixes seat-sized parts (always two seats)
        high = np.ones(self.size, dtype=np.float32)
        high[self.slices["hand"]] = dc.HAND_SIZE
        high[self.slices["hand_sizes"]] = dc.HAND_SIZE
        high[self.slices["supply"]] = np.array([dc.DECK_SIZE, dc.NUM_COUNTERS, dc.NUM_KEYS, dc.NUM_GOALS])
        high[self.slices["nuggets"]] = 30
        high[self.slices["pile_cards"]] = 23
        high[self.slices["history"]].reshape(config.history_length, EVENT_SIZE)[:, -1] = 2  # arg / 3 <= 6 / 3
        self.high = high
        geo = board.geometry(config)
        rows = np.arange(config.num_cells) // config.cols
        cols = np.arange(config.num_cells) % config.cols
        self.cell_rowcol = np.stack([rows / max(1, geo.rows - 1), cols / max(1, geo.cols - 1)], 1).astype(np.float32)

    def split(self, obs: NDArray[np.float32]) -> dict[str, NDArray[np.float32]]:
        return {name: obs[s].reshape(self.shapes[name]) for name, s in self.slices.items()}


def duel_observation_layout(config: GameConfig) -> DuelObservationLayout:
    return config.cached("_duel_observation_layout", DuelObservationLayout)


def _static_table(me: int) -> NDArray[np.float32]:
    """(shapes + 1, 26) per-shape planes seen by colour ``me`` (the last row: empty cell): open arms, joined pairs,
    doors of my / the other colour, troll, ladder to my / the other start, nuggets / 3, gold arms."""
    out = np.zeros((dc.NUM_SHAPES + 1, 26), dtype=np.float32)
    for sid, shape in enumerate(dc.SHAPES):
        if shape is None:
            continue
        row = out[sid]
        row[0:4] = [(shape.open_bits >> e) & 1 for e in range(4)]
        row[4:10] = [(shape.join_bits >> i) & 1 for i in range(len(EDGE_PAIRS))]
        row[10:14] = [(shape.door_bits[me] >> e) & 1 for e in range(4)]
        row[14:18] = [(shape.door_bits[1 - me] >> e) & 1 for e in range(4)]
        row[18] = shape.troll
        row[19] = shape.ladder == me
        row[20] = shape.ladder == 1 - me
        row[21] = shape.nuggets / 3.0
        row[22:26] = [(shape.gold_bits >> e) & 1 for e in range(4)]
    return out


_STATIC = (_static_table(0), _static_table(1))
_BITS4 = np.array([[(v >> e) & 1 for e in range(4)] for v in range(16)], dtype=np.float32)  # (16, 4)
# Plane order (see the module table): static planes are scattered into these rows.
_STATIC_ROWS = np.r_[0:10, 18:26, 27, 30, 31, 32, 33:37]
_REACH_ROWS = np.r_[10:18]


def board_planes(s: DuelState, seat: int) -> NDArray[np.float32]:
    """(44, HW) public board planes from ``seat``'s point of view."""
    me, opp = seat, 1 - seat
    hw = s.config.num_cells
    shape = s.cell_shape
    has = shape >= 0
    sid = np.where(has, shape, dc.NUM_SHAPES)
    static = _STATIC[me][sid]  # (HW, 26)
    planes = np.zeros((NUM_PLANES, hw), dtype=np.float32)
    planes[_STATIC_ROWS] = static.T
    planes[_REACH_ROWS] = np.concatenate([_BITS4[s.reach[me]], _BITS4[s.reach[opp]]], axis=1).T
    counter = s.cell_counter
    troll = static[:, 18] > 0
    planes[26] = s.cell_key
    planes[28] = troll & (counter == me)
    planes[29] = troll & (counter == opp)
    planes[37] = ~troll & (counter == me)
    planes[38] = ~troll & (counter == opp)
    geo = board.geometry(s.config)
    planes[39, geo.start_cells[me]] = 1
    planes[40, geo.start_cells[opp]] = 1
    goals = np.array(geo.goal_cells)
    planes[41, goals[~s.goal_revealed]] = 1
    planes[42, goals[s.goal_revealed]] = 1
    planes[43] = ~has & (planes[41] == 0)
    return planes


def encode_observation(s: DuelState, seat: int) -> NDArray[np.float32]:
    """The observation vector of ``seat`` (public information plus the seat's own private items)."""
    layout = duel_observation_layout(s.config)
    me, opp = seat, 1 - seat
    out = np.zeros(layout.size, dtype=np.float32)
    v = layout.split(out)
    v["board"][:] = board_planes(s, seat).reshape(layout.shapes["board"])
    v["hand"][:] = s.hands[me]
    for slot in np.flatnonzero(s.peeked[me]):
        v["my_peeks"][slot, int(s.goal_card[slot])] = 1  # own map result (private)
    v["peeked"][0] = s.peeked[me]
    v["peeked"][1] = s.peeked[opp]
    v["tools"][0] = s.broken[me]
    v["tools"][1] = s.broken[opp]
    v["hand_sizes"][:] = (s.hands[me].sum(), s.hands[opp].sum())
    on_board = int((~s.goal_out).sum())
    pool = on_board - dc.GOALS_PER_ROUND if not s.game_over else on_board
    v["supply"][:] = (s.deck_size, s.counters_left, s.keys_left, max(0, pool))
    nuggets = s.nuggets
    v["nuggets"][:] = (nuggets[me], nuggets[opp])
    v["pile_cards"][:] = (len(s.score[me]), len(s.score[opp]))
    v["round"][min(s.round, 2)] = 1
    v["status"][:] = (float(s.current == me and not s.game_over), float(me == 1))
    L = layout.history_length
    if L and s.events:
        ev = np.array(s.events[-L:], dtype=np.int64)  # (k, 5): type, actor, kind, cell, arg
        rows = v["history"][L - len(ev) :]
        idx = np.arange(len(ev))
        ntypes = len(DuelEvent)
        rows[:, 0] = 1
        rows[idx, 1 + ev[:, 0]] = 1
        rows[:, 1 + ntypes] = ev[:, 1] == me
        has = ev[:, 2] >= 0
        rows[idx[has], 2 + ntypes + ev[has, 2]] = 1
        has = ev[:, 3] >= 0
        rows[idx[has], -3:-1] = layout.cell_rowcol[ev[has, 3]]
        rows[:, -1] = np.maximum(ev[:, 4], 0) / 3.0
    return out


def encode_state(s: DuelState) -> NDArray[np.float32]:
    """Full state for centralised critics (NOT for agents): seat 0's observation plus everything hidden."""
    hidden = np.zeros(dc.NUM_DECK_KINDS * 2 + dc.GOALS_PER_ROUND * dc.NUM_GOALS, dtype=np.float32)
    hidden[: dc.NUM_DECK_KINDS] = s.hands[1]
    deck = np.bincount(s.deck[s.deck_pos :], minlength=dc.NUM_DECK_KINDS) if s.deck_size else 0
    hidden[dc.NUM_DECK_KINDS : 2 * dc.NUM_DECK_KINDS] = deck
    goals = hidden[2 * dc.NUM_DECK_KINDS :].reshape(dc.GOALS_PER_ROUND, dc.NUM_GOALS)
    goals[np.arange(dc.GOALS_PER_ROUND), s.goal_card] = 1
    return np.concatenate([encode_observation(s, 0), hidden])


def state_size(config: GameConfig) -> int:
    return duel_observation_layout(config).size + dc.NUM_DECK_KINDS * 2 + dc.GOALS_PER_ROUND * dc.NUM_GOALS
