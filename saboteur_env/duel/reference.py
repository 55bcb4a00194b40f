"""Rules of Saboteur: The Duel (docs/rules.md §3, decisions §4.4): set-up, the legal-action mask, transitions, scoring.

Internal: the slow numpy reference engine of the Duel, the oracle the compiled game (``duel.kernels``, played
through ``duel.compiled``) is checked against after every decision (``tests/test_core_duel*.py``). Nothing a user
runs plays it; outside ``tests/`` only ``duel.convert`` (records for renders, explanations and checks) and
``duel.positions`` (set-up draws of hand-built positions) import it (``tests/test_architecture.py``). Its API may
change without notice.

``legal_action_mask`` is the single legality predicate; ``apply_action`` checks the action against it before
changing anything, then resolves in the order of §3.4: the optional bribe of a troll just placed, goal reveals
(repeated until none is left), securing gold (acting player first), the end-of-round check, then the draw.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common import reveal
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import GameOverError, IllegalActionError
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import DOUBLE_TOOLS, PAIR_A, PAIR_B, PAIRS, PASS_EMPTY, duel_action_layout
from saboteur_env.duel.explain import explain_illegal
from saboteur_env.duel.state import DuelEvent, DuelState
from saboteur_env.duel.variant import DuelVariant


# ---- set-up ------------------------------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> DuelState:
    """A new duel; every random draw of the game happens here (ranks for each round's shuffle and goals)."""
    if config.game != "duel":
        raise ValueError(f"duel.new_game needs game='duel', got game={config.game!r}")
    card_rank = np.stack([rng.permutation(dc.DECK_SIZE) for _ in range(config.rounds)]).astype(np.int16)
    goal_rank = np.stack([rng.permutation(dc.NUM_GOALS) for _ in range(config.rounds)]).astype(np.int16)
    state = _blank_state(config, card_rank, goal_rank)
    start_round(state, 0, starter=1)  # green starts round 1 (docs/rules.md A7)
    return state


def _blank_state(config: GameConfig, card_rank: NDArray[np.int16], goal_rank: NDArray[np.int16]) -> DuelState:
    """A state with the given set-up and every other array blank: no card or goal out of the game, an empty pile,
    empty hands and an empty board (``start_round`` lays out a round)."""
    hw = config.num_cells
    return DuelState(
        config=config,
        card_rank=card_rank,
        goal_rank=goal_rank,
        card_out=np.zeros(dc.DECK_SIZE, dtype=bool),
        goal_out=np.zeros(dc.NUM_GOALS, dtype=bool),
        last_rewards=np.zeros(2),
        deck=np.zeros(0, dtype=np.int16),
        hands=np.zeros((2, dc.NUM_DECK_KINDS), dtype=np.int16),
        broken=np.zeros((2, 3), dtype=bool),
        discards=np.zeros(dc.NUM_DECK_KINDS, dtype=np.int16),
        cell_shape=np.full(hw, -1, dtype=np.int16),
        cell_counter=np.full(hw, -1, dtype=np.int8),
        cell_key=np.zeros(hw, dtype=bool),
        goal_card=np.zeros(dc.GOALS_PER_ROUND, dtype=np.int16),
        goal_revealed=np.zeros(dc.GOALS_PER_ROUND, dtype=bool),
        peeked=np.zeros((2, dc.GOALS_PER_ROUND), dtype=bool),
        reach=np.zeros((2, hw), dtype=np.uint8),
    )


def start_round(s: DuelState, rnd: int, starter: int) -> None:
    cfg = s.config
    geo = board.geometry(cfg)
    s.round, s.starter, s.current = rnd, starter, starter
    ids = np.flatnonzero(~s.card_out)
    ids = ids[np.argsort(s.card_rank[rnd][ids], kind="stable")]
    s.deck = dc.CARD_KIND[ids].copy()
    s.deck_pos = 0
    goals = np.flatnonzero(~s.goal_out)
    goals = goals[np.argsort(s.goal_rank[rnd][goals], kind="stable")][: dc.GOALS_PER_ROUND]
    s.goal_card = goals.astype(np.int16)
    s.goal_revealed = np.zeros(dc.GOALS_PER_ROUND, dtype=bool)
    s.peeked = np.zeros((2, dc.GOALS_PER_ROUND), dtype=bool)
    s.hands = np.zeros((2, dc.NUM_DECK_KINDS), dtype=np.int16)
    for i in range(2 * dc.HAND_SIZE):
        _draw(s, i % 2)
    s.broken = np.zeros((2, 3), dtype=bool)
    s.discards = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int16)
    s.cell_shape = np.full(cfg.num_cells, -1, dtype=np.int16)
    for colour, cell in enumerate(geo.start_cells):
        s.cell_shape[cell] = dc.shape_id(dc.KIND_START[colour], 0)
    s.cell_counter = np.full(cfg.num_cells, -1, dtype=np.int8)
    s.cell_key = np.zeros(cfg.num_cells, dtype=bool)
    s.counters_left, s.keys_left = dc.NUM_COUNTERS, dc.NUM_KEYS
    s.round_first_event = len(s.events)
    s.round_first_decision = s.num_decisions
    board.refresh_reach(s)


def _draw(s: DuelState, seat: int, n: int = 1) -> int:
    n = min(n, len(s.deck) - s.deck_pos)
    for _ in range(n):
        s.hands[seat, s.deck[s.deck_pos]] += 1
        s.deck_pos += 1
    return n


# ---- legality ----------------------------------------------------------------------------------------------------
def legal_action_mask(s: DuelState) -> NDArray[np.bool_]:
    """Bool mask over the duel action layout for the player to act (cached until the state changes)."""
    cached = s._cache.get("mask")
    if cached is not None:
        return cached
    layout = duel_action_layout(s.config)
    if s.game_over:
        mask = np.zeros(layout.size, dtype=bool)
        mask.flags.writeable = False
        return mask
    p, q = s.current, 1 - s.current
    hand = s.hands[p]
    mask = np.zeros(layout.size, dtype=bool)
    off = layout.offset
    hw = s.config.num_cells
    if not s.broken[p].any():
        table = board.placement_table(s, p)  # (HW, O)
        have = hand[[k for k, _ in dc.PLACEABLE]] > 0
        mask[off["place"] : off["place"] + table.size] = (table & have[None, :]).ravel()
        if s.counters_left > 0:
            trolls = table[:, list(dc.TROLL_PLACEABLE)] & have[list(dc.TROLL_PLACEABLE)][None, :]
            mask[off["place_bribe"] : off["place_bribe"] + trolls.size] = trolls.ravel()
    for t in range(3):
        mask[off["break"] + t] = hand[dc.KIND_BROKEN[t]] > 0 and not s.broken[q, t]
        mask[off["repair"] + t] = hand[dc.KIND_REPAIR[t]] > 0 and s.broken[p, t]
    for i, (a, b) in enumerate(DOUBLE_TOOLS):
        if hand[dc.KIND_DOUBLE_REPAIR[i]] > 0:
            ba, bb = s.broken[p, a], s.broken[p, b]
            mask[off["double_repair"] + 3 * i : off["double_repair"] + 3 * i + 3] = (ba, bb, ba and bb)
    if hand[dc.KIND_ROCKFALL] > 0:
        mask[off["rockfall"] : off["rockfall"] + hw] = board.removable_cells(s)
    if hand[dc.KIND_MAP] > 0:
        mask[off["map"] : off["map"] + dc.GOALS_PER_ROUND] = ~s.goal_revealed
    if hand[dc.KIND_KEY] > 0 and s.keys_left > 0:
        mask[off["key"] : off["key"] + hw] = board.door_cells(s)
    pairs_ok = (hand[PAIR_A] > 0) & (hand[PAIR_B] >= np.where(PAIR_A == PAIR_B, 2, 1))
    if s.broken[p].any():
        mask[off["repair_discard"] : off["repair_discard"] + 3 * len(PAIRS)] = (
            pairs_ok[:, None] & s.broken[p][None, :]
        ).ravel()
    total = int(hand.sum())
    if total > 0:
        mask[off["pass"] : off["pass"] + dc.NUM_DECK_KINDS] = hand > 0
        mask[off["pass"] + dc.NUM_DECK_KINDS : off["pass"] + PASS_EMPTY] = pairs_ok
    else:
        mask[off["pass"] + PASS_EMPTY] = True
    if s.counters_left > 0:
        mask[off["bribe"] : off["bribe"] + hw] = board.unbribed_trolls(s)
    mask.flags.writeable = False
    s._cache["mask"] = mask
    return mask


# ---- transitions ---------------------------------------------------------------------------------------------
PLAYED_ACTION_CARDS = frozenset({"break", "repair", "double_repair", "rockfall", "map", "key"})


def apply_action(s: DuelState, action: int, *, inplace: bool = False) -> DuelState:
    """Apply one action of the player to act; returns the new state (``s`` itself when ``inplace``)."""
    layout = duel_action_layout(s.config)
    if s.game_over:
        raise GameOverError("the game is over; call new_game()")
    a = layout.check(action)
    if not legal_action_mask(s)[a]:
        raise IllegalActionError(
            f"illegal action {a} ({layout.to_string(a)}) for seat {s.current}: {explain_illegal(s, a)}"
        )
    if not inplace:
        s = s.clone()
    act = layout.decode(a)
    p, q = s.current, 1 - s.current
    s.round_just_ended = False
    s.last_rewards = np.zeros(2)
    draws = 1
    placed = -1
    seg = act.segment
    if seg in PLAYED_ACTION_CARDS:  # the action card goes from the hand to the discard pile
        s.hands[p, act.kind] -= 1
        s.discards[act.kind] += 1
    if seg in ("place", "place_bribe"):
        kind, rot = dc.PLACEABLE[act.orientation]
        s.hands[p, kind] -= 1
        s.cell_shape[act.cell] = dc.shape_id(kind, rot)
        placed = act.cell
        _log(s, DuelEvent.PLACE, p, kind, act.cell, rot)
        if seg == "place_bribe":
            _bribe(s, p, act.cell, with_placement=True)
    elif seg == "break":
        s.broken[q, act.tool] = True
        _log(s, DuelEvent.BREAK, p, act.kind, -1, act.tool)
    elif seg == "repair":
        s.broken[p, act.tool] = False
        _log(s, DuelEvent.REPAIR, p, act.kind, -1, 1 << act.tool)
    elif seg == "double_repair":
        tools = DOUBLE_TOOLS[dc.KIND_DOUBLE_REPAIR.index(act.kind)]
        chosen = tools if act.choice == 2 else (tools[act.choice],)
        for t in chosen:
            s.broken[p, t] = False
        _log(s, DuelEvent.REPAIR, p, act.kind, -1, sum(1 << t for t in chosen))
    elif seg == "rockfall":
        removed = int(dc.SHAPE_KIND[s.cell_shape[act.cell]])
        s.discards[removed] += 1
        s.cell_shape[act.cell] = -1
        if s.cell_key[act.cell]:
            s.cell_key[act.cell] = False
            s.keys_left += 1
        _log(s, DuelEvent.ROCKFALL, p, removed, act.cell, -1)
    elif seg == "map":
        s.peeked[p, act.slot] = True
        _log(s, DuelEvent.MAP, p, act.kind, -1, act.slot)
    elif seg == "key":
        s.cell_key[act.cell] = True
        s.keys_left -= 1
        _log(s, DuelEvent.KEY, p, act.kind, act.cell, -1)
    elif seg == "repair_discard":
        a_kind, b_kind = PAIRS[act.pair]
        for k in (a_kind, b_kind):
            s.hands[p, k] -= 1
            s.discards[k] += 1
        s.broken[p, act.tool] = False
        _log(s, DuelEvent.REPAIR_DISCARD, p, -1, -1, act.tool)
    elif seg == "pass":
        kinds = [act.kind] if act.kind >= 0 else list(PAIRS[act.pair]) if act.pair >= 0 else []
        for k in kinds:
            s.hands[p, k] -= 1
            s.discards[k] += 1
        draws = len(kinds)
        _log(s, DuelEvent.PASS, p, -1, -1, len(kinds))
    else:  # bribe (option E): no card, no draw
        _bribe(s, p, act.cell, with_placement=False)
        draws = 0
    s.num_decisions += 1
    # Only maze changes can reach new goals or gold: after every resolution nothing reachable is left unrevealed
    # or unsecured (unless the counters ran out, which ends the round), so other actions skip straight to step 4.
    touched = seg in ("place", "place_bribe", "rockfall", "key", "bribe")
    if touched:
        s.board_changed()
    else:
        s._cache.pop("mask", None)
    _resolve(s, p, placed, touched)
    if not s.round_just_ended and not s.game_over:
        _draw(s, p, draws)
        s.current = q
        s._cache.pop("mask", None)
    return s


def _bribe(s: DuelState, p: int, cell: int, with_placement: bool) -> None:
    s.cell_counter[cell] = p
    s.counters_left -= 1
    _log(s, DuelEvent.BRIBE, p, -1, cell, int(with_placement))


def _log(s: DuelState, etype: DuelEvent, actor: int, kind: int, cell: int, arg: int) -> None:
    s.events.append((int(etype), actor, kind, cell, arg))


def _resolve(s: DuelState, p: int, placed: int, touched: bool = True) -> None:
    """Reveals until none is left, securing (acting player first), then the end-of-round check (§3.4)."""
    if touched:
        _reveal_and_secure(s, p, placed)
    reason = -1
    if s.goal_revealed.all():
        reason = 0
    elif s.counters_left == 0:
        reason = 1
    elif s.deck_size == 0 and s.hands.sum() == 0:
        reason = 2
    if reason >= 0:
        _end_round(s, reason)


def _reveal_and_secure(s: DuelState, p: int, placed: int) -> None:
    board.refresh_reach(s)
    while True:
        slots = board.reached_goal_slots(s)
        if not slots:
            break
        for slot in slots:
            _reveal(s, p, slot, placed)
        board.refresh_reach(s)
    for seat in (p, 1 - p):
        for cell in board.reachable_gold(s, seat):
            if s.counters_left == 0:
                break
            s.cell_counter[cell] = seat
            s.counters_left -= 1
            _log(s, DuelEvent.SECURE, seat, int(dc.SHAPE_KIND[s.cell_shape[cell]]), cell,
                 int(dc.SHAPE_NUGGETS[s.cell_shape[cell]]))  # fmt: skip


def _reveal(s: DuelState, p: int, slot: int, placed: int) -> None:
    """Turn goal ``slot`` face up with the §1.10 tie-breaks plus the Duel's gold preference (§3.6)."""
    geo = board.geometry(s.config)
    cell = geo.goal_cells[slot]
    kind = dc.FIRST_GOAL_KIND + int(s.goal_card[slot])
    either = s.reach[0] | s.reach[1]
    facing, placed_dir = reveal.facing_of(geo.nbr_list[cell], s.cell_shape, dc.SHAPE_OPEN, either, placed)
    # The Duel's own preference (§3.6): a rotation whose gold the revealing player then reaches.
    gold_reach = []
    trial = s.cell_shape.copy()
    for rot in (0, 1):
        sid = dc.shape_id(kind, rot)
        s.cell_shape[cell] = sid
        gold = int(dc.SHAPE_GOLD_BITS[sid])
        gold_reach.append(bool(gold) and (board.compute_reach(s, p)[cell] & gold) != 0)
    s.cell_shape[:] = trial
    open_bits = [int(dc.SHAPE_OPEN[dc.shape_id(kind, rot)]) for rot in (0, 1)]
    best_rot = reveal.goal_rotation(open_bits, facing, placed_dir, gold_reach)
    s.cell_shape[cell] = dc.shape_id(kind, best_rot)
    s.goal_revealed[slot] = True
    _log(s, DuelEvent.REVEAL, p, kind, cell, best_rot)


def _end_round(s: DuelState, reason: int) -> None:
    """Score piles, troll payments, goals leaving the game (§3.9); next round or game end (§3.10)."""
    geo = board.geometry(s.config)
    before = s.nuggets
    _log(s, DuelEvent.ROUND_END, s.current, -1, -1, reason)
    for cell in np.flatnonzero(s.cell_counter >= 0).tolist():
        sid = int(s.cell_shape[cell])
        owner = int(s.cell_counter[cell])
        nuggets = int(dc.SHAPE_NUGGETS[sid])
        kind = int(dc.SHAPE_KIND[sid])
        if nuggets > 0:
            s.score[owner].append(nuggets)
            if kind < dc.NUM_PATH_KINDS:  # the gold path card leaves the deck for good
                copies = np.flatnonzero((dc.CARD_KIND == kind) & ~s.card_out)
                s.card_out[copies[0]] = True
    for cell in np.flatnonzero(s.cell_counter >= 0).tolist():
        if dc.SHAPE_TROLL[s.cell_shape[cell]]:  # a bribed troll: its briber pays one card (D9)
            payer = int(s.cell_counter[cell])
            if s.score[payer]:
                paid = min(s.score[payer])
                s.score[payer].remove(paid)
                _log(s, DuelEvent.PAY, payer, -1, cell, paid)
    for slot in range(len(geo.goal_cells)):
        if s.goal_revealed[slot]:
            s.goal_out[int(s.goal_card[slot])] = True  # scored or not, a revealed goal leaves the game
    after = s.nuggets
    gained = np.array([after[i] - before[i] for i in range(2)], dtype=float)
    s.round_results.append({
        "round": s.round,
        "reason": ("all goals revealed", "all counters used", "cards exhausted")[reason],
        "gained": [int(x) for x in gained],
        "nuggets": list(after),
        "decisions": s.num_decisions - s.round_first_decision,
    })  # fmt: skip
    s.round_just_ended = True
    last = s.round + 1 >= s.config.rounds
    if s.config.reward == "gold":
        s.last_rewards = gained
    elif last:
        diff = after[0] - after[1]
        s.last_rewards = np.array([np.sign(diff), -np.sign(diff)], dtype=float)
    if last:
        s.game_over = True
        s.board_changed()
        return
    starter = 0 if after[0] <= after[1] else 1  # fewer nuggets starts; blue on a tie
    start_round(s, s.round + 1, starter)
    s.board_changed()


def winner(s: DuelState) -> int | None:
    """Seat with more nuggets at the end (None for a draw or while the game goes on)."""
    if not s.game_over:
        return None
    a, b = s.nuggets
    return None if a == b else (0 if a > b else 1)


class ReferenceDuelVariant(DuelVariant):
    """The Duel on this numpy engine: the slow test oracle the compiled core is checked against (never registered)."""

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> DuelState:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)


REFERENCE = ReferenceDuelVariant()
