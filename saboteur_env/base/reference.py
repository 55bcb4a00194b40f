"""The rules engine: ``new_game``, ``legal_action_mask``, ``apply_action`` (docs/rules.md §1, §4.1, §4.2).

Internal: the slow numpy reference engine of the base game, the oracle the compiled game (``base.kernels``, played
through ``base.compiled``) is checked against after every decision (``tests/test_core_base*.py``). Nothing a user
runs plays it; outside ``tests/`` only ``base.convert`` (records for renders, explanations and checks) and
``base.positions`` (set-up draws of hand-built positions) import it (``tests/test_architecture.py``). Its API may
change without notice.

Knows nothing of RL libraries. One legality predicate (``legal_action_mask``) serves both the mask and the
transition: ``apply_action`` refuses any action the mask does not allow.

Flow of a decision: the acting seat plays or discards one card, draws one (unless the draw pile is empty or it
just found the gold), then the turn passes clockwise to the next seat holding cards (a seat with an empty hand
passes automatically, docs/rules.md A8). The round ends when the gold goal is revealed or when the draw pile and every
hand are empty; the next round starts at once inside the same call, so the state is always either mid-round with
a seat to act or ``game_over``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base import board, observation
from saboteur_env.base.actions import ActionType
from saboteur_env.base.cards import (
    DIGGERS_BY_PLAYERS,
    DOUBLE_REPAIR_TOOLS,
    GOAL_KINDS,
    GOLD_CARD_VALUES,
    KIND_BROKEN,
    KIND_GOAL_GOLD,
    KIND_MAP,
    KIND_ROCKFALL,
    MAX_GOLD_DRAWN,
    NUM_DECK_KINDS,
    NUM_PATH_KINDS,
    PLACEABLE,
    PLACEABLE_KIND,
    PLACEABLE_SHAPE,
    SABOTEUR_PAYOUT,
    SABOTEURS_BY_PLAYERS,
    Role,
    deck_counts,
)
from saboteur_env.base.explain import explain_illegal
from saboteur_env.base.scoring import card_conservation, final_ranking, returns, reward_range
from saboteur_env.base.state import EventType, GameState, max_events_per_round
from saboteur_env.base.variant import BaseVariant
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import GameOverError, IllegalActionError

HAND_SIZE_COLUMN = observation.SEAT_COLUMNS.index("hand_size")
PEEKED_COLUMN = observation.SEAT_COLUMNS.index("peeked_0")
DISCARDED_COLUMN = observation.SEAT_COLUMNS.index("discarded")


# ---- set-up ------------------------------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> GameState:
    """Draw every random element of a whole game from ``rng`` and start round 1 with seat 0."""
    p, rounds = config.num_players, config.rounds
    deck = np.repeat(np.arange(NUM_DECK_KINDS, dtype=np.int16), deck_counts(config))
    role_cards = np.array(
        [Role.GOLD_DIGGER] * DIGGERS_BY_PLAYERS[p] + [Role.SABOTEUR] * SABOTEURS_BY_PLAYERS[p], dtype=np.int8
    )
    goals = np.array(GOAL_KINDS, dtype=np.int16)
    round_decks = np.stack([rng.permutation(deck) for _ in range(rounds)])
    round_roles = np.stack([rng.permutation(role_cards) for _ in range(rounds)])
    round_goals = np.stack([rng.permutation(goals) for _ in range(rounds)])
    gold_deck = rng.permutation(np.array(GOLD_CARD_VALUES, dtype=np.int8))
    return _blank_state(config, round_decks, round_roles, round_goals, gold_deck)


def _blank_state(
    config: GameConfig,
    round_decks: NDArray[np.int16],
    round_roles: NDArray[np.int8],
    round_goals: NDArray[np.int16],
    gold_deck: NDArray[np.int8],
) -> GameState:
    p, hw = config.num_players, config.num_cells
    state = GameState(
        config=config,
        round_decks=round_decks,
        round_roles=round_roles,
        round_goals=round_goals,
        gold_deck=gold_deck,
        gold_left=np.ones(len(gold_deck), dtype=bool),
        hands=np.zeros((p, NUM_DECK_KINDS), dtype=np.int16),
        roles=np.zeros(p, dtype=np.int8),
        broken=np.zeros((p, 3), dtype=bool),
        peeked=np.zeros((p, 3), dtype=bool),
        discarded=np.zeros(p, dtype=np.int16),
        discards=np.zeros(NUM_DECK_KINDS, dtype=np.int16),
        cell_shape=np.full(hw, -1, dtype=np.int16),
        cell_open=np.zeros(hw, dtype=np.uint8),
        cell_reach=np.zeros(hw, dtype=np.uint8),
        planes=np.zeros((board.NUM_PUBLIC_PLANES, hw), dtype=np.float32),
        goal_kind=np.zeros(3, dtype=np.int16),
        goal_revealed=np.zeros(3, dtype=bool),
        gold_nuggets=np.zeros(p, dtype=np.int32),
        gold_cards=np.zeros(p, dtype=np.int16),
        last_rewards=np.zeros(p, dtype=np.float64),
        last_round_roles=np.full(p, -1, dtype=np.int8),
        events=np.full((config.rounds * max_events_per_round(int(round_decks.shape[1])), 6), -1, dtype=np.int16),
        seat_table=np.zeros((2 * p, len(observation.SEAT_COLUMNS)), dtype=np.float32),
        hist_ring=np.zeros(
            (p, 2 * config.history_length, observation.observation_layout(config).event_size), dtype=np.float32
        ),
    )  # the per-config tables are attached by GameState.__post_init__
    start_round(state, 0, starter=0)
    return state


def start_round(state: GameState, round_index: int, starter: int) -> None:
    """Lay out round ``round_index`` from the stored set-up: board, deck, hands, roles (docs/rules.md §1.7)."""
    cfg = state.config
    p = cfg.num_players
    state.round = round_index
    state.goal_kind[:] = state.round_goals[round_index]
    board.init_board(state)
    deck = state.round_decks[round_index]
    h = cfg.hand_size
    state.hands[:] = 0
    for seat in range(p):
        np.add.at(state.hands[seat], deck[seat * h : (seat + 1) * h], 1)
    state.deck_pos = p * h
    state.roles[:] = state.round_roles[round_index, :p]
    state.leftover_role = int(state.round_roles[round_index, p])
    state.broken[:] = False
    state.peeked[:] = False
    state.discarded[:] = 0
    state.discards[:] = 0
    state.current = starter
    state.last_player = starter
    state._cache.pop("mask", None)
    observation.refresh_seat_table(state)


# ---- legality ------------------------------------------------------------------------------------------------------
def legal_action_mask(state: GameState) -> NDArray[np.bool_]:
    """Bool mask over the action space for the seat to act (read-only; all False once the game is over)."""
    cached = state._cache.get("mask")
    if cached is not None:
        return cached
    layout = state.layout
    mask = np.zeros(layout.num_actions, dtype=bool)
    if not state.game_over:
        seat = state.current
        p = state.config.num_players
        hand = state.hands[seat]
        counts = hand.tolist()
        views = layout.segment_shapes
        if any(counts[:NUM_PATH_KINDS]) and True not in state.broken[seat].tolist():
            out = mask[: layout.num_place].reshape(views["place"])
            np.logical_and(board.placement_table(state), hand[PLACEABLE_KIND] > 0, out=out)
        if any(counts[16:25]):
            # Tool cards: 12 rows of P seat offsets (break x3, repair x3, double repair x3x2), built as bit sets
            # in Python and expanded by one table lookup.
            rows_by_seat = state.broken.tolist()
            rel = rows_by_seat[seat:] + rows_by_seat[:seat]
            bits = [sum(1 << k for k, row in enumerate(rel) if row[t]) for t in range(3)]
            full = (1 << p) - 1
            rows = [full & ~bits[t] if counts[16 + t] else 0 for t in range(3)]
            rows += [bits[t] if counts[19 + t] else 0 for t in range(3)]
            for c, (x, y) in enumerate(DOUBLE_REPAIR_TOOLS):
                rows += [bits[x], bits[y]] if counts[22 + c] else [0, 0]
            key = tuple(rows)
            segment = layout.tool_rows_memo.get(key)
            if segment is None:
                if len(layout.tool_rows_memo) > 100_000:  # bound the memo in very long runs
                    layout.tool_rows_memo.clear()
                segment = layout.tool_rows_memo[key] = layout.seat_bit_rows[rows].ravel()
            mask[layout.offsets["break"] : layout.offsets["rockfall"]] = segment
        if counts[KIND_ROCKFALL]:
            mask[layout.slices["rockfall"]] = board.removable_cells(state)
        if counts[KIND_MAP]:
            mask[layout.slices["map"]] = ~state.goal_revealed
        np.greater(hand, 0, out=mask[layout.offsets["discard"] :])
    mask.flags.writeable = False
    state._cache["mask"] = mask
    return mask


# ---- transition ------------------------------------------------------------------------------------------------------
def apply_action(state: GameState, action: int, *, inplace: bool = False) -> GameState:
    """Apply ``action`` for the seat to act and return the resulting state.

    By default the input is left unchanged and a new state is returned; ``inplace=True`` mutates ``state``
    (what the environment does). Rewards of this action (round ends) are in ``result.last_rewards``.

    Raises:
        GameOverError: the game is over.
        ActionError: ``action`` is not an int in range.
        IllegalActionError: the action is not legal now (the state is left unchanged).
    """
    if state.game_over:
        raise GameOverError("the game is over; start a new game")
    layout = state.layout
    a = layout.check(action)
    if not legal_action_mask(state)[a]:
        raise IllegalActionError(
            f"illegal action {a} ({layout.to_string(a)}) for seat {state.current}: {explain_illegal(state, a)}"
        )
    s = state if inplace else state.clone()
    s._cache.pop("mask", None)
    if s.round_just_ended:  # rewards are only ever set at a round end
        s.last_rewards[:] = 0.0
        s.round_just_ended = False
    _apply_legal(s, a)
    s.num_decisions += 1
    return s


def _log(state: GameState, etype: int, actor: int, kind: int = -1, target: int = -1, cell: int = -1, arg: int = -1):
    state.events[state.num_events] = (etype, actor, kind, target, cell, arg)
    state.num_events += 1
    observation.encode_event(state, etype, actor, kind, target, cell, arg)


def _apply_legal(s: GameState, a: int) -> None:
    layout = s.layout
    seat = s.current
    p = s.config.num_players
    atype = layout.type_of[a]
    kind = layout.kind_of[a]
    s.hands[seat, kind] -= 1
    table = s.seat_table  # public per-seat table of the observation, updated entry by entry
    table[seat, HAND_SIZE_COLUMN] -= 1
    table[seat + p, HAND_SIZE_COLUMN] -= 1
    if atype == ActionType.PLACE:
        cell = layout.arg_of[a]
        rot = layout.tool_of[a]
        board.put_card(s, cell, int(PLACEABLE_SHAPE[PLACEABLE.index((kind, rot))]))
        _log(s, EventType.PLACE, seat, kind, -1, cell, rot)
        geo = board.geometry(s.config)
        for slot in board.reveal_reached_goals(s, cell):
            gcell = geo.goal_cells[slot]
            rotation = int(board.SHAPES[s.cell_shape[gcell]].rotation)
            _log(s, EventType.REVEAL, seat, int(s.goal_kind[slot]), -1, gcell, rotation)
        if any(s.goal_revealed[i] and s.goal_kind[i] == KIND_GOAL_GOLD for i in range(3)):
            s.last_player = seat  # the finder does not draw
            _end_round(s, diggers_win=True, finder=seat)
            return
    elif atype == ActionType.BREAK:
        target = (seat + layout.target_of[a]) % p
        s.broken[target, layout.tool_of[a]] = True
        observation.set_seat_value(s, target, layout.tool_of[a], 1.0)
        _log(s, EventType.BREAK, seat, kind, target, -1, layout.tool_of[a])
    elif atype in (ActionType.REPAIR, ActionType.DOUBLE_REPAIR):
        target = (seat + layout.target_of[a]) % p
        tool = layout.tool_of[a]
        s.broken[target, tool] = False
        observation.set_seat_value(s, target, tool, 0.0)
        s.discards[kind] += 1
        s.discards[KIND_BROKEN[tool]] += 1
        _log(s, EventType.REPAIR, seat, kind, target, -1, tool)
    elif atype == ActionType.ROCKFALL:
        cell = layout.arg_of[a]
        removed = board.remove_card(s, cell)
        s.discards[kind] += 1
        s.discards[removed] += 1
        _log(s, EventType.ROCKFALL, seat, kind, -1, cell, removed)
    elif atype == ActionType.MAP:
        s.peeked[seat, layout.arg_of[a]] = True
        observation.set_seat_value(s, seat, PEEKED_COLUMN + layout.arg_of[a], 1.0)
        s.discards[kind] += 1
        _log(s, EventType.MAP, seat, kind, -1, -1, layout.arg_of[a])
    else:
        s.discards[kind] += 1
        s.discarded[seat] += 1
        table[seat, DISCARDED_COLUMN] += 1
        table[seat + p, DISCARDED_COLUMN] += 1
        _log(s, EventType.DISCARD, seat, kind)
    deck = s.round_decks[s.round]
    if s.deck_pos < len(deck):
        s.hands[seat, deck[s.deck_pos]] += 1
        s.deck_pos += 1
        table[seat, HAND_SIZE_COLUMN] += 1
        table[seat + p, HAND_SIZE_COLUMN] += 1
    s.last_player = seat
    if s.deck_pos < len(deck):  # while cards are left to draw, every hand holds cards
        s.current = (seat + 1) % p
        return
    # Next seat clockwise that holds cards; none left means the round is exhausted (docs/rules.md §1.11 (b)).
    sizes = s.hands.sum(axis=1)
    for k in range(1, p + 1):
        nxt = (seat + k) % p
        if sizes[nxt] > 0:
            s.current = nxt
            return
    _end_round(s, diggers_win=False, finder=-1)


# ---- round end and gold (docs/rules.md §1.11-§1.12) ------------------------------------------------------------
def _take_gold(s: GameState, values: list[int]) -> None:
    """Remove cards of the given values from the gold deck (topmost matching cards first)."""
    for v in values:
        idx = np.flatnonzero(s.gold_left & (s.gold_deck == v))[0]
        s.gold_left[idx] = False


def digger_gold(s: GameState, finder: int) -> list[list[int]]:
    """Gold cards each seat receives when the diggers win: the picking order of docs/rules.md §1.11 and B1-B3, B5."""
    p = s.config.num_players
    order = [(finder - k) % p for k in range(p)]  # counter-clockwise, starting with the finder
    eligible = [
        seat
        for seat in order
        if s.roles[seat] == Role.GOLD_DIGGER and not (s.config.broken_tool_penalty and s.broken[seat].any())
    ]
    got: list[list[int]] = [[] for _ in range(p)]
    if not eligible:
        return got
    top = np.flatnonzero(s.gold_left)[: min(p, MAX_GOLD_DRAWN)]
    drawn = sorted((int(v) for v in s.gold_deck[top]), reverse=True)
    s.gold_left[top] = False
    for i, value in enumerate(drawn):
        got[eligible[i % len(eligible)]].append(value)
    return got


def saboteur_combination(counts: tuple[int, int, int], value: int) -> tuple[int, int, int]:
    """(ones, twos, threes) for a saboteur payout of ``value`` from the remaining gold cards (docs/rules.md B4).

    Exact value with the fewest cards, higher cards first on ties; else the largest total below the value.
    """
    best = None
    for c in range(min(counts[2], value // 3) + 1):
        for b in range(min(counts[1], (value - 3 * c) // 2) + 1):
            a = min(counts[0], value - 3 * c - 2 * b)
            total = a + 2 * b + 3 * c
            key = (-total, a + b + c, -c, -b)
            if best is None or key < best[0]:
                best = (key, (a, b, c))
    assert best is not None
    return best[1]


def saboteur_gold(s: GameState) -> tuple[list[list[int]], list[int]]:
    """Gold cards and loose bank nuggets of each seat when the saboteurs win."""
    p = s.config.num_players
    sabs = [seat for seat in range(p) if s.roles[seat] == Role.SABOTEUR]
    value = SABOTEUR_PAYOUT[len(sabs)]
    cards: list[list[int]] = [[] for _ in range(p)]
    bank = [0] * p
    for seat in sabs:  # increasing seat order (B6)
        left = s.gold_deck[s.gold_left]
        counts = (int((left == 1).sum()), int((left == 2).sum()), int((left == 3).sum()))
        a, b, c = saboteur_combination(counts, value)
        taken = [3] * c + [2] * b + [1] * a
        _take_gold(s, taken)
        cards[seat] = taken
        bank[seat] = value - sum(taken)
    return cards, bank


def _end_round(s: GameState, diggers_win: bool, finder: int) -> None:
    p = s.config.num_players
    if diggers_win:
        cards = digger_gold(s, finder)
        bank = [0] * p
    else:
        cards, bank = saboteur_gold(s)
    nuggets = np.array([sum(c) + b for c, b in zip(cards, bank, strict=True)], dtype=np.int32)
    s.gold_deck_size = int(s.gold_left.sum())
    s.gold_nuggets += nuggets
    s.gold_cards += np.array([len(c) for c in cards], dtype=np.int16)
    winners = Role.GOLD_DIGGER if diggers_win else Role.SABOTEUR
    if s.config.reward == "gold":
        s.last_rewards[:] = nuggets
    else:
        s.last_rewards[:] = np.where(s.roles == winners, 1.0, -1.0)
    s.last_round_roles[:] = s.roles
    s.round_just_ended = True
    _log(s, EventType.ROUND_END, s.last_player, -1, -1, -1, 0 if diggers_win else 1)
    s.round_results.append(
        {
            "round": s.round,
            "winner": "gold-diggers" if diggers_win else "saboteurs",
            "finder": finder,
            "last_player": s.last_player,
            "roles": [int(r) for r in s.roles],
            "gold_cards": [len(c) for c in cards],
            "nuggets": [int(n) for n in nuggets],
            "decisions": s.num_decisions + 1,
        }
    )
    if s.round + 1 < s.config.rounds:
        start_round(s, s.round + 1, starter=(s.last_player + 1) % p)
    else:
        s.game_over = True
        observation.refresh_seat_table(s)


# ---- queries ---------------------------------------------------------------------------------------------------------
def is_terminal(state: GameState) -> bool:
    return state.game_over


def current_player(state: GameState) -> int:
    """Seat to act (meaningless once the game is over)."""
    return state.current


__all__ = [
    "REFERENCE",
    "GameOverError",
    "IllegalActionError",
    "apply_action",
    "card_conservation",
    "current_player",
    "explain_illegal",
    "final_ranking",
    "is_terminal",
    "legal_action_mask",
    "new_game",
    "returns",
    "reward_range",
    "start_round",
]


class ReferenceBaseVariant(BaseVariant):
    """The base game on this numpy engine: the slow test oracle that the compiled core is checked against (never
    registered)."""

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> GameState:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)


REFERENCE = ReferenceBaseVariant()
