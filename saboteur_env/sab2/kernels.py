"""Saboteur 2 (rules reference §2) as numba kernels over a batch of games stored as struct of arrays.

The port follows :mod:`saboteur_env.base.kernels` (fields table, config table, views over arenas, per-range helpers, a
blocked fused ``step``). The rules are ported line by line from the numpy reference (``saboteur_env.sab2.reference`` /
``board`` / ``scoring`` / ``observation``); ``tests/test_core_sab2.py`` replays random games through both and compares
masks, observations, rewards, round results, scores and fingerprints.

State fields per game (shapes after the leading batch axis ``B``; ``P`` players, ``R`` rounds, ``HW`` cells,
``E = R * (2 * max_decisions_per_round + 4 + P)`` events):

======================  =====  ============  ==============================================================
field                   arena  shape         meaning
======================  =====  ============  ==============================================================
``round_decks``         i8     (R, 112)      card kinds in draw order per round; the first 10 set aside (hidden)
``round_roles``         i8     (R, 15)       roles: the first P dealt by seat, the rest the reserve (hidden)
``round_goals``         i8     (R, 3)        goal kind (56 gold, 57/58 stone) per goal slot (hidden)
``hands``               i8     (P, 55)       card counts per kind
``roles``               i8     (P,)          current role (``Sab2Role``; after Swap Your Hats)
``broken``              i8     (P, 3)        broken pickaxe / lantern / cart
``peeked``              i8     (P, 3)        seat used a map on goal slot this round
``trapped``             i8     (P,)          Trapped! in front of the seat
``theft``               i8     (P,)          Theft in front of the seat
``hats_swapped``        i8     (P,)          the seat's role was swapped this round
``inspected``           i8     (P, P)        role seen by i of j, -1
``inspections``         i8     (P, P)        public: i inspected j this round
``cell_shape``          i8     (HW,)         shape id ``2 * kind + rotation``, -1 empty or face-down goal
``reach``               i8     (HW,)         arms connected to the start (ladders linked), bits N, E, S, W
``goal_kind``           i8     (3,)          this round's goal kinds
``goal_revealed``       i8     (3,)          goal slot face up
``thieves``             i8     (P,)          theft phase: the thieves in §2.10 order (``SC_THIEF_POS`` is the head)
``last_roles``          i8     (P,)          roles revealed at the latest round end (``SC_NUM_SUMMARY`` > 0)
``discarded``           i16    (P,)          face-down discards this round
``discards``            i16    (55,)         discard pile counts
``events``              i16    (E, 6)        public events ``(type, actor, kind, target, cell, arg)``, -1 unused
``sc``                  i32    (24,)         scalars, indices ``SC_*`` below
``theft_time``          i32    (P,)          decision at which the seat's Theft was played, -1
``gold``                i32    (P,)          public gold totals
``stolen_held``         i32    (P,)          gold obtained by theft (never stealable)
``round_start_gold``    i32    (P,)          gold before the latest payouts (``SC_HAS_RSG``: the reference's not None)
``rr``                  i32    (R, 4 + 6P)   round results: gold reached, finder (-1), open blue, open green, then
                                             roles, trapped, winners, payouts, gold, gained (P each)
``rng``                 u64    (6,)          the slot's PCG64 words (``core.rng``), advanced by each set-up
``last_rewards``        f32    (P,)          rewards of the last action (set when a round is finished)
``obs_cells``           i16    (HW + 3,)     what the lock-step's float observation row of this slot holds (not
                                             game state): per cell 1 + its board token (shape + 1, connected
                                             arms << 8), then 1 if those cells are valid (0: unknown, rewrite),
                                             1 + the end of the history window written (0: unknown), its seat
``mask_list``           i16    (256,)        the legal actions in the lock-step's mask row of this slot (not
                                             game state), increasing: ``[0]`` 1 + their count (0: unknown, or
                                             more than 255), then the actions (``common.keep_list``)
======================  =====  ============  ==============================================================

The float observation is the reference's layout exactly (``sab2.observation``); the compact observation is an
int16 vector holding the same information (:data:`COMPACT_DOC`; :func:`expand_compact` rebuilds the float layout).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba.core import types as nbtypes
from numba.experimental import structref
from numpy.typing import NDArray

from saboteur_env.common.cards import DOUBLE_REPAIR_TOOLS, EDGE_PAIRS
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import geometry
from saboteur_env.core import rng as crng
from saboteur_env.core.common import clear_rows, keep_list
from saboteur_env.core.jit import helper, inline_helper, kernel
from saboteur_env.core.layout import Field, Layout

if TYPE_CHECKING:
    from saboteur_env.core.batch import Batch
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import PLACEABLE, PLACEABLE_KIND, PLACEABLE_SHAPE
from saboteur_env.sab2.scoring import PAYOUT_BY_WINNERS

# ---- constant tables (frozen into the compiled code; nothing here depends on the config) ----------------------
NK = sc.NUM_KINDS  # 59 kinds: shape ids 0..117
NO_SHAPE = 2 * NK  # row of the tables for an empty cell
NUM_DK = sc.NUM_DECK_KINDS  # 55 kinds a hand holds
NUM_PK = sc.NUM_PATH_KINDS  # 36 path kinds
DECK = sc.DECK_SIZE  # 112
REMOVED = sc.REMOVED_PER_ROUND  # 10
HAND = sc.HAND_SIZE  # 6
NUM_ROLE_CARDS = len(sc.ROLE_DECK)  # 15
S_OPEN = np.append(sc.SHAPE_OPEN, 0).astype(np.int64)
S_GROUP = np.vstack([sc.SHAPE_ARM_GROUP, np.zeros((1, 4), np.uint8)]).astype(np.int64)  # (shape, edge) -> bits
S_LADDER = np.append(sc.SHAPE_LADDER, False).astype(np.int64)
S_CRYSTALS = np.append(sc.SHAPE_CRYSTALS, 0).astype(np.int64)
S_DOOR_BLUE = np.append(sc.SHAPE_DOOR[0], 0).astype(np.int64)
S_DOOR_GREEN = np.append(sc.SHAPE_DOOR[1], 0).astype(np.int64)
S_LADDER_OR_START = np.array(
    [bool(sc.SHAPE_LADDER[s]) or s // 2 == sc.KIND_START for s in range(2 * NK)] + [False], dtype=np.int64
)
P_KIND = PLACEABLE_KIND.astype(np.int64)
P_SHAPE = PLACEABLE_SHAPE.astype(np.int64)
P_ROT = np.array([r for _, r in PLACEABLE], dtype=np.int64)
P_OPEN = S_OPEN[P_SHAPE]
P_LADDER = S_LADDER[P_SHAPE]
NUM_O = len(PLACEABLE)  # 60 placeable orientations
DR_TOOLS = np.array(DOUBLE_REPAIR_TOOLS, dtype=np.int64)  # (3 cards, 2 choices) -> tool
START_SHAPE = 2 * sc.KIND_START
K_GOLD = sc.KIND_GOALS[0]
K_BROKEN = sc.FIRST_BASE_ACTION  # 36..38 broken tools, 39..41 repairs, 42..44 double repairs
K_ROCKFALL = sc.FIRST_BASE_ACTION + 9
K_MAP = sc.FIRST_BASE_ACTION + 10
_X = sc.FIRST_EXPANSION_ACTION
K_THEFT, K_HANDS_OFF, K_SWAP_HAND, K_INSPECTION, K_SWAP_HATS, K_TRAPPED, K_FREE_AT_LAST, K_ROCKFALL2 = range(_X, _X + 8)
ROLE_BLUE, ROLE_GREEN, ROLE_BOSS, ROLE_PROFITEER, ROLE_GEOLOGIST, ROLE_SABOTEUR = range(6)
ROLE_DECK = sc.ROLE_DECK.astype(np.int8)
GOAL_KINDS = np.array(sc.KIND_GOALS, dtype=np.int8)
SORTED_DECK = np.repeat(np.arange(NUM_DK, dtype=np.int8), sc.DECK_COUNTS)
PAYOUT = np.array([0] + [PAYOUT_BY_WINNERS.get(n, 1) for n in range(1, 13)], dtype=np.int64)  # by winners


def _static_table() -> NDArray[np.float32]:
    """Per shape id (+ an empty row): the static board planes of the float layout, by plane index 0..24 (planes
    4-7, the reach, are zero here): open arms, joined pairs, blue-door arms, green-door arms, ladder, crystal,
    start (``sab2.observation``'s table, laid out by plane)."""
    out = np.zeros((NO_SHAPE + 1, 25), dtype=np.float32)
    for sid in range(NO_SHAPE):
        if sc.SPECS[sid // 2] is None:
            continue
        ob = int(sc.SHAPE_OPEN[sid])
        groups = sc.SHAPE_ARM_GROUP[sid]
        out[sid, 0:4] = [(ob >> e) & 1 for e in range(4)]
        out[sid, 8:14] = [int(bool((int(groups[a]) >> b) & 1)) for a, b in EDGE_PAIRS]
        out[sid, 14:18] = [(int(sc.SHAPE_DOOR[0, sid]) >> e) & 1 for e in range(4)]
        out[sid, 18:22] = [(int(sc.SHAPE_DOOR[1, sid]) >> e) & 1 for e in range(4)]
        out[sid, 22] = sc.SHAPE_LADDER[sid]
        out[sid, 23] = sc.SHAPE_CRYSTALS[sid]
        out[sid, 24] = sid // 2 == sc.KIND_START
    return out


STATIC = _static_table()
STATIC_NZ = np.full((NO_SHAPE + 1, 25), -1, dtype=np.int64)  # non-zero planes per shape, as a short list
STATIC_NNZ = np.zeros(NO_SHAPE + 1, dtype=np.int64)
for _i in range(NO_SHAPE + 1):
    _nz = np.flatnonzero(STATIC[_i])
    STATIC_NZ[_i, : len(_nz)] = _nz
    STATIC_NNZ[_i] = len(_nz)

# Event types (sab2.state.Sab2Event) and phases (sab2.state.Phase).
(EV_PLACE, EV_BREAK, EV_REPAIR, EV_ROCKFALL, EV_MAP, EV_THEFT, EV_HANDS_OFF, EV_SWAP_HAND, EV_INSPECTION,
 EV_SWAP_HATS, EV_TRAPPED, EV_FREE_AT_LAST, EV_DISCARD, EV_FREE, EV_REVEAL, EV_ROUND_END, EV_PAYOUT, EV_STEAL,
 EV_PASS_END) = range(19)  # fmt: skip
NUM_EVENT_TYPES = 19
PH_TURN, PH_PASS, PH_FREE, PH_THEFT = range(4)
# Scalars of a game (field ``sc``).
SC_ROUND, SC_CURRENT, SC_LAST, SC_FINDER, SC_RESERVE_POS, SC_PHASE, SC_PENDING, SC_FREE_TARGET = range(8)
SC_DECK_POS, SC_DECISIONS, SC_OVER, SC_JUST_ENDED, SC_NUM_EVENTS, SC_ROUND_FIRST_EVENT = range(8, 14)
SC_NUM_THIEVES, SC_THIEF_POS, SC_NUM_SUMMARY, SC_NUM_RR, SC_HAS_RSG, SC_ERROR, SC_GAMES = range(14, 21)
NUM_SC = 24
BLOCK = 32  # games per block of the fused lock-step
ERR_EVENTS = 1  # the event log overflowed (a bug: the capacity is a proven bound)

# Config table (int64): a header, then the field offsets, the neighbour table and the goal-cell flags.
H_P, H_R, H_HW, H_L, H_E, H_ROWS, H_COLS, H_START = range(8)
H_GOAL = 8  # 3 goal cells
H_WIN, H_OFFICIAL, H_NA, H_OBS, H_B, H_NBR, H_ISGOAL, H_CSIZE, H_COMPACT = range(11, 20)
H_OFF = 24
NUM_FIELDS = 31
MASK_LIST = 255  # legal actions the lock-step's record holds (more: the row is cleared and sampled in full)
HEADER = H_OFF + NUM_FIELDS

FIELD_NAMES = (
    "round_decks", "round_roles", "round_goals", "hands", "roles", "broken", "peeked", "trapped", "theft",
    "hats_swapped", "inspected", "inspections", "cell_shape", "reach", "goal_kind", "goal_revealed", "thieves",
    "last_roles",
    "discarded", "discards", "events",
    "sc", "theft_time", "gold", "stolen_held", "round_start_gold", "rr",
    "rng", "last_rewards", "obs_cells", "mask_list",
)  # fmt: skip
assert len(FIELD_NAMES) == NUM_FIELDS
Views = namedtuple("Views", FIELD_NAMES)  # type: ignore[misc]  # the names are data (FIELD_NAMES)


@structref.register
class _ViewsType(nbtypes.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, nbtypes.unliteral(typ)) for name, typ in fields)


class ViewsRef(structref.StructRefProxy):
    """The field views of one batch as a single numba object (see ``base.kernels.ViewsRef``): a call passes one pointer
    instead of unboxing every field array, and B = 1 and batched calls share one compiled specialisation."""


structref.define_proxy(ViewsRef, _ViewsType, list(FIELD_NAMES))


@kernel
def new_views(*views):
    """``ViewsRef(*views)`` as a cached kernel: the proxy's own constructor is compiled afresh in every process."""
    return ViewsRef(*views)


def forget_lockstep(batch: Batch, b0: int, b1: int) -> None:
    """Mark the lock-step's output rows of slots ``b0..b1`` unknown (rewritten in full by the next step): for
    states copied in from elsewhere (``Batch.from_states``), whose caches describe another buffer's rows."""
    hw = batch.config.num_cells
    batch.field("obs_cells")[b0:b1, hw : hw + 2] = 0
    batch.field("mask_list")[b0:b1, 0] = 0


def kernel_args(batch: Batch) -> tuple[ViewsRef]:
    """What this module's kernels take before ``cfg``: one ``ViewsRef`` over the batch's field views."""
    return (new_views(*batch.views),)


def event_capacity(config: GameConfig) -> int:
    """A true bound on a game's events: at most two per decision (the last discard of a pass or option C adds
    ``PASS_END`` / ``FREE``; a placement adds at most 3 reveals, which end no other decision's events), plus the
    round end and up to P payouts per round."""
    per_round = config.variant.max_decisions_per_round(config)
    return config.rounds * (2 * per_round + 4 + config.num_players)


def fields(config: GameConfig) -> tuple[Field, ...]:
    """The Saboteur 2 state's fields for ``config`` (in the order of :data:`FIELD_NAMES`)."""
    p, r, hw = config.num_players, config.rounds, config.num_cells
    e = event_capacity(config)
    shapes = {
        "round_decks": ("i8", (r, DECK)), "round_roles": ("i8", (r, NUM_ROLE_CARDS)), "round_goals": ("i8", (r, 3)),
        "hands": ("i8", (p, NUM_DK)), "roles": ("i8", (p,)), "broken": ("i8", (p, 3)), "peeked": ("i8", (p, 3)),
        "trapped": ("i8", (p,)), "theft": ("i8", (p,)), "hats_swapped": ("i8", (p,)), "inspected": ("i8", (p, p)),
        "inspections": ("i8", (p, p)), "cell_shape": ("i8", (hw,)), "reach": ("i8", (hw,)),
        "goal_kind": ("i8", (3,)), "goal_revealed": ("i8", (3,)), "thieves": ("i8", (p,)),
        "last_roles": ("i8", (p,)), "discarded": ("i16", (p,)), "discards": ("i16", (NUM_DK,)),
        "events": ("i16", (e, 6)), "sc": ("i32", (NUM_SC,)), "theft_time": ("i32", (p,)), "gold": ("i32", (p,)),
        "stolen_held": ("i32", (p,)), "round_start_gold": ("i32", (p,)), "rr": ("i32", (r, 4 + 6 * p)),
        "rng": ("u64", (6,)), "last_rewards": ("f32", (p,)), "obs_cells": ("i16", (hw + 3,)),
        "mask_list": ("i16", (MASK_LIST + 1,)),
    }  # fmt: skip
    return tuple(Field(n, *shapes[n]) for n in FIELD_NAMES)


def history_row_size(config: GameConfig) -> int:
    return 1 + NUM_EVENT_TYPES + config.num_players + NK + config.num_players + 3


def obs_size(config: GameConfig) -> int:
    p, hw, L = config.num_players, config.num_cells, config.history_length
    return 31 * hw + 6 + NUM_DK + 14 * p + 6 * p + 6 * p + p * p + (15 + p) + L * history_row_size(config)


def compact_size(config: GameConfig) -> int:
    p, hw, L = config.num_players, config.num_cells, config.history_length
    return hw + 1 + NUM_DK + 14 * p + 3 * p + 8 + 6 * L


def num_actions(config: GameConfig) -> int:
    p, hw = config.num_players, config.num_cells
    return hw * NUM_O + 12 * p + 2 * hw + 3 + 1 + 6 * p + NUM_DK + 1 + 4 + p


COMPACT_DOC = """Compact observation (int16), offsets for ``P`` players, ``HW`` cells, ``L`` history rows:

===============  ==========  ===================================================================================
name             size        content
===============  ==========  ===================================================================================
``cells``        HW          per storage cell: bits 0-6 = shape id 0..117 (``2 * kind + rotation``), 118 empty,
                             119 face-down goal; bits 7-10 = arms connected to the start; bit 11 = I peeked
                             this face-down goal: gold; bit 12 = stone
``role``         1           my role now (``Sab2Role``)
``hand``         55          counts per card kind
``seats``        14 P        the float layout's seat table (seat-relative rows, ``SEAT_COLUMNS``)
``inspected``    P           the role I saw at each seat offset, -1
``last_roles``   P           roles revealed at the latest round end per seat offset, -1 before the first
``inspections``  P           row i: bit j set when seat offset i inspected seat offset j this round
``status``       8           deck size, reserve size, thieves pending, round, seat offset to act (-1 at game
                             over), phase, my pending discards (0 unless I act), my option C target (-1 unless
                             I act in phase FREE)
``history``      6 L         last L public events, oldest first: (type, actor offset, kind, target offset,
                             cell, arg); -1 unused (actor -1 for reveals and payouts); a row of -1: no event
===============  ==========  ===================================================================================
"""


def config_table(config: GameConfig, layout: Layout) -> NDArray[np.int64]:
    """The int64 config table the kernels read (header, field offsets, neighbours, goal flags)."""
    p, hw = config.num_players, config.num_cells
    geo = geometry(config)
    parts = [geo.nbr.ravel().astype(np.int64), geo.is_goal_cell.astype(np.int64)]
    head = np.zeros(HEADER, dtype=np.int64)
    head[H_P], head[H_R], head[H_HW] = p, config.rounds, hw
    head[H_L], head[H_E] = config.history_length, event_capacity(config)
    head[H_ROWS], head[H_COLS], head[H_START] = config.rows, config.cols, geo.start_cell
    head[H_GOAL : H_GOAL + 3] = geo.goal_cells
    head[H_WIN] = config.reward == "win"
    head[H_OFFICIAL] = config.rules == "official"
    head[H_NA], head[H_OBS], head[H_COMPACT] = num_actions(config), obs_size(config), compact_size(config)
    head[H_B] = layout.batch
    head[H_OFF : H_OFF + NUM_FIELDS] = layout.offsets
    pos = HEADER
    for slot, part in zip((H_NBR, H_ISGOAL), parts, strict=True):
        head[slot] = pos
        pos += len(part)
    head[H_CSIZE] = pos
    return np.concatenate([head, *parts])


def rowcol_table(config: GameConfig) -> NDArray[np.float32]:
    """``(HW, 2)`` float32 row/col of each storage cell scaled to 0..1, exactly as the reference's history rows."""
    geo = geometry(config)
    return np.stack([geo.row_of / max(1, geo.rows - 1), geo.col_of / max(1, geo.cols - 1)], axis=1).astype(np.float32)


# ---- views -----------------------------------------------------------------------------------------------------
@kernel
def views(i8, i16, i32, u64, f32, cfg):
    B, P, R, HW, E = cfg[H_B], cfg[H_P], cfg[H_R], cfg[H_HW], cfg[H_E]
    o = cfg[H_OFF : H_OFF + NUM_FIELDS]
    return Views(
        i8[o[0] : o[0] + B * R * DECK].reshape((B, R, DECK)),
        i8[o[1] : o[1] + B * R * NUM_ROLE_CARDS].reshape((B, R, NUM_ROLE_CARDS)),
        i8[o[2] : o[2] + B * R * 3].reshape((B, R, 3)),
        i8[o[3] : o[3] + B * P * NUM_DK].reshape((B, P, NUM_DK)),
        i8[o[4] : o[4] + B * P].reshape((B, P)),
        i8[o[5] : o[5] + B * P * 3].reshape((B, P, 3)),
        i8[o[6] : o[6] + B * P * 3].reshape((B, P, 3)),
        i8[o[7] : o[7] + B * P].reshape((B, P)),
        i8[o[8] : o[8] + B * P].reshape((B, P)),
        i8[o[9] : o[9] + B * P].reshape((B, P)),
        i8[o[10] : o[10] + B * P * P].reshape((B, P, P)),
        i8[o[11] : o[11] + B * P * P].reshape((B, P, P)),
        i8[o[12] : o[12] + B * HW].reshape((B, HW)),
        i8[o[13] : o[13] + B * HW].reshape((B, HW)),
        i8[o[14] : o[14] + B * 3].reshape((B, 3)),
        i8[o[15] : o[15] + B * 3].reshape((B, 3)),
        i8[o[16] : o[16] + B * P].reshape((B, P)),
        i8[o[17] : o[17] + B * P].reshape((B, P)),
        i16[o[18] : o[18] + B * P].reshape((B, P)),
        i16[o[19] : o[19] + B * NUM_DK].reshape((B, NUM_DK)),
        i16[o[20] : o[20] + B * E * 6].reshape((B, E, 6)),
        i32[o[21] : o[21] + B * NUM_SC].reshape((B, NUM_SC)),
        i32[o[22] : o[22] + B * P].reshape((B, P)),
        i32[o[23] : o[23] + B * P].reshape((B, P)),
        i32[o[24] : o[24] + B * P].reshape((B, P)),
        i32[o[25] : o[25] + B * P].reshape((B, P)),
        i32[o[26] : o[26] + B * R * (4 + 6 * P)].reshape((B, R, 4 + 6 * P)),
        u64[o[27] : o[27] + B * 6].reshape((B, 6)),
        f32[o[28] : o[28] + B * P].reshape((B, P)),
        i16[o[29] : o[29] + B * (HW + 3)].reshape((B, HW + 3)),
        i16[o[30] : o[30] + B * (MASK_LIST + 1)].reshape((B, MASK_LIST + 1)),
    )


# ---- board -------------------------------------------------------------------------------------------------------
@helper
def _reach(shape, reach, nbr, start, block, stack_c, stack_b):
    """Arms connected to the start card, the start and every ladder card joined as one link group, arms of
    ``block`` (0: none, 1: green doors, 2: blue doors) left out (``sab2.board.reach`` over
    ``common.arms.reach_from``). The reachable set is a closure, so the visiting order does not matter."""
    HW = shape.shape[0]
    for c in range(HW):
        reach[c] = 0
    sp = 0
    linked = False
    # enter(start, usable[start])
    s0 = shape[start]
    u0 = S_OPEN[s0]
    if block == 1:
        u0 &= ~S_DOOR_GREEN[s0]
    elif block == 2:
        u0 &= ~S_DOOR_BLUE[s0]
    bits = 0
    for e in range(4):
        if (u0 >> e) & 1:
            bits |= S_GROUP[s0, e]
    new = bits & u0
    if new:
        reach[start] = new
        stack_c[sp] = start
        stack_b[sp] = new
        sp += 1
    while sp > 0:
        sp -= 1
        cell = stack_c[sp]
        nw = stack_b[sp]
        sh = shape[cell]
        if not linked and (cell == start or S_LADDER[sh]):
            linked = True
            for other in range(HW):
                so = shape[other]
                if so < 0 or not (other == start or S_LADDER[so]):
                    continue
                uo = S_OPEN[so]
                if block == 1:
                    uo &= ~S_DOOR_GREEN[so]
                elif block == 2:
                    uo &= ~S_DOOR_BLUE[so]
                bo = 0
                for e in range(4):
                    if (uo >> e) & 1:
                        bo |= S_GROUP[so, e]
                nn = bo & uo & ~reach[other]
                if nn:
                    reach[other] |= nn
                    stack_c[sp] = other
                    stack_b[sp] = nn
                    sp += 1
        for d in range(4):
            if (nw >> d) & 1:
                j = nbr[cell, d]
                if j < 0:
                    continue
                sj = shape[j]
                if sj < 0:
                    continue
                od = (d + 2) & 3
                uj = S_OPEN[sj]
                if block == 1:
                    uj &= ~S_DOOR_GREEN[sj]
                elif block == 2:
                    uj &= ~S_DOOR_BLUE[sj]
                if (uj >> od) & 1:
                    nn = S_GROUP[sj, od] & uj & ~reach[j]
                    if nn:
                        reach[j] |= nn
                        stack_c[sp] = j
                        stack_b[sp] = nn
                        sp += 1


@helper
def _goal_rotation(shape, reach, nbr, cell, kind, placed_cell):
    """common.reveal.goal_rotation over common.reveal.facing_of (no game preference); -1 when no neighbour
    reaches the goal (the reference's "not reached")."""
    reached = False
    for d in range(4):
        j = nbr[cell, d]
        if j >= 0 and shape[j] >= 0:
            o = (d + 2) & 3
            if (S_OPEN[shape[j]] >> o) & 1 and (reach[j] >> o) & 1:
                reached = True
    if not reached:
        return -1
    best = 0
    bk0 = bk1 = bk2 = 0
    for rot in range(2):
        ob = S_OPEN[2 * kind + rot]
        towards_placed = 0
        towards = 0
        mism = 0
        for d in range(4):
            j = nbr[cell, d]
            if j < 0 or shape[j] < 0:
                continue
            o = (d + 2) & 3
            theirs = (S_OPEN[shape[j]] >> o) & 1
            reaching = theirs and (reach[j] >> o) & 1
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
@inline_helper
def _hand_total(hands, seat):
    t = 0
    for k in range(NUM_DK):
        t += hands[seat, k]
    return t


@helper
def _has_cards(hands, seat):
    """``hands[seat].sum() > 0``, stopping at the first kind held."""
    for k in range(NUM_DK):
        if hands[seat, k]:
            return True
    return False


@helper
def _draw(S, b, seat, n):
    """rules._draw: ``n`` cards (at most the pile) from the round's deck."""
    pos = S.sc[b, SC_DECK_POS]
    left = DECK - pos
    if n > left:
        n = left
    r = S.sc[b, SC_ROUND]
    for _ in range(n):
        S.hands[b, seat, S.round_decks[b, r, pos]] += 1
        pos += 1
    S.sc[b, SC_DECK_POS] = pos


@helper
def _skip_empty(S, cfg, b):
    """rules._skip_empty: seats with an empty hand pass."""
    P = cfg[H_P]
    for _ in range(P):
        if _has_cards(S.hands[b], S.sc[b, SC_CURRENT]):
            return
        S.sc[b, SC_CURRENT] = (S.sc[b, SC_CURRENT] + 1) % P


@helper
def _start_round(S, cfg, b, r, starter, stack_c, stack_b):
    """rules.start_round (with rules._round_arrays)."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    sc_ = S.sc[b]
    S.hands[b] = 0
    for seat in range(P):
        S.roles[b, seat] = S.round_roles[b, r, seat]
    S.broken[b] = 0
    S.trapped[b] = 0
    S.theft[b] = 0
    S.theft_time[b] = -1
    S.inspected[b] = -1
    S.hats_swapped[b] = 0
    S.inspections[b] = 0
    S.discarded[b] = 0
    S.peeked[b] = 0
    S.discards[b] = 0
    shape = S.cell_shape[b]
    shape[:] = -1
    start = cfg[H_START]
    shape[start] = START_SHAPE
    _reach(shape, S.reach[b], nbr, start, 0, stack_c, stack_b)
    for g in range(3):
        S.goal_kind[b, g] = S.round_goals[b, r, g]
        S.goal_revealed[b, g] = 0
    sc_[SC_ROUND] = r
    sc_[SC_DECK_POS] = REMOVED  # the first 10 cards are set aside unseen
    for seat in range(P):
        _draw(S, b, seat, HAND)
    sc_[SC_RESERVE_POS] = P
    sc_[SC_PHASE] = PH_TURN
    sc_[SC_PENDING] = 0
    sc_[SC_FREE_TARGET] = -1
    sc_[SC_NUM_THIEVES] = 0
    sc_[SC_THIEF_POS] = 0
    sc_[SC_FINDER] = -1
    sc_[SC_CURRENT] = starter
    sc_[SC_LAST] = starter
    sc_[SC_ROUND_FIRST_EVENT] = sc_[SC_NUM_EVENTS]
    _skip_empty(S, cfg, b)


@helper
def _setup(S, cfg, b, stack_c, stack_b, draw):
    """A new game in slot ``b``: draw the set-up from the slot's generator words (unless ``draw`` is False: the
    set-up arrays were written by the caller) and start round 1 with seat 0 (reference ``rules.new_game``)."""
    R = cfg[H_R]
    if draw:
        st = S.rng[b]
        for r in range(R):
            for k in range(DECK):
                S.round_decks[b, r, k] = SORTED_DECK[k]
            crng.shuffle(st, S.round_decks[b, r])
        for r in range(R):
            for k in range(NUM_ROLE_CARDS):
                S.round_roles[b, r, k] = ROLE_DECK[k]
            crng.shuffle(st, S.round_roles[b, r])
        for r in range(R):
            for k in range(3):
                S.round_goals[b, r, k] = GOAL_KINDS[k]
            crng.shuffle(st, S.round_goals[b, r])
    S.gold[b] = 0
    S.stolen_held[b] = 0
    S.round_start_gold[b] = 0
    S.last_rewards[b] = 0.0
    S.last_roles[b] = -1
    S.thieves[b] = -1
    S.events[b] = -1
    S.rr[b] = 0
    S.obs_cells[b, cfg[H_HW]] = 0  # the lock-step's float row of this slot: rewrite in full next time
    S.obs_cells[b, cfg[H_HW] + 1] = 0
    S.mask_list[b, 0] = 0  # the lock-step's mask row of this slot: rewrite in full next time
    sc_ = S.sc[b]
    games = sc_[SC_GAMES]
    sc_[:] = 0
    sc_[SC_GAMES] = games + 1
    _start_round(S, cfg, b, 0, 0, stack_c, stack_b)


# ---- mask --------------------------------------------------------------------------------------------------------
@helper
def _mask_range(S, cfg, b0, b1, masks, num_legal, incremental):
    """The legal-action row of each slot (int8, zeroed here) and its number of legal actions (reference
    ``rules.legal_action_mask`` with ``placement_table``).

    ``incremental``: ``masks`` is the lock-step's own buffer: only the actions it set last time are cleared
    (``mask_list``, ``common.clear_rows``), and the new ones are kept for the next call and the sampler."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    official = cfg[H_OFFICIAL]
    ob = HW * NUM_O
    orp = ob + 3 * P
    odr = orp + 3 * P
    orf = odr + 6 * P
    om = orf + 2 * HW
    oth = om + 3
    oho = oth + 1
    osh = oho + P
    oin = osh + P
    oha = oin + P
    otr = oha + P
    ofa = otr + P
    odis = ofa + P
    ostop = odis + NUM_DK
    ofree = ostop + 1
    osteal = ofree + 4
    pos = np.empty(masks.shape[1], dtype=np.int32)  # the actions set, in the order they are set
    words = masks.view(np.uint64)  # rows are padded to whole words
    lst = S.mask_list
    clear_rows(masks, words, lst, b0, b1, incremental)
    # The field arrays are read once per call and indexed with the slot: a per-slot view (``S.hands[b, me]``) or an
    # ``S.field`` read inside the loop costs an atomic reference count increment and decrement each.
    f_sc, f_hands, f_broken, f_shape, f_reach = S.sc, S.hands, S.broken, S.cell_shape, S.reach
    f_gold, f_stolen, f_trapped, f_grev, f_theft = S.gold, S.stolen_held, S.trapped, S.goal_revealed, S.theft
    for b in range(b0, b1):
        if f_sc[b, SC_OVER]:
            num_legal[b] = 0
            continue
        me = f_sc[b, SC_CURRENT]
        n = 0
        phase = f_sc[b, SC_PHASE]
        if phase == PH_THEFT:
            for k in range(1, P):
                x = (me + k) % P
                if f_gold[b, x] - f_stolen[b, x] > 0:
                    masks[b, osteal + k] = 1
                    pos[n] = osteal + k
                    n += 1
            num_legal[b] = n
            keep_list(lst, b, pos, n, incremental)
            continue
        if phase == PH_PASS or phase == PH_FREE:
            for k in range(NUM_DK):
                if f_hands[b, me, k] > 0:
                    masks[b, odis + k] = 1
                    pos[n] = odis + k
                    n += 1
            if phase == PH_PASS:
                masks[b, ostop] = 1
                pos[n] = ostop
                n += 1
            num_legal[b] = n
            keep_list(lst, b, pos, n, incremental)
            continue
        any_path = False
        for k in range(NUM_PK):
            if f_hands[b, me, k] > 0:
                any_path = True
                break
        if (any_path and f_broken[b, me, 0] == 0 and f_broken[b, me, 1] == 0 and f_broken[b, me, 2] == 0
                and f_trapped[b, me] == 0):  # fmt: skip
            for c in range(HW):
                if f_shape[b, c] >= 0 or isgoal[c]:
                    continue
                must_open = 0
                must_closed = 0
                conn = 0
                has_any = False
                beside_ls = False
                near_goal = False
                for d in range(4):
                    j = nbr[c, d]
                    if j < 0:
                        continue
                    if isgoal[j]:
                        near_goal = True
                    sj = f_shape[b, j]
                    if sj < 0:
                        continue
                    has_any = True
                    if S_LADDER_OR_START[sj]:
                        beside_ls = True
                    od = (d + 2) & 3
                    if (S_OPEN[sj] >> od) & 1:
                        must_open |= 1 << d
                        if (f_reach[b, j] >> od) & 1:
                            conn |= 1 << d
                    else:
                        must_closed |= 1 << d
                ladder_ok = (not near_goal) and (has_any if official else beside_ls)
                if conn == 0 and not ladder_ok:
                    continue
                base = c * NUM_O
                for o in range(NUM_O):
                    if f_hands[b, me, P_KIND[o]] == 0:
                        continue
                    po = P_OPEN[o]
                    match = (po & must_closed) == 0 and (must_open & ~po & 15) == 0
                    if not match:
                        continue
                    if P_LADDER[o]:
                        if near_goal:
                            continue
                        if official:
                            ok = has_any
                        else:
                            ok = (po & conn) != 0 or beside_ls
                    else:
                        ok = (po & conn) != 0
                    if ok:
                        masks[b, base + o] = 1
                        pos[n] = base + o
                        n += 1
        for t in range(3):
            if f_hands[b, me, K_BROKEN + t] > 0:
                for k in range(P):
                    if f_broken[b, (me + k) % P, t] == 0:
                        masks[b, ob + t * P + k] = 1
                        pos[n] = ob + t * P + k
                        n += 1
            if f_hands[b, me, K_BROKEN + 3 + t] > 0:
                for k in range(P):
                    if f_broken[b, (me + k) % P, t]:
                        masks[b, orp + t * P + k] = 1
                        pos[n] = orp + t * P + k
                        n += 1
        for cd in range(3):
            if f_hands[b, me, K_BROKEN + 6 + cd] > 0:
                for ch in range(2):
                    tool = DR_TOOLS[cd, ch]
                    for k in range(P):
                        if f_broken[b, (me + k) % P, tool]:
                            masks[b, odr + (cd * 2 + ch) * P + k] = 1
                            pos[n] = odr + (cd * 2 + ch) * P + k
                            n += 1
        for card in range(2):
            if f_hands[b, me, K_ROCKFALL if card == 0 else K_ROCKFALL2] > 0:
                for c in range(HW):
                    s = f_shape[b, c]
                    if s >= 0 and s // 2 < NUM_PK:
                        masks[b, orf + card * HW + c] = 1
                        pos[n] = orf + card * HW + c
                        n += 1
        if f_hands[b, me, K_MAP] > 0:
            for g in range(3):
                if f_grev[b, g] == 0:
                    masks[b, om + g] = 1
                    pos[n] = om + g
                    n += 1
        if f_hands[b, me, K_THEFT] > 0 and f_theft[b, me] == 0:
            masks[b, oth] = 1
            pos[n] = oth
            n += 1
        if f_hands[b, me, K_HANDS_OFF] > 0:
            for k in range(P):
                if f_theft[b, (me + k) % P]:
                    masks[b, oho + k] = 1
                    pos[n] = oho + k
                    n += 1
        if f_hands[b, me, K_SWAP_HAND] > 0:
            for k in range(1, P):
                masks[b, osh + k] = 1
                pos[n] = osh + k
                n += 1
        if f_hands[b, me, K_INSPECTION] > 0:
            for k in range(1, P):
                masks[b, oin + k] = 1
                pos[n] = oin + k
                n += 1
        if f_hands[b, me, K_SWAP_HATS] > 0 and f_sc[b, SC_RESERVE_POS] < NUM_ROLE_CARDS:
            for k in range(P):
                masks[b, oha + k] = 1
                pos[n] = oha + k
                n += 1
        if f_hands[b, me, K_TRAPPED] > 0:
            for k in range(1, P):
                if f_trapped[b, (me + k) % P] == 0:
                    masks[b, otr + k] = 1
                    pos[n] = otr + k
                    n += 1
        if f_hands[b, me, K_FREE_AT_LAST] > 0:
            for k in range(P):
                if f_trapped[b, (me + k) % P]:
                    masks[b, ofa + k] = 1
                    pos[n] = ofa + k
                    n += 1
        total = 0
        for k in range(NUM_DK):
            if f_hands[b, me, k] > 0:
                masks[b, odis + k] = 1
                pos[n] = odis + k
                n += 1
                total += f_hands[b, me, k]
        if total >= 2:
            for t in range(3):
                if f_broken[b, me, t]:
                    masks[b, ofree + t] = 1
                    pos[n] = ofree + t
                    n += 1
            if f_trapped[b, me]:
                masks[b, ofree + 3] = 1
                pos[n] = ofree + 3
                n += 1
        num_legal[b] = n
        keep_list(lst, b, pos, n, incremental)


# ---- transition --------------------------------------------------------------------------------------------------
@helper
def _log(events, sc_, cap, etype, actor, kind, target, cell, arg):
    """Append one public event row (arguments are the slot's own arrays: a call passes few arrays)."""
    e = sc_[SC_NUM_EVENTS]
    if e >= cap:
        sc_[SC_ERROR] |= ERR_EVENTS
        return
    row = events[e]
    row[0] = etype
    row[1] = actor
    row[2] = kind
    row[3] = target
    row[4] = cell
    row[5] = arg
    sc_[SC_NUM_EVENTS] = e + 1


@helper
def _finish_round(S, cfg, b, stack_c, stack_b):
    """rules._finish_round: the round result with the gold after the thefts, rewards, the next round."""
    P = cfg[H_P]
    sc_ = S.sc[b]
    r = sc_[SC_ROUND]
    res = S.rr[b, r]
    for seat in range(P):
        g = S.gold[b, seat]
        gained = g - S.round_start_gold[b, seat]
        res[4 + 4 * P + seat] = g
        res[4 + 5 * P + seat] = gained
        if cfg[H_WIN]:
            S.last_rewards[b, seat] = 1.0 if res[4 + 2 * P + seat] > 0 else -1.0
        else:
            S.last_rewards[b, seat] = gained
    sc_[SC_NUM_RR] = r + 1
    sc_[SC_JUST_ENDED] = 1
    sc_[SC_PHASE] = PH_TURN
    if r + 1 < cfg[H_R]:
        _start_round(S, cfg, b, r + 1, (sc_[SC_LAST] + 1) % P, stack_c, stack_b)
    else:
        sc_[SC_OVER] = 1


@helper
def _next_thief(S, cfg, b, stack_c, stack_b):
    """rules._next_thief: the next thief who has someone to steal from acts; none left: finish the round."""
    P = cfg[H_P]
    sc_ = S.sc[b]
    while sc_[SC_THIEF_POS] < sc_[SC_NUM_THIEVES]:
        thief = S.thieves[b, sc_[SC_THIEF_POS]]
        sc_[SC_THIEF_POS] += 1
        for seat in range(P):
            if seat != thief and S.gold[b, seat] - S.stolen_held[b, seat] > 0:
                sc_[SC_CURRENT] = thief
                return
    _finish_round(S, cfg, b, stack_c, stack_b)


@helper
def _end_round(S, cfg, b, gold_reached, stack_c, stack_b):
    """rules._end_round: winners and payouts (scoring.winners / payouts, both readings), then the thieves."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    sc_ = S.sc[b]
    roles = S.roles[b]
    trapped = S.trapped[b]
    shape = S.cell_shape[b]
    open_blue = open_green = False
    finder = -1
    if gold_reached:
        finder = sc_[SC_FINDER]
        gslot = 0
        for g in range(3):
            if S.goal_kind[b, g] == K_GOLD:
                gslot = g
                break
        gold_cell = cfg[H_GOAL + gslot]
        tmp = np.empty(HW, dtype=np.int8)
        _reach(shape, tmp, nbr, cfg[H_START], 1, stack_c, stack_b)  # blue routes avoid green doors
        open_blue = tmp[gold_cell] != 0
        _reach(shape, tmp, nbr, cfg[H_START], 2, stack_c, stack_b)  # green routes avoid blue doors
        open_green = tmp[gold_cell] != 0
    if cfg[H_OFFICIAL]:
        frole = roles[finder] if finder >= 0 else -1
        blue_team = open_blue and (frole != ROLE_GREEN or not open_green)
        green_team = open_green and (frole != ROLE_BLUE or not open_blue)
    else:
        blue_team, green_team = open_blue, open_green
    r = sc_[SC_ROUND]
    res = S.rr[b, r]
    nwin = 0
    ngeo = 0
    for seat in range(P):
        role = roles[seat]
        if trapped[seat]:
            w = False
        elif not gold_reached:
            w = role == ROLE_SABOTEUR or role == ROLE_PROFITEER
        elif role == ROLE_BLUE:
            w = blue_team
        elif role == ROLE_GREEN:
            w = green_team
        else:
            w = role == ROLE_BOSS or role == ROLE_PROFITEER
        res[4 + 2 * P + seat] = 1 if w else 0
        nwin += 1 if w else 0
        ngeo += 1 if role == ROLE_GEOLOGIST else 0
    crystals = 0
    for c in range(HW):
        if shape[c] >= 0:
            crystals += S_CRYSTALS[shape[c]]
    value = PAYOUT[nwin]
    for seat in range(P):
        role = roles[seat]
        if role == ROLE_GEOLOGIST:
            pay = 0 if trapped[seat] else crystals // ngeo
        elif res[4 + 2 * P + seat]:
            disc = 1 if role == ROLE_BOSS else (2 if role == ROLE_PROFITEER else 0)
            pay = max(0, value - disc)
        else:
            pay = 0
        res[4 + 3 * P + seat] = pay
        res[4 + seat] = role
        res[4 + P + seat] = trapped[seat]
        S.round_start_gold[b, seat] = S.gold[b, seat]
        S.gold[b, seat] += pay
        S.last_roles[b, seat] = role
    sc_[SC_HAS_RSG] = 1
    res[0] = 1 if gold_reached else 0
    res[1] = finder
    res[2] = 1 if open_blue else 0
    res[3] = 1 if open_green else 0
    cap = cfg[H_E]
    _log(S.events[b], sc_, cap, EV_ROUND_END, sc_[SC_LAST], -1, -1, -1, 0 if gold_reached else 1)
    for seat in range(P):
        if res[4 + 3 * P + seat]:
            _log(S.events[b], sc_, cap, EV_PAYOUT, -1, -1, seat, -1, res[4 + 3 * P + seat])
    sc_[SC_NUM_SUMMARY] = r + 1
    # Thieves (not trapped): the most recent Theft first (the lowest seat on a tie, as max()), then clockwise.
    latest = -1
    for seat in range(P):
        if S.theft[b, seat] and not trapped[seat]:
            if latest < 0 or S.theft_time[b, seat] > S.theft_time[b, latest]:
                latest = seat
    nt = 0
    if latest >= 0:
        for k in range(P):
            seat = (latest + k) % P
            if S.theft[b, seat] and not trapped[seat]:
                S.thieves[b, nt] = seat
                nt += 1
    for k in range(nt, P):
        S.thieves[b, k] = -1
    sc_[SC_NUM_THIEVES] = nt
    sc_[SC_THIEF_POS] = 0
    sc_[SC_PHASE] = PH_THEFT
    _next_thief(S, cfg, b, stack_c, stack_b)


@helper
def _next_turn(S, cfg, b, stack_c, stack_b):
    """rules._next_turn: all hands empty ends the round; else the next seat holding cards."""
    P = cfg[H_P]
    empty = True  # hands only run dry once the pile is empty (A11)
    for seat in range(P):
        if _has_cards(S.hands[b], seat):
            empty = False
            break
    if empty:
        _end_round(S, cfg, b, False, stack_c, stack_b)
        return
    S.sc[b, SC_CURRENT] = (S.sc[b, SC_CURRENT] + 1) % P
    _skip_empty(S, cfg, b)


@helper
def _discard_step(S, cfg, b, me, kind, stack_c, stack_b):
    """rules._discard_step: one decision of a pass (discard or stop, ``kind`` -1) or of option C (discard)."""
    sc_ = S.sc[b]
    cap = cfg[H_E]
    if kind >= 0:
        S.hands[b, me, kind] -= 1
        S.discards[b, kind] += 1
        sc_[SC_LAST] = me
        S.discarded[b, me] += 1
        _log(S.events[b], sc_, cap, EV_DISCARD, me, -1, -1, -1, -1)
    if sc_[SC_PHASE] == PH_FREE:
        sc_[SC_PENDING] -= 1
        if sc_[SC_PENDING] > 0:
            return
        ft = sc_[SC_FREE_TARGET]
        if ft == 3:
            S.trapped[b, me] = 0
            S.discards[b, K_TRAPPED] += 1
        else:
            S.broken[b, me, ft] = 0
            S.discards[b, K_BROKEN + ft] += 1
        _log(S.events[b], sc_, cap, EV_FREE, me, -1, -1, -1, ft)
        _draw(S, b, me, 1)
    else:
        if sc_[SC_PHASE] == PH_TURN:
            sc_[SC_PHASE] = PH_PASS
            sc_[SC_PENDING] = 0
        if kind >= 0:
            sc_[SC_PENDING] += 1
            if sc_[SC_PENDING] < 3 and _has_cards(S.hands[b], me):
                return  # discard another or stop
        _log(S.events[b], sc_, cap, EV_PASS_END, me, -1, -1, -1, sc_[SC_PENDING])
        _draw(S, b, me, sc_[SC_PENDING])
    sc_[SC_PHASE] = PH_TURN
    sc_[SC_PENDING] = 0
    sc_[SC_FREE_TARGET] = -1
    _next_turn(S, cfg, b, stack_c, stack_b)


@helper
def _reveal(S, cfg, b, nbr, placed, stack_c, stack_b):
    """rules._reveal: pass by pass, every face-down goal reached is turned up with the board as it stands (goals
    turned earlier in the pass included) but the reach from before the pass; the reach is refreshed after each
    pass. True when the gold goal is among them."""
    shape = S.cell_shape[b]
    reach = S.reach[b]
    sc_ = S.sc[b]
    gold = False
    changed = True
    while changed:
        changed = False
        for slot in range(3):
            if S.goal_revealed[b, slot]:
                continue
            cell = cfg[H_GOAL + slot]
            kind = S.goal_kind[b, slot]
            rot = _goal_rotation(shape, reach, nbr, cell, kind, placed)
            if rot < 0:
                continue  # not reached
            shape[cell] = 2 * kind + rot
            S.goal_revealed[b, slot] = 1
            _log(S.events[b], sc_, cfg[H_E], EV_REVEAL, -1, kind, -1, cell, rot)
            if kind == K_GOLD:
                gold = True
            changed = True
        if changed:
            _reach(shape, reach, nbr, cfg[H_START], 0, stack_c, stack_b)
    return gold


@helper
def _apply_range(S, cfg, b0, b1, actions, stack_c, stack_b):
    """Apply the legal action ``actions[b]`` for the seat to act in each slot (reference ``rules.apply_action``)."""
    P, HW = cfg[H_P], cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    cap = cfg[H_E]
    ob = HW * NUM_O
    orp = ob + 3 * P
    odr = orp + 3 * P
    orf = odr + 6 * P
    om = orf + 2 * HW
    oth = om + 3
    oho = oth + 1
    osh = oho + P
    oin = osh + P
    oha = oin + P
    otr = oha + P
    ofa = otr + P
    odis = ofa + P
    ostop = odis + NUM_DK
    ofree = ostop + 1
    osteal = ofree + 4
    for b in range(b0, b1):
        a = actions[b]
        sc_ = S.sc[b]
        sc_[SC_JUST_ENDED] = 0
        S.last_rewards[b] = 0.0
        sc_[SC_DECISIONS] += 1
        me = sc_[SC_CURRENT]
        phase = sc_[SC_PHASE]
        ev = S.events[b]
        if phase == PH_THEFT:  # rules._steal
            victim = (me + a - osteal) % P
            S.gold[b, victim] -= 1
            S.gold[b, me] += 1
            S.stolen_held[b, me] += 1
            _log(ev, sc_, cap, EV_STEAL, me, -1, victim, -1, -1)
            _next_thief(S, cfg, b, stack_c, stack_b)
            continue
        if phase == PH_PASS or phase == PH_FREE or (odis <= a < ostop):
            _discard_step(S, cfg, b, me, a - odis if a < ostop else -1, stack_c, stack_b)
            continue
        if ofree <= a < osteal:
            sc_[SC_PHASE] = PH_FREE
            sc_[SC_PENDING] = 2
            sc_[SC_FREE_TARGET] = a - ofree
            continue
        draws = 1
        to_discards = True  # the card goes to the discard pile (not placed, not lying in front of a player)
        if a < ob:
            cell = a // NUM_O
            o = a % NUM_O
            kind = P_KIND[o]
            S.hands[b, me, kind] -= 1
            S.cell_shape[b, cell] = P_SHAPE[o]
            _log(ev, sc_, cap, EV_PLACE, me, kind, -1, cell, P_ROT[o])
            _reach(S.cell_shape[b], S.reach[b], nbr, cfg[H_START], 0, stack_c, stack_b)
            if _reveal(S, cfg, b, nbr, cell, stack_c, stack_b):
                sc_[SC_FINDER] = me
                sc_[SC_LAST] = me
                _end_round(S, cfg, b, True, stack_c, stack_b)
                continue
            to_discards = False
        elif a < orp:
            t = (a - ob) // P
            target = (me + (a - ob) % P) % P
            kind = K_BROKEN + t
            S.hands[b, me, kind] -= 1
            S.broken[b, target, t] = 1
            _log(ev, sc_, cap, EV_BREAK, me, kind, target, -1, t)
            to_discards = False
        elif a < orf:
            if a < odr:
                t = (a - orp) // P
                target = (me + (a - orp) % P) % P
                kind = K_BROKEN + 3 + t
            else:
                cc = (a - odr) // P
                target = (me + (a - odr) % P) % P
                kind = K_BROKEN + 6 + cc // 2
                t = DR_TOOLS[cc // 2, cc % 2]
            S.hands[b, me, kind] -= 1
            S.broken[b, target, t] = 0
            S.discards[b, K_BROKEN + t] += 1
            _log(ev, sc_, cap, EV_REPAIR, me, kind, target, -1, t)
        elif a < om:
            card = (a - orf) // HW
            cell = (a - orf) % HW
            kind = K_ROCKFALL if card == 0 else K_ROCKFALL2
            S.hands[b, me, kind] -= 1
            removed = S.cell_shape[b, cell] // 2
            S.cell_shape[b, cell] = -1
            S.discards[b, removed] += 1
            _log(ev, sc_, cap, EV_ROCKFALL, me, kind, -1, cell, removed)
            _reach(S.cell_shape[b], S.reach[b], nbr, cfg[H_START], 0, stack_c, stack_b)
        elif a < oth:
            g = a - om
            S.hands[b, me, K_MAP] -= 1
            S.peeked[b, me, g] = 1
            _log(ev, sc_, cap, EV_MAP, me, K_MAP, -1, -1, g)
            kind = K_MAP
        elif a < oho:
            kind = K_THEFT
            S.hands[b, me, kind] -= 1
            S.theft[b, me] = 1
            S.theft_time[b, me] = sc_[SC_DECISIONS]
            _log(ev, sc_, cap, EV_THEFT, me, kind, -1, -1, -1)
            to_discards = False
        elif a < osh:
            kind = K_HANDS_OFF
            target = (me + a - oho) % P
            S.hands[b, me, kind] -= 1
            S.theft[b, target] = 0
            S.theft_time[b, target] = -1
            S.discards[b, K_THEFT] += 1
            _log(ev, sc_, cap, EV_HANDS_OFF, me, kind, target, -1, -1)
        elif a < oin:
            kind = K_SWAP_HAND
            target = (me + a - osh) % P
            S.hands[b, me, kind] -= 1
            for k in range(NUM_DK):
                x = S.hands[b, me, k]
                S.hands[b, me, k] = S.hands[b, target, k]
                S.hands[b, target, k] = x
            draws = 0
            _log(ev, sc_, cap, EV_SWAP_HAND, me, kind, target, -1, -1)
            _draw(S, b, target, 1)  # the target draws one; the player draws nothing (E12)
        elif a < oha:
            kind = K_INSPECTION
            target = (me + a - oin) % P
            S.hands[b, me, kind] -= 1
            S.inspected[b, me, target] = S.roles[b, target]
            S.inspections[b, me, target] = 1
            _log(ev, sc_, cap, EV_INSPECTION, me, kind, target, -1, -1)
        elif a < otr:
            kind = K_SWAP_HATS
            target = (me + a - oha) % P
            S.hands[b, me, kind] -= 1
            S.roles[b, target] = S.round_roles[b, sc_[SC_ROUND], sc_[SC_RESERVE_POS]]
            sc_[SC_RESERVE_POS] += 1
            S.hats_swapped[b, target] = 1
            _log(ev, sc_, cap, EV_SWAP_HATS, me, kind, target, -1, -1)
        elif a < ofa:
            kind = K_TRAPPED
            target = (me + a - otr) % P
            S.hands[b, me, kind] -= 1
            S.trapped[b, target] = 1
            _log(ev, sc_, cap, EV_TRAPPED, me, kind, target, -1, -1)
            to_discards = False
        else:
            kind = K_FREE_AT_LAST
            target = (me + a - ofa) % P
            S.hands[b, me, kind] -= 1
            S.trapped[b, target] = 0
            S.discards[b, K_TRAPPED] += 1
            _log(ev, sc_, cap, EV_FREE_AT_LAST, me, kind, target, -1, -1)
        if to_discards:
            S.discards[b, kind] += 1
        sc_[SC_LAST] = me
        _draw(S, b, me, draws)
        _next_turn(S, cfg, b, stack_c, stack_b)


# ---- observations ----------------------------------------------------------------------------------------------
@inline_helper
def _cell_planes(out, HW, c, sh, r, clear):
    """Set (or with ``clear`` zero) the board planes of cell ``c`` holding shape ``sh`` (-1: none) with connected
    arms ``r``: the static planes of the shape, the reach planes 4-7 and plane 25 (a path card)."""
    col = sh if sh >= 0 else NO_SHAPE
    for k in range(STATIC_NNZ[col]):
        pl = STATIC_NZ[col, k]
        out[pl * HW + c] = 0.0 if clear else STATIC[col, pl]
    for d in range(4):
        if (r >> d) & 1:
            out[(4 + d) * HW + c] = 0.0 if clear else 1.0
    if sh >= 0 and sh // 2 < NUM_PK:
        out[25 * HW + c] = 0.0 if clear else 1.0


@helper
def _history_rows(events, out, pos, first, seat, P, L, F, rowcol, modp, clear):
    """The float history rows (events ``first .. first + L``, seen by ``seat``) at ``out[pos:]``: their entries
    set, or with ``clear`` set back to 0."""
    one = 0.0 if clear else 1.0
    for i in range(L):
        e = first + i
        if e < 0:
            continue
        row = pos + i * F
        ev = events[e]
        etype, actor, kind, target, cell, arg = ev[0], ev[1], ev[2], ev[3], ev[4], ev[5]
        out[row] = one
        out[row + 1 + etype] = one
        if actor >= 0:
            out[row + 1 + NUM_EVENT_TYPES + modp[actor - seat + P]] = one
        if kind >= 0:
            out[row + 1 + NUM_EVENT_TYPES + P + kind] = one
        if target >= 0:
            out[row + 1 + NUM_EVENT_TYPES + P + NK + modp[target - seat + P]] = one
        if cell >= 0:
            out[row + F - 3] = 0.0 if clear else rowcol[cell, 0]
            out[row + F - 2] = 0.0 if clear else rowcol[cell, 1]
        out[row + F - 1] = 0.0 if clear else max(arg, 0) / 10.0


@helper
def _obs_float_range(S, cfg, rowcol, b0, b1, seats, obs, incremental):
    """The reference's ``encode_observation(state, seat)`` for slots ``b0..b1`` (``seats[b]``, -1: the seat to
    act), written into ``obs[b]`` (each region zero-filled, then its non-zero entries set).

    ``incremental``: ``obs`` is the lock-step's own buffer, whose row still holds what the last incremental write
    put there (``obs_cells``, as in ``base.kernels``): only the board planes of cells whose token (shape and connected
    arms) changed are rewritten (the public planes are most of the observation and a step changes a few cells),
    and the history rows clear the entries they set last time instead of zero-filling the block."""
    P, HW, L = cfg[H_P], cfg[H_HW], cfg[H_L]
    F = 1 + NUM_EVENT_TYPES + P + NK + P + 3
    modp = np.arange(2 * P) % P  # k % P for 0 <= k < 2P: seat offsets without a division
    hist = 31 * HW + 6 + NUM_DK + 14 * P + 12 * P + P * P + 15 + P  # where the history rows start
    # The field arrays are read once per call: every ``S.field`` in the loop would be a load and a reference count.
    f_sc, f_shape, f_reach, f_peeked = S.sc, S.cell_shape, S.reach, S.peeked
    f_grev, f_gkind = S.goal_revealed, S.goal_kind
    f_roles, f_hands, f_broken, f_trapped, f_theft = S.roles, S.hands, S.broken, S.trapped, S.theft
    f_gold, f_hats, f_disc, f_insp, f_inspd = S.gold, S.hats_swapped, S.discarded, S.inspections, S.inspected
    f_last, f_events, f_cells = S.last_roles, S.events, S.obs_cells
    for b in range(b0, b1):
        out = obs[b]
        sc_ = f_sc[b]
        seat = seats[b] if seats[b] >= 0 else sc_[SC_CURRENT]
        shape = f_shape[b]
        reach = f_reach[b]
        cells = f_cells[b]
        known = incremental and cells[HW] == 1  # the row holds the cells recorded in obs_cells
        if not known:
            out[: 31 * HW] = 0.0
        for c in range(HW):
            tok = (shape[c] + 1) | ((reach[c] & 15) << 8)
            old = tok
            first = 1  # passes: 0 clears the planes of the cell the row holds, 1 sets the current cell's
            if known:
                old = cells[c] - 1
                if old == tok:
                    continue
                first = 0
            for q in range(first, 2):  # one call site: numba inlines the helper's body once
                t = old if q == 0 else tok
                _cell_planes(out, HW, c, (t & 255) - 1, t >> 8, q == 0)
            if incremental:
                cells[c] = tok + 1
        if incremental:
            cells[HW] = 1
        for g in range(3):  # the goal planes 26-30 depend on the seat (its peeks): rewritten every time
            gc = cfg[H_GOAL + g]
            for pl in range(26, 31):
                out[pl * HW + gc] = 0.0
            gold = f_gkind[b, g] == K_GOLD
            if f_grev[b, g]:
                out[(27 if gold else 28) * HW + gc] = 1.0
            else:
                out[26 * HW + gc] = 1.0
                if f_peeked[b, seat, g]:
                    out[(29 if gold else 30) * HW + gc] = 1.0
        out[31 * HW : hist] = 0.0
        pos = 31 * HW
        out[pos + f_roles[b, seat]] = 1.0
        hands = f_hands[b]
        broken, insp = f_broken[b], f_insp[b]
        pos += 6
        for k in range(NUM_DK):
            out[pos + k] = hands[seat, k]
        pos += NUM_DK
        for i in range(P):
            x = modp[seat + i]
            row = pos + 14 * i
            out[row] = broken[x, 0]
            out[row + 1] = broken[x, 1]
            out[row + 2] = broken[x, 2]
            out[row + 3] = f_trapped[b, x]
            out[row + 4] = f_theft[b, x]
            out[row + 5] = _hand_total(hands, x)
            out[row + 6] = f_gold[b, x]
            out[row + 7] = f_hats[b, x]
            out[row + 8] = f_peeked[b, x, 0]
            out[row + 9] = f_peeked[b, x, 1]
            out[row + 10] = f_peeked[b, x, 2]
            out[row + 11] = f_disc[b, x]
            out[row + 12] = insp[seat, x]
            out[row + 13] = insp[x, seat]
        pos += 14 * P
        for i in range(P):
            seen = f_inspd[b, seat, modp[seat + i]]
            if seen >= 0:
                out[pos + 6 * i + seen] = 1.0
        pos += 6 * P
        if sc_[SC_NUM_SUMMARY] > 0:  # the roles of the latest round end (this round's in the theft phase)
            for i in range(P):
                out[pos + 6 * i + f_last[b, modp[seat + i]]] = 1.0
        pos += 6 * P
        for i in range(P):
            for j in range(P):
                out[pos + i * P + j] = insp[modp[seat + i], modp[seat + j]]
        pos += P * P
        out[pos] = DECK - sc_[SC_DECK_POS]
        out[pos + 1] = NUM_ROLE_CARDS - sc_[SC_RESERVE_POS]
        out[pos + 2] = sc_[SC_NUM_THIEVES] - sc_[SC_THIEF_POS]
        out[pos + 3 + min(sc_[SC_ROUND], 2)] = 1.0
        if not sc_[SC_OVER]:
            out[pos + 6 + modp[sc_[SC_CURRENT] - seat + P]] = 1.0
        out[pos + 6 + P + sc_[SC_PHASE]] = 1.0
        tail = pos + 6 + P + 4
        if sc_[SC_CURRENT] == seat:
            out[tail] = sc_[SC_PENDING]
            if sc_[SC_PHASE] == PH_FREE:
                out[tail + 1 + sc_[SC_FREE_TARGET]] = 1.0
        pos += 15 + P
        first = sc_[SC_NUM_EVENTS] - L
        if incremental and cells[HW + 1] > 0:
            # The log is append-only within a game (a new game marks the record unknown), so the entries the last
            # write set are recomputed from its window and seat and cleared: the rows are mostly 0.
            _history_rows(f_events[b], out, pos, cells[HW + 1] - 1 - L, cells[HW + 2], P, L, F, rowcol, modp, True)
        else:
            out[pos : pos + L * F] = 0.0
        _history_rows(f_events[b], out, pos, first, seat, P, L, F, rowcol, modp, False)
        if incremental:
            cells[HW + 1] = first + L + 1
            cells[HW + 2] = seat


@helper
def _obs_compact_range(S, cfg, b0, b1, seats, obs):
    """The compact observation (``COMPACT_DOC``) of ``seats[b]`` in slot ``b``, written into ``obs[b]``."""
    P, HW, L = cfg[H_P], cfg[H_HW], cfg[H_L]
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    modp = np.arange(2 * P) % P  # k % P for 0 <= k < 2P: seat offsets without a division
    # The field arrays are read once per call: every ``S.field`` in the loop would be a load and a reference count.
    f_sc, f_shape, f_reach, f_peeked = S.sc, S.cell_shape, S.reach, S.peeked
    f_grev, f_gkind = S.goal_revealed, S.goal_kind
    f_roles, f_hands, f_broken, f_trapped, f_theft = S.roles, S.hands, S.broken, S.trapped, S.theft
    f_gold, f_hats, f_disc, f_insp, f_inspd = S.gold, S.hats_swapped, S.discarded, S.inspections, S.inspected
    f_last, f_events = S.last_roles, S.events
    for b in range(b0, b1):
        out = obs[b]
        sc_ = f_sc[b]
        seat = seats[b] if seats[b] >= 0 else sc_[SC_CURRENT]
        shape = f_shape[b]
        reach = f_reach[b]
        for c in range(HW):
            s = shape[c]
            tok = s if s >= 0 else (NO_SHAPE + 1 if isgoal[c] else NO_SHAPE)
            out[c] = tok | ((reach[c] & 15) << 7)
        peeked = f_peeked[b, seat]
        for g in range(3):
            if peeked[g] and not f_grev[b, g]:
                c = cfg[H_GOAL + g]
                out[c] |= (1 << 11) if f_gkind[b, g] == K_GOLD else (1 << 12)
        pos = HW
        out[pos] = f_roles[b, seat]
        pos += 1
        hands = f_hands[b]
        for k in range(NUM_DK):
            out[pos + k] = hands[seat, k]
        pos += NUM_DK
        broken, insp = f_broken[b], f_insp[b]
        for i in range(P):
            x = modp[seat + i]
            row = pos + 14 * i
            out[row] = broken[x, 0]
            out[row + 1] = broken[x, 1]
            out[row + 2] = broken[x, 2]
            out[row + 3] = f_trapped[b, x]
            out[row + 4] = f_theft[b, x]
            out[row + 5] = _hand_total(hands, x)
            out[row + 6] = f_gold[b, x]
            out[row + 7] = f_hats[b, x]
            out[row + 8] = f_peeked[b, x, 0]
            out[row + 9] = f_peeked[b, x, 1]
            out[row + 10] = f_peeked[b, x, 2]
            out[row + 11] = f_disc[b, x]
            out[row + 12] = insp[seat, x]
            out[row + 13] = insp[x, seat]
        pos += 14 * P
        inspd = f_inspd[b, seat]
        for i in range(P):
            out[pos + i] = inspd[modp[seat + i]]
        pos += P
        has_last = sc_[SC_NUM_SUMMARY] > 0
        last = f_last[b]
        for i in range(P):
            out[pos + i] = last[modp[seat + i]] if has_last else -1
        pos += P
        for i in range(P):
            bits = 0
            xi = modp[seat + i]
            for j in range(P):
                if insp[xi, modp[seat + j]]:
                    bits |= 1 << j
            out[pos + i] = bits
        pos += P
        out[pos] = DECK - sc_[SC_DECK_POS]
        out[pos + 1] = NUM_ROLE_CARDS - sc_[SC_RESERVE_POS]
        out[pos + 2] = sc_[SC_NUM_THIEVES] - sc_[SC_THIEF_POS]
        out[pos + 3] = sc_[SC_ROUND]
        out[pos + 4] = -1 if sc_[SC_OVER] else modp[sc_[SC_CURRENT] - seat + P]
        out[pos + 5] = sc_[SC_PHASE]
        mine = sc_[SC_CURRENT] == seat
        out[pos + 6] = sc_[SC_PENDING] if mine else 0
        out[pos + 7] = sc_[SC_FREE_TARGET] if mine and sc_[SC_PHASE] == PH_FREE else -1
        pos += 8
        ne = sc_[SC_NUM_EVENTS]
        first = ne - L
        events = f_events[b]
        for i in range(L):
            e = first + i
            row = pos + 6 * i
            if e < 0:
                for k in range(6):
                    out[row + k] = -1
                continue
            ev = events[e]
            out[row] = ev[0]
            out[row + 1] = modp[ev[1] - seat + P] if ev[1] >= 0 else -1
            out[row + 2] = ev[2]
            out[row + 3] = modp[ev[3] - seat + P] if ev[3] >= 0 else -1
            out[row + 4] = ev[4]
            out[row + 5] = ev[5]


# ---- decoding ------------------------------------------------------------------------------------------------
def expand_compact(compact: NDArray[np.int16], config: GameConfig) -> NDArray[np.float32]:
    """The float observation(s) rebuilt from compact ones (shape ``(..., compact_size)``); lossless."""
    c = np.asarray(compact)
    lead = c.shape[:-1]
    c = c.reshape(-1, c.shape[-1]).astype(np.int64)
    p, hw, L = config.num_players, config.num_cells, config.history_length
    geo = geometry(config)
    goals = np.array(geo.goal_cells)
    n = c.shape[0]
    rows = np.arange(n)
    out = np.zeros((n, obs_size(config)), dtype=np.float32)
    cells = c[:, :hw]
    tok = cells & 127
    col = np.minimum(tok, NO_SHAPE)  # a face-down goal has the empty cell's static planes
    board = out[:, : 31 * hw].reshape(n, 31, hw)
    board[:, :25] = STATIC[col].transpose(0, 2, 1)
    reach = (cells >> 7) & 15
    board[:, 4:8] = ((reach[:, None, :] >> np.arange(4)[None, :, None]) & 1).astype(np.float32)
    kind = np.where(tok < NO_SHAPE, tok // 2, -1)
    board[:, 25] = (kind >= 0) & (kind < NUM_PK)
    gtok = tok[:, goals]  # (n, 3)
    board[:, 26, goals] = gtok == NO_SHAPE + 1
    board[:, 27, goals] = gtok // 2 == K_GOLD
    board[:, 28, goals] = (gtok < NO_SHAPE) & (gtok // 2 > K_GOLD)
    board[:, 29, goals] = (cells[:, goals] >> 11) & 1
    board[:, 30, goals] = (cells[:, goals] >> 12) & 1
    pos, src = 31 * hw, hw
    out[rows, pos + c[:, src]] = 1.0
    pos, src = pos + 6, src + 1
    out[:, pos : pos + NUM_DK + 14 * p] = c[:, src : src + NUM_DK + 14 * p]
    pos, src = pos + NUM_DK + 14 * p, src + NUM_DK + 14 * p
    for _ in range(2):  # inspected, last roles: one-hot rows, -1 none
        v = c[:, src : src + p]
        g, j = np.nonzero(v >= 0)
        out[g, pos + 6 * j + v[g, j]] = 1.0
        pos, src = pos + 6 * p, src + p
    bits = c[:, src : src + p]
    out[:, pos : pos + p * p] = ((bits[:, :, None] >> np.arange(p)[None, None, :]) & 1).reshape(n, p * p)
    pos, src = pos + p * p, src + p
    st = c[:, src : src + 8]
    out[:, pos : pos + 3] = st[:, 0:3]
    out[rows, pos + 3 + np.minimum(st[:, 3], 2)] = 1.0
    r = np.flatnonzero(st[:, 4] >= 0)
    out[r, pos + 6 + st[r, 4]] = 1.0
    out[rows, pos + 6 + p + st[:, 5]] = 1.0
    tail = pos + 6 + p + 4
    out[:, tail] = st[:, 6]
    r = np.flatnonzero(st[:, 7] >= 0)
    out[r, tail + 1 + st[r, 7]] = 1.0
    pos, src = pos + 15 + p, src + 8
    rowcol = rowcol_table(config)
    f = history_row_size(config)
    nt = NUM_EVENT_TYPES
    for i in range(L):
        ev = c[:, src + 6 * i : src + 6 * i + 6]
        row = out[:, pos + i * f : pos + (i + 1) * f]
        idx = np.flatnonzero(ev[:, 0] >= 0)
        row[idx, 0] = 1.0
        row[idx, 1 + ev[idx, 0]] = 1.0
        k = idx[ev[idx, 1] >= 0]
        row[k, 1 + nt + ev[k, 1]] = 1.0
        k = idx[ev[idx, 2] >= 0]
        row[k, 1 + nt + p + ev[k, 2]] = 1.0
        k = idx[ev[idx, 3] >= 0]
        row[k, 1 + nt + p + NK + ev[k, 3]] = 1.0
        k = idx[ev[idx, 4] >= 0]
        row[k, f - 3] = rowcol[ev[k, 4], 0]
        row[k, f - 2] = rowcol[ev[k, 4], 1]
        row[idx, f - 1] = (np.maximum(ev[idx, 5], 0) / 10.0).astype(np.float32)
    return out.reshape(*lead, out.shape[-1])


# ---- entry points (one call per batch or shard) ---------------------------------------------------------------
# The batch operations that only the vector environment calls (``setup``, ``apply``, ``observe_compact``, ``step``)
# are one compiled kernel, ``_batch``, chosen by ``op``: each kernel costs its own compile on top of the helpers it
# links (about 0.3-0.7 s here), and these four always compile together. The Python functions below keep the
# module's entry points (``core.batch``'s contract) and pass placeholder arrays of fixed types for what an operation
# does not use (one specialisation). ``masks``, ``observe`` and ``apply_mask1`` keep their own short-signature
# kernels: one game's core state calls them once per decision or per clone, and a call's cost grows with its number
# of array arguments (16 arguments: about 2.5 us more per call).
OP_STEP, OP_SETUP, OP_APPLY, OP_COMPACT = range(4)
_NO_I64 = np.zeros(1, dtype=np.int64)
_NO_I8 = np.zeros(1, dtype=np.int8)
_NO_MASK = np.zeros((1, 8), dtype=np.int8)
_NO_F32 = np.zeros((1, 1), dtype=np.float32)
_NO_I16 = np.zeros((1, 1), dtype=np.int16)


@helper
def _stacks(cfg):
    n = 8 * cfg[H_HW] + 8  # every entry adds at least one new arm: at most 4 per cell, twice for safety
    return np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)


@kernel
def _batch(S, cfg, rowcol, op, b0, b1, actions, mask, num_legal, obs_mode, obs_f, obs_c,
           rewards, done, seats, final_returns):  # fmt: skip
    """The batch operations over slots ``b0..b1`` (``op``: ``OP_*``; see the Python entry points below)."""
    if op == OP_COMPACT:
        _obs_compact_range(S, cfg, b0, b1, seats, obs_c)
        return -1
    stack_c, stack_b = _stacks(cfg)
    if op == OP_SETUP:
        for b in range(b0, b1):
            _setup(S, cfg, b, stack_c, stack_b, obs_mode != 0)
        return -1
    if op == OP_APPLY:
        _apply_range(S, cfg, b0, b1, actions, stack_c, stack_b)
        return -1
    # OP_STEP: the vector env's lock-step (see ``step``).
    A = cfg[H_NA]
    P = cfg[H_P]
    for b in range(b0, b1):
        a = actions[b]
        if a < 0 or a >= A or mask[b, a] == 0:
            return b
    for lo in range(b0, b1, BLOCK):
        hi = min(lo + BLOCK, b1)
        _apply_range(S, cfg, lo, hi, actions, stack_c, stack_b)
        for b in range(lo, hi):
            sc_ = S.sc[b]
            for p in range(P):
                rewards[b, p] = S.last_rewards[b, p]
            if sc_[SC_OVER]:
                done[b] = 1
                for p in range(P):
                    final_returns[b, p] = S.gold[b, p]
                _setup(S, cfg, b, stack_c, stack_b, True)
            else:
                done[b] = 0
            seats[b] = S.sc[b, SC_CURRENT]
        _mask_range(S, cfg, lo, hi, mask, num_legal, True)
        if obs_mode == 0:
            _obs_float_range(S, cfg, rowcol, lo, hi, seats, obs_f, True)
        elif obs_mode == 1:
            _obs_compact_range(S, cfg, lo, hi, seats, obs_c)
    return -1


def setup(S: ViewsRef, cfg: NDArray[np.int64], b0: int, b1: int, draw: bool) -> None:
    """New games in slots ``b0..b1`` (drawn from each slot's generator words when ``draw``)."""
    _batch(S, cfg, _NO_F32, OP_SETUP, b0, b1, _NO_I64, _NO_MASK, _NO_I64, 1 if draw else 0, _NO_F32, _NO_I16,
           _NO_F32, _NO_I8, _NO_I64, _NO_F32)  # fmt: skip


def observe_compact(S: ViewsRef, cfg: NDArray[np.int64], b0: int, b1: int, seats: NDArray[np.int64],
                    out: NDArray[np.int16]) -> None:  # fmt: skip
    """Compact observations of ``seats[b]`` (-1: the seat to act) in slots ``b0..b1``."""
    _batch(S, cfg, _NO_F32, OP_COMPACT, b0, b1, _NO_I64, _NO_MASK, _NO_I64, 1, _NO_F32, out, _NO_F32, _NO_I8, seats,
           _NO_F32)  # fmt: skip


def apply(S: ViewsRef, cfg: NDArray[np.int64], b0: int, b1: int, actions: NDArray[np.int64]) -> None:
    """Apply one (legal, unchecked) action per slot."""
    _batch(S, cfg, _NO_F32, OP_APPLY, b0, b1, actions, _NO_MASK, _NO_I64, 2, _NO_F32, _NO_I16, _NO_F32, _NO_I8,
           _NO_I64, _NO_F32)  # fmt: skip


def step(S: ViewsRef, cfg: NDArray[np.int64], rowcol: NDArray[np.float32], b0: int, b1: int,
         actions: NDArray[np.int64], mask: NDArray[np.int8], num_legal: NDArray[np.int64], obs_mode: int,
         obs_f: NDArray[np.float32], obs_c: NDArray[np.int16], rewards: NDArray[np.float32], done: NDArray[np.int8],
         seats: NDArray[np.int64], final_returns: NDArray[np.float32]) -> int:  # fmt: skip
    """The vector env's lock-step over slots ``b0..b1`` (as ``base.kernels.step``): check every action against
    ``mask``, apply, record rewards and finished games (final returns = gold), start the next game in finished
    slots, then write masks, seats and observations (``obs_mode`` 0 float, 1 compact, 2 none). Returns -1, or the
    first slot whose action is illegal (then nothing changed)."""
    return int(_batch(S, cfg, rowcol, OP_STEP, b0, b1, actions, mask, num_legal, obs_mode, obs_f, obs_c, rewards,
                      done, seats, final_returns))  # fmt: skip


# The lock-step kernel and the arguments it takes between ``rowcol`` and ``b0`` (``core.batch.Batch.step_call``).
LOCKSTEP = (_batch, (OP_STEP,))


@kernel
def masks(S, cfg, b0, b1, out, num_legal):
    """The legal-action rows (int8, padded) and counts of slots ``b0..b1``."""
    _mask_range(S, cfg, b0, b1, out, num_legal, False)


@kernel
def observe(S, cfg, rowcol, b0, b1, seats, out):
    """Float observations of ``seats[b]`` (-1: the seat to act) in slots ``b0..b1``."""
    _obs_float_range(S, cfg, rowcol, b0, b1, seats, out, False)


# ---- entry points for one game (B = 1: the AEC environment, agents and tournaments) ---------------------------
# ``S`` is the batch's ``ViewsRef`` (``kernel_args``): one pointer per call.
@kernel
def apply_mask1(S, cfg, action, out, num_legal):
    """Apply ``action[0]`` (legal, unchecked) and write the next mask: one call per decision."""
    stack_c, stack_b = _stacks(cfg)
    _apply_range(S, cfg, 0, 1, action, stack_c, stack_b)
    _mask_range(S, cfg, 0, 1, out, num_legal, False)
