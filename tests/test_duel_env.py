"""The Duel's own checks: card/counter/key conservation and an independent reachability check over random games,
the placement table against the rules text, peeks, infos, config errors, the single-seat view.

PettingZoo conformance, the generic random-play invariants, purity/pickle/determinism and the leak test (resampler:
tests/hidden.py) are in tests/test_conformance.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game, raw_env
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.scoring import card_conservation
from saboteur_env.duel.state import DuelState

CFG = GameConfig(game="duel")


def reference_reach(s, player: int) -> np.ndarray:
    """Arm reachability straight from docs/rules.md §3.5, as a naive fixpoint over (cell, arm) pairs."""
    geo = board.geometry(s.config)
    hw = s.config.num_cells
    usable = np.zeros((hw, 4), dtype=bool)
    for x in range(hw):
        sid = s.cell_shape[x]
        if sid < 0:
            continue
        shape = dc.SHAPES[sid]
        troll_blocks = shape.troll and s.cell_counter[x] < 0
        for e in range(4):
            door_closed = (shape.door_bits[1 - player] >> e) & 1 and not s.cell_key[x]
            usable[x, e] = bool((shape.open_bits >> e) & 1) and not door_closed and not troll_blocks
    reach = np.zeros((hw, 4), dtype=bool)
    reach[geo.start_cells[player]] = usable[geo.start_cells[player]]
    changed = True
    while changed:
        changed = False
        for x in range(hw):
            sid = s.cell_shape[x]
            if sid < 0:
                continue
            shape = dc.SHAPES[sid]
            new = reach[x].copy()
            for e in range(4):  # within a card: unblocked arms of one group
                if reach[x, e]:
                    for f in range(4):
                        if (shape.arm_group[e] >> f) & 1 and usable[x, f]:
                            new[f] = True
            for e in range(4):  # across cells: facing open arms
                j = geo.nbr[x, e]
                back = (e + 2) % 4
                if j >= 0 and s.cell_shape[j] >= 0 and usable[x, e] and usable[j, back] and reach[j, back]:
                    new[e] = True
            if shape.ladder >= 0 and reach[geo.start_cells[shape.ladder]].any():
                new |= usable[x]
            if x in geo.start_cells:
                colour = geo.start_cells.index(x)
                for y in range(hw):
                    ys = s.cell_shape[y]
                    if ys >= 0 and dc.SHAPES[ys].ladder == colour and reach[y].any():
                        new |= usable[x]
            if (new != reach[x]).any():
                reach[x] = new
                changed = True
    return (reach * (1 << np.arange(4))).sum(1).astype(np.uint8)


def random_game(seed: int, cfg: GameConfig, check: Callable[[DuelState], None]) -> DuelState:
    rng = np.random.default_rng(seed)
    s = new_game(cfg, rng)
    while not s.game_over:
        check(s)
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
    return s


def _invariants(s: DuelState) -> None:
    assert (card_conservation(s) == dc.DECK_COUNTS).all()
    assert s.counters_left + int((s.cell_counter >= 0).sum()) == dc.NUM_COUNTERS
    assert s.keys_left + int(s.cell_key.sum()) == dc.NUM_KEYS
    for p in (0, 1):
        assert np.array_equal(s.reach[p], reference_reach(s, p))
    assert int(s.hands.sum(1).max()) <= dc.HAND_SIZE


@pytest.mark.parametrize("seed", range(6))
def test_duel__random_play_invariants(seed):
    cfg = CFG if seed % 2 == 0 else GameConfig(game="duel", duel_layout="official_5x10")
    s = random_game(seed, cfg, _invariants)
    assert all(v > 0 for pile in s.score for v in pile)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 60))
def test_duel__random_play_invariants_slow(seed):
    random_game(seed, CFG if seed % 2 == 0 else GameConfig(game="duel", duel_layout="official_5x10"), _invariants)


def test_duel__observation_shows_own_peek_only():
    rng = np.random.default_rng(5)
    s = new_game(CFG, rng)
    from saboteur_env import player_view  # the view users get (the compiled core's observation)

    s.peeked[0, 2] = True
    s.board_changed()
    assert player_view(s, 0).my_peeks[2] == s.goal_card[2] and (player_view(s, 1).my_peeks == -1).all()
    assert player_view(s, 1).peeked[1, 2]  # the opponent sees that a map was used on slot 2


def test_duel__env_rewards_and_infos():
    e = raw_env(game="duel")
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    totals = {a: 0.0 for a in e.possible_agents}
    ends = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            assert info["nuggets"] == e.game.nuggets[e.possible_agents.index(agent)]
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for a in e.possible_agents:
            totals[a] += e.rewards[a]
        if e.game.round_just_ended:
            ends += 1
            assert "gained" in e.infos[agent]["round_result"]
    assert ends == 3 and [totals[a] for a in e.possible_agents] == e.game.nuggets


def test_duel__config_errors():
    from saboteur_env import ConfigError

    with pytest.raises(ConfigError, match="num_players=3 is out of range for game='duel'; valid: 2"):
        GameConfig(game="duel", num_players=3)
    with pytest.raises(ConfigError, match="duel_layout"):
        GameConfig(game="duel", duel_layout="6x6")
    with pytest.raises(ConfigError, match="only applies to game='duel'"):
        GameConfig(duel_layout="official_5x10")


def test_duel__single_seat_env_and_round_decisions():
    from agents import make_agent
    from saboteur_env import SingleSeatEnv

    cfg = GameConfig(game="duel")
    e = SingleSeatEnv(lambda seat: make_agent("greedy", cfg), game="duel")
    e.reset(seed=2)
    total, done = 0.0, False
    rng = np.random.default_rng(2)
    while not done:
        _, reward, done, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        total += reward
    assert total == e.game.nuggets[e.seat]
    results = e.game.round_results
    assert sum(r["decisions"] for r in results) == e.game.num_decisions


def _reference_placeable(s, player: int, cell: int, kind: int, rot: int) -> bool:
    """docs/rules.md §3.5 read directly for one placement."""
    geo = board.geometry(s.config)
    if s.cell_shape[cell] >= 0 or geo.is_goal_cell[cell]:
        return False
    shape = dc.SHAPES[dc.shape_id(kind, rot)]
    adjacent = connects = False
    for d, j in enumerate(geo.nbr_list[cell]):
        if j < 0:
            continue
        if shape.ladder >= 0 and geo.is_goal_cell[j]:
            return False
        if s.cell_shape[j] < 0:
            continue
        other = dc.SHAPES[s.cell_shape[j]]
        if shape.ladder >= 0 and other.nuggets > 0:
            return False
        adjacent = True
        theirs = (other.open_bits >> ((d + 2) % 4)) & 1
        mine = (shape.open_bits >> d) & 1
        if mine != theirs:
            return False
        closed = (shape.door_bits[1 - player] >> d) & 1
        if mine and not closed and (s.reach[player][j] >> ((d + 2) % 4)) & 1:
            connects = True
    if shape.ladder >= 0:
        joins = shape.ladder == player or s.reach[player][geo.start_cells[shape.ladder]] != 0
        return adjacent and (joins or connects)
    return connects


def test_duel__placement_table_matches_the_rules_text():
    rng = np.random.default_rng(9)
    s = new_game(CFG, rng)
    checked = 0
    while not s.game_over and checked < 12:
        if s.num_decisions % 7 == 0:
            for player in (0, 1):
                table = board.placement_table(s, player)
                for cell in range(CFG.num_cells):
                    for o, (kind, rot) in enumerate(dc.PLACEABLE):
                        assert table[cell, o] == _reference_placeable(s, player, cell, kind, rot), (cell, kind, rot)
            checked += 1
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
    assert checked == 12
