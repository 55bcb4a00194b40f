"""Saboteur 2 observation: one seat-relative float32 vector (the only gate for hidden information, docs/rules.md §5.2).

Seat offsets: 0 = the observing seat, 1 = the next seat clockwise. Named slices (``Sab2ObservationLayout.split``):

=================  ===================  ==========================================================================
slice              shape                content
=================  ===================  ==========================================================================
``board``          (31, rows, cols)     open arms (4), arms connected to the start (4), joined arm pairs (6),
                                        blue-door arms (4), green-door arms (4), ladder, crystal, start, path
                                        card, face-down goal, revealed gold, revealed stone, goal I peeked: gold,
                                        goal I peeked: stone
``role``           (6,)                 my role now (after any Swap Your Hats)
``hand``           (55,)                my cards per kind
``seats``          (P, 14)              per seat offset: broken pickaxe / lantern / cart, Trapped!, Theft, hand
                                        size, gold total, hats swapped this round, maps used on goals 0-2, cards
                                        discarded face down this round, inspected by me, inspected me
``inspected``      (P, 6)               the role I saw when I inspected each seat (private; zeros if never)
``last_roles``     (P, 6)               every seat's role revealed at the most recent round end (from the
                                        theft phase on: this round's)
``inspections``    (P, P)               public: seat offset i inspected seat offset j this round
``status``         (3 + 3 + P + 4 + 5)  deck size, role reserve size, theft pending count; round one-hot; seat
                                        to act one-hot; phase one-hot; cards discarded in this pass / option C
                                        target (tool 0-2 or Trapped!)
``history``        (L, 20 + 2P + 59 + 3)  last public events: valid, type (19), actor offset (P), kind (59),
                                        target offset (P), row, col, argument / 10 (rotation, tool, goal slot,
                                        gold, or the kind a rockfall removed)
=================  ===================  ==========================================================================
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_PAIRS
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import geometry
from saboteur_env.common.slices import named_slices
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.state import Phase, Sab2Event, Sab2State

NUM_PLANES = 31
SEAT_COLUMNS = ("broken_pickaxe", "broken_lantern", "broken_cart", "trapped", "theft", "hand_size", "gold",
                "hats_swapped", "peeked_0", "peeked_1", "peeked_2", "discarded", "inspected_by_me",
                "inspected_me")  # fmt: skip


class Sab2ObservationLayout:
    def __init__(self, config: GameConfig) -> None:
        p, L = config.num_players, config.history_length
        self.config = config
        self.event_size = 1 + len(Sab2Event) + p + sc.NUM_KINDS + p + 3
        self.shapes: dict[str, tuple[int, ...]] = {
            "board": (NUM_PLANES, config.rows, config.cols),
            "role": (6,),
            "hand": (sc.NUM_DECK_KINDS,),
            "seats": (p, len(SEAT_COLUMNS)),
            "inspected": (p, 6),
            "last_roles": (p, 6),
            "inspections": (p, p),
            "status": (3 + 3 + p + len(Phase) + 5,),
            "history": (L, self.event_size),
        }
        self.slices, self.size = named_slices(self.shapes)
        # The parts of a block's last axis where seat-sized one-hots sit between fixed fields (agents.universal).
        self.row_parts: dict[str, tuple[int, ...]] = {
            "status": (3, 3, p, len(Phase), 5),
            "history": (1, len(Sab2Event), p, sc.NUM_KINDS, p, 3),
        }
        high = np.ones(self.size, dtype=np.float32)
        high[self.slices["hand"]] = sc.HAND_SIZE
        seats = high[self.slices["seats"]].reshape(p, len(SEAT_COLUMNS))
        seats[:, SEAT_COLUMNS.index("hand_size")] = sc.HAND_SIZE
        seats[:, SEAT_COLUMNS.index("gold")] = 200
        seats[:, SEAT_COLUMNS.index("discarded")] = sc.DECK_SIZE
        high[self.slices["status"]][:3] = (sc.DECK_SIZE, len(sc.ROLE_DECK), 12)
        high[self.slices["status"]][-5:] = (3, 1, 1, 1, 1)
        high[self.slices["history"]].reshape(L, self.event_size)[:, -1] = sc.NUM_KINDS / 10  # arg: up to a kind id
        self.high = high
        geo = geometry(config)
        self.cell_rowcol = np.stack([geo.row_of / max(1, geo.rows - 1), geo.col_of / max(1, geo.cols - 1)], 1)

    def split(self, obs: NDArray[np.float32]) -> dict[str, NDArray[np.float32]]:
        return {name: obs[s].reshape(self.shapes[name]) for name, s in self.slices.items()}


def sab2_observation_layout(config: GameConfig) -> Sab2ObservationLayout:
    return config.cached("_sab2_observation_layout", Sab2ObservationLayout)


def _static_table() -> NDArray[np.float32]:
    """(shapes + 1, 21): open arms, joined pairs, blue-door arms, green-door arms, ladder, crystal, start (last row:
    empty cell)."""
    n = 2 * sc.NUM_KINDS
    out = np.zeros((n + 1, 21), dtype=np.float32)
    for sid in range(n):
        if sc.SPECS[sid // 2] is None:
            continue
        ob = int(sc.SHAPE_OPEN[sid])
        groups = sc.SHAPE_ARM_GROUP[sid]
        out[sid, 0:4] = [(ob >> e) & 1 for e in range(4)]
        out[sid, 4:10] = [int(bool((int(groups[a]) >> b) & 1)) for a, b in EDGE_PAIRS]
        out[sid, 10:14] = [(int(sc.SHAPE_DOOR[0, sid]) >> e) & 1 for e in range(4)]
        out[sid, 14:18] = [(int(sc.SHAPE_DOOR[1, sid]) >> e) & 1 for e in range(4)]
        out[sid, 18] = sc.SHAPE_LADDER[sid]
        out[sid, 19] = sc.SHAPE_CRYSTALS[sid]
        out[sid, 20] = sid // 2 == sc.KIND_START
    return out


_STATIC = _static_table()
_BITS4 = np.array([[(v >> e) & 1 for e in range(4)] for v in range(16)], dtype=np.float32)


def encode_observation(s: Sab2State, seat: int) -> NDArray[np.float32]:
    cfg = s.config
    lay = sab2_observation_layout(cfg)
    p = cfg.num_players
    out = np.zeros(lay.size, dtype=np.float32)
    v = lay.split(out)
    geo = geometry(cfg)
    shape = s.cell_shape
    static = _STATIC[np.where(shape >= 0, shape, 2 * sc.NUM_KINDS)]  # (HW, 21)
    planes = v["board"].reshape(NUM_PLANES, -1)
    planes[0:4] = static[:, 0:4].T
    planes[4:8] = _BITS4[s.reach & 15].T
    planes[8:25] = static[:, 4:21].T
    kind = np.where(shape >= 0, shape // 2, -1)
    planes[25] = (kind >= 0) & (kind < sc.NUM_PATH_KINDS)
    goals = np.array(geo.goal_cells)
    planes[26, goals[~s.goal_revealed]] = 1
    gold = s.goal_kind == sc.KIND_GOALS[0]
    planes[27, goals[s.goal_revealed & gold]] = 1
    planes[28, goals[s.goal_revealed & ~gold]] = 1
    mine = s.peeked[seat] & ~s.goal_revealed
    planes[29, goals[mine & gold]] = 1
    planes[30, goals[mine & ~gold]] = 1
    v["role"][int(s.roles[seat])] = 1
    v["hand"][:] = s.hands[seat]
    order = (seat + np.arange(p)) % p  # absolute seat of each offset
    seats = v["seats"]
    seats[:, 0:3] = s.broken[order]
    seats[:, 3] = s.trapped[order]
    seats[:, 4] = s.theft[order]
    seats[:, 5] = s.hands[order].sum(1)
    seats[:, 6] = s.gold[order]
    seats[:, 7] = s.hats_swapped[order]
    seats[:, 8:11] = s.peeked[order]
    seats[:, 11] = s.discarded[order]
    rel = s.inspections[order][:, order]
    v["inspections"][:] = rel
    seats[:, 12] = rel[0]
    seats[:, 13] = rel[:, 0]
    for i, target in enumerate(order.tolist()):
        seen = int(s.inspected[seat, target])
        if seen >= 0:
            v["inspected"][i, seen] = 1
    # Roles are revealed at a round end (§2.8), so thieves already see this round's roles while they choose.
    revealed = s.round_summary if s.phase == Phase.THEFT else s.round_results[-1] if s.round_results else None
    if revealed:
        last = revealed["roles"]
        for i, target in enumerate(order.tolist()):
            v["last_roles"][i, last[target]] = 1
    status = v["status"]
    status[0:3] = (s.deck_size, len(sc.ROLE_DECK) - s.reserve_pos, len(s.thieves))
    status[3 + min(s.round, 2)] = 1
    if not s.game_over:
        status[6 + (s.current - seat) % p] = 1
    status[6 + p + int(s.phase)] = 1
    tail = 6 + p + len(Phase)
    status[tail] = s.pending if s.current == seat else 0
    if s.phase == Phase.FREE and s.current == seat:
        status[tail + 1 + s.free_target] = 1
    L = cfg.history_length
    if L and s.events:
        ev = np.array(s.events[-L:], dtype=np.int64)  # (k, 6): type, actor, kind, target, cell, arg
        rows = v["history"][L - len(ev) :]
        idx = np.arange(len(ev))
        nt = len(Sab2Event)
        rows[:, 0] = 1
        rows[idx, 1 + ev[:, 0]] = 1
        has = ev[:, 1] >= 0
        rows[idx[has], 1 + nt + (ev[has, 1] - seat) % p] = 1
        has = ev[:, 2] >= 0
        rows[idx[has], 1 + nt + p + ev[has, 2]] = 1
        has = ev[:, 3] >= 0
        rows[idx[has], 1 + nt + p + sc.NUM_KINDS + (ev[has, 3] - seat) % p] = 1
        has = ev[:, 4] >= 0
        rows[idx[has], -3:-1] = lay.cell_rowcol[ev[has, 4]]
        rows[:, -1] = np.maximum(ev[:, 5], 0) / 10.0
    return out


def encode_state(s: Sab2State) -> NDArray[np.float32]:
    """Full state for centralised critics (NOT for agents): seat 0's observation, every role, hand and goal."""
    p = s.config.num_players
    extra = np.zeros(p * 6 + p * sc.NUM_DECK_KINDS + 3 * 3, dtype=np.float32)
    roles = extra[: p * 6].reshape(p, 6)
    roles[np.arange(p), s.roles] = 1
    extra[p * 6 : p * 6 + p * sc.NUM_DECK_KINDS] = s.hands.ravel()
    goals = extra[p * 6 + p * sc.NUM_DECK_KINDS :].reshape(3, 3)
    goals[np.arange(3), s.goal_kind - sc.KIND_GOALS[0]] = 1
    return np.concatenate([encode_observation(s, 0), extra])


def state_size(config: GameConfig) -> int:
    p = config.num_players
    return sab2_observation_layout(config).size + p * 6 + p * sc.NUM_DECK_KINDS + 9


def decode_state(vector: NDArray[np.floating], config: GameConfig) -> dict[str, list[int]]:
    """Hidden facts from an :func:`encode_state` vector: ``roles`` per seat and ``goal_kinds`` per goal slot. For
    centralised critics and the clearly-named oracle agents only."""
    p = config.num_players
    start = sab2_observation_layout(config).size
    roles = np.asarray(vector[start : start + 6 * p]).reshape(p, 6).argmax(axis=1)
    goals = np.asarray(vector[start + 6 * p + p * sc.NUM_DECK_KINDS :]).reshape(3, 3).argmax(axis=1)
    return {"roles": [int(r) for r in roles], "goal_kinds": [int(sc.KIND_GOALS[g]) for g in goals]}
