"""Saboteur: The Duel (rules reference §3) as numba kernels over a batch of games stored as struct of arrays.

The kernel module contract is :mod:`saboteur_env.core` (the same entry points as :mod:`saboteur_env.base.kernels`).
The rules are ported line by line from the numpy reference (``saboteur_env.duel.reference`` with
``saboteur_env.duel.board`` / ``observation``); ``tests/test_core_duel.py`` replays random games through both and
compares masks, observations, rewards, round results and fingerprints. Order-sensitive loops cite the reference function
they port.

State fields per game (shapes after the leading batch axis ``B``; ``R`` rounds, ``HW`` cells, ``E`` events =
``R * (max_decisions_per_round + 6 + 8 + 3 + 1)``: a decision logs one event, plus 6 reveals, 8 counters, 3 troll
payments and the round end per round):

====================  =====  ============  ==============================================================
field                 arena  shape         meaning
====================  =====  ============  ==============================================================
``card_rank``         i8     (R, 52)       shuffle rank of every physical card per round (hidden)
``goal_rank``         i8     (R, 18)       draw rank of every goal card per round (hidden)
``card_out``          i8     (52,)         card left the game (a won gold path card)
``goal_out``          i8     (18,)         goal card left the game (revealed)
``score_vals``        i8     (2, 24)       nugget value of each card in a score pile, in append order
``deck``              i8     (52,)         kinds of this round's pile in draw order (``SC_DECK_LEN`` long)
``hands``             i8     (2, 39)       card counts per kind
``broken``            i8     (2, 3)        broken pickaxe / lantern / cart
``cell_shape``        i8     (HW,)         shape id ``2 * kind + rotation``, -1 empty or face-down goal
``cell_counter``      i8     (HW,)         -1 none, 0 blue, 1 green
``cell_key``          i8     (HW,)         key token on the door
``goal_card``         i8     (6,)          goal index (0..17) per goal slot
``goal_revealed``     i8     (6,)          goal slot face up
``peeked``            i8     (2, 6)        seat used a map on goal slot this round
``reach``             i8     (2, HW)       arms reachable per player (bits N, E, S, W)
``discards``          i16    (39,)         discard pile counts
``events``            i16    (E, 5)        public events ``(type, actor, kind, cell, arg)``, -1 unused
``sc``                i32    (20,)         scalars, indices ``SC_*`` below
``rr``                i32    (R, 6)        round results: reason, gained (2), nuggets after (2), decisions
``rng``               u64    (6,)          the slot's PCG64 words (``core.rng``), advanced by each set-up
``last_rewards``      f32    (2,)          rewards of the last action (set at a round end)
``mask_list``         i16    (256,)        the legal actions in the lock-step's mask row of this slot, in
                                           increasing order: ``[0]`` 1 + their count (0: unknown, or more
                                           than 255), then the actions
====================  =====  ============  ==============================================================

The last field describes the vector env's own mask row (not the game): ``step`` clears only the actions it set
there last time, and the lock-step's sampler draws from the list (a new game marks it unknown: a full write).

The float observation is the reference's layout exactly (``duel.observation``); the compact observation is an
int16 vector holding the same information (:data:`COMPACT_DOC`, :func:`expand_compact`).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba.core import types as nbtypes
from numba.experimental import structref
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_PAIRS
from saboteur_env.common.config import GameConfig
from saboteur_env.core import rng as crng
from saboteur_env.core.common import clear_rows, keep_list
from saboteur_env.core.jit import helper, inline_helper, kernel
from saboteur_env.core.layout import Field, Layout

if TYPE_CHECKING:
    from saboteur_env.core.batch import Batch
from saboteur_env.duel import board as dboard
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import DOUBLE_TOOLS, NUM_PAIRS, PAIR_A, PAIR_B, PASS_EMPTY
from saboteur_env.duel.observation import EVENT_SIZE, NUM_PLANES, duel_observation_layout

# ---- constant tables (frozen into the compiled code; nothing here depends on the config) ----------------------
NS = dc.NUM_SHAPES  # 118 shape ids; row NS of the tables is an empty cell
NK = dc.NUM_DECK_KINDS  # 39
NPK = dc.NUM_PATH_KINDS  # 27
S_OPEN = np.append(dc.SHAPE_OPEN, 0).astype(np.int64)
S_ARM = np.vstack([dc.SHAPE_ARM_GROUP, np.zeros((1, 4), np.uint8)]).astype(np.int64)  # (NS + 1, 4)
S_DOOR = np.hstack([dc.SHAPE_DOOR, np.zeros((2, 1), np.uint8)]).astype(np.int64)  # (2, NS + 1)
S_TROLL = np.append(dc.SHAPE_TROLL, False).astype(np.int64)
S_LADDER = np.append(dc.SHAPE_LADDER, -1).astype(np.int64)
S_GOLD = np.append(dc.SHAPE_GOLD_BITS, 0).astype(np.int64)
S_NUG = np.append(dc.SHAPE_NUGGETS, 0).astype(np.int64)
MAX_NUG = int(S_NUG.max())
NUM_O = len(dc.PLACEABLE)  # 48 placeable orientations
NUM_TROLL_O = len(dc.TROLL_PLACEABLE)  # 5
P_KIND = np.array([k for k, _ in dc.PLACEABLE], dtype=np.int64)
P_ROT = np.array([r for _, r in dc.PLACEABLE], dtype=np.int64)
P_SHAPE = dc.PLACEABLE_SHAPE.astype(np.int64)
P_OPEN = S_OPEN[P_SHAPE]
P_DOOR = S_DOOR[:, P_SHAPE]  # (2, O)
P_LADDER = S_LADDER[P_SHAPE]
P_TROLL_IDX = np.full(NUM_O, -1, dtype=np.int64)  # index in place_bribe, -1 for a card without a troll
for _i, _o in enumerate(dc.TROLL_PLACEABLE):
    P_TROLL_IDX[_o] = _i
TROLL_O = np.array(dc.TROLL_PLACEABLE, dtype=np.int64)


def _placement_bits() -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The orientation tests of a placement as sets of orientations (bit ``o`` of an int64; 48 < 63), so that the
    mask tests every orientation of a cell at once (``rules.legal_action_mask``'s conditions, per cell code):

    * ``FIT[mo | mc << 4]``: the card opens every arm a neighbour opens towards it (``mo``) and none a
      neighbour closes (``mc``);
    * ``CONN[q, fc]``: a card without a ladder joins an arm reached by the mover (``fc``) through an arm that is
      not a door of the opponent's colour ``q``;
    * ``LADDER[lc]``: the cards with a ladder of start ``lc``; ``TOUCH[fc]``: the cards opening an arm of ``fc``."""
    fit = np.zeros(256, dtype=np.int64)
    conn = np.zeros((2, 16), dtype=np.int64)
    ladder = np.zeros(2, dtype=np.int64)
    touch = np.zeros(16, dtype=np.int64)
    for o in range(NUM_O):
        bit, op, lc = 1 << o, int(P_OPEN[o]), int(P_LADDER[o])
        for code in range(256):
            mo, mc = code & 15, code >> 4
            if op & mc == 0 and mo & ~op & 15 == 0:
                fit[code] |= bit
        for fc in range(16):
            if op & fc:
                touch[fc] |= bit
            for q in range(2):
                if lc < 0 and op & fc & ~int(P_DOOR[q, o]) & 15:
                    conn[q, fc] |= bit
        if lc >= 0:
            ladder[lc] |= bit
    return fit, conn, ladder, touch


assert NUM_O < 63
FIT_BITS, CONN_BITS, LADDER_BITS, TOUCH_BITS = _placement_bits()
CARD_KIND = dc.CARD_KIND.astype(np.int64)  # kind of physical card 0..51
DT = np.array(DOUBLE_TOOLS, dtype=np.int64)
PA = PAIR_A.astype(np.int64)
PB = PAIR_B.astype(np.int64)
PAIR_BASE = np.array([sum(NK - i for i in range(a)) for a in range(NK)], dtype=np.int64)  # pair id of (a, a)
SCORE_CAP = 24  # score pile capacity: 14 gold goals + 5 gold path cards can be won in a game
NUM_GOALS, GPR = dc.NUM_GOALS, dc.GOALS_PER_ROUND
EMPTY_TOKEN = NS  # compact cell token of a cell without a card


def _static_table(me: int) -> NDArray[np.float32]:
    """(NS + 1, 26) per-shape planes seen by colour ``me`` (the reference's ``observation._static_table``)."""
    out = np.zeros((NS + 1, 26), dtype=np.float32)
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


STATIC = np.stack([_static_table(0), _static_table(1)])  # (2, NS + 1, 26)
STATIC_ROWS = np.r_[0:10, 18:26, 27, 30, 31, 32, 33:37].astype(np.int64)  # plane of each static column
# Non-zero static entries per (colour, shape) as (plane, value) lists: the float writer touches only those.
ST_NNZ = np.zeros((2, NS + 1), dtype=np.int64)
ST_PLANE = np.zeros((2, NS + 1, 26), dtype=np.int64)
ST_VAL = np.zeros((2, NS + 1, 26), dtype=np.float32)
for _me in range(2):
    for _s in range(NS + 1):
        _nz = np.flatnonzero(STATIC[_me, _s])
        ST_NNZ[_me, _s] = len(_nz)
        ST_PLANE[_me, _s, : len(_nz)] = STATIC_ROWS[_nz]
        ST_VAL[_me, _s, : len(_nz)] = STATIC[_me, _s, _nz]

# Event types (duel.state.DuelEvent).
EV_PLACE, EV_BRIBE, EV_BREAK, EV_REPAIR, EV_ROCKFALL, EV_MAP, EV_KEY, EV_REPAIR_DISCARD, EV_PASS = range(9)
EV_REVEAL, EV_SECURE, EV_ROUND_END, EV_PAY = range(9, 13)
NUM_EVENT_TYPES = 13
REASONS = ("all goals revealed", "all counters used", "cards exhausted")
# Scalars of a game (field ``sc``).
SC_ROUND, SC_STARTER, SC_CURRENT, SC_COUNTERS, SC_KEYS, SC_DECK_LEN, SC_DECK_POS, SC_DECISIONS = range(8)
SC_OVER, SC_JUST_ENDED, SC_NUM_EVENTS, SC_FIRST_EVENT, SC_FIRST_DECISION, SC_SCORE_LEN = range(8, 14)  # 13, 14
SC_NUM_RR, SC_ERROR, SC_GAMES = range(15, 18)
NUM_SC = 20
BLOCK = 32  # games per block of the fused lock-step
ERR_EVENTS, ERR_SCORE = 1, 2  # the event log or a score pile overflowed (bugs: the capacities are proven bounds)

# Config table (int64): a header, the field offsets, then the neighbour table, next-to-goal flags, goal slot per
# cell (-1) and the goal-cell flags.
H_HW, H_R, H_L, H_E, H_ROWS, H_COLS, H_START = range(7)  # 6, 7: blue and green start cells
H_GOAL = 8  # 6 goal cells
H_WIN, H_NA, H_OBS, H_COMPACT, H_B, H_NBR, H_NTG, H_SLOT, H_ISGOAL, H_CSIZE = range(14, 24)
H_OFF = 24
NUM_FIELDS = 22
MASK_LIST = 255  # legal actions the lock-step's record holds (more: the row is cleared and sampled in full)
HEADER = H_OFF + NUM_FIELDS

FIELD_NAMES = (
    "card_rank", "goal_rank", "card_out", "goal_out", "score_vals", "deck", "hands", "broken", "cell_shape",
    "cell_counter", "cell_key", "goal_card", "goal_revealed", "peeked", "reach", "discards", "events", "sc", "rr",
    "rng", "last_rewards", "mask_list",
)  # fmt: skip
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
    """Mark the lock-step's mask rows of slots ``b0..b1`` unknown (rewritten in full by the next step): for states
    copied in from elsewhere (``Batch.from_states``), whose list describes another buffer's rows."""
    batch.field("mask_list")[b0:b1, 0] = 0


def kernel_args(batch: Batch) -> tuple[ViewsRef]:
    """What this module's kernels take before ``cfg``: one ``ViewsRef`` over the batch's field views."""
    return (new_views(*batch.views),)


def event_capacity(config: GameConfig) -> int:
    """Rows of the event log: a true bound on a game's events (see the module docstring)."""
    return config.rounds * (config.max_decisions_per_round + 6 + 8 + 3 + 1)


def fields(config: GameConfig) -> tuple[Field, ...]:
    """The Duel state's fields for ``config`` (in the order of :data:`FIELD_NAMES`)."""
    r, hw, e = config.rounds, config.num_cells, event_capacity(config)
    shapes = {
        "card_rank": ("i8", (r, dc.DECK_SIZE)), "goal_rank": ("i8", (r, NUM_GOALS)),
        "card_out": ("i8", (dc.DECK_SIZE,)), "goal_out": ("i8", (NUM_GOALS,)),
        "score_vals": ("i8", (2, SCORE_CAP)), "deck": ("i8", (dc.DECK_SIZE,)),
        "hands": ("i8", (2, NK)), "broken": ("i8", (2, 3)), "cell_shape": ("i8", (hw,)), "cell_counter": ("i8", (hw,)),
        "cell_key": ("i8", (hw,)), "goal_card": ("i8", (GPR,)), "goal_revealed": ("i8", (GPR,)),
        "peeked": ("i8", (2, GPR)), "reach": ("i8", (2, hw)), "discards": ("i16", (NK,)), "events": ("i16", (e, 5)),
        "sc": ("i32", (NUM_SC,)), "rr": ("i32", (r, 6)), "rng": ("u64", (6,)), "last_rewards": ("f32", (2,)),
        "mask_list": ("i16", (MASK_LIST + 1,)),
    }  # fmt: skip
    return tuple(Field(n, *shapes[n]) for n in FIELD_NAMES)


def obs_size(config: GameConfig) -> int:
    return int(duel_observation_layout(config).size)


def compact_size(config: GameConfig) -> int:
    return 2 * config.num_cells + 62 + 5 * config.history_length


def num_actions(config: GameConfig) -> int:
    hw = config.num_cells
    return hw * NUM_O + hw * NUM_TROLL_O + 3 + 3 + 9 + hw + GPR + hw + 3 * NUM_PAIRS + PASS_EMPTY + 1 + hw


COMPACT_DOC = """Compact observation (int16) of seat ``me``, offsets for ``HW`` cells and ``L`` history rows:

===============  ======  =================================================================================
name             size    content
===============  ======  =================================================================================
``cells``        2 HW    two int16 per storage cell (interleaved). First: bits 0-6 the shape id (0..117,
                         ``2 * kind + rotation``) or 118 for no card; bit 7 a key; bits 8-9 the counter (0 none,
                         1 mine, 2 the opponent's); bit 10 a face-down goal slot; bit 11 a revealed goal slot.
                         Second: the arms I reach (bits 0-3), the arms the opponent reaches (bits 4-7)
``hand``         39      my card counts per kind
``my_peeks``     6       goal index (0..17) I saw on each slot, -1
``peeked``       2       6-bit masks of the slots peeked by me / the opponent
``tools``        2       3-bit masks of broken tools, me / the opponent
``hand_sizes``   2       me, opponent
``supply``       4       draw pile, counters left, keys left, goals left in the pool
``nuggets``      2       score pile nuggets, me / opponent
``pile_cards``   2       score pile cards, me / opponent
``round``        1       round (0-based)
``status``       2       I am to act (and the game goes on), my colour is green
``history``      5 L     last L public events, oldest first: (type, actor is me, kind, cell, arg); -1 unused
===============  ======  =================================================================================
"""


def config_table(config: GameConfig, layout: Layout) -> NDArray[np.int64]:
    """The int64 config table the kernels read (header, field offsets, neighbours, goal flags)."""
    hw = config.num_cells
    geo = dboard.geometry(config)
    slot = np.full(hw, -1, dtype=np.int64)
    for i, cell in enumerate(geo.goal_cells):
        slot[cell] = i
    parts = [geo.nbr.ravel().astype(np.int64), geo.next_to_goal.astype(np.int64), slot,
             geo.is_goal_cell.astype(np.int64)]  # fmt: skip
    head = np.zeros(HEADER, dtype=np.int64)
    head[H_HW], head[H_R], head[H_L], head[H_E] = hw, config.rounds, config.history_length, event_capacity(config)
    head[H_ROWS], head[H_COLS] = config.rows, config.cols
    head[H_START : H_START + 2] = geo.start_cells
    head[H_GOAL : H_GOAL + GPR] = geo.goal_cells
    head[H_WIN] = config.reward == "win"
    head[H_NA], head[H_OBS], head[H_COMPACT] = num_actions(config), obs_size(config), compact_size(config)
    head[H_B] = layout.batch
    head[H_OFF : H_OFF + NUM_FIELDS] = layout.offsets
    pos = HEADER
    for slot_h, part in zip((H_NBR, H_NTG, H_SLOT, H_ISGOAL), parts, strict=True):
        head[slot_h] = pos
        pos += len(part)
    head[H_CSIZE] = pos
    return np.concatenate([head, *parts])


def rowcol_table(config: GameConfig) -> NDArray[np.float32]:
    """``(HW, 2)`` float32 row/col of each storage cell scaled to 0..1 (the reference's ``cell_rowcol``)."""
    return np.ascontiguousarray(duel_observation_layout(config).cell_rowcol, dtype=np.float32)


# ---- board -------------------------------------------------------------------------------------------------------
@inline_helper
def _enter(shape, usable, reach, stack, sp, cell, arm_bits):
    """common.arms.reach_from's ``enter``: the arms of the groups of ``arm_bits``, usable and new, are reached.
    (Inlined: a call passing four arrays takes four atomic reference count pairs, and a reach calls it per arm.)"""
    s = shape[cell]
    bits = 0
    for e in range(4):
        if (arm_bits >> e) & 1:
            bits |= S_ARM[s, e]
    new = bits & usable[cell] & ~reach[cell] & 15
    if new:
        reach[cell] |= new
        stack[sp] = cell * 16 + new
        sp += 1
    return sp


@helper
def _reach_one(shape, counter, key, nbr, s0, s1, p, reach, wk):
    """duel.board.compute_reach: arms reachable for ``p`` from its start card, ladders joined to their colour's
    start (``common.arms.reach_from`` with links). The result is a closure, so the visiting order is free."""
    HW = shape.shape[0]
    usable = wk[:HW]
    stack = wk[HW:]
    for c in range(HW):
        s = shape[c]
        reach[c] = 0
        if s < 0:
            usable[c] = 0
            continue
        if S_TROLL[s] and counter[c] < 0:
            blk = 15
        elif key[c]:
            blk = 0
        else:
            blk = S_DOOR[1 - p, s]
        usable[c] = S_OPEN[s] & ~blk & 15
    start = s0 if p == 0 else s1
    linked0 = False
    linked1 = False
    sp = _enter(shape, usable, reach, stack, 0, start, usable[start])
    while sp > 0:
        sp -= 1
        v = stack[sp]
        cell = v >> 4
        new = v & 15
        lk = -1
        if cell == s0:
            lk = 0
        elif cell == s1:
            lk = 1
        else:
            lk = S_LADDER[shape[cell]]
        if (lk == 0 and not linked0) or (lk == 1 and not linked1):
            if lk == 0:
                linked0 = True
            else:
                linked1 = True
            st = s0 if lk == 0 else s1
            sp = _enter(shape, usable, reach, stack, sp, st, usable[st])
            for c in range(HW):
                if shape[c] >= 0 and S_LADDER[shape[c]] == lk:
                    sp = _enter(shape, usable, reach, stack, sp, c, usable[c])
        for d in range(4):
            if (new >> d) & 1:
                j = nbr[cell, d]
                od = (d + 2) & 3
                if j >= 0 and shape[j] >= 0 and (usable[j] >> od) & 1:
                    sp = _enter(shape, usable, reach, stack, sp, j, 1 << od)


@helper
def _refresh_reach(S, cfg, b, wk):
    HW = cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    # The slot's views taken once for both players: each costs atomic reference count operations.
    shape, counter, key, reach = S.cell_shape[b], S.cell_counter[b], S.cell_key[b], S.reach[b]
    for p in range(2):
        _reach_one(shape, counter, key, nbr, cfg[H_START], cfg[H_START + 1], p, reach[p], wk)


# ---- set-up and rounds -----------------------------------------------------------------------------------------------
@helper
def _draw(hand, deck, sc, n):
    """rules._draw: up to ``n`` cards from the pile into ``hand``; returns the number drawn."""
    n = min(n, sc[SC_DECK_LEN] - sc[SC_DECK_POS])
    for _ in range(n):
        hand[deck[sc[SC_DECK_POS]]] += 1
        sc[SC_DECK_POS] += 1
    return n


@helper
def _start_round(S, cfg, b, r, starter, wk):
    """rules.start_round: the pile is the cards still in the game by this round's rank, the goals the six
    lowest-ranked goals left in the pool (ranks are permutations, so the stable argsort is the inverse)."""
    sc = S.sc[b]
    sc[SC_ROUND] = r
    sc[SC_STARTER] = starter
    sc[SC_CURRENT] = starter
    inv = np.empty(52, dtype=np.int64)
    for i in range(52):
        inv[S.card_rank[b, r, i]] = i
    n = 0
    for k in range(52):
        i = inv[k]
        if not S.card_out[b, i]:
            S.deck[b, n] = CARD_KIND[i]
            n += 1
    for k in range(n, 52):
        S.deck[b, k] = 0
    sc[SC_DECK_LEN] = n
    sc[SC_DECK_POS] = 0
    for i in range(NUM_GOALS):
        inv[S.goal_rank[b, r, i]] = i
    n = 0
    for k in range(NUM_GOALS):
        g = inv[k]
        if not S.goal_out[b, g] and n < GPR:
            S.goal_card[b, n] = g
            n += 1
    S.goal_revealed[b] = 0
    S.peeked[b] = 0
    S.hands[b] = 0
    for i in range(2 * dc.HAND_SIZE):
        _draw(S.hands[b, i % 2], S.deck[b], sc, 1)
    S.broken[b] = 0
    S.discards[b] = 0
    shape = S.cell_shape[b]
    shape[:] = -1
    for colour in range(2):
        shape[cfg[H_START + colour]] = 2 * dc.KIND_START[colour]
    S.cell_counter[b] = -1
    S.cell_key[b] = 0
    sc[SC_COUNTERS] = dc.NUM_COUNTERS
    sc[SC_KEYS] = dc.NUM_KEYS
    sc[SC_FIRST_EVENT] = sc[SC_NUM_EVENTS]
    sc[SC_FIRST_DECISION] = sc[SC_DECISIONS]
    _refresh_reach(S, cfg, b, wk)


@helper
def _setup(S, cfg, b, wk, draw):
    """A new game in slot ``b`` (rules.new_game): a rank permutation of the 52 cards per round, then one of the
    18 goals per round, from the slot's generator words (unless ``draw`` is False: the caller wrote them); green
    starts round 1."""
    R = cfg[H_R]
    if draw:
        st = S.rng[b]
        for r in range(R):
            for k in range(52):
                S.card_rank[b, r, k] = k
            crng.shuffle(st, S.card_rank[b, r])
        for r in range(R):
            for k in range(NUM_GOALS):
                S.goal_rank[b, r, k] = k
            crng.shuffle(st, S.goal_rank[b, r])
    S.card_out[b] = 0
    S.goal_out[b] = 0
    S.score_vals[b] = 0
    S.last_rewards[b] = 0.0
    S.events[b] = -1
    S.rr[b] = 0
    S.mask_list[b, 0] = 0  # the lock-step's mask row of this slot: rewrite in full next time
    sc = S.sc[b]
    games = sc[SC_GAMES]
    sc[:] = 0
    sc[SC_GAMES] = games + 1
    _start_round(S, cfg, b, 0, 1, wk)


# ---- mask --------------------------------------------------------------------------------------------------------
@helper
def _mask_range(S, cfg, b0, b1, masks, num_legal, incremental):
    """The legal-action rows of slots ``b0..b1`` (int8, zeroed here) and their counts (rules.legal_action_mask).

    ``incremental``: ``masks`` is the lock-step's own buffer, whose row still holds what the last incremental call
    set (``mask_list``): only those bytes are cleared, not the whole 5,700-byte row, and the new list is kept for the
    next call and the lock-step's sampler. The state's arrays are bound once per call and indexed with the slot (a
    per-slot view costs atomic reference counts)."""
    HW = cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    ntg = cfg[cfg[H_NTG] : cfg[H_NTG] + HW]
    isgoal = cfg[cfg[H_ISGOAL] : cfg[H_ISGOAL] + HW]
    s0, s1 = cfg[H_START], cfg[H_START + 1]
    o_pb = HW * NUM_O
    o_br = o_pb + HW * NUM_TROLL_O
    o_rp = o_br + 3
    o_dr = o_rp + 3
    o_rf = o_dr + 9
    o_map = o_rf + HW
    o_key = o_map + GPR
    o_rd = o_key + HW
    o_pass = o_rd + 3 * NUM_PAIRS
    o_bribe = o_pass + PASS_EMPTY + 1
    kinds = np.empty(NK, dtype=np.int64)
    orients = np.empty(NUM_O, dtype=np.int64)
    pos = np.empty(masks.shape[1], dtype=np.int32)  # the actions set, in the order they are set
    words = masks.view(np.uint64)  # rows are padded to whole words
    lst, scs, hands, brokens, shapes, counters_, reaches = (S.mask_list, S.sc, S.hands, S.broken, S.cell_shape,
                                                            S.cell_counter, S.reach)  # fmt: skip
    revealed, keys = S.goal_revealed, S.cell_key
    clear_rows(masks, words, lst, b0, b1, incremental)
    for b in range(b0, b1):
        if scs[b, SC_OVER]:
            num_legal[b] = 0
            continue
        p = scs[b, SC_CURRENT]
        q = 1 - p
        counters = scs[b, SC_COUNTERS]
        n = 0
        anybroken = brokens[b, p, 0] != 0 or brokens[b, p, 1] != 0 or brokens[b, p, 2] != 0
        has_path = False
        for k in range(NPK):
            if hands[b, p, k] > 0:
                has_path = True
                break
        if not anybroken and has_path:  # board.placement_table & the hand
            js0 = p == 0 or reaches[b, p, s0] != 0
            js1 = p == 1 or reaches[b, p, s1] != 0
            in_hand = 0  # the orientations of the path cards in the hand (a few of the 48), as bits
            no = 0
            for o in range(NUM_O):
                if hands[b, p, P_KIND[o]] > 0:
                    in_hand |= np.int64(1) << o
                    orients[no] = o
                    no += 1
            own_ladders = (LADDER_BITS[0] if js0 else 0) | (LADDER_BITS[1] if js1 else 0)
            for c in range(HW):
                if shapes[b, c] >= 0 or isgoal[c]:
                    continue
                mo = 0
                mc = 0
                fc = 0
                gold_next = False
                for d in range(4):
                    j = nbr[c, d]
                    if j >= 0 and shapes[b, j] >= 0:
                        od = (d + 2) & 3
                        if (S_OPEN[shapes[b, j]] >> od) & 1:
                            mo |= 1 << d
                            if (reaches[b, p, j] >> od) & 1:
                                fc |= 1 << d
                        else:
                            mc |= 1 << d
                        if S_NUG[shapes[b, j]] > 0:
                            gold_next = True
                if mo == 0 and mc == 0:
                    continue
                ok = CONN_BITS[q, fc]
                if ntg[c] == 0 and not gold_next:  # a ladder: not next to a goal or gold, from a start or an arm
                    ok |= (LADDER_BITS[0] | LADDER_BITS[1]) & (own_ladders | TOUCH_BITS[fc])
                ok &= FIT_BITS[mo | (mc << 4)] & in_hand
                if ok == 0:
                    continue
                for oi in range(no):
                    o = orients[oi]
                    if (ok >> o) & 1:
                        masks[b, c * NUM_O + o] = 1
                        pos[n] = c * NUM_O + o
                        n += 1
                        if counters > 0 and P_TROLL_IDX[o] >= 0:
                            masks[b, o_pb + c * NUM_TROLL_O + P_TROLL_IDX[o]] = 1
                            pos[n] = o_pb + c * NUM_TROLL_O + P_TROLL_IDX[o]
                            n += 1
        for t in range(3):
            if hands[b, p, 27 + t] > 0 and brokens[b, q, t] == 0:
                masks[b, o_br + t] = 1
                pos[n] = o_br + t
                n += 1
            if hands[b, p, 30 + t] > 0 and brokens[b, p, t] != 0:
                masks[b, o_rp + t] = 1
                pos[n] = o_rp + t
                n += 1
        for i in range(3):
            if hands[b, p, 33 + i] > 0:
                ba = brokens[b, p, DT[i, 0]] != 0
                bb = brokens[b, p, DT[i, 1]] != 0
                if ba:
                    masks[b, o_dr + 3 * i] = 1
                    pos[n] = o_dr + 3 * i
                    n += 1
                if bb:
                    masks[b, o_dr + 3 * i + 1] = 1
                    pos[n] = o_dr + 3 * i + 1
                    n += 1
                if ba and bb:
                    masks[b, o_dr + 3 * i + 2] = 1
                    pos[n] = o_dr + 3 * i + 2
                    n += 1
        if hands[b, p, dc.KIND_ROCKFALL] > 0:  # board.removable_cells
            for c in range(HW):
                s = shapes[b, c]
                if s >= 0 and s // 2 < NPK and not S_TROLL[s] and S_NUG[s] == 0 and c != s0 and c != s1:
                    masks[b, o_rf + c] = 1
                    pos[n] = o_rf + c
                    n += 1
        if hands[b, p, dc.KIND_MAP] > 0:
            for g in range(GPR):
                if revealed[b, g] == 0:
                    masks[b, o_map + g] = 1
                    pos[n] = o_map + g
                    n += 1
        if hands[b, p, dc.KIND_KEY] > 0 and scs[b, SC_KEYS] > 0:  # board.door_cells
            for c in range(HW):
                s = shapes[b, c]
                if s >= 0 and (S_DOOR[0, s] | S_DOOR[1, s]) != 0 and keys[b, c] == 0:
                    masks[b, o_key + c] = 1
                    pos[n] = o_key + c
                    n += 1
        nk = 0
        total = 0
        for k in range(NK):
            if hands[b, p, k] > 0:
                kinds[nk] = k
                nk += 1
                total += hands[b, p, k]
        # Pairs a <= b of kinds in the hand (b == a needs two copies): repair_discard and pass.
        for i in range(nk):
            ka = kinds[i]
            for j in range(i, nk):
                kb = kinds[j]
                if ka == kb and hands[b, p, ka] < 2:
                    continue
                pair = PAIR_BASE[ka] + kb - ka
                masks[b, o_pass + NK + pair] = 1
                pos[n] = o_pass + NK + pair
                n += 1
                if anybroken:
                    for t in range(3):
                        if brokens[b, p, t]:
                            masks[b, o_rd + 3 * pair + t] = 1
                            pos[n] = o_rd + 3 * pair + t
                            n += 1
        if total > 0:
            for i in range(nk):
                masks[b, o_pass + kinds[i]] = 1
                pos[n] = o_pass + kinds[i]
                n += 1
        else:
            masks[b, o_pass + PASS_EMPTY] = 1
            pos[n] = o_pass + PASS_EMPTY
            n += 1
        if counters > 0:  # board.unbribed_trolls
            for c in range(HW):
                s = shapes[b, c]
                if s >= 0 and S_TROLL[s] and counters_[b, c] < 0:
                    masks[b, o_bribe + c] = 1
                    pos[n] = o_bribe + c
                    n += 1
        num_legal[b] = n
        keep_list(lst, b, pos, n, incremental)


# ---- transition --------------------------------------------------------------------------------------------------
@helper
def _log(events, sc, cap, etype, actor, kind, cell, arg):
    """Append one public event row (rules._log)."""
    e = sc[SC_NUM_EVENTS]
    if e >= cap:
        sc[SC_ERROR] |= ERR_EVENTS
        return
    row = events[e]
    row[0] = etype
    row[1] = actor
    row[2] = kind
    row[3] = cell
    row[4] = arg
    sc[SC_NUM_EVENTS] = e + 1


@helper
def _bribe(S, cfg, b, p, cell, with_placement):
    S.cell_counter[b, cell] = p
    S.sc[b, SC_COUNTERS] -= 1
    _log(S.events[b], S.sc[b], cfg[H_E], EV_BRIBE, p, -1, cell, with_placement)


@helper
def _reveal(S, cfg, b, p, slot, placed, wk, trial):
    """rules._reveal: goal ``slot`` face up with common.reveal.goal_rotation's tie-breaks over the stale reach of
    either player (facing_of), and the Duel's preference: a rotation whose gold ``p`` then reaches."""
    HW = cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    shape = S.cell_shape[b]
    reaches = S.reach[b]  # bound once (see _reveal_and_secure)
    cell = cfg[H_GOAL + slot]
    kind = dc.FIRST_GOAL_KIND + S.goal_card[b, slot]
    old = shape[cell]
    best = 0
    bk0 = bk1 = bk2 = bk3 = 0
    for rot in range(2):
        sid = 2 * kind + rot
        ob = S_OPEN[sid]
        towards_placed = 0
        towards = 0
        mism = 0
        for d in range(4):
            j = nbr[cell, d]
            if j < 0 or shape[j] < 0:
                continue
            o = (d + 2) & 3
            theirs = (S_OPEN[shape[j]] >> o) & 1
            reaching = theirs and ((reaches[0, j] | reaches[1, j]) >> o) & 1
            mine = (ob >> d) & 1
            if reaching:
                towards += mine
                if j == placed:
                    towards_placed = mine
            elif mine != theirs:
                mism += 1
        pref = 0
        gold = S_GOLD[sid]
        if gold:
            shape[cell] = sid
            _reach_one(shape, S.cell_counter[b], S.cell_key[b], nbr, cfg[H_START], cfg[H_START + 1], p, trial, wk)
            shape[cell] = old
            pref = 1 if (trial[cell] & gold) != 0 else 0
        k0, k1, k2, k3 = -towards_placed, -towards, mism, -pref
        better = k0 < bk0 or (k0 == bk0 and (k1 < bk1 or (k1 == bk1 and (k2 < bk2 or (k2 == bk2 and k3 < bk3)))))
        if rot == 0 or better:  # the tuple comparison (k0, ..) < (bk0, ..), without its compile cost
            bk0, bk1, bk2, bk3 = k0, k1, k2, k3
            best = rot
    shape[cell] = 2 * kind + best
    S.goal_revealed[b, slot] = 1
    _log(S.events[b], S.sc[b], cfg[H_E], EV_REVEAL, p, kind, cell, best)


@helper
def _reveal_and_secure(S, cfg, b, p, placed, wk, trial):
    """rules._reveal_and_secure: reveal pass by pass (reach refreshed after each pass), then securing: the acting
    player first, each seat's reachable unsecured gold by nuggets (high first), then by cell."""
    HW = cfg[H_HW]
    nbr = cfg[cfg[H_NBR] : cfg[H_NBR] + HW * 4].reshape((HW, 4))
    sc = S.sc[b]
    shape = S.cell_shape[b]
    # Fields read in the loops are bound once: an ``S.field`` read is a load and a reference count each.
    revealed, reaches = S.goal_revealed[b], S.reach[b]
    _refresh_reach(S, cfg, b, wk)
    while True:
        found = 0  # the reached face-down slots, as bits (an array here was an allocation per call)
        for slot in range(GPR):  # board.reached_goal_slots
            if revealed[slot]:
                continue
            cell = cfg[H_GOAL + slot]
            for d in range(4):
                j = nbr[cell, d]
                if j >= 0 and shape[j] >= 0 and ((reaches[0, j] | reaches[1, j]) >> ((d + 2) & 3)) & 1:
                    found |= 1 << slot
                    break
        if found == 0:
            break
        for slot in range(GPR):
            if (found >> slot) & 1:
                _reveal(S, cfg, b, p, slot, placed, wk, trial)
        _refresh_reach(S, cfg, b, wk)
    counter = S.cell_counter[b]
    cand = wk[:HW]  # free once the reach is refreshed
    for k in range(2):
        seat = p if k == 0 else 1 - p
        reach = reaches[seat]
        # board.reachable_gold's order (nuggets high first, then by cell) over the seat's candidates, gathered in
        # one pass; securing one cell changes no other cell's eligibility.
        nc = 0
        for c in range(HW):
            s = shape[c]
            if s >= 0 and S_NUG[s] > 0 and counter[c] < 0 and (reach[c] & S_GOLD[s]) != 0:
                cand[nc] = c
                nc += 1
        if nc == 0:
            continue
        for v in range(MAX_NUG, 0, -1):
            for i in range(nc):
                c = cand[i]
                s = shape[c]
                if S_NUG[s] != v:
                    continue
                if sc[SC_COUNTERS] == 0:
                    return
                counter[c] = seat
                sc[SC_COUNTERS] -= 1
                _log(S.events[b], sc, cfg[H_E], EV_SECURE, seat, s // 2, c, v)


@helper
def _pile_sum(S, b, seat):
    vals = S.score_vals[b, seat]  # read once: an ``S.field`` in the loop is a load and a reference count each
    t = 0
    for i in range(S.sc[b, SC_SCORE_LEN + seat]):
        t += vals[i]
    return t


@helper
def _end_round(S, cfg, b, reason, wk):
    """rules._end_round: score piles (counters by cell), troll payments (each bribed troll's briber pays the first
    smallest card: ``list.remove(min)``), revealed goals leave; next round (fewer nuggets starts, blue on a tie)."""
    HW = cfg[H_HW]
    sc = S.sc[b]
    shape = S.cell_shape[b]
    counter = S.cell_counter[b]
    before0 = _pile_sum(S, b, 0)
    before1 = _pile_sum(S, b, 1)
    _log(S.events[b], sc, cfg[H_E], EV_ROUND_END, sc[SC_CURRENT], -1, -1, reason)
    for c in range(HW):
        if counter[c] < 0:
            continue
        sid = shape[c]
        owner = counter[c]
        nug = S_NUG[sid]
        if nug > 0:
            ln = sc[SC_SCORE_LEN + owner]
            if ln >= SCORE_CAP:
                sc[SC_ERROR] |= ERR_SCORE
            else:
                S.score_vals[b, owner, ln] = nug
                sc[SC_SCORE_LEN + owner] = ln + 1
            kind = sid // 2
            if kind < NPK:  # the gold path card leaves the deck for good: its first copy still in the game
                for i in range(52):
                    if CARD_KIND[i] == kind and not S.card_out[b, i]:
                        S.card_out[b, i] = 1
                        break
    for c in range(HW):
        if counter[c] >= 0 and S_TROLL[shape[c]]:
            payer = counter[c]
            ln = sc[SC_SCORE_LEN + payer]
            if ln > 0:
                mi = 0
                for i in range(1, ln):
                    if S.score_vals[b, payer, i] < S.score_vals[b, payer, mi]:
                        mi = i
                paid = S.score_vals[b, payer, mi]
                for i in range(mi, ln - 1):
                    S.score_vals[b, payer, i] = S.score_vals[b, payer, i + 1]
                S.score_vals[b, payer, ln - 1] = 0
                sc[SC_SCORE_LEN + payer] = ln - 1
                _log(S.events[b], sc, cfg[H_E], EV_PAY, payer, -1, c, paid)
    for slot in range(GPR):
        if S.goal_revealed[b, slot]:
            S.goal_out[b, S.goal_card[b, slot]] = 1
    after0 = _pile_sum(S, b, 0)
    after1 = _pile_sum(S, b, 1)
    r = sc[SC_ROUND]
    res = S.rr[b, r]
    res[0] = reason
    res[1] = after0 - before0
    res[2] = after1 - before1
    res[3] = after0
    res[4] = after1
    res[5] = sc[SC_DECISIONS] - sc[SC_FIRST_DECISION]
    sc[SC_NUM_RR] = r + 1
    sc[SC_JUST_ENDED] = 1
    last = r + 1 >= cfg[H_R]
    if not cfg[H_WIN]:
        S.last_rewards[b, 0] = after0 - before0
        S.last_rewards[b, 1] = after1 - before1
    elif last:
        diff = after0 - after1
        sgn = 1 if diff > 0 else (-1 if diff < 0 else 0)
        S.last_rewards[b, 0] = sgn
        S.last_rewards[b, 1] = -sgn
    if last:
        sc[SC_OVER] = 1
        return
    _start_round(S, cfg, b, r + 1, 0 if after0 <= after1 else 1, wk)


@helper
def _apply_range(S, cfg, b0, b1, actions, wk, trial):
    """Apply the legal action of the player to act in slots ``b0..b1`` (rules.apply_action and rules._resolve)."""
    HW = cfg[H_HW]
    o_pb = HW * NUM_O
    o_br = o_pb + HW * NUM_TROLL_O
    o_rp = o_br + 3
    o_dr = o_rp + 3
    o_rf = o_dr + 9
    o_map = o_rf + HW
    o_key = o_map + GPR
    o_rd = o_key + HW
    o_pass = o_rd + 3 * NUM_PAIRS
    o_bribe = o_pass + PASS_EMPTY + 1
    E = cfg[H_E]
    for b in range(b0, b1):
        a = actions[b]
        sc = S.sc[b]
        if sc[SC_JUST_ENDED]:
            S.last_rewards[b] = 0.0
            sc[SC_JUST_ENDED] = 0
        p = sc[SC_CURRENT]
        q = 1 - p
        hand = S.hands[b, p]
        shape = S.cell_shape[b]
        ev = S.events[b]
        draws = 1
        placed = -1
        touched = False
        if a < o_br:  # place, place_bribe
            if a < o_pb:
                cell = a // NUM_O
                o = a % NUM_O
            else:
                cell = (a - o_pb) // NUM_TROLL_O
                o = TROLL_O[(a - o_pb) % NUM_TROLL_O]
            kind = P_KIND[o]
            hand[kind] -= 1
            shape[cell] = P_SHAPE[o]
            placed = cell
            _log(ev, sc, E, EV_PLACE, p, kind, cell, P_ROT[o])
            if a >= o_pb:
                _bribe(S, cfg, b, p, cell, 1)
            touched = True
        elif a < o_rp:
            t = a - o_br
            hand[27 + t] -= 1
            S.discards[b, 27 + t] += 1
            S.broken[b, q, t] = 1
            _log(ev, sc, E, EV_BREAK, p, 27 + t, -1, t)
        elif a < o_dr:
            t = a - o_rp
            hand[30 + t] -= 1
            S.discards[b, 30 + t] += 1
            S.broken[b, p, t] = 0
            _log(ev, sc, E, EV_REPAIR, p, 30 + t, -1, 1 << t)
        elif a < o_rf:
            card = (a - o_dr) // 3
            choice = (a - o_dr) % 3
            kind = 33 + card
            hand[kind] -= 1
            S.discards[b, kind] += 1
            bits = 0
            for ch in range(2):
                if choice == 2 or choice == ch:
                    S.broken[b, p, DT[card, ch]] = 0
                    bits += 1 << DT[card, ch]
            _log(ev, sc, E, EV_REPAIR, p, kind, -1, bits)
        elif a < o_map:
            cell = a - o_rf
            hand[dc.KIND_ROCKFALL] -= 1
            S.discards[b, dc.KIND_ROCKFALL] += 1
            removed = shape[cell] // 2
            S.discards[b, removed] += 1
            shape[cell] = -1
            if S.cell_key[b, cell]:
                S.cell_key[b, cell] = 0
                sc[SC_KEYS] += 1
            _log(ev, sc, E, EV_ROCKFALL, p, removed, cell, -1)
            touched = True
        elif a < o_key:
            slot = a - o_map
            hand[dc.KIND_MAP] -= 1
            S.discards[b, dc.KIND_MAP] += 1
            S.peeked[b, p, slot] = 1
            _log(ev, sc, E, EV_MAP, p, dc.KIND_MAP, -1, slot)
        elif a < o_rd:
            cell = a - o_key
            hand[dc.KIND_KEY] -= 1
            S.discards[b, dc.KIND_KEY] += 1
            S.cell_key[b, cell] = 1
            sc[SC_KEYS] -= 1
            _log(ev, sc, E, EV_KEY, p, dc.KIND_KEY, cell, -1)
            touched = True
        elif a < o_pass:
            pair = (a - o_rd) // 3
            t = (a - o_rd) % 3
            hand[PA[pair]] -= 1
            S.discards[b, PA[pair]] += 1
            hand[PB[pair]] -= 1
            S.discards[b, PB[pair]] += 1
            S.broken[b, p, t] = 0
            _log(ev, sc, E, EV_REPAIR_DISCARD, p, -1, -1, t)
        elif a < o_bribe:
            i = a - o_pass
            if i < NK:
                hand[i] -= 1
                S.discards[b, i] += 1
                draws = 1
            elif i < PASS_EMPTY:
                pair = i - NK
                hand[PA[pair]] -= 1
                S.discards[b, PA[pair]] += 1
                hand[PB[pair]] -= 1
                S.discards[b, PB[pair]] += 1
                draws = 2
            else:
                draws = 0
            _log(ev, sc, E, EV_PASS, p, -1, -1, draws)
        else:  # bribe (option E): no card, no draw
            _bribe(S, cfg, b, p, a - o_bribe, 0)
            draws = 0
            touched = True
        sc[SC_DECISIONS] += 1
        # rules._resolve: reveals and securing after maze changes, then the end-of-round check.
        if touched:
            _reveal_and_secure(S, cfg, b, p, placed, wk, trial)
        reason = -1
        allrev = True
        for g in range(GPR):
            if S.goal_revealed[b, g] == 0:
                allrev = False
                break
        if allrev:
            reason = 0
        elif sc[SC_COUNTERS] == 0:
            reason = 1
        elif sc[SC_DECK_LEN] == sc[SC_DECK_POS]:
            tot = 0
            for s in range(2):
                for k in range(NK):
                    tot += S.hands[b, s, k]
            if tot == 0:
                reason = 2
        if reason >= 0:
            _end_round(S, cfg, b, reason, wk)
        if not sc[SC_JUST_ENDED] and not sc[SC_OVER]:
            _draw(hand, S.deck[b], sc, draws)
            sc[SC_CURRENT] = q


# ---- observations ----------------------------------------------------------------------------------------------
@helper
def _obs_float_range(S, cfg, rowcol, b0, b1, seats, obs):
    """The reference's ``encode_observation(state, seat)`` for slots ``b0..b1`` (``seats[b]``, -1: the seat to
    act), written into ``obs[b]``: zero-filled, then only the non-zero entries set."""
    HW, L = cfg[H_HW], cfg[H_L]
    slot_of = cfg[cfg[H_SLOT] : cfg[H_SLOT] + HW]
    # The field arrays are read once per call and indexed with the slot: a per-slot view (``S.hands[b]``) costs an
    # atomic reference count increment and decrement each.
    f_sc, f_shape, f_counter, f_grev, f_reach = S.sc, S.cell_shape, S.cell_counter, S.goal_revealed, S.reach
    f_key, f_hands, f_peeked, f_broken = S.cell_key, S.hands, S.peeked, S.broken
    f_gout, f_gcard, f_events = S.goal_out, S.goal_card, S.events
    for b in range(b0, b1):
        out = obs[b]
        me = seats[b] if seats[b] >= 0 else f_sc[b, SC_CURRENT]
        opp = 1 - me
        out[:] = 0.0
        for c in range(HW):
            sh = f_shape[b, c]
            if sh >= 0:
                for k in range(ST_NNZ[me, sh]):
                    out[ST_PLANE[me, sh, k] * HW + c] = ST_VAL[me, sh, k]
                troll = S_TROLL[sh] != 0
                cn = f_counter[b, c]
                if cn >= 0:
                    if troll:
                        out[(28 if cn == me else 29) * HW + c] = 1.0
                    else:
                        out[(37 if cn == me else 38) * HW + c] = 1.0
            else:
                g = slot_of[c]
                if g < 0 or f_grev[b, g]:
                    out[43 * HW + c] = 1.0
            rm = f_reach[b, me, c]
            ro = f_reach[b, opp, c]
            for d in range(4):
                if (rm >> d) & 1:
                    out[(10 + d) * HW + c] = 1.0
                if (ro >> d) & 1:
                    out[(14 + d) * HW + c] = 1.0
            if f_key[b, c]:
                out[26 * HW + c] = 1.0
        out[39 * HW + cfg[H_START + me]] = 1.0
        out[40 * HW + cfg[H_START + opp]] = 1.0
        for g in range(GPR):
            out[(42 if f_grev[b, g] else 41) * HW + cfg[H_GOAL + g]] = 1.0
        pos = NUM_PLANES * HW
        for k in range(NK):
            out[pos + k] = f_hands[b, me, k]
        pos += NK
        for g in range(GPR):
            if f_peeked[b, me, g]:
                out[pos + g * NUM_GOALS + f_gcard[b, g]] = 1.0
        pos += GPR * NUM_GOALS
        for g in range(GPR):
            out[pos + g] = f_peeked[b, me, g]
            out[pos + GPR + g] = f_peeked[b, opp, g]
        pos += 2 * GPR
        for t in range(3):
            out[pos + t] = f_broken[b, me, t]
            out[pos + 3 + t] = f_broken[b, opp, t]
        pos += 6
        hm = 0
        ho = 0
        for k in range(NK):
            hm += f_hands[b, me, k]
            ho += f_hands[b, opp, k]
        out[pos] = hm
        out[pos + 1] = ho
        pos += 2
        on_board = 0
        for g in range(NUM_GOALS):
            on_board += f_gout[b, g] == 0
        pool = on_board - GPR if not f_sc[b, SC_OVER] else on_board
        out[pos] = f_sc[b, SC_DECK_LEN] - f_sc[b, SC_DECK_POS]
        out[pos + 1] = f_sc[b, SC_COUNTERS]
        out[pos + 2] = f_sc[b, SC_KEYS]
        out[pos + 3] = max(0, pool)
        pos += 4
        out[pos] = _pile_sum(S, b, me)
        out[pos + 1] = _pile_sum(S, b, opp)
        out[pos + 2] = f_sc[b, SC_SCORE_LEN + me]
        out[pos + 3] = f_sc[b, SC_SCORE_LEN + opp]
        pos += 4
        out[pos + min(f_sc[b, SC_ROUND], 2)] = 1.0
        pos += 3
        out[pos] = 1.0 if (f_sc[b, SC_CURRENT] == me and not f_sc[b, SC_OVER]) else 0.0
        out[pos + 1] = 1.0 if me == 1 else 0.0
        pos += 2
        ne = f_sc[b, SC_NUM_EVENTS]
        k = min(L, ne)
        for i in range(k):
            ev = f_events[b, ne - k + i]
            row = pos + (L - k + i) * EVENT_SIZE
            out[row] = 1.0
            out[row + 1 + ev[0]] = 1.0
            out[row + 1 + NUM_EVENT_TYPES] = 1.0 if ev[1] == me else 0.0
            if ev[2] >= 0:
                out[row + 2 + NUM_EVENT_TYPES + ev[2]] = 1.0
            if ev[3] >= 0:
                out[row + EVENT_SIZE - 3] = rowcol[ev[3], 0]
                out[row + EVENT_SIZE - 2] = rowcol[ev[3], 1]
            out[row + EVENT_SIZE - 1] = max(np.int64(ev[4]), 0) / 3.0


@helper
def _obs_compact_range(S, cfg, b0, b1, seats, obs):
    """The compact observation (:data:`COMPACT_DOC`) of ``seats[b]`` in slots ``b0..b1`` (int16)."""
    HW, L = cfg[H_HW], cfg[H_L]
    slot_of = cfg[cfg[H_SLOT] : cfg[H_SLOT] + HW]
    # The field arrays are read once per call and indexed with the slot: a per-slot view (``S.hands[b]``) costs an
    # atomic reference count increment and decrement each.
    f_sc, f_shape, f_counter, f_grev, f_reach = S.sc, S.cell_shape, S.cell_counter, S.goal_revealed, S.reach
    f_key, f_hands, f_peeked, f_broken = S.cell_key, S.hands, S.peeked, S.broken
    f_gout, f_gcard, f_events = S.goal_out, S.goal_card, S.events
    for b in range(b0, b1):
        out = obs[b]
        me = seats[b] if seats[b] >= 0 else f_sc[b, SC_CURRENT]
        opp = 1 - me
        for c in range(HW):
            sh = f_shape[b, c]
            v = sh if sh >= 0 else EMPTY_TOKEN
            if f_key[b, c]:
                v |= 1 << 7
            cn = f_counter[b, c]
            if cn >= 0:
                v |= (1 if cn == me else 2) << 8
            g = slot_of[c]
            if g >= 0:
                v |= (1 << 11) if f_grev[b, g] else (1 << 10)
            out[2 * c] = v
            out[2 * c + 1] = f_reach[b, me, c] | (f_reach[b, opp, c] << 4)
        pos = 2 * HW
        hm = 0
        ho = 0
        for k in range(NK):
            out[pos + k] = f_hands[b, me, k]
            hm += f_hands[b, me, k]
            ho += f_hands[b, opp, k]
        pos += NK
        pm = 0
        po = 0
        for g in range(GPR):
            out[pos + g] = f_gcard[b, g] if f_peeked[b, me, g] else -1
            pm |= f_peeked[b, me, g] << g
            po |= f_peeked[b, opp, g] << g
        pos += GPR
        out[pos] = pm
        out[pos + 1] = po
        tm = 0
        to = 0
        for t in range(3):
            tm |= f_broken[b, me, t] << t
            to |= f_broken[b, opp, t] << t
        out[pos + 2] = tm
        out[pos + 3] = to
        out[pos + 4] = hm
        out[pos + 5] = ho
        pos += 6
        on_board = 0
        for g in range(NUM_GOALS):
            on_board += f_gout[b, g] == 0
        pool = on_board - GPR if not f_sc[b, SC_OVER] else on_board
        out[pos] = f_sc[b, SC_DECK_LEN] - f_sc[b, SC_DECK_POS]
        out[pos + 1] = f_sc[b, SC_COUNTERS]
        out[pos + 2] = f_sc[b, SC_KEYS]
        out[pos + 3] = max(0, pool)
        out[pos + 4] = _pile_sum(S, b, me)
        out[pos + 5] = _pile_sum(S, b, opp)
        out[pos + 6] = f_sc[b, SC_SCORE_LEN + me]
        out[pos + 7] = f_sc[b, SC_SCORE_LEN + opp]
        out[pos + 8] = f_sc[b, SC_ROUND]
        out[pos + 9] = 1 if (f_sc[b, SC_CURRENT] == me and not f_sc[b, SC_OVER]) else 0
        out[pos + 10] = me
        pos += 11
        ne = f_sc[b, SC_NUM_EVENTS]
        first = ne - L
        for i in range(L):
            e = first + i
            row = pos + 5 * i
            if e < 0:
                for k in range(5):
                    out[row + k] = -1
                continue
            ev = f_events[b, e]
            out[row] = ev[0]
            out[row + 1] = 1 if ev[1] == me else 0
            out[row + 2] = ev[2]
            out[row + 3] = ev[3]
            out[row + 4] = ev[4]


# ---- decoding ------------------------------------------------------------------------------------------------
def expand_compact(compact: NDArray[np.int16], config: GameConfig) -> NDArray[np.float32]:
    """The float observation(s) rebuilt from compact ones (shape ``(..., compact_size)``); lossless."""
    c = np.asarray(compact)
    lead = c.shape[:-1]
    c = c.reshape(-1, c.shape[-1]).astype(np.int64)
    hw, L = config.num_cells, config.history_length
    geo = dboard.geometry(config)
    n = c.shape[0]
    rows = np.arange(n)
    out = np.zeros((n, obs_size(config)), dtype=np.float32)
    cells = c[:, : 2 * hw].reshape(n, hw, 2)
    c0, c1 = cells[:, :, 0], cells[:, :, 1]
    pos = 2 * hw + NK + GPR + 6 + 11
    me = c[:, pos - 1]
    tok = c0 & 127
    static = STATIC[me[:, None], tok]  # (n, HW, 26); token 118 is the empty row
    board = out[:, : NUM_PLANES * hw].reshape(n, NUM_PLANES, hw)
    board[:, STATIC_ROWS] = static.transpose(0, 2, 1)
    bits = np.arange(4)
    board[:, 10:14] = ((c1[:, None, :] >> bits[None, :, None]) & 1).astype(np.float32)
    board[:, 14:18] = ((c1[:, None, :] >> (4 + bits[None, :, None])) & 1).astype(np.float32)
    board[:, 26] = (c0 >> 7) & 1
    troll = static[:, :, 18] > 0
    cnt = (c0 >> 8) & 3
    board[:, 28] = troll & (cnt == 1)
    board[:, 29] = troll & (cnt == 2)
    board[:, 37] = ~troll & (cnt == 1)
    board[:, 38] = ~troll & (cnt == 2)
    starts = np.array(geo.start_cells)
    board[rows, 39, starts[me]] = 1.0
    board[rows, 40, starts[1 - me]] = 1.0
    facedown = (c0 >> 10) & 1
    board[:, 41] = facedown
    board[:, 42] = (c0 >> 11) & 1
    board[:, 43] = (tok == EMPTY_TOKEN) & (facedown == 0)
    pos, src = NUM_PLANES * hw, 2 * hw
    out[:, pos : pos + NK] = c[:, src : src + NK]
    pos, src = pos + NK, src + NK
    peeks = c[:, src : src + GPR]
    r, g = np.nonzero(peeks >= 0)
    out[r, pos + g * NUM_GOALS + peeks[r, g]] = 1.0
    pos, src = pos + GPR * NUM_GOALS, src + GPR
    six = np.arange(GPR)
    out[:, pos : pos + GPR] = (c[:, src, None] >> six) & 1
    out[:, pos + GPR : pos + 2 * GPR] = (c[:, src + 1, None] >> six) & 1
    pos += 2 * GPR
    three = np.arange(3)
    out[:, pos : pos + 3] = (c[:, src + 2, None] >> three) & 1
    out[:, pos + 3 : pos + 6] = (c[:, src + 3, None] >> three) & 1
    pos, src = pos + 6, src + 4
    out[:, pos : pos + 2 + 4 + 2 + 2] = c[:, src : src + 10]  # hand sizes, supply, nuggets, pile cards
    pos, src = pos + 10, src + 10
    out[rows, pos + np.minimum(c[:, src], 2)] = 1.0
    pos, src = pos + 3, src + 1
    out[:, pos : pos + 2] = c[:, src : src + 2]
    pos, src = pos + 2, src + 2
    rowcol = rowcol_table(config)
    for i in range(L):
        ev = c[:, src + 5 * i : src + 5 * i + 5]
        row = out[:, pos + i * EVENT_SIZE : pos + (i + 1) * EVENT_SIZE]
        idx = np.flatnonzero(ev[:, 0] >= 0)
        row[idx, 0] = 1.0
        row[idx, 1 + ev[idx, 0]] = 1.0
        row[idx, 1 + NUM_EVENT_TYPES] = ev[idx, 1]
        k = idx[ev[idx, 2] >= 0]
        row[k, 2 + NUM_EVENT_TYPES + ev[k, 2]] = 1.0
        k = idx[ev[idx, 3] >= 0]
        row[k, EVENT_SIZE - 3] = rowcol[ev[k, 3], 0]
        row[k, EVENT_SIZE - 2] = rowcol[ev[k, 3], 1]
        row[idx, EVENT_SIZE - 1] = np.maximum(ev[idx, 4], 0) / 3.0
    return out.reshape(*lead, out.shape[-1])


# ---- entry points (one call per batch or shard) ---------------------------------------------------------------
# As in ``sab2.kernels``: ``setup``, ``apply``, ``observe_compact`` and ``step`` (only the vector environment calls
# them) are one kernel, ``_batch``, chosen by ``op``, behind Python functions that pass placeholder arrays of fixed
# types for what an operation does not use; ``masks``, ``observe`` and ``apply_mask1`` (one game's core state calls
# them per decision or per clone) keep their own short-signature kernels.
OP_STEP, OP_SETUP, OP_APPLY, OP_COMPACT = range(4)
_NO_I64 = np.zeros(1, dtype=np.int64)
_NO_I8 = np.zeros(1, dtype=np.int8)
_NO_MASK = np.zeros((1, 8), dtype=np.int8)
_NO_F32 = np.zeros((1, 1), dtype=np.float32)
_NO_I16 = np.zeros((1, 1), dtype=np.int16)


@helper
def _work(cfg):
    return np.empty(5 * cfg[H_HW] + 8, dtype=np.int64), np.empty(cfg[H_HW], dtype=np.int8)


@kernel
def _batch(S, cfg, rowcol, op, b0, b1, actions, mask, num_legal, obs_mode, obs_f, obs_c,
           rewards, done, seats, final_returns):  # fmt: skip
    """The batch operations over slots ``b0..b1`` (``op``: ``OP_*``; see the Python entry points below)."""
    if op == OP_COMPACT:
        _obs_compact_range(S, cfg, b0, b1, seats, obs_c)
        return -1
    wk, trial = _work(cfg)
    if op == OP_SETUP:
        for b in range(b0, b1):
            _setup(S, cfg, b, wk, obs_mode != 0)
        return -1
    if op == OP_APPLY:
        _apply_range(S, cfg, b0, b1, actions, wk, trial)
        return -1
    # OP_STEP: the vector env's lock-step (see ``step``).
    A = cfg[H_NA]
    for b in range(b0, b1):
        a = actions[b]
        if a < 0 or a >= A or mask[b, a] == 0:
            return b
    for lo in range(b0, b1, BLOCK):
        hi = min(lo + BLOCK, b1)
        _apply_range(S, cfg, lo, hi, actions, wk, trial)
        for b in range(lo, hi):
            sc = S.sc[b]
            for p in range(2):
                rewards[b, p] = S.last_rewards[b, p] if sc[SC_JUST_ENDED] else 0.0
            if sc[SC_OVER]:
                done[b] = 1
                for p in range(2):
                    final_returns[b, p] = _pile_sum(S, b, p)
                _setup(S, cfg, b, wk, True)
            else:
                done[b] = 0
            seats[b] = S.sc[b, SC_CURRENT]
        _mask_range(S, cfg, lo, hi, mask, num_legal, True)
        if obs_mode == 0:
            _obs_float_range(S, cfg, rowcol, lo, hi, seats, obs_f)
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
    """The vector env's lock-step over slots ``b0..b1`` (the contract of ``base.kernels.step``): check every action
    against ``mask`` (return the first illegal slot, nothing changed), apply, record rewards and finished games
    (final scores = nuggets), start the next game of finished slots, write masks, seats and observations
    (``obs_mode`` 0 float, 1 compact, 2 none)."""
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
    _obs_float_range(S, cfg, rowcol, b0, b1, seats, out)


# ---- entry points for one game (B = 1: the AEC environment, agents and tournaments) ---------------------------
# ``S`` is the batch's ``ViewsRef`` (``kernel_args``): one pointer per call.
@kernel
def apply_mask1(S, cfg, action, out, num_legal):
    """Apply ``action[0]`` (legal, unchecked) and write the next mask: one call per decision."""
    wk, trial = _work(cfg)
    _apply_range(S, cfg, 0, 1, action, wk, trial)
    _mask_range(S, cfg, 0, 1, out, num_legal, False)
