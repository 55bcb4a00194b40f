"""The base game (rules reference §1) as numba kernels over a batch of games stored as struct of arrays.

Every kernel works on the games ``b0 <= b < b1`` of a batch, so a batch can be split into shards (threads or processes)
and gives the same result as one call. The rules are ported line by line from the numpy reference
(``saboteur_env.base.reference`` with ``saboteur_env.base.board`` / ``observation``); the equivalence tests
(``tests/test_core_base.py``) replay random games through both and compare masks, observations, rewards, round results
and scores.

State fields per game (shapes after the leading batch axis ``B``; ``P`` players, ``R`` rounds, ``HW`` cells,
``D`` cards in a round's deck, ``E = R * (D + 4)`` events):

====================  =====  ============  ==============================================================
field                 arena  shape         meaning
====================  =====  ============  ==============================================================
``round_decks``       i8     (R, D)        card kinds in draw order per round (hidden)
``round_roles``       i8     (R, P + 1)    roles by seat per round; ``[P]`` the left-over card (hidden)
``round_goals``       i8     (R, 3)        goal kind (28 gold, 29/30 stone) per goal slot (hidden)
``gold_deck``         i8     (28,)         gold card values in deck order
``gold_left``         i8     (28,)         1 while the card is in the gold deck
``hands``             i8     (P, 27)       card counts per kind
``roles``             i8     (P,)          0 gold-digger, 1 saboteur
``broken``            i8     (P, 3)        broken pickaxe / lantern / cart
``peeked``            i8     (P, 3)        seat used a map on goal slot this round
``cell_shape``        i8     (HW,)         shape id (``cards.SHAPES``), -1 empty or face-down goal
``cell_reach``        i8     (HW,)         arms connected to the start (bits N, E, S, W)
``goal_kind``         i8     (3,)          this round's goal kinds
``goal_revealed``     i8     (3,)          goal slot face up
``last_round_roles``  i8     (P,)          roles revealed at the latest round end, -1 before
``discarded``         i16    (P,)          face-down discards this round
``discards``          i16    (27,)         discard pile counts
``gold_cards``        i16    (P,)          gold cards won (public count)
``events``            i16    (E, 6)        public events ``(type, actor, kind, target, cell, arg)``, -1 unused
``sc``                i32    (16,)         scalars, indices ``SC_*`` below
``gold_nuggets``      i32    (P,)          nuggets won (private)
``rr``                i32    (R, 4 + 3P)   round results: winner (0 diggers, 1 saboteurs), finder, last player,
                                           decisions, roles (P), gold cards (P), nuggets (P)
``rng``               u64    (6,)          the slot's PCG64 words (``core.rng``), advanced by each set-up
``last_rewards``      f32    (P,)          rewards of the last action (set at a round end)
``obs_cells``         i16    (HW + 1,)     what the lock-step's float observation row of this slot holds:
                                           per cell 1 + its board token, ``[HW]`` 1 when valid (0: unknown)
``mask_list``         i16    (256,)        the legal actions in the lock-step's mask row of this slot,
                                           increasing: ``[0]`` 1 + their count (0: unknown, or more than
                                           255), then the actions (``common.keep_list``)
====================  =====  ============  ==============================================================

The last two fields describe the vector env's own output rows (not the game): ``step`` rewrites only what changed
in them since its last write (a new game marks them unknown, which forces a full write).

The float observation is the reference's layout exactly (``base.observation``); the compact observation is an
int16 vector that holds the same information (:data:`COMPACT_DOC`; ``saboteur_env.vector.expand_compact``
rebuilds the float layout from it).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba.core import types as nbtypes
from numba.experimental import structref
from numpy.typing import NDArray

from saboteur_env.base.cards import (
    DIGGERS_BY_PLAYERS,
    DOUBLE_REPAIR_TOOLS,
    GOAL_KINDS,
    GOLD_CARD_VALUES,
    KIND_GOAL_GOLD,
    KIND_START,
    MAX_GOLD_DRAWN,
    NUM_DECK_KINDS,
    NUM_PATH_KINDS,
    PLACEABLE,
    PLACEABLE_KIND,
    PLACEABLE_SHAPE,
    SABOTEUR_PAYOUT,
    SABOTEURS_BY_PLAYERS,
    SHAPE_ID,
    SHAPE_KIND,
    SHAPE_OPEN,
    SHAPES,
    deck_counts,
)
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import geometry
from saboteur_env.core import rng as crng
from saboteur_env.core.common import clear_rows, keep_list
from saboteur_env.core.jit import helper, inline_helper, kernel
from saboteur_env.core.layout import Field, Layout

if TYPE_CHECKING:
    from saboteur_env.core.batch import Batch

# ---- constant tables (frozen into the compiled code; nothing here depends on the config) ----------------------
NO_SHAPE = len(SHAPES)  # row of the tables for an empty cell
_GROUP_BITS = [[sum(1 << e for e in g) for g in s.groups] for s in SHAPES]
CLOSURE = np.zeros((NO_SHAPE + 1, 16), dtype=np.int64)  # arms joined through the card to any arm in bits
for _s, _gb in enumerate(_GROUP_BITS):
    for _bits in range(16):
        CLOSURE[_s, _bits] = sum(g for g in _gb if g & _bits)
S_OPEN = np.append(SHAPE_OPEN, 0).astype(np.int64)
S_KIND = np.append(SHAPE_KIND, -1).astype(np.int64)
S_ROT = np.array([s.rotation for s in SHAPES] + [0], dtype=np.int64)
S_JOIN = np.array([s.join_bits for s in SHAPES] + [0], dtype=np.int64)
S_STUB = np.array([s.stub_bits for s in SHAPES] + [0], dtype=np.int64)
P_KIND = PLACEABLE_KIND.astype(np.int64)
P_SHAPE = PLACEABLE_SHAPE.astype(np.int64)
P_ROT = np.array([r for _, r in PLACEABLE], dtype=np.int64)
P_OPEN = S_OPEN[P_SHAPE]
NUM_O = len(PLACEABLE)  # 26 placeable orientations
_codes = np.arange(4096)
_cons, _req, _conn = _codes & 15, (_codes >> 4) & 15, (_codes >> 8) & 15
LEGAL = (((P_OPEN[None, :] & _cons[:, None]) == _req[:, None]) & ((P_OPEN[None, :] & _conn[:, None]) != 0)).astype(
    np.int8
)
# The same as bit sets over the 26 orientations (bit o), and the orientations of each path kind: the mask ANDs a
# cell's legal orientations with those of the kinds in hand instead of testing 26 orientations one by one.
LEGAL_BITS = (LEGAL.astype(np.int64) << np.arange(NUM_O, dtype=np.int64)).sum(axis=1)
KIND_OBITS = np.array([sum(1 << o for o in range(NUM_O) if P_KIND[o] == k) for k in range(NUM_PATH_KINDS)],
                      dtype=np.int64)  # fmt: skip
DR_TOOLS = np.array(DOUBLE_REPAIR_TOOLS, dtype=np.int64)  # (3 cards, 2 choices) -> tool
GOAL_SHAPE = np.array([[SHAPE_ID[(k, r)] for r in (0, 1)] for k in GOAL_KINDS], dtype=np.int64)  # (3 kinds, 2)
START_SHAPE = SHAPE_ID[(KIND_START, 0)]
GOLD_VALUES = np.array(GOLD_CARD_VALUES, dtype=np.int8)
SAB_PAYOUT = np.array([SABOTEUR_PAYOUT[k] for k in range(5)], dtype=np.int64)
K_GOLD = KIND_GOAL_GOLD
EMPTY_COL, FACEDOWN_COL = NO_SHAPE, NO_SHAPE + 1
# Public board planes 0-23 per shape id (rows), plus an empty cell and a face-down goal (base.board's planes).
PLANE_COLS = np.zeros((NO_SHAPE + 2, 24), dtype=np.float32)
for _i, _shape in enumerate(SHAPES):
    for _e in range(4):
        PLANE_COLS[_i, _e] = (_shape.open_bits >> _e) & 1
        PLANE_COLS[_i, 14 + _e] = (_shape.stub_bits >> _e) & 1
    for _e in range(6):
        PLANE_COLS[_i, 8 + _e] = (_shape.join_bits >> _e) & 1
    PLANE_COLS[_i, 18] = _shape.kind == KIND_START
    PLANE_COLS[_i, 19] = _shape.kind < NUM_PATH_KINDS
    PLANE_COLS[_i, 21] = _shape.kind == KIND_GOAL_GOLD
    PLANE_COLS[_i, 22] = _shape.kind in GOAL_KINDS[1:]
PLANE_COLS[EMPTY_COL, 23] = 1.0
PLANE_COLS[FACEDOWN_COL, 20] = 1.0
# The planes set to 1 per column, as a short list (the float writer touches only those).
PLANE_NZ = np.full((NO_SHAPE + 2, 24), -1, dtype=np.int64)
PLANE_NNZ = np.zeros(NO_SHAPE + 2, dtype=np.int64)
for _i in range(NO_SHAPE + 2):
    _nz = np.flatnonzero(PLANE_COLS[_i])
    PLANE_NZ[_i, : len(_nz)] = _nz
    PLANE_NNZ[_i] = len(_nz)
assert set(np.unique(PLANE_COLS)) <= {0.0, 1.0}

# Event types (base.state.EventType).
EV_PLACE, EV_BREAK, EV_REPAIR, EV_ROCKFALL, EV_MAP, EV_DISCARD, EV_REVEAL, EV_ROUND_END = range(8)
NUM_EVENT_TYPES = 8
# Scalars of a game (field ``sc``).
SC_ROUND, SC_CURRENT, SC_LAST, SC_LEFTOVER, SC_DECK_POS, SC_DECISIONS, SC_OVER, SC_JUST_ENDED = range(8)
SC_NUM_EVENTS, SC_GOLD_DECK, SC_NUM_RR, SC_ERROR, SC_GAMES = range(8, 13)
NUM_SC = 16
BLOCK = 32  # games per block of the fused lock-step
MASK_LIST = 255  # legal actions the lock-step's record holds (more: the row is cleared and sampled in full)
ERR_EVENTS = 1  # the event log overflowed (a bug: the capacity is a proven bound)

# Config table (int64): a header, then the field offsets, the neighbour table, the sorted deck, the role cards
# and the goal-cell flags.
H_P, H_R, H_HW, H_D, H_L, H_E, H_ROWS, H_COLS, H_START = range(9)
H_GOAL = 9  # 3 goal cells
H_HAND, H_WIN, H_PENALTY, H_NA, H_OBS, H_B, H_NBR, H_DECK, H_ROLES, H_ISGOAL, H_CSIZE, H_COMPACT = range(12, 24)
H_OFF = 32
NUM_FIELDS = 25
HEADER = H_OFF + NUM_FIELDS

FIELD_NAMES = (
    "round_decks", "round_roles", "round_goals", "gold_deck", "gold_left", "hands", "roles", "broken", "peeked",
    "cell_shape", "cell_reach", "goal_kind", "goal_revealed", "last_round_roles",
    "discarded", "discards", "gold_cards", "events",
    "sc", "gold_nuggets", "rr", "rng", "last_rewards", "obs_cells", "mask_list",
)  # fmt: skip
Views = namedtuple("Views", FIELD_NAMES)  # type: ignore[misc]  # the names are data (FIELD_NAMES)


@structref.register
class _ViewsType(nbtypes.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, nbtypes.unliteral(typ)) for name, typ in fields)


class ViewsRef(structref.StructRefProxy):
    """The field views of one batch as a single numba object: a B = 1 call passes one pointer instead of 23
    arrays (unboxing 23 arrays costs about 3 us per call). Built once per state (``CoreGameState``)."""


structref.define_proxy(ViewsRef, _ViewsType, list(FIELD_NAMES))


@kernel
def new_views(*views):
    """``ViewsRef(*views)`` as a cached kernel: the proxy's own constructor is compiled afresh in every process."""
    return ViewsRef(*views)


def forget_lockstep(batch: Batch, b0: int, b1: int) -> None:
    """Mark the lock-step's output rows of slots ``b0..b1`` unknown (rewritten in full by the next step): for
    states copied in from elsewhere (``Batch.from_states``), whose caches describe another buffer's rows."""
    batch.field("obs_cells")[b0:b1, batch.config.num_cells] = 0
    batch.field("mask_list")[b0:b1, 0] = 0


def kernel_args(batch: Batch) -> tuple[ViewsRef]:
    """What this module's kernels take before ``cfg``: one ``ViewsRef`` over the batch's field views (made once per
    batch; every entry point, B = 1 or batched, then shares one compiled specialisation)."""
    return (new_views(*batch.views),)


def fields(config: GameConfig) -> tuple[Field, ...]:
    """The base state's fields for ``config`` (in the order of :data:`FIELD_NAMES`)."""
    p, r, hw = config.num_players, config.rounds, config.num_cells
    d = int(deck_counts(config).sum())
    e = r * (d + 4)
    shapes = {
        "round_decks": ("i8", (r, d)), "round_roles": ("i8", (r, p + 1)), "round_goals": ("i8", (r, 3)),
        "gold_deck": ("i8", (28,)), "gold_left": ("i8", (28,)), "hands": ("i8", (p, NUM_DECK_KINDS)),
        "roles": ("i8", (p,)), "broken": ("i8", (p, 3)), "peeked": ("i8", (p, 3)), "cell_shape": ("i8", (hw,)),
        "cell_reach": ("i8", (hw,)), "goal_kind": ("i8", (3,)), "goal_revealed": ("i8", (3,)),
        "last_round_roles": ("i8", (p,)), "discarded": ("i16", (p,)), "discards": ("i16", (NUM_DECK_KINDS,)),
        "gold_cards": ("i16", (p,)), "events": ("i16", (e, 6)), "sc": ("i32", (NUM_SC,)),
        "gold_nuggets": ("i32", (p,)), "rr": ("i32", (r, 4 + 3 * p)), "rng": ("u64", (6,)),
        "last_rewards": ("f32", (p,)), "obs_cells": ("i16", (hw + 1,)),
        "mask_list": ("i16", (MASK_LIST + 1,)),
    }  # fmt: skip
    return tuple(Field(n, *shapes[n]) for n in FIELD_NAMES)


def obs_size(config: GameConfig) -> int:
    p, hw, L = config.num_players, config.num_cells, config.history_length
    return 26 * hw + 2 + NUM_DECK_KINDS + 11 * p + 1 + 1 + 3 + p + 1 + 1 + L * (73 + 2 * p)


def compact_size(config: GameConfig) -> int:
    p, hw, L = config.num_players, config.num_cells, config.history_length
    return hw + 1 + NUM_DECK_KINDS + 11 * p + 6 + 6 * L


def num_actions(config: GameConfig) -> int:
    p, hw = config.num_players, config.num_cells
    return hw * NUM_O + 12 * p + hw + 3 + NUM_DECK_KINDS


COMPACT_DOC = """Compact observation (int16), offsets for ``P`` players, ``HW`` cells, ``L`` history rows:

=============  ==========  ===================================================================================
name           size        content
=============  ==========  ===================================================================================
``cells``      HW          per storage cell: bits 0-5 = 0 empty, 1 face-down goal, 2 + shape id (``SHAPES``);
                           bits 6-9 = arms connected to the start; bit 10 = I peeked: gold; bit 11 = stone
``role``       1           0 gold-digger, 1 saboteur
``hand``       27          counts per card kind
``seats``      11 P        the float layout's seat table (seat-relative rows, ``SEAT_COLUMNS``)
``scalars``    6           deck size, gold deck size, round, seat offset to act, my nuggets, event count
``history``    6 L         last L public events, oldest first: (type, actor offset, kind, target offset, cell,
                           arg); -1 unused; the kind of another seat's face-down discard is -1
=============  ==========  ===================================================================================
"""


def config_table(config: GameConfig, layout: Layout) -> NDArray[np.int64]:
    """The int64 config table the kernels read (header, field offsets, neighbours, deck, role cards, goal flags)."""
    p, hw = config.num_players, config.num_cells
    geo = geometry(config)
    deck = np.repeat(np.arange(NUM_DECK_KINDS, dtype=np.int64), deck_counts(config))
    roles = np.array([0] * DIGGERS_BY_PLAYERS[p] + [1] * SABOTEURS_BY_PLAYERS[p], dtype=np.int64)
    parts = [geo.nbr.ravel().astype(np.int64), deck, roles, geo.is_goal_cell.astype(np.int64)]
    head = np.zeros(HEADER, dtype=np.int64)
    head[H_P], head[H_R], head[H_HW], head[H_D] = p, config.rounds, hw, len(deck)
    head[H_L], head[H_E] = config.history_length, config.rounds * (len(deck) + 4)
    head[H_ROWS], head[H_COLS], head[H_START] = config.rows, config.cols, geo.start_cell
    head[H_GOAL : H_GOAL + 3] = geo.goal_cells
    head[H_HAND] = config.hand_size
    head[H_WIN] = config.reward == "win"
    head[H_PENALTY] = bool(getattr(config, "broken_tool_penalty", False))
    head[H_NA], head[H_OBS], head[H_COMPACT] = num_actions(config), obs_size(config), compact_size(config)
    head[H_B] = layout.batch
    head[H_OFF : H_OFF + NUM_FIELDS] = layout.offsets
    pos = HEADER
    for slot, part in zip((H_NBR, H_DECK, H_ROLES, H_ISGOAL), parts, strict=True):
        head[slot] = pos
        pos += len(part)
    head[H_CSIZE] = pos
    return np.concatenate([head, *parts])


def rowcol_table(config: GameConfig) -> NDArray[np.float32]:
    """``(HW, 2)`` float32 row/col of each storage cell scaled to 0..1, exactly as the reference's history rows."""
    geo = geometry(config)
    return np.stack([geo.row_of / max(1, geo.rows - 1), geo.col_of / max(1, geo.cols - 1)], axis=1).astype(np.float32)


# ---- board -------------------------------------------------------------------------------------------------------
@helper
def _recompute_reach(shapes, reaches, b, nbr, start, stack):
    """Arms connected to the start (the reference's ``connected_arms`` fixpoint) of slot ``b``, by a flood fill.
    The board helpers index the batch's arrays with the slot: a per-slot view costs atomic reference counts."""
    for c in range(reaches.shape[1]):
        reaches[b, c] = 0
    reaches[b, start] = CLOSURE[shapes[b, start], 15]
    stack[0] = start
    sp = 1
    while sp > 0:
        sp -= 1
        c = stack[sp]
        r = reaches[b, c]
        for d in range(4):
            if (r >> d) & 1:
                j = nbr[c, d]
                if j < 0:
                    continue
                sj = shapes[b, j]
                if sj < 0:
                    continue
                od = (d + 2) & 3
                if (S_OPEN[sj] >> od) & 1 and not (reaches[b, j] >> od) & 1:
                    reaches[b, j] |= CLOSURE[sj, 1 << od]
                    stack[sp] = j
                    sp += 1


@inline_helper
def _reaching(shapes, reaches, b, nbr, cell):
    for d in range(4):
        j = nbr[cell, d]
        if j >= 0 and shapes[b, j] >= 0 and (reaches[b, j] >> ((d + 2) & 3)) & 1:
            return True
    return False


@helper
def _goal_rotation(shapes, reaches, b, nbr, cell, kind_slot, placed_cell):
    """common.reveal.goal_rotation over common.reveal.facing_of (no game preference)."""
    best = 0
    bk0 = bk1 = bk2 = 0
    for rot in range(2):
        ob = S_OPEN[GOAL_SHAPE[kind_slot, rot]]
        towards_placed = 0
        towards = 0
        mism = 0
        for d in range(4):
            j = nbr[cell, d]
            if j < 0 or shapes[b, j] < 0:
                continue
            o = (d + 2) & 3
            theirs = (S_OPEN[shapes[b, j]] >> o) & 1
            reaching = theirs and (reaches[b, j] >> o) & 1
            mine = (ob >> d) & 1
            if reaching:
                towards += mine
                if j == placed_cell:
                    towards_placed = mine
            elif mine != theirs:
                mism += 1
        k0, k1, k2 = -towards_placed, -towards, mism
        if rot == 0 or k0 < bk0 or (k0 == bk0 and (k1 < bk1 or (k1 == bk1 and k2 < bk2))):  # tuple < costs compile time
            bk0, bk1, bk2 = k0, k1, k2
            best = rot
    return best


# ---- set-up and rounds -----------------------------------------------------------------------------------------------
@helper
def _start_round(S, cfg, b, r, starter, stack):
    P, HW, H = cfg[H_P], cfg[H_HW], cfg[H_HAND]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    sc = S.sc[b]
    sc[SC_ROUND] = r
    for g in range(3):
        S.goal_kind[b, g] = S.round_goals[b, r, g]
        S.goal_revealed[b, g] = 0
    shape = S.cell_shape[b]
    shape[:] = -1
    start = cfg[H_START]
    shape[start] = START_SHAPE
    _recompute_reach(S.cell_shape, S.cell_reach, b, nbr, start, stack)
    deck = S.round_decks[b, r]
    S.hands[b] = 0
    for seat in range(P):
        for k in range(seat * H, (seat + 1) * H):
            S.hands[b, seat, deck[k]] += 1
    sc[SC_DECK_POS] = P * H
    for seat in range(P):
        S.roles[b, seat] = S.round_roles[b, r, seat]
    sc[SC_LEFTOVER] = S.round_roles[b, r, P]
    S.broken[b] = 0
    S.peeked[b] = 0
    S.discarded[b] = 0
    S.discards[b] = 0
    sc[SC_CURRENT] = starter
    sc[SC_LAST] = starter


@helper
def _setup(S, cfg, b, stack, draw):
    """A new game in slot ``b``: draw the set-up from the slot's generator words (unless ``draw`` is False: the
    set-up arrays were written by the caller) and start round 1 with seat 0 (reference ``rules.new_game``)."""
    R, D, P = cfg[H_R], cfg[H_D], cfg[H_P]
    if draw:
        st = S.rng[b]
        dk = cfg[cfg[H_DECK] : cfg[H_DECK] + D]
        for r in range(R):
            for k in range(D):
                S.round_decks[b, r, k] = dk[k]
            crng.shuffle(st, S.round_decks[b, r])
        rc = cfg[cfg[H_ROLES] : cfg[H_ROLES] + P + 1]
        for r in range(R):
            for k in range(P + 1):
                S.round_roles[b, r, k] = rc[k]
            crng.shuffle(st, S.round_roles[b, r])
        for r in range(R):
            for k in range(3):
                S.round_goals[b, r, k] = GOAL_KINDS[k]
            crng.shuffle(st, S.round_goals[b, r])
        for k in range(28):
            S.gold_deck[b, k] = GOLD_VALUES[k]
        crng.shuffle(st, S.gold_deck[b])
    S.gold_left[b] = 1
    S.gold_nuggets[b] = 0
    S.gold_cards[b] = 0
    S.last_rewards[b] = 0.0
    S.last_round_roles[b] = -1
    S.events[b] = -1
    S.rr[b] = 0
    S.obs_cells[b, cfg[H_HW]] = 0  # the lock-step's output rows of this slot: rewrite in full next time
    S.mask_list[b, 0] = 0
    sc = S.sc[b]
    games = sc[SC_GAMES]
    sc[:] = 0
    sc[SC_GAMES] = games + 1
    sc[SC_GOLD_DECK] = 28
    _start_round(S, cfg, b, 0, 0, stack)


# ---- mask --------------------------------------------------------------------------------------------------------
@helper
def _mask_range(S, cfg, b0, b1, masks, num_legal, incremental):
    """Write the legal-action row of slot ``b`` into ``masks[b]`` (int8) and its number of legal actions into
    ``num_legal[b]`` (reference ``rules.legal_action_mask``).

    ``incremental``: ``masks`` is the lock-step's own buffer, whose row still holds what the last incremental call
    set (``mask_list``): only those bytes are cleared, not the whole row (``common.clear_rows``), and the new legal
    actions, set nearly in increasing order, are kept sorted for the next call and the lock-step's sampler."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))  # once per call, not per slot
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    mark = np.zeros(HW, dtype=np.int8)
    pos = np.empty(masks.shape[1], dtype=np.int32)  # the actions set, in the order they are set
    words = masks.view(np.uint64)  # rows are padded to whole words
    # The state's arrays bound once per call and indexed with the slot: per-slot views (``S.hands[b]``) cost an
    # atomic reference count increment and decrement each.
    scs, lst, hands, brokens, shapes, reaches = S.sc, S.mask_list, S.hands, S.broken, S.cell_shape, S.cell_reach
    revealed = S.goal_revealed
    clear_rows(masks, words, lst, b0, b1, incremental)
    for b in range(b0, b1):
        if scs[b, SC_OVER]:
            num_legal[b] = 0
            continue
        seat = scs[b, SC_CURRENT]
        n = 0
        avail = 0  # orientations of the path cards in hand (bit o)
        for k in range(NUM_PATH_KINDS):
            if hands[b, seat, k] > 0:
                avail |= KIND_OBITS[k]
        if avail and brokens[b, seat, 0] == 0 and brokens[b, seat, 1] == 0 and brokens[b, seat, 2] == 0:
            # Only empty cells next to a connected arm can take a card: mark them from the reached cells (a
            # handful), then visit the marked cells in order (the actions are set in increasing order).
            lo_c = HW
            hi_c = -1
            for c in range(HW):
                r = reaches[b, c]
                if r:
                    for d in range(4):
                        if (r >> d) & 1:
                            j = nbr[c, d]
                            if j >= 0 and shapes[b, j] < 0 and not isgoal[j]:
                                mark[j] = 1
                                lo_c = min(lo_c, j)
                                hi_c = max(hi_c, j)
            for c in range(lo_c, hi_c + 1):
                if not mark[c]:
                    continue
                mark[c] = 0
                cons = 0
                req = 0
                conn = 0
                for d in range(4):
                    j = nbr[c, d]
                    if j >= 0 and shapes[b, j] >= 0:
                        od = (d + 2) & 3
                        cons |= 1 << d
                        if (S_OPEN[shapes[b, j]] >> od) & 1:
                            req |= 1 << d
                            if (reaches[b, j] >> od) & 1:
                                conn |= 1 << d
                if conn == 0:
                    continue
                bits = LEGAL_BITS[cons | (req << 4) | (conn << 8)] & avail
                if bits == 0:
                    continue
                base = c * NUM_O
                for o in range(NUM_O):
                    if (bits >> o) & 1:
                        masks[b, base + o] = 1
                        pos[n] = base + o
                        n += 1
        ob = HW * NUM_O
        orp = ob + 3 * P
        odr = orp + 3 * P
        orf = odr + 6 * P
        om = orf + HW
        odis = om + 3
        for t in range(3):
            if hands[b, seat, 16 + t] > 0:
                for k in range(P):
                    if brokens[b, seat + k if seat + k < P else seat + k - P, t] == 0:
                        masks[b, ob + t * P + k] = 1
                        pos[n] = ob + t * P + k
                        n += 1
            if hands[b, seat, 19 + t] > 0:
                for k in range(P):
                    if brokens[b, seat + k if seat + k < P else seat + k - P, t]:
                        masks[b, orp + t * P + k] = 1
                        pos[n] = orp + t * P + k
                        n += 1
        for cd in range(3):
            if hands[b, seat, 22 + cd] > 0:
                for ch in range(2):
                    tool = DR_TOOLS[cd, ch]
                    for k in range(P):
                        if brokens[b, seat + k if seat + k < P else seat + k - P, tool]:
                            masks[b, odr + (cd * 2 + ch) * P + k] = 1
                            pos[n] = odr + (cd * 2 + ch) * P + k
                            n += 1
        if hands[b, seat, 25] > 0:
            for c in range(HW):
                s = shapes[b, c]
                if s >= 0 and S_KIND[s] < NUM_PATH_KINDS:
                    masks[b, orf + c] = 1
                    pos[n] = orf + c
                    n += 1
        if hands[b, seat, 26] > 0:
            for g in range(3):
                if revealed[b, g] == 0:
                    masks[b, om + g] = 1
                    pos[n] = om + g
                    n += 1
        for k in range(NUM_DECK_KINDS):
            if hands[b, seat, k] > 0:
                masks[b, odis + k] = 1
                pos[n] = odis + k
                n += 1
        num_legal[b] = n
        keep_list(lst, b, pos, n, incremental)


# ---- transition --------------------------------------------------------------------------------------------------
@inline_helper
def _log(events, scs, b, cap, etype, actor, kind, target, cell, arg):
    """Append one public event row to slot ``b``'s log (the batch's arrays indexed with the slot: no views)."""
    e = scs[b, SC_NUM_EVENTS]
    if e >= cap:
        scs[b, SC_ERROR] |= ERR_EVENTS
        return
    events[b, e, 0] = etype
    events[b, e, 1] = actor
    events[b, e, 2] = kind
    events[b, e, 3] = target
    events[b, e, 4] = cell
    events[b, e, 5] = arg
    scs[b, SC_NUM_EVENTS] = e + 1


@helper
def _take_value(S, b, v):
    for i in range(28):
        if S.gold_left[b, i] and S.gold_deck[b, i] == v:
            S.gold_left[b, i] = 0
            return


@helper
def _end_round(S, cfg, b, diggers_win, finder, stack):
    """Gold, rewards, round result and the next round (reference ``rules._end_round``, B1-B6)."""
    P = cfg[H_P]
    sc = S.sc[b]
    roles = S.roles[b]
    nug = np.zeros(P, dtype=np.int64)
    ncards = np.zeros(P, dtype=np.int64)
    if diggers_win:
        elig = np.empty(P, dtype=np.int64)
        ne = 0
        for k in range(P):
            seat = (finder - k) % P
            if roles[seat] == 0:
                if cfg[H_PENALTY] and (S.broken[b, seat, 0] or S.broken[b, seat, 1] or S.broken[b, seat, 2]):
                    continue
                elig[ne] = seat
                ne += 1
        if ne > 0:
            top = min(P, MAX_GOLD_DRAWN)
            drawn = np.empty(top, dtype=np.int64)
            nd = 0
            for i in range(28):
                if nd == top:
                    break
                if S.gold_left[b, i]:
                    drawn[nd] = S.gold_deck[b, i]
                    S.gold_left[b, i] = 0
                    nd += 1
            for i in range(1, nd):  # highest first; an insertion sort of at most 9 values (np.sort costs compile time)
                v = drawn[i]
                j = i
                while j > 0 and drawn[j - 1] < v:
                    drawn[j] = drawn[j - 1]
                    j -= 1
                drawn[j] = v
            for i in range(nd):
                seat = elig[i % ne]
                nug[seat] += drawn[i]
                ncards[seat] += 1
    else:
        nsab = 0
        for seat in range(P):
            nsab += roles[seat] == 1
        value = SAB_PAYOUT[nsab]
        for seat in range(P):  # increasing seat order (B6)
            if roles[seat] != 1:
                continue
            c1 = c2 = c3 = 0
            for i in range(28):
                if S.gold_left[b, i]:
                    v = S.gold_deck[b, i]
                    if v == 1:
                        c1 += 1
                    elif v == 2:
                        c2 += 1
                    else:
                        c3 += 1
            # Exact value with the fewest cards, higher cards first; else the largest total below (B4).
            bk0 = bk1 = bk2 = bk3 = 0
            ba = bb = bc = 0
            first = True
            for c in range(min(c3, value // 3) + 1):
                for bb_ in range(min(c2, (value - 3 * c) // 2) + 1):
                    a = min(c1, value - 3 * c - 2 * bb_)
                    total = a + 2 * bb_ + 3 * c
                    k0, k1, k2, k3 = -total, a + bb_ + c, -c, -bb_
                    low = k2 < bk2 or (k2 == bk2 and k3 < bk3)
                    better = k0 < bk0 or (k0 == bk0 and (k1 < bk1 or (k1 == bk1 and low)))
                    if first or better:  # the tuple comparison (k0, ..) < (bk0, ..), without its compile cost
                        bk0, bk1, bk2, bk3 = k0, k1, k2, k3
                        ba, bb, bc = a, bb_, c
                        first = False
            for _ in range(bc):
                _take_value(S, b, 3)
            for _ in range(bb):
                _take_value(S, b, 2)
            for _ in range(ba):
                _take_value(S, b, 1)
            nug[seat] = value  # the cards' total plus loose bank nuggets make the payout's value
            ncards[seat] = ba + bb + bc
    left = 0
    for i in range(28):
        left += S.gold_left[b, i]
    sc[SC_GOLD_DECK] = left
    winners = 0 if diggers_win else 1
    for seat in range(P):
        S.gold_nuggets[b, seat] += nug[seat]
        S.gold_cards[b, seat] += ncards[seat]
        if cfg[H_WIN]:
            S.last_rewards[b, seat] = 1.0 if roles[seat] == winners else -1.0
        else:
            S.last_rewards[b, seat] = nug[seat]
        S.last_round_roles[b, seat] = roles[seat]
    sc[SC_JUST_ENDED] = 1
    _log(S.events, S.sc, b, cfg[H_E], EV_ROUND_END, sc[SC_LAST], -1, -1, -1, winners)
    r = sc[SC_ROUND]
    res = S.rr[b, r]
    res[0] = winners
    res[1] = finder
    res[2] = sc[SC_LAST]
    res[3] = sc[SC_DECISIONS] + 1
    for seat in range(P):
        res[4 + seat] = roles[seat]
        res[4 + P + seat] = ncards[seat]
        res[4 + 2 * P + seat] = nug[seat]
    sc[SC_NUM_RR] = r + 1
    if r + 1 < cfg[H_R]:
        _start_round(S, cfg, b, r + 1, (sc[SC_LAST] + 1) % P, stack)
    else:
        sc[SC_OVER] = 1


@helper
def _apply_range(S, cfg, b0, b1, actions, stack):
    """Apply the legal action ``a`` for the seat to act in slot ``b`` (reference ``rules.apply_action``)."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))  # once per call, not per slot
    # The state's arrays bound once per call (a field read through ``S`` or a per-slot view costs an atomic
    # reference count increment and decrement); per-slot views only where a helper takes one.
    scs, hands, shapes, reaches, revealed = S.sc, S.hands, S.cell_shape, S.cell_reach, S.goal_revealed
    kinds, discards, events, last_rewards = S.goal_kind, S.discards, S.events, S.last_rewards
    brokens, peeked, discarded, decks = S.broken, S.peeked, S.discarded, S.round_decks
    # Goals revealed by a placement, in order: the stack's spare tail (no allocation per call). The flood fill
    # pushes each (cell, arm) at most once, so it never reaches past 4 * HW entries.
    order = stack[-8:-4]
    newly = stack[-4:]
    for b in range(b0, b1):
        a = actions[b]
        if scs[b, SC_JUST_ENDED]:
            for p in range(P):
                last_rewards[b, p] = 0.0
            scs[b, SC_JUST_ENDED] = 0
        seat = scs[b, SC_CURRENT]
        ob = HW * NUM_O
        orp = ob + 3 * P
        odr = orp + 3 * P
        orf = odr + 6 * P
        om = orf + HW
        odis = om + 3
        round_over = False
        if a < ob:
            cell = a // NUM_O
            o = a % NUM_O
            kind = P_KIND[o]
            hands[b, seat, kind] -= 1
            shapes[b, cell] = P_SHAPE[o]
            _recompute_reach(shapes, reaches, b, nbr, cfg[H_START], stack)
            _log(events, scs, b, cfg[H_E], EV_PLACE, seat, kind, -1, cell, P_ROT[o])
            # Reveal every reached face-down goal, pass by pass, until nothing changes (reference board.reveal_...).
            nrev = 0
            while True:
                nn = 0
                for g in range(3):
                    if revealed[b, g] == 0 and _reaching(shapes, reaches, b, nbr, cfg[H_GOAL + g]):
                        newly[nn] = g
                        nn += 1
                if nn == 0:
                    break
                for i in range(nn):
                    g = newly[i]
                    gcell = cfg[H_GOAL + g]
                    ks = kinds[b, g] - K_GOLD
                    rot = 0 if ks == 0 else _goal_rotation(shapes, reaches, b, nbr, gcell, ks, cell)
                    revealed[b, g] = 1
                    shapes[b, gcell] = GOAL_SHAPE[ks, rot]
                    _recompute_reach(shapes, reaches, b, nbr, cfg[H_START], stack)
                    order[nrev] = g
                    nrev += 1
            gold = False
            for i in range(nrev):
                g = order[i]
                gcell = cfg[H_GOAL + g]
                _log(events, scs, b, cfg[H_E], EV_REVEAL, seat, kinds[b, g], -1, gcell, S_ROT[shapes[b, gcell]])
                if kinds[b, g] == K_GOLD:
                    gold = True
            if gold:
                scs[b, SC_LAST] = seat  # the finder does not draw
                _end_round(S, cfg, b, True, seat, stack)
                round_over = True
        elif a < orp:
            t = (a - ob) // P
            target = (seat + (a - ob) % P) % P
            hands[b, seat, 16 + t] -= 1
            brokens[b, target, t] = 1
            _log(events, scs, b, cfg[H_E], EV_BREAK, seat, 16 + t, target, -1, t)
        elif a < orf:
            if a < odr:
                t = (a - orp) // P
                target = (seat + (a - orp) % P) % P
                kind = 19 + t
            else:
                cc = (a - odr) // P
                target = (seat + (a - odr) % P) % P
                kind = 22 + cc // 2
                t = DR_TOOLS[cc // 2, cc % 2]
            hands[b, seat, kind] -= 1
            brokens[b, target, t] = 0
            discards[b, kind] += 1
            discards[b, 16 + t] += 1
            _log(events, scs, b, cfg[H_E], EV_REPAIR, seat, kind, target, -1, t)
        elif a < om:
            cell = a - orf
            hands[b, seat, 25] -= 1
            removed = S_KIND[shapes[b, cell]]
            shapes[b, cell] = -1
            _recompute_reach(shapes, reaches, b, nbr, cfg[H_START], stack)
            discards[b, 25] += 1
            discards[b, removed] += 1
            _log(events, scs, b, cfg[H_E], EV_ROCKFALL, seat, 25, -1, cell, removed)
        elif a < odis:
            g = a - om
            hands[b, seat, 26] -= 1
            peeked[b, seat, g] = 1
            discards[b, 26] += 1
            _log(events, scs, b, cfg[H_E], EV_MAP, seat, 26, -1, -1, g)
        else:
            kind = a - odis
            hands[b, seat, kind] -= 1
            discards[b, kind] += 1
            discarded[b, seat] += 1
            _log(events, scs, b, cfg[H_E], EV_DISCARD, seat, kind, -1, -1, -1)
        if not round_over:
            D = cfg[H_D]
            r = scs[b, SC_ROUND]
            if scs[b, SC_DECK_POS] < D:
                hands[b, seat, decks[b, r, scs[b, SC_DECK_POS]]] += 1
                scs[b, SC_DECK_POS] += 1
            scs[b, SC_LAST] = seat
            if scs[b, SC_DECK_POS] < D:  # while cards are left to draw, every hand holds cards
                scs[b, SC_CURRENT] = (seat + 1) % P
            else:
                nxt = -1
                for k in range(1, P + 1):
                    s2 = (seat + k) % P
                    tot = 0
                    for kk in range(NUM_DECK_KINDS):
                        tot += hands[b, s2, kk]
                    if tot > 0:
                        nxt = s2
                        break
                if nxt >= 0:
                    scs[b, SC_CURRENT] = nxt
                else:
                    _end_round(S, cfg, b, False, -1, stack)
        scs[b, SC_DECISIONS] += 1

    # ---- observations ----------------------------------------------------------------------------------------------


@helper
def _history_float(events, out, pos, first, seat, P, L, rowcol):
    """Set the non-zero entries of the float history rows (events ``first .. first + L``, seen by ``seat``) at
    ``out[pos:]`` (zero-filled by the caller)."""
    F = 73 + 2 * P
    for i in range(L):
        e = first + i
        if e < 0:
            continue
        row = pos + i * F
        etype, actor, kind = events[e, 0], events[e, 1], events[e, 2]
        target, cell, arg = events[e, 3], events[e, 4], events[e, 5]
        out[row] = 1.0
        out[row + 1 + etype] = 1.0
        rel = actor - seat
        out[row + 9 + (rel + P if rel < 0 else rel)] = 1.0
        if kind >= 0 and (etype != EV_DISCARD or actor == seat):
            out[row + 9 + P + kind] = 1.0
        if target >= 0:
            rel = target - seat
            out[row + 40 + P + (rel + P if rel < 0 else rel)] = 1.0
        if cell >= 0:
            out[row + 40 + 2 * P] = rowcol[cell, 0]
            out[row + 41 + 2 * P] = rowcol[cell, 1]
        if arg >= 0:
            out[row + 42 + 2 * P + arg] = 1.0


@helper
def _obs_float_range(S, cfg, rowcol, b0, b1, seats, obs, incremental):
    """The reference's ``encode_observation(state, seat)`` for slots ``b0..b1`` (``seats[b]``, -1: the seat to
    act), written into ``obs[b]``: each region is zero-filled just before its few non-zero entries are set, so the
    lines are in cache for the scattered writes.

    ``incremental``: ``obs`` is the lock-step's own buffer, whose row still holds what the last incremental write
    put there (``obs_cells``): only the planes of cells whose token (shape and connected arms) changed are rewritten
    (the 24 public planes are most of the observation and a step changes a few cells)."""
    P, HW, L = cfg[H_P], cfg[H_HW], cfg[H_L]
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    for b in range(b0, b1):
        out = obs[b]
        seat = seats[b] if seats[b] >= 0 else S.sc[b, SC_CURRENT]
        shape = S.cell_shape[b]
        reach = S.cell_reach[b]
        cells = S.obs_cells[b]
        if incremental and cells[HW] == 1:
            for c in range(HW):
                sh = shape[c]
                cl = sh if sh >= 0 else (FACEDOWN_COL if isgoal[c] else EMPTY_COL)
                r = reach[c]
                tok = cl | (r << 6)
                old = cells[c] - 1
                if old == tok:
                    continue
                ocl, orr = old & 63, old >> 6
                for k in range(PLANE_NNZ[ocl]):
                    out[PLANE_NZ[ocl, k] * HW + c] = 0.0
                for d in range(4):
                    if (orr >> d) & 1:
                        out[(4 + d) * HW + c] = 0.0
                for k in range(PLANE_NNZ[cl]):
                    out[PLANE_NZ[cl, k] * HW + c] = 1.0
                for d in range(4):
                    if (r >> d) & 1:
                        out[(4 + d) * HW + c] = 1.0
                cells[c] = tok + 1
            for g in range(3):
                gc = cfg[H_GOAL + g]
                out[24 * HW + gc] = 0.0
                out[25 * HW + gc] = 0.0
        else:
            out[: 26 * HW] = 0.0  # a memset, then only the planes that are 1 (most cells set one or a few)
            for c in range(HW):
                sh = shape[c]
                cl = sh if sh >= 0 else (FACEDOWN_COL if isgoal[c] else EMPTY_COL)
                for k in range(PLANE_NNZ[cl]):
                    out[PLANE_NZ[cl, k] * HW + c] = 1.0
                r = reach[c]
                if r:
                    for d in range(4):
                        if (r >> d) & 1:
                            out[(4 + d) * HW + c] = 1.0
                if incremental:
                    cells[c] = (cl | (r << 6)) + 1
            if incremental:
                cells[HW] = 1
        for g in range(3):
            if S.peeked[b, seat, g]:
                plane = 24 if S.goal_kind[b, g] == K_GOLD else 25
                out[plane * HW + cfg[H_GOAL + g]] = 1.0
        pos = 26 * HW
        role = S.roles[b, seat]
        out[pos] = 1.0 if role == 0 else 0.0
        out[pos + 1] = 1.0 if role == 1 else 0.0
        pos += 2
        hands = S.hands[b]
        for k in range(NUM_DECK_KINDS):
            out[pos + k] = hands[seat, k]
        pos += NUM_DECK_KINDS
        # The state's arrays bound once per slot: the stores into ``out`` would otherwise reload them per use.
        broken = S.broken[b]
        gold_cards = S.gold_cards[b]
        peeked = S.peeked[b]
        lrr = S.last_round_roles[b]
        discarded = S.discarded[b]
        x = seat
        for k in range(P):
            row = pos + 11 * k
            out[row] = broken[x, 0]
            out[row + 1] = broken[x, 1]
            out[row + 2] = broken[x, 2]
            hs = 0
            for kk in range(NUM_DECK_KINDS):
                hs += hands[x, kk]
            out[row + 3] = hs
            out[row + 4] = gold_cards[x]
            out[row + 5] = peeked[x, 0]
            out[row + 6] = peeked[x, 1]
            out[row + 7] = peeked[x, 2]
            lr = lrr[x]
            out[row + 8] = 1.0 if lr == 0 else 0.0
            out[row + 9] = 1.0 if lr == 1 else 0.0
            out[row + 10] = discarded[x]
            x = x + 1 if x + 1 < P else 0
        pos += 11 * P
        sc = S.sc[b]
        out[pos] = cfg[H_D] - sc[SC_DECK_POS]
        out[pos + 1] = sc[SC_GOLD_DECK]
        for r in range(3):
            out[pos + 2 + r] = 1.0 if r == sc[SC_ROUND] else 0.0
        pos += 5
        to_act = sc[SC_CURRENT] - seat
        if to_act < 0:
            to_act += P
        for k in range(P):
            out[pos + k] = 1.0 if k == to_act else 0.0
        pos += P
        out[pos] = S.gold_nuggets[b, seat]
        out[pos + 1] = sc[SC_NUM_EVENTS]
        pos += 2
        if L > 0:
            # Every history row changes each decision (the window slides, the entries are seat-relative): the
            # block is zero-filled and its few entries set. Clearing the entries the last write set instead was
            # no faster in scratch alternations (its scattered stores touch the same lines) and needed a record.
            out[pos : pos + L * (73 + 2 * P)] = 0.0
            _history_float(S.events[b], out, pos, sc[SC_NUM_EVENTS] - L, seat, P, L, rowcol)


@helper
def _obs_compact_range(S, cfg, b0, b1, seats, obs):
    """The compact observation (``COMPACT_DOC``) of ``seat`` in slot ``b``, written into ``obs[b]`` (int16).

    The state's arrays are bound once per call and indexed with the slot: a field read through ``S`` or a per-slot
    view (``S.hands[b]``) takes an atomic reference count increment and decrement each time, more than this
    writer's arithmetic. Seat offsets are taken with a conditional add, not ``%`` (an integer division)."""
    P, HW, L = cfg[H_P], cfg[H_HW], cfg[H_L]
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    scs, shapes, reaches, peekeds, kinds = S.sc, S.cell_shape, S.cell_reach, S.peeked, S.goal_kind
    roles, hands, brokens, golds, lrrs = S.roles, S.hands, S.broken, S.gold_cards, S.last_round_roles
    discardeds, nuggets, events = S.discarded, S.gold_nuggets, S.events
    for b in range(b0, b1):
        seat = seats[b] if seats[b] >= 0 else scs[b, SC_CURRENT]
        for c in range(HW):
            sh = shapes[b, c]
            tok = sh + 2 if sh >= 0 else (1 if isgoal[c] else 0)
            obs[b, c] = tok | (reaches[b, c] << 6)
        for g in range(3):
            if peekeds[b, seat, g]:
                c = cfg[H_GOAL + g]
                obs[b, c] |= (1 << 10) if kinds[b, g] == K_GOLD else (1 << 11)
        pos = HW
        obs[b, pos] = roles[b, seat]
        pos += 1
        for k in range(NUM_DECK_KINDS):
            obs[b, pos + k] = hands[b, seat, k]
        pos += NUM_DECK_KINDS
        x = seat
        for k in range(P):
            row = pos + 11 * k
            obs[b, row] = brokens[b, x, 0]
            obs[b, row + 1] = brokens[b, x, 1]
            obs[b, row + 2] = brokens[b, x, 2]
            hs = 0
            for kk in range(NUM_DECK_KINDS):
                hs += hands[b, x, kk]
            obs[b, row + 3] = hs
            obs[b, row + 4] = golds[b, x]
            obs[b, row + 5] = peekeds[b, x, 0]
            obs[b, row + 6] = peekeds[b, x, 1]
            obs[b, row + 7] = peekeds[b, x, 2]
            lr = lrrs[b, x]
            obs[b, row + 8] = 1 if lr == 0 else 0
            obs[b, row + 9] = 1 if lr == 1 else 0
            obs[b, row + 10] = discardeds[b, x]
            x = x + 1 if x + 1 < P else 0
        pos += 11 * P
        obs[b, pos] = cfg[H_D] - scs[b, SC_DECK_POS]
        obs[b, pos + 1] = scs[b, SC_GOLD_DECK]
        obs[b, pos + 2] = scs[b, SC_ROUND]
        rel = scs[b, SC_CURRENT] - seat
        obs[b, pos + 3] = rel + P if rel < 0 else rel
        obs[b, pos + 4] = nuggets[b, seat]
        ne = scs[b, SC_NUM_EVENTS]
        obs[b, pos + 5] = ne
        pos += 6
        first = ne - L
        for i in range(L):
            e = first + i
            row = pos + 6 * i
            if e < 0:
                for k in range(6):
                    obs[b, row + k] = -1
                continue
            etype, actor, target = events[b, e, 0], events[b, e, 1], events[b, e, 3]
            obs[b, row] = etype
            rel = actor - seat
            obs[b, row + 1] = rel + P if rel < 0 else rel
            obs[b, row + 2] = events[b, e, 2] if (etype != EV_DISCARD or actor == seat) else -1
            rel = target - seat
            obs[b, row + 3] = (rel + P if rel < 0 else rel) if target >= 0 else -1
            obs[b, row + 4] = events[b, e, 4]
            obs[b, row + 5] = events[b, e, 5]

    # ---- decoding ------------------------------------------------------------------------------------------------


def expand_compact(compact: NDArray[np.int16], config: GameConfig) -> NDArray[np.float32]:
    """The float observation(s) rebuilt from compact ones (shape ``(..., compact_size)``); lossless."""
    c = np.asarray(compact)
    lead = c.shape[:-1]
    c = c.reshape(-1, c.shape[-1]).astype(np.int64)
    p, hw, L = config.num_players, config.num_cells, config.history_length
    n = c.shape[0]
    out = np.zeros((n, obs_size(config)), dtype=np.float32)
    cells = c[:, :hw]
    tok = cells & 63
    col = np.where(tok >= 2, tok - 2, np.where(tok == 1, FACEDOWN_COL, EMPTY_COL))
    planes = PLANE_COLS[col]  # (n, HW, 24)
    reach = (cells >> 6) & 15
    planes[:, :, 4:8] = (reach[:, :, None] >> np.arange(4)) & 1
    board = out[:, : 26 * hw].reshape(n, 26, hw)
    board[:, :24] = planes.transpose(0, 2, 1)
    board[:, 24] = (cells >> 10) & 1
    board[:, 25] = (cells >> 11) & 1
    pos, src = 26 * hw, hw
    out[np.arange(n), pos + c[:, src]] = 1.0
    pos, src = pos + 2, src + 1
    out[:, pos : pos + 27 + 11 * p] = c[:, src : src + 27 + 11 * p]
    pos, src = pos + 27 + 11 * p, src + 27 + 11 * p
    out[:, pos] = c[:, src]
    out[:, pos + 1] = c[:, src + 1]
    out[np.arange(n), pos + 2 + c[:, src + 2]] = 1.0
    out[np.arange(n), pos + 5 + c[:, src + 3]] = 1.0
    out[:, pos + 5 + p] = c[:, src + 4]
    out[:, pos + 6 + p] = c[:, src + 5]
    pos, src = pos + 7 + p, src + 6
    rowcol = rowcol_table(config)
    f = 73 + 2 * p
    for i in range(L):
        ev = c[:, src + 6 * i : src + 6 * i + 6]
        row = out[:, pos + i * f : pos + (i + 1) * f]
        ok = ev[:, 0] >= 0
        idx = np.flatnonzero(ok)
        row[idx, 0] = 1.0
        row[idx, 1 + ev[idx, 0]] = 1.0
        row[idx, 9 + ev[idx, 1]] = 1.0
        k = idx[ev[idx, 2] >= 0]
        row[k, 9 + p + ev[k, 2]] = 1.0
        k = idx[ev[idx, 3] >= 0]
        row[k, 40 + p + ev[k, 3]] = 1.0
        k = idx[ev[idx, 4] >= 0]
        row[k, 40 + 2 * p] = rowcol[ev[k, 4], 0]
        row[k, 41 + 2 * p] = rowcol[ev[k, 4], 1]
        k = idx[ev[idx, 5] >= 0]
        row[k, 42 + 2 * p + ev[k, 5]] = 1.0
    return out.reshape(*lead, out.shape[-1])


# ---- entry points for one game (B = 1: the AEC environment, agents and tournaments) ---------------------------
# ``S`` is a ``ViewsRef`` made once per state: no views are built or unboxed per call.
@kernel
def apply_step1(S, cfg, rowcol, action, out, num_legal, seats, obs):
    """Apply ``action[0]`` (legal, unchecked), then write the next mask and the observation of the seat to act
    (``seats[0]`` is set to it): one call per AEC decision."""
    stack = np.empty(4 * cfg[H_HW] + 8, dtype=np.int64)
    _apply_range(S, cfg, 0, 1, action, stack)
    _mask_range(S, cfg, 0, 1, out, num_legal, False)
    seats[0] = S.sc[0, SC_CURRENT]
    _obs_float_range(S, cfg, rowcol, 0, 1, seats, obs, False)


# ---- entry points (one call per batch or shard; ``S`` is the batch's ``ViewsRef``, see ``kernel_args``) ------


@kernel
def setup(S, cfg, b0, b1, draw):
    """New games in slots ``b0..b1`` (drawn from each slot's generator words when ``draw``)."""
    stack = np.empty(4 * cfg[H_HW] + 8, dtype=np.int64)
    for b in range(b0, b1):
        _setup(S, cfg, b, stack, draw)


@kernel
def masks(S, cfg, b0, b1, out, num_legal):
    _mask_range(S, cfg, b0, b1, out, num_legal, False)


@kernel
def observe(S, cfg, rowcol, b0, b1, seats, out):
    """Float observations of ``seats[b]`` (-1: the seat to act) in slots ``b0..b1``."""
    _obs_float_range(S, cfg, rowcol, b0, b1, seats, out, False)


@kernel
def observe_compact(S, cfg, b0, b1, seats, out):
    _obs_compact_range(S, cfg, b0, b1, seats, out)


@kernel
def apply(S, cfg, b0, b1, actions):
    """Apply one (legal, unchecked) action per slot."""
    stack = np.empty(4 * cfg[H_HW] + 8, dtype=np.int64)
    _apply_range(S, cfg, b0, b1, actions, stack)


@kernel
def step(S, cfg, rowcol, b0, b1, actions, mask, num_legal, obs_mode, obs_f, obs_c,
         rewards, done, seats, final_returns):  # fmt: skip
    """The vector env's lock-step over slots ``b0..b1``.

    1. Every action is checked against ``mask`` (the legal actions returned by the previous step); on the first
       illegal one nothing changes and its slot is returned.
    2. Apply; ``rewards[b]`` = this step's rewards per seat (a round end), ``done[b]`` = the game ended.
    3. A finished game's final scores go to ``final_returns[b]`` and the slot starts its next game at once.
    4. ``mask``, ``num_legal``, ``seats`` (the seat to act) and the observation of that seat
       (``obs_mode``: 0 float into ``obs_f``, 1 compact into ``obs_c``, 2 none) are written for every slot.
    Returns -1, or the first slot whose action is illegal.
    """
    A = cfg[H_NA]
    P = cfg[H_P]
    for b in range(b0, b1):
        a = actions[b]
        if a < 0 or a >= A or mask[b, a] == 0:
            return b
    stack = np.empty(4 * cfg[H_HW] + 8, dtype=np.int64)
    scs, last_rewards, nuggets = S.sc, S.last_rewards, S.gold_nuggets
    # Blocks of BLOCK games go through every phase while their state, mask and observation rows are in cache.
    for lo in range(b0, b1, BLOCK):
        hi = min(lo + BLOCK, b1)
        _apply_range(S, cfg, lo, hi, actions, stack)
        for b in range(lo, hi):
            ended = scs[b, SC_JUST_ENDED]
            for p in range(P):
                rewards[b, p] = last_rewards[b, p] if ended else 0.0
            if scs[b, SC_OVER]:
                done[b] = 1
                for p in range(P):
                    final_returns[b, p] = nuggets[b, p]
                _setup(S, cfg, b, stack, True)
            else:
                done[b] = 0
            seats[b] = scs[b, SC_CURRENT]
        _mask_range(S, cfg, lo, hi, mask, num_legal, True)
        if obs_mode == 0:
            _obs_float_range(S, cfg, rowcol, lo, hi, seats, obs_f, True)
        elif obs_mode == 1:
            _obs_compact_range(S, cfg, lo, hi, seats, obs_c)
    return -1


# The lock-step kernel and the arguments it takes between ``rowcol`` and ``b0`` (``core.batch.Batch.step_call``).
LOCKSTEP = (step, ())
