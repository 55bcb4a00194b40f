"""Saboteur 2: random-play invariants, the leak test (roles resampled from the reserve), PettingZoo conformance."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from saboteur_env import GameConfig, apply_action, encode_observation, env, legal_action_mask, new_game, raw_env
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.board import reach
from saboteur_env.sab2.render import render_image, render_text
from saboteur_env.sab2.rules import card_conservation
from saboteur_env.sab2.state import Phase


def _invariants(s) -> None:
    if s.phase != Phase.THEFT:
        assert (card_conservation(s) == sc.DECK_COUNTS).all()
    from saboteur_env.common.geometry import geometry

    geo = geometry(s.config)
    assert np.array_equal(s.reach, reach(s.cell_shape, geo.nbr_list, geo.start_cell))
    assert (s.gold >= s.stolen_held).all() and (s.stolen_held >= 0).all()
    assert len(set(s.roles.tolist()) - set(range(6))) == 0


@pytest.mark.parametrize("n", [2, 3, 6, 9, 12])
def test_sab2__random_play_invariants(n):
    cfg = GameConfig(game="sab2", num_players=n)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        s = new_game(cfg, rng)
        total = np.zeros(n)
        while not s.game_over:
            mask = legal_action_mask(s)
            assert mask.any()
            _invariants(s)
            s = apply_action(s, int(rng.choice(np.flatnonzero(mask))), inplace=True)
            total += s.last_rewards
        assert total.tolist() == s.gold.tolist() and len(s.round_results) == 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_sab2__random_play_invariants_slow(seed):
    n = 2 + seed % 11
    rng = np.random.default_rng(seed)
    s = new_game(GameConfig(game="sab2", num_players=n), rng)
    while not s.game_over:
        _invariants(s)
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)


def _resample(s, seat: int, rng: np.random.Generator):
    """Redraw what ``seat`` cannot see: other hands and the pile (same sizes), the roles of the other seats and the
    reserve (except roles the seat has inspected, as long as they still hold them), unpeeked goals, later rounds."""
    t = s.clone()
    p = s.config.num_players
    others = [i for i in range(p) if i != seat]
    deck = t.round_decks[t.round]
    pool = np.concatenate([np.repeat(np.arange(sc.NUM_DECK_KINDS), t.hands[i]) for i in others]
                          + [deck[t.deck_pos :], deck[: sc.REMOVED_PER_ROUND]]).astype(np.int16)  # fmt: skip
    pool = rng.permutation(pool)
    pos = 0
    for i in others:
        k = int(t.hands[i].sum())
        t.hands[i] = np.bincount(pool[pos : pos + k], minlength=sc.NUM_DECK_KINDS)
        pos += k
    rest = pool[pos:]
    deck = deck.copy()
    deck[: sc.REMOVED_PER_ROUND] = rest[: sc.REMOVED_PER_ROUND]
    deck[t.deck_pos :] = rest[sc.REMOVED_PER_ROUND :]
    t.round_decks[t.round] = deck
    known = {i for i in others if t.inspected[seat, i] >= 0 and not t.hats_swapped[i]}
    free = [i for i in others if i not in known]
    unseen = [int(t.roles[i]) for i in free] + t.round_roles[t.round][t.reserve_pos :].tolist()
    unseen = rng.permutation(unseen)
    for j, i in enumerate(free):
        t.roles[i] = unseen[j]
    t.round_roles[t.round][t.reserve_pos :] = unseen[len(free) :]
    hidden = [g for g in range(3) if not t.goal_revealed[g] and not t.peeked[seat, g]]
    if len(hidden) >= 2:
        kinds = rng.permutation(t.goal_kind[hidden])
        t.goal_kind[hidden] = kinds
    for r in range(t.round + 1, s.config.rounds):
        t.round_decks[r] = rng.permutation(t.round_decks[r])
        t.round_roles[r] = rng.permutation(t.round_roles[r])
    t.board_changed()
    return t


def test_sab2__no_leak_when_hidden_information_is_resampled():
    rng = np.random.default_rng(1)
    for n, seed in ((3, 0), (6, 1), (12, 2)):
        game_rng = np.random.default_rng(seed)
        s = new_game(GameConfig(game="sab2", num_players=n), game_rng)
        step = 0
        while not s.game_over:
            if step % 7 == 0 and s.phase != Phase.THEFT:
                for seat in range(n):
                    t = _resample(s, seat, rng)
                    assert np.array_equal(encode_observation(s, seat), encode_observation(t, seat))
                    assert render_text(s, seat) == render_text(t, seat)
                    if step % 21 == 0:
                        assert np.array_equal(render_image(s, seat), render_image(t, seat))
                    if s.current == seat:
                        assert np.array_equal(legal_action_mask(s), legal_action_mask(t))
            s = apply_action(s, int(game_rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
            step += 1


@pytest.mark.parametrize("n", [2, 5, 12])
def test_sab2__pettingzoo_api(n):
    api_test(env(game="sab2", num_players=n), num_cycles=300)


def test_sab2__pettingzoo_seed_render_and_rewards():
    seed_test(lambda **kw: env(game="sab2", num_players=4, **kw), num_cycles=200)
    render_test(lambda render_mode=None: env(game="sab2", num_players=3, render_mode=render_mode))
    e = raw_env(game="sab2", num_players=6)
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for a in e.possible_agents:
            totals[a] += e.rewards[a]
    assert [totals[a] for a in e.possible_agents] == e.game.gold.tolist()


def test_sab2__single_seat_env_and_error_messages():
    from agents import make_agent
    from saboteur_env import IllegalActionError, SingleSeatEnv

    cfg = GameConfig(game="sab2", num_players=5)
    e = SingleSeatEnv(lambda seat: make_agent("heuristic", cfg), game="sab2", num_players=5)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    total, done = 0.0, False
    while not done:
        _, reward, done, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        total += reward
    assert total == e.game.gold[e.seat]
    s = new_game(cfg, np.random.default_rng(0))
    bad = int(np.flatnonzero(~legal_action_mask(s))[-1])  # a steal outside the theft phase
    with pytest.raises(IllegalActionError, match=r"steal 1 gold .* no legal target"):
        apply_action(s, bad)


def _reference_placeable(s, cell: int, kind: int, rot: int) -> bool:
    """RULES.md §1.9.1 and §2.5 read directly: empty non-goal cell, edge matching with every neighbouring maze card,
    and a connected facing arm - or, for a ladder, any neighbouring maze card and no goal next to it."""
    from saboteur_env.common.geometry import geometry

    geo = geometry(s.config)
    if s.cell_shape[cell] >= 0 or geo.is_goal_cell[cell]:
        return False
    sid = 2 * kind + rot
    mine = int(sc.SHAPE_OPEN[sid])
    adjacent = connected = False
    for d, j in enumerate(geo.nbr_list[cell]):
        if j < 0:
            continue
        if sc.SHAPE_LADDER[sid] and geo.is_goal_cell[j]:
            return False
        if s.cell_shape[j] < 0:
            continue
        adjacent = True
        theirs = (int(sc.SHAPE_OPEN[s.cell_shape[j]]) >> ((d + 2) % 4)) & 1
        if ((mine >> d) & 1) != theirs:
            return False
        if theirs and (mine >> d) & 1 and (s.reach[j] >> ((d + 2) % 4)) & 1:
            connected = True
    return adjacent if sc.SHAPE_LADDER[sid] else connected


def test_sab2__placement_table_matches_the_rules_text():
    from saboteur_env.sab2.actions import PLACEABLE
    from saboteur_env.sab2.rules import placement_table

    rng = np.random.default_rng(7)
    s = new_game(GameConfig(game="sab2", num_players=4), rng)
    checked = 0
    while not s.game_over and checked < 12:
        if s.num_decisions % 9 == 0 and s.phase == Phase.TURN:
            table = placement_table(s)
            for cell in range(s.config.num_cells):
                for o, (kind, rot) in enumerate(PLACEABLE):
                    assert table[cell, o] == _reference_placeable(s, cell, kind, rot), (cell, kind, rot)
            checked += 1
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
    assert checked == 12
