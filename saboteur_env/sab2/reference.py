"""Rules of Saboteur 2 (docs/rules.md §2, decisions §4.3): set-up, the legal-action mask, transitions, scoring.

Internal: the slow numpy reference engine of Saboteur 2, the oracle the compiled game (``sab2.kernels``, played
through ``sab2.compiled``) is checked against after every decision (``tests/test_core_sab2*.py``). Nothing a user
runs plays it; outside ``tests/`` only ``sab2.convert`` (records for renders, explanations and checks) and
``sab2.positions`` (set-up draws of hand-built positions) import it (``tests/test_architecture.py``). Its API may
change without notice.

``legal_action_mask`` is the single legality predicate; ``apply_action`` checks against it before changing
anything. A turn may take several decisions by the same seat (``Phase``): a pass discards one card, then another or
stops (at most three); option C names what it frees, then discards exactly two cards; after the payouts every
thief (in §2.10 order) chooses whom to steal from. Seats with an empty hand are skipped (they may only pass).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common import reveal
from saboteur_env.common.arms import OPP
from saboteur_env.common.cards import DOUBLE_REPAIR_TOOLS
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import GameOverError, IllegalActionError
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import board as sb
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2 import scoring
from saboteur_env.sab2.actions import (
    KIND_BROKEN,
    KIND_DOUBLE,
    KIND_MAP,
    KIND_REPAIR,
    KIND_ROCKFALL,
    PLACEABLE,
    PLACEABLE_KIND,
    PLACEABLE_SHAPE,
    X,
    action_layout,
)
from saboteur_env.sab2.explain import _why
from saboteur_env.sab2.scoring import card_conservation, reward_range
from saboteur_env.sab2.state import Phase, Sab2Event, Sab2State
from saboteur_env.sab2.variant import Sab2Variant


# ---- set-up ------------------------------------------------------------------------------------------------------
class _RoundArrays(TypedDict):
    """The state arrays ``start_round`` renews (a TypedDict, so ``Sab2State(**arrays)`` is type-checked)."""

    hands: NDArray[np.int16]
    roles: NDArray[np.int8]
    broken: NDArray[np.bool_]
    trapped: NDArray[np.bool_]
    theft: NDArray[np.bool_]
    theft_time: NDArray[np.int32]
    inspected: NDArray[np.int8]
    hats_swapped: NDArray[np.bool_]
    inspections: NDArray[np.bool_]
    discarded: NDArray[np.int16]
    peeked: NDArray[np.bool_]
    discards: NDArray[np.int16]
    cell_shape: NDArray[np.int16]
    reach: NDArray[np.uint8]
    goal_kind: NDArray[np.int16]
    goal_revealed: NDArray[np.bool_]


def new_game(config: GameConfig, rng: np.random.Generator) -> Sab2State:
    deck = np.repeat(np.arange(sc.NUM_DECK_KINDS, dtype=np.int16), sc.DECK_COUNTS)
    decks = np.stack([rng.permutation(deck) for _ in range(config.rounds)])
    roles = np.stack([rng.permutation(sc.ROLE_DECK) for _ in range(config.rounds)])
    goals = np.stack([rng.permutation(np.array(sc.KIND_GOALS, dtype=np.int16)) for _ in range(config.rounds)])
    p = config.num_players
    s = Sab2State(
        config=config, round_decks=decks, round_roles=roles, round_goals=goals,
        **_round_arrays(config, roles[0], goals[0]),
        gold=np.zeros(p, dtype=np.int32), stolen_held=np.zeros(p, dtype=np.int32), last_rewards=np.zeros(p),
    )  # fmt: skip
    start_round(s, 0, starter=0)
    return s


def _round_arrays(config: GameConfig, roles: NDArray[np.int8], goals: NDArray[np.int16]) -> _RoundArrays:
    """The per-round arrays of a round before any card is dealt (empty hands, bare maze, nothing broken or seen)."""
    p = config.num_players
    geo = geometry(config)
    cell_shape = np.full(config.num_cells, -1, dtype=np.int16)
    cell_shape[geo.start_cell] = 2 * sc.KIND_START
    return _RoundArrays(
        hands=np.zeros((p, sc.NUM_DECK_KINDS), dtype=np.int16),
        roles=roles[:p].copy(),
        broken=np.zeros((p, 3), dtype=bool),
        trapped=np.zeros(p, dtype=bool),
        theft=np.zeros(p, dtype=bool),
        theft_time=np.full(p, -1, dtype=np.int32),
        inspected=np.full((p, p), -1, dtype=np.int8),
        hats_swapped=np.zeros(p, dtype=bool),
        inspections=np.zeros((p, p), dtype=bool),
        discarded=np.zeros(p, dtype=np.int16),
        peeked=np.zeros((p, 3), dtype=bool),
        discards=np.zeros(sc.NUM_DECK_KINDS, dtype=np.int16),
        cell_shape=cell_shape,
        reach=sb.reach(cell_shape, geo.nbr_list, geo.start_cell),
        goal_kind=goals.copy(),
        goal_revealed=np.zeros(3, dtype=bool),
    )


def start_round(s: Sab2State, rnd: int, starter: int) -> None:
    p = s.config.num_players
    for name, value in _round_arrays(s.config, s.round_roles[rnd], s.round_goals[rnd]).items():
        setattr(s, name, value)
    s.round = rnd
    s.deck_pos = sc.REMOVED_PER_ROUND  # the first 10 cards are set aside unseen
    for seat in range(p):
        _draw(s, seat, sc.HAND_SIZE)
    s.reserve_pos = p
    s.phase, s.pending, s.free_target, s.thieves, s.finder = Phase.TURN, 0, -1, [], -1
    s.current = starter
    s.last_player = starter
    s.round_first_event = len(s.events)
    s.board_changed()
    _skip_empty(s)


def _draw(s: Sab2State, seat: int, n: int = 1) -> None:
    n = min(n, s.deck_size)
    deck = s.round_decks[s.round]
    for _ in range(n):
        s.hands[seat, deck[s.deck_pos]] += 1
        s.deck_pos += 1


def _refresh_reach(s: Sab2State) -> None:
    geo = geometry(s.config)
    s.reach = sb.reach(s.cell_shape, geo.nbr_list, geo.start_cell)
    s.board_changed()


def _log(s: Sab2State, etype: Sab2Event, actor: int, kind: int = -1, target: int = -1, cell: int = -1,
         arg: int = -1) -> None:  # fmt: skip
    s.events.append((int(etype), actor, kind, target, cell, arg))


# ---- legality ----------------------------------------------------------------------------------------------------
def _build_legal_tables() -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Tables over code = must_open | must_closed << 4 | connected_facing << 8 (see the Duel's table) and
    orientations: CONNECT[code, o] = edge matching and a connection (§1.9.1 rule 4); MATCH[code, o] = edge matching
    only (what a ladder needs where it may go without a connection)."""
    codes = np.arange(4096)
    must_open, must_closed, facing = codes & 15, (codes >> 4) & 15, (codes >> 8) & 15
    connect = np.zeros((4096, len(PLACEABLE)), dtype=bool)
    match = np.zeros((4096, len(PLACEABLE)), dtype=bool)
    for o, sid in enumerate(PLACEABLE_SHAPE.tolist()):
        op = int(sc.SHAPE_OPEN[sid])
        match[:, o] = ((op & must_closed) == 0) & ((must_open & ~op & 15) == 0)
        connect[:, o] = match[:, o] & ((op & facing) != 0)
    return connect, match


LEGAL_CONNECT, LEGAL_MATCH = _build_legal_tables()
LADDER_ORIENTATION = np.array([bool(sc.SHAPE_LADDER[s]) for s in PLACEABLE_SHAPE])
# Maze cards a ladder may stand next to without a connection under the seed reading: ladders and the start.
_LADDER_OR_START = np.array(
    [bool(sc.SHAPE_LADDER[sid]) or sid // 2 == sc.KIND_START for sid in range(2 * sc.NUM_KINDS)]
)


def placement_table(s: Sab2State) -> NDArray[np.bool_]:
    """(HW, orientations) legal placements ignoring hands and tools (cached per board).

    Ladders (§2.5, E19) are never next to a goal; besides that, ``rules="seeds"``: a normal connection, or
    orthogonally next to another ladder card or the start card; ``rules="official"``: next to any maze card.
    Edge matching applies in both readings.
    """
    cached = s._cache.get("place")
    if cached is not None:
        return cached
    geo = geometry(s.config)
    nbr = geo.nbr
    safe = np.where(nbr >= 0, nbr, 0)
    shape = s.cell_shape[safe]
    has = (nbr >= 0) & (shape >= 0)
    sid = np.maximum(shape, 0)
    opp = np.array(OPP)
    open_facing = ((sc.SHAPE_OPEN[sid] >> opp) & 1).astype(bool)
    conn_facing = ((s.reach[safe] >> opp) & 1).astype(bool)
    w = 1 << np.arange(4)
    code = ((has & open_facing) * w).sum(1) | ((has & ~open_facing) * w).sum(1) << 4
    code |= ((has & open_facing & conn_facing) * w).sum(1) << 8
    empty = (s.cell_shape < 0) & ~geo.is_goal_cell
    table = LEGAL_CONNECT[code] & empty[:, None]
    if s.config.rules == "seeds":
        beside = (has & _LADDER_OR_START[sid]).any(1)
        table[:, LADDER_ORIENTATION] |= LEGAL_MATCH[code][:, LADDER_ORIENTATION] & (empty & beside)[:, None]
    else:
        beside = has.any(1)
        table[:, LADDER_ORIENTATION] = LEGAL_MATCH[code][:, LADDER_ORIENTATION] & (empty & beside)[:, None]
    next_to_goal = np.any(geo.is_goal_cell[safe] & (nbr >= 0), axis=1)
    table[:, LADDER_ORIENTATION] &= ~next_to_goal[:, None]
    s._cache["place"] = table
    return table


def removable_cells(s: Sab2State) -> NDArray[np.bool_]:
    """Rockfall targets: placed path cards (ladders, doors and crystals included; never the start or goals)."""
    kind = np.where(s.cell_shape >= 0, s.cell_shape // 2, -1)
    return (kind >= 0) & (kind < sc.NUM_PATH_KINDS)


def legal_action_mask(s: Sab2State) -> NDArray[np.bool_]:
    cached = s._cache.get("mask")
    if cached is not None:
        return cached
    layout = action_layout(s.config)
    mask = np.zeros(layout.num_actions, dtype=bool)
    if s.game_over:
        mask.flags.writeable = False
        return mask
    off = layout.offset
    p_count = s.config.num_players
    me = s.current
    hand = s.hands[me]
    seats = (me + np.arange(p_count)) % p_count  # absolute seat of each offset
    if s.phase == Phase.THEFT:
        stealable = np.array(scoring.stealable(s.gold.tolist(), s.stolen_held.tolist()))
        ok = (stealable[seats] > 0) & (np.arange(p_count) != 0)
        mask[off["steal"] : off["steal"] + p_count] = ok
    elif s.phase in (Phase.PASS, Phase.FREE):
        mask[off["discard"] : off["discard"] + sc.NUM_DECK_KINDS] = hand > 0
        if s.phase == Phase.PASS:
            mask[off["stop"]] = True
    else:
        hw = s.config.num_cells
        if not s.broken[me].any() and not s.trapped[me]:
            table = placement_table(s) & (hand[PLACEABLE_KIND] > 0)[None, :]
            mask[off["place"] : off["place"] + table.size] = table.ravel()
        for t in range(3):
            if hand[KIND_BROKEN[t]]:
                mask[off["break"] + t * p_count : off["break"] + (t + 1) * p_count] = ~s.broken[seats, t]
            if hand[KIND_REPAIR[t]]:
                mask[off["repair"] + t * p_count : off["repair"] + (t + 1) * p_count] = s.broken[seats, t]
        for c in range(3):
            if hand[KIND_DOUBLE[c]]:
                for choice, tool in enumerate(DOUBLE_REPAIR_TOOLS[c]):
                    start = off["double_repair"] + (2 * c + choice) * p_count
                    mask[start : start + p_count] = s.broken[seats, tool]
        removable = removable_cells(s)
        for card in (0, 1):
            if hand[KIND_ROCKFALL[card]]:
                mask[off["rockfall"] + card * hw : off["rockfall"] + (card + 1) * hw] = removable
        if hand[KIND_MAP]:
            mask[off["map"] : off["map"] + 3] = ~s.goal_revealed
        not_me = np.arange(p_count) != 0
        if hand[X["theft"]] and not s.theft[me]:
            mask[off["theft"]] = True
        targeted = {
            "hands_off": s.theft[seats],
            "swap_hand": not_me,
            "inspection": not_me,
            "swap_hats": np.full(p_count, s.reserve_pos < len(sc.ROLE_DECK)),
            "trapped": not_me & ~s.trapped[seats],
            "free_at_last": s.trapped[seats],
        }
        for name, ok in targeted.items():
            if hand[X[name]]:
                mask[off[name] : off[name] + p_count] = ok
        total = int(hand.sum())
        mask[off["discard"] : off["discard"] + sc.NUM_DECK_KINDS] = hand > 0  # start a pass
        if total >= 2:
            mask[off["free"] : off["free"] + 3] = s.broken[me]
            mask[off["free"] + 3] = s.trapped[me]
    mask.flags.writeable = False
    s._cache["mask"] = mask
    return mask


# ---- transitions -------------------------------------------------------------------------------------------------
def apply_action(s: Sab2State, action: int, *, inplace: bool = False) -> Sab2State:
    layout = action_layout(s.config)
    if s.game_over:
        raise GameOverError("the game is over; start a new game")
    a = layout.check(action)
    if not legal_action_mask(s)[a]:
        raise IllegalActionError(f"illegal action {a} ({layout.to_string(a)}) for seat {s.current} in phase "
                                 f"{Phase(s.phase).name.lower()}: {_why(s, a)}")  # fmt: skip
    if not inplace:
        s = s.clone()
    s._cache.pop("mask", None)
    s.round_just_ended = False
    s.last_rewards = np.zeros(s.config.num_players)
    act = layout.decode(a)
    s.num_decisions += 1
    p_count = s.config.num_players
    me = s.current
    target = (me + act.target) % p_count if act.target >= 0 else -1
    seg = act.segment
    if s.phase == Phase.THEFT:
        _steal(s, me, target)
        return s
    if s.phase in (Phase.PASS, Phase.FREE) or seg == "discard":
        _discard_step(s, me, act.kind if seg == "discard" else -1)
        return s
    if seg == "free":
        s.phase, s.pending, s.free_target = Phase.FREE, 2, act.tool
        return s
    draws = 1
    s.hands[me, act.kind] -= 1
    if seg == "place":
        kind, rot = PLACEABLE[act.orientation]
        s.cell_shape[act.cell] = 2 * kind + rot
        _log(s, Sab2Event.PLACE, me, kind, -1, act.cell, rot)
        _refresh_reach(s)
        if _reveal(s, act.cell):
            s.finder = me
            s.last_player = me
            _end_round(s, gold_reached=True)
            return s
    elif seg == "break":
        s.broken[target, act.tool] = True
        _log(s, Sab2Event.BREAK, me, act.kind, target, -1, act.tool)
    elif seg in ("repair", "double_repair"):
        tool = act.tool if seg == "repair" else DOUBLE_REPAIR_TOOLS[act.card][act.tool]
        s.broken[target, tool] = False
        s.discards[KIND_BROKEN[tool]] += 1
        _log(s, Sab2Event.REPAIR, me, act.kind, target, -1, tool)
    elif seg == "rockfall":
        removed = int(s.cell_shape[act.cell] // 2)
        s.cell_shape[act.cell] = -1
        s.discards[removed] += 1
        _log(s, Sab2Event.ROCKFALL, me, act.kind, -1, act.cell, removed)
        _refresh_reach(s)
    elif seg == "map":
        s.peeked[me, act.slot] = True
        _log(s, Sab2Event.MAP, me, act.kind, -1, -1, act.slot)
    elif seg == "theft":
        s.theft[me] = True
        s.theft_time[me] = s.num_decisions
        _log(s, Sab2Event.THEFT, me, act.kind)
    elif seg == "hands_off":
        s.theft[target] = False
        s.theft_time[target] = -1
        s.discards[X["theft"]] += 1
        _log(s, Sab2Event.HANDS_OFF, me, act.kind, target)
    elif seg == "swap_hand":
        s.hands[[me, target]] = s.hands[[target, me]]
        draws = 0
        _log(s, Sab2Event.SWAP_HAND, me, act.kind, target)
        _draw(s, target, 1)  # the target draws one; the player draws nothing (E12)
    elif seg == "inspection":
        s.inspected[me, target] = s.roles[target]
        s.inspections[me, target] = True
        _log(s, Sab2Event.INSPECTION, me, act.kind, target)
    elif seg == "swap_hats":
        s.roles[target] = s.round_roles[s.round][s.reserve_pos]
        s.reserve_pos += 1
        s.hats_swapped[target] = True
        _log(s, Sab2Event.SWAP_HATS, me, act.kind, target)
    elif seg == "trapped":
        s.trapped[target] = True
        _log(s, Sab2Event.TRAPPED, me, act.kind, target)
    elif seg == "free_at_last":
        s.trapped[target] = False
        s.discards[X["trapped"]] += 1
        _log(s, Sab2Event.FREE_AT_LAST, me, act.kind, target)
    if seg not in ("place", "break", "theft", "trapped"):  # placed, or lying in front of a player
        s.discards[act.kind] += 1
    s.last_player = me
    _draw(s, me, draws)
    _next_turn(s)
    return s


def _discard_step(s: Sab2State, me: int, kind: int) -> None:
    """One decision of a pass (discard or stop) or of option C (discard)."""
    if kind >= 0:
        s.hands[me, kind] -= 1
        s.discards[kind] += 1
        s.last_player = me
        s.discarded[me] += 1
        _log(s, Sab2Event.DISCARD, me)
    if s.phase == Phase.FREE:
        s.pending -= 1
        if s.pending > 0:
            return
        if s.free_target == 3:
            s.trapped[me] = False
            s.discards[X["trapped"]] += 1
        else:
            s.broken[me, s.free_target] = False
            s.discards[KIND_BROKEN[s.free_target]] += 1
        _log(s, Sab2Event.FREE, me, -1, -1, -1, s.free_target)
        _draw(s, me, 1)
    else:
        if s.phase == Phase.TURN:
            s.phase, s.pending = Phase.PASS, 0
        if kind >= 0:
            s.pending += 1
            if s.pending < 3 and s.hands[me].sum() > 0:
                return  # discard another or stop
        _log(s, Sab2Event.PASS_END, me, -1, -1, -1, s.pending)
        _draw(s, me, s.pending)
    s.phase, s.pending, s.free_target = Phase.TURN, 0, -1
    _next_turn(s)


def _next_turn(s: Sab2State) -> None:
    if s.hands.sum() == 0:  # hands only run dry once the pile is empty (A11)
        _end_round(s, gold_reached=False)
        return
    s.current = (s.current + 1) % s.config.num_players
    _skip_empty(s)


def _skip_empty(s: Sab2State) -> None:
    """Seats with an empty hand pass without discarding or drawing (docs/rules.md §2.3)."""
    for _ in range(s.config.num_players):
        if s.hands[s.current].sum() > 0:
            return
        s.current = (s.current + 1) % s.config.num_players


def _reveal(s: Sab2State, placed: int) -> bool:
    """Turn up every face-down goal reached (repeating); True when the gold goal is among them (§1.10)."""
    geo = geometry(s.config)
    gold = False
    changed = True
    while changed:
        changed = False
        for slot, cell in enumerate(geo.goal_cells):
            if s.goal_revealed[slot]:
                continue
            facing, placed_dir = reveal.facing_of(geo.nbr_list[cell], s.cell_shape, sc.SHAPE_OPEN, s.reach, placed)
            if not any(f is not None and f[1] for f in facing):
                continue  # not reached
            kind = int(s.goal_kind[slot])
            best_rot = reveal.goal_rotation([int(sc.SHAPE_OPEN[2 * kind + rot]) for rot in (0, 1)], facing, placed_dir)
            s.cell_shape[cell] = 2 * kind + best_rot
            s.goal_revealed[slot] = True
            _log(s, Sab2Event.REVEAL, -1, kind, -1, cell, best_rot)
            gold |= kind == sc.KIND_GOALS[0]
            changed = True
        if changed:
            _refresh_reach(s)
    return gold


def _end_round(s: Sab2State, gold_reached: bool) -> None:
    """Winners and payouts (§2.8-§2.9), then theft decisions (§2.10), then the next round (§2.11)."""
    geo = geometry(s.config)
    roles = s.roles.tolist()
    trapped = s.trapped.tolist()
    open_blue = open_green = False
    if gold_reached:
        gold_cell = geo.goal_cells[int(np.flatnonzero(s.goal_kind == sc.KIND_GOALS[0])[0])]
        open_blue, open_green = sb.team_routes(s.cell_shape, geo.nbr_list, geo.start_cell, gold_cell)
    finder = s.finder if gold_reached else None
    win = scoring.winners(roles, trapped, gold_reached, finder, open_blue, open_green, s.config.rules)
    pay = scoring.payouts(roles, win, trapped, sb.crystals_on_board(s.cell_shape))
    s.round_start_gold = s.gold.copy()
    s.gold += np.array(pay, dtype=np.int32)
    _log(s, Sab2Event.ROUND_END, s.last_player, -1, -1, -1, 0 if gold_reached else 1)
    for seat, g in enumerate(pay):
        if g:
            _log(s, Sab2Event.PAYOUT, -1, -1, seat, -1, g)
    s.round_summary = {
        "round": s.round, "gold_reached": gold_reached, "finder": s.finder if gold_reached else None,
        "open_blue": open_blue, "open_green": open_green, "roles": roles, "trapped": trapped,
        "winners": [int(w) for w in win], "payouts": pay,
    }  # fmt: skip
    thieves = [seat for seat in range(s.config.num_players) if s.theft[seat] and not s.trapped[seat]]
    if thieves:
        latest = max(thieves, key=lambda seat: int(s.theft_time[seat]))
        s.thieves = scoring.theft_order(thieves, latest, s.config.num_players)
    else:
        s.thieves = []
    s.phase = Phase.THEFT
    _next_thief(s)


def _next_thief(s: Sab2State) -> None:
    while s.thieves:
        thief = s.thieves.pop(0)
        stealable = scoring.stealable(s.gold.tolist(), s.stolen_held.tolist())
        if any(g > 0 for seat, g in enumerate(stealable) if seat != thief):
            s.current = thief
            return
    _finish_round(s)


def _steal(s: Sab2State, thief: int, victim: int) -> None:
    s.gold[victim] -= 1
    s.gold[thief] += 1
    s.stolen_held[thief] += 1
    _log(s, Sab2Event.STEAL, thief, -1, victim)
    _next_thief(s)


def _finish_round(s: Sab2State) -> None:
    assert s.round_start_gold is not None, "_end_round records the gold before the payouts"
    gained = s.gold - s.round_start_gold
    summary = dict(s.round_summary, gold=s.gold.tolist(), gained=gained.tolist())
    s.round_results.append(summary)
    s.round_just_ended = True
    s.phase = Phase.TURN
    if s.config.reward == "gold":
        s.last_rewards = gained.astype(float)
    else:
        s.last_rewards = np.where(np.array(summary["winners"]) > 0, 1.0, -1.0)
    if s.round + 1 < s.config.rounds:
        start_round(s, s.round + 1, starter=(s.last_player + 1) % s.config.num_players)
    else:
        s.game_over = True
    s.board_changed()


__all__ = ["REFERENCE", "apply_action", "card_conservation", "legal_action_mask", "new_game", "reward_range"]


class ReferenceSab2Variant(Sab2Variant):
    """Saboteur 2 on this numpy engine: the slow test oracle the compiled core is checked against (never registered)."""

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> Sab2State:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)


REFERENCE = ReferenceSab2Variant()
