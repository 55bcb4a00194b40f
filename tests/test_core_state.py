"""The base game users play runs on the compiled core (saboteur_env.base.compiled): the public API against the
numpy reference engine, set-up from the caller's generator, errors, copies, hand-built positions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import saboteur_env as se
from saboteur_env.base import observation
from saboteur_env.base import reference as rules
from saboteur_env.base.compiled import CoreGameState
from saboteur_env.base.positions import make_state


@pytest.mark.parametrize("players", [3, 6, 10])
def test_api_games_equal_the_reference(players: int) -> None:
    cfg = se.GameConfig(num_players=players)
    for seed in range(4):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        game, ref = se.new_game(cfg, r1), rules.new_game(cfg, r2)
        assert isinstance(game, CoreGameState) and game.fingerprint() == ref.fingerprint()
        policy = np.random.default_rng(seed)
        while not ref.game_over:
            mask = se.legal_action_mask(game)
            assert np.array_equal(mask, rules.legal_action_mask(ref)) and not mask.flags.writeable
            assert np.array_equal(se.encode_observation(game, game.current),
                                  observation.encode_observation(ref, ref.current))  # fmt: skip
            assert np.array_equal(se.encode_state(game), observation.encode_state(ref))
            a = int(policy.choice(np.flatnonzero(mask)))
            pure = se.apply_action(game, a)
            assert pure is not game
            se.apply_action(game, a, inplace=True)
            rules.apply_action(ref, a, inplace=True)
            assert pure.fingerprint() == game.fingerprint()
            assert np.array_equal(game.last_rewards, ref.last_rewards) and game.round_just_ended == ref.round_just_ended
        assert game.game_over and game.round_results == ref.round_results
        assert se.final_ranking(game) == rules.final_ranking(ref)
        assert r1.integers(1 << 62) == r2.integers(1 << 62)  # the caller's generator continues identically


def test_other_bit_generators_draw_the_same_game_in_numpy() -> None:
    cfg = se.GameConfig(num_players=5)
    mk = lambda: np.random.Generator(np.random.MT19937(9))  # noqa: E731
    assert se.new_game(cfg, mk()).fingerprint() == rules.new_game(cfg, mk()).fingerprint()


def test_illegal_actions_are_explained_and_change_nothing() -> None:
    game = se.new_game(se.GameConfig(num_players=4), np.random.default_rng(1))
    before = game.fingerprint()
    illegal = int(np.flatnonzero(~se.legal_action_mask(game))[0])
    with pytest.raises(se.IllegalActionError, match=f"illegal action {illegal} .* for seat 0: "):
        se.apply_action(game, illegal, inplace=True)
    with pytest.raises(ValueError, match="out of range"):
        se.apply_action(game, 10**6)
    assert game.fingerprint() == before


def test_copies_pickles_and_edits() -> None:
    game = se.new_game(se.GameConfig(num_players=4), np.random.default_rng(2))
    for a in range(20):
        se.apply_action(game, int(np.flatnonzero(se.legal_action_mask(game))[a % 3]), inplace=True)
    for copy in (game.clone(), pickle.loads(pickle.dumps(game))):
        assert copy.fingerprint() == game.fingerprint() and copy.batch.arenas["i8"] is not game.batch.arenas["i8"]
    edited = game.clone()
    edited.hands[edited.current] = 0  # an edit through the views, then board_changed() as with the reference
    edited.board_changed()
    assert not se.legal_action_mask(edited).any()
    assert se.legal_action_mask(game).any()


def test_hand_built_positions_are_core_states() -> None:
    s = make_state(None, hands={0: {"MAP": 1}}, current=0)
    assert isinstance(s, CoreGameState) and s.hands[0].tolist()[26] == 1
    env = se.raw_env(num_players=4)
    env.reset(options={"game": s.to_reference()})  # a reference state is adopted by the environment
    assert isinstance(env.game, CoreGameState) and env.game.fingerprint() == s.fingerprint()
