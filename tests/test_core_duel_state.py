"""The Duel users play runs on the compiled core (saboteur_env.duel.compiled): the public API against the numpy
reference engine on random games, set-up from the caller's generator, errors, copies and edits, hand-built
positions, the environment."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import saboteur_env as se
from agents import make_agent
from saboteur_env.common.errors import StateError
from saboteur_env.duel import observation, render
from saboteur_env.duel import reference as rules
from saboteur_env.duel.actions import PASS_EMPTY
from saboteur_env.duel.compiled import CoreDuelState
from saboteur_env.duel.positions import make_duel_state
from saboteur_env.duel.view import duel_view

LAYOUTS = [
    se.GameConfig(game="duel"),
    se.GameConfig(game="duel", duel_layout="official_5x10", reward="win", history_length=4, margin=1),
]


@pytest.mark.parametrize("cfg", LAYOUTS, ids=["seed_5x9", "official_5x10"])
def test_api_games_equal_the_reference(cfg: se.GameConfig) -> None:
    for seed in range(2):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        game, ref = se.new_game(cfg, r1), rules.new_game(cfg, r2)
        assert isinstance(game, CoreDuelState) and game.fingerprint() == ref.fingerprint()
        policy = np.random.default_rng(seed)
        rounds_ended = 0
        while not ref.game_over:
            mask = se.legal_action_mask(game)
            assert np.array_equal(mask, rules.legal_action_mask(ref)) and not mask.flags.writeable
            for seat in (0, 1):
                assert np.array_equal(se.encode_observation(game, seat), observation.encode_observation(ref, seat))
            assert np.array_equal(se.encode_state(game), observation.encode_state(ref))
            a = int(policy.choice(np.flatnonzero(mask)))
            pure = se.apply_action(game, a)
            assert pure is not game
            se.apply_action(game, a, inplace=True)
            rules.apply_action(ref, a, inplace=True)
            assert pure.fingerprint() == game.fingerprint()
            assert np.array_equal(game.last_rewards, ref.last_rewards) and game.round_just_ended == ref.round_just_ended
            assert (game.current, game.round, game.deck_size, game.counters_left, game.keys_left) == (
                ref.current, ref.round, ref.deck_size, ref.counters_left, ref.keys_left)  # fmt: skip
            assert game.events[-3:] == ref.events[-3:] and game.score == ref.score and game.nuggets == ref.nuggets
            rounds_ended += ref.round_just_ended
        assert rounds_ended == cfg.rounds and se.is_terminal(game)
        assert game.game_over and game.round_results == ref.round_results and game.events == ref.events
        assert game.fingerprint() == ref.fingerprint()
        assert se.returns(game).tolist() == [float(n) for n in ref.nuggets]
        assert r1.integers(1 << 62) == r2.integers(1 << 62)  # the caller's generator continues identically


def test_other_bit_generators_draw_the_same_game_in_numpy() -> None:
    cfg = se.GameConfig(game="duel", duel_layout="official_5x10")
    mk = lambda: np.random.Generator(np.random.MT19937(9))  # noqa: E731
    g1, g2 = mk(), mk()
    assert se.new_game(cfg, g1).fingerprint() == rules.new_game(cfg, g2).fingerprint()
    assert g1.integers(1 << 62) == g2.integers(1 << 62)


def test_illegal_actions_are_explained_and_change_nothing() -> None:
    game = se.new_game(se.GameConfig(game="duel"), np.random.default_rng(1))
    before = game.fingerprint()
    mask = se.legal_action_mask(game)
    illegal = int(np.flatnonzero(~mask)[0])
    ref_msg = ""
    try:
        rules.apply_action(game.to_reference(), illegal)
    except se.IllegalActionError as e:
        ref_msg = str(e)
    with pytest.raises(se.IllegalActionError) as err:
        se.apply_action(game, illegal, inplace=True)
    assert str(err.value) == ref_msg and f"illegal action {illegal} " in ref_msg  # the reference's explanation
    for bad in (10**6, -1):
        with pytest.raises(ValueError, match="out of range"):
            se.apply_action(game, bad, inplace=True)
    with pytest.raises(ValueError, match="seat 2 is out of range"):
        se.encode_observation(game, 2)
    assert game.fingerprint() == before and np.array_equal(se.legal_action_mask(game), mask)
    over = game.clone()
    over.game_over = True
    with pytest.raises(se.GameOverError):
        se.apply_action(over, int(np.flatnonzero(mask)[0]))


def test_copies_pickles_and_edits() -> None:
    game = se.new_game(se.GameConfig(game="duel"), np.random.default_rng(2))
    for a in range(30):
        se.apply_action(game, int(np.flatnonzero(se.legal_action_mask(game))[a % 3]), inplace=True)
    for dup in (game.clone(), pickle.loads(pickle.dumps(game)), copy.deepcopy(game)):
        assert dup.fingerprint() == game.fingerprint() and dup.batch.arenas["i8"] is not game.batch.arenas["i8"]
        assert dup.events == game.events and dup.round_results == game.round_results
    # A state pickled by a version whose state had other fields (here: one i16 field fewer) is refused clearly.
    old_state = game.__getstate__()
    old_state["arenas"]["i16"] = old_state["arenas"]["i16"][:-256]
    with pytest.raises(StateError, match="pickled by another saboteur-env version"):
        type(game).__new__(type(game)).__setstate__(old_state)
    edited = game.clone()
    edited.hands[edited.current] = 0  # an edit through the views, then board_changed() as with the reference
    edited.board_changed()
    assert np.array_equal(se.legal_action_mask(edited), rules.legal_action_mask(edited.to_reference()))
    pass_empty = se.action_layout(edited.config).offset["pass"] + PASS_EMPTY
    assert se.legal_action_mask(edited)[pass_empty] and not se.legal_action_mask(game)[pass_empty]
    # Whole-array assignments (as the reference's code does) copy into the core; a wrong shape is refused.
    edited.deck = [3, 4, 5]
    edited.deck_pos = 1
    assert edited.deck.tolist() == [3, 4, 5] and edited.deck_size == 2
    assert edited.to_reference().deck.tolist() == [3, 4, 5]
    edited.score = [[2], [1, 3]]
    assert edited.nuggets == [2, 4] and edited.to_reference().score == [[2], [1, 3]]
    with pytest.raises(StateError, match=r"hands must have shape \(2, 39\)"):
        edited.hands = np.zeros((2, 38))
    with pytest.raises(StateError, match="deck must be"):
        edited.deck = np.zeros(53)
    assert game.deck_size != 2 and game.fingerprint() != edited.fingerprint()  # the original is untouched


def test_views_and_renderings_match_the_reference() -> None:
    game = se.new_game(se.GameConfig(game="duel"), np.random.default_rng(4))
    for a in range(12):
        se.apply_action(game, int(np.flatnonzero(se.legal_action_mask(game))[-1 - a % 2]), inplace=True)
    ref = game.to_reference()
    for seat in (0, 1):
        view, expected = se.player_view(game, seat), duel_view(ref, seat)
        assert vars(view).keys() == vars(expected).keys()
        for name, value in vars(expected).items():
            assert np.array_equal(getattr(view, name), value) if isinstance(value, np.ndarray) else (
                getattr(view, name) == value), name  # fmt: skip
        assert se.render_text(game, seat) == render.render_text(ref, seat)
    assert se.render_text(game) == render.render_text(ref)
    game.config.variant.check_state(game)  # the reference's invariants hold
    broken = game.clone()
    broken.reach[0] = 0
    with pytest.raises(StateError, match="reach of player 0"):
        broken.config.variant.check_state(broken)
    with pytest.raises(StateError, match="expected a CoreDuelState"):
        game.config.variant.check_state(ref)


def test_hand_built_positions_are_core_states_and_the_env_adopts_references() -> None:
    s = make_duel_state(None, hands={0: {"MAP": 2}, 1: {}}, scores={1: [3]}, current=0)
    assert isinstance(s, CoreDuelState) and int(s.hands[0].sum()) == 2 and s.nuggets == [0, 3]
    seg = se.action_layout(s.config).offset["map"]
    assert se.legal_action_mask(s)[seg : seg + 6].all()
    after = se.apply_action(s, seg + 2)
    assert bool(after.peeked[0, 2]) and after.events[-1][0] == 5  # MAP event, slot 2
    env = se.raw_env(game="duel")
    env.reset(options={"game": s.to_reference()})  # a reference state is adopted by the environment
    assert isinstance(env.game, CoreDuelState) and env.game.fingerprint() == s.fingerprint()
    env.step(seg + 2)
    assert env.game.fingerprint() == after.fingerprint()
    cfg = se.GameConfig(game="duel")
    single = se.SingleSeatEnv(lambda seat: make_agent("random", cfg), game="duel")
    obs, _ = single.reset(seed=5)
    assert isinstance(single.game, CoreDuelState) and obs.shape == single.observation_space.shape
    assert np.array_equal(obs, se.encode_observation(single.game, single.seat))
    done = False
    while not done:
        _, _, done, _, _ = single.step(int(np.flatnonzero(single.action_masks())[0]))
    assert single.game.game_over
