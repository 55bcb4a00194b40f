"""Saboteur 2 as users play it runs on the compiled core (saboteur_env.sab2.compiled): the public API against the
numpy reference engine, set-up from the caller's generator, errors, copies and edits, hand-built positions."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

import saboteur_env as se
from saboteur_env.sab2 import observation
from saboteur_env.sab2 import reference as rules
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.compiled import CoreSab2State, CoreSab2Variant
from saboteur_env.sab2.positions import make_sab2_state
from saboteur_env.sab2.state import Phase, Sab2State
from saboteur_env.sab2.view import sab2_view


def _same_view(a: object, b: object) -> bool:
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not (np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y):
            return False
    return True


def _biased(mask: np.ndarray, segment_of: np.ndarray, rng: np.random.Generator) -> int:
    """Half the time uniform over the legal segments first, so passes, option C, thefts and steals show up."""
    legal = np.flatnonzero(mask)
    if rng.random() < 0.5:
        return int(rng.choice(legal))
    seg = segment_of[legal]
    return int(rng.choice(legal[seg == rng.choice(np.unique(seg))]))


CONFIGS = [
    se.GameConfig(game="sab2", num_players=2),
    se.GameConfig(game="sab2", num_players=5, rules="official", reward="win"),
    se.GameConfig(game="sab2", num_players=12, margin=1, history_length=30),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"p{c.num_players}")
def test_api_games_equal_the_reference(cfg: se.GameConfig) -> None:
    segment_of = rules.action_layout(cfg).segment_of
    phases: set[int] = set()
    for seed in range(3):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        game, ref = se.new_game(cfg, r1), rules.new_game(cfg, r2)
        assert isinstance(game, CoreSab2State) and game.fingerprint() == ref.fingerprint()
        policy = np.random.default_rng(100 + seed)
        while not ref.game_over:
            mask = se.legal_action_mask(game)
            assert np.array_equal(mask, rules.legal_action_mask(ref)) and not mask.flags.writeable
            seat = game.current if game.num_decisions % 7 else (game.current + 1) % cfg.num_players
            assert np.array_equal(se.encode_observation(game, seat), observation.encode_observation(ref, seat))
            if game.num_decisions % 11 == 0:
                assert np.array_equal(se.encode_state(game), observation.encode_state(ref))
                assert _same_view(se.player_view(game, seat), sab2_view(ref, seat))
            a = _biased(mask, segment_of, policy)
            if game.num_decisions % 13 == 0:
                pure = se.apply_action(game, a)
                assert pure is not game and pure.num_decisions == game.num_decisions + 1
            se.apply_action(game, a, inplace=True)
            rules.apply_action(ref, a, inplace=True)
            phases.add(int(ref.phase))
            assert np.array_equal(game.last_rewards, ref.last_rewards) and game.round_just_ended == ref.round_just_ended
            assert (game.current, game.phase, game.pending, game.free_target, game.round, game.deck_pos) == (
                ref.current, ref.phase, ref.pending, ref.free_target, ref.round, ref.deck_pos)  # fmt: skip
            assert game.thieves == ref.thieves and game.round_summary == ref.round_summary
            assert game.num_events == len(ref.events)
            if game.round_just_ended:
                assert game.events == ref.events and game.round_results == ref.round_results
                assert np.array_equal(game.round_start_gold, ref.round_start_gold)
            if game.num_decisions % 97 == 0:
                assert game.fingerprint() == ref.fingerprint()
        assert game.game_over and game.fingerprint() == ref.fingerprint()
        assert game.round_results == ref.round_results and len(game.round_results) == cfg.rounds
        assert np.array_equal(se.returns(game), ref.gold.astype(np.float64))
        assert not se.legal_action_mask(game).any()
        assert r1.integers(1 << 62) == r2.integers(1 << 62)  # the caller's generator continues identically
    assert {Phase.PASS, Phase.FREE} <= phases  # the multi-decision phases were compared (thefts: below)


def test_other_bit_generators_draw_the_same_game_in_numpy() -> None:
    cfg = se.GameConfig(game="sab2", num_players=6)
    mk = lambda: np.random.Generator(np.random.MT19937(9))  # noqa: E731
    g1, g2 = mk(), mk()
    game = se.new_game(cfg, g1)
    assert isinstance(game, CoreSab2State) and game.fingerprint() == rules.new_game(cfg, g2).fingerprint()
    assert g1.integers(1 << 62) == g2.integers(1 << 62)
    # and the game plays on in the core like the reference
    ref = rules.new_game(cfg, mk())
    for _ in range(40):
        a = int(np.flatnonzero(se.legal_action_mask(game))[-1])
        se.apply_action(game, a, inplace=True)
        rules.apply_action(ref, a, inplace=True)
    assert game.fingerprint() == ref.fingerprint()


def test_illegal_actions_are_explained_and_change_nothing() -> None:
    cfg = se.GameConfig(game="sab2", num_players=4)
    game = se.new_game(cfg, np.random.default_rng(1))
    before = game.fingerprint()
    layout = rules.action_layout(cfg)
    stop = layout.offset["stop"]  # only legal during a pass
    with pytest.raises(se.IllegalActionError, match=f"illegal action {stop} .* for seat 0 in phase turn: "):
        se.apply_action(game, stop, inplace=True)
    ref = game.to_reference()
    with pytest.raises(se.IllegalActionError) as core_err:
        se.apply_action(game, stop)
    with pytest.raises(se.IllegalActionError) as ref_err:
        rules.apply_action(ref, stop)
    assert str(core_err.value) == str(ref_err.value)  # the reference's explanation, word for word
    for bad in (10**6, -1):
        with pytest.raises(ValueError, match="out of range"):
            se.apply_action(game, bad)
    with pytest.raises(ValueError, match=r"seat.7 is out of range; valid: 0\.\.3"):
        se.encode_observation(game, 7)
    assert game.fingerprint() == before
    # a pass: the stop becomes legal; any card play is refused with the phase named
    discard = layout.offset["discard"] + int(np.flatnonzero(game.hands[0])[0])
    se.apply_action(game, discard, inplace=True)
    assert game.phase == Phase.PASS and se.legal_action_mask(game)[stop]
    with pytest.raises(se.IllegalActionError, match="in phase pass: finish the pass"):
        se.apply_action(game, layout.offset["map"])
    ended = se.new_game(cfg, np.random.default_rng(2))
    ended.game_over = True
    with pytest.raises(se.GameOverError):
        se.apply_action(ended, 0)


def test_copies_pickles_and_edits() -> None:
    cfg = se.GameConfig(game="sab2", num_players=4)
    game = se.new_game(cfg, np.random.default_rng(2))
    for a in range(30):
        se.apply_action(game, int(np.flatnonzero(se.legal_action_mask(game))[a % 3]), inplace=True)
    while game.phase != Phase.TURN:
        se.apply_action(game, int(np.flatnonzero(se.legal_action_mask(game))[-1]), inplace=True)
    for twin in (game.clone(), pickle.loads(pickle.dumps(game)), copy.deepcopy(game)):
        assert twin.fingerprint() == game.fingerprint() and twin.batch.arenas["i8"] is not game.batch.arenas["i8"]
        assert np.array_equal(se.legal_action_mask(twin), se.legal_action_mask(game))
        se.apply_action(twin, int(np.flatnonzero(se.legal_action_mask(twin))[0]), inplace=True)
        assert twin.num_decisions == game.num_decisions + 1  # the copy is independent
    edited = game.clone()
    edited.hands[edited.current] = 0  # an edit through the views, then board_changed() as with the reference
    edited.board_changed()
    assert not se.legal_action_mask(edited).any()
    assert se.legal_action_mask(game).any()
    # Assigning a field writes into the game (as the reference's attribute assignment does), checked by numpy.
    edited.gold = [1, 2, 3, 4]
    assert edited.to_reference().gold.tolist() == [1, 2, 3, 4] and se.returns(edited).tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError):
        edited.gold = [1, 2]
    edited.thieves = [3, 1]
    assert edited.thieves == [3, 1] and edited.to_reference().thieves == [3, 1]
    with pytest.raises(se.StateError, match=r"thieves=.* 0\.\.3"):
        edited.thieves = [9]
    with pytest.raises(ValueError, match="5"):
        edited.phase = 5
    assert edited.broken.dtype == np.bool_ and edited.reach.dtype == np.uint8
    n = edited.num_events
    assert n > 0 and edited.events == edited.to_reference().events
    edited.event_rows[n - 1, 3] = 2  # an edit of the log, then board_changed(): the rebuilt list follows it
    edited.board_changed()
    assert edited.events[-1][3] == 2 and edited.events == edited.to_reference().events
    listed = edited.events
    listed.clear()  # the list is a copy
    assert len(edited.events) == n


def test_hand_built_positions_are_core_states_and_play_as_the_reference() -> None:
    cfg = se.GameConfig(game="sab2", num_players=4)
    board = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?
"""
    roles = [R.BLUE_DIGGER, R.SABOTEUR, R.GREEN_DIGGER, R.BOSS]
    s = make_sab2_state(cfg, board, roles=roles, hands={0: {"T05": 1}, 1: {}, 2: {}, 3: {}}, theft={1: 4},
                        goals=("stone_a", "gold", "stone_b"))  # fmt: skip
    assert isinstance(s, CoreSab2State) and int(s.hands[0].sum()) == 1 and s.theft.tolist() == [0, 1, 0, 0]
    ref = s.to_reference()
    assert isinstance(ref, Sab2State) and not isinstance(ref, CoreSab2State)
    layout = rules.action_layout(cfg)
    place = int(np.flatnonzero(se.legal_action_mask(s))[0])
    assert layout.decode(place).segment == "place" and np.array_equal(se.legal_action_mask(s),
                                                                      rules.legal_action_mask(ref))  # fmt: skip
    # Every legal placement: the core and the reference agree on the next state (some reach the gold: a theft).
    thefts = 0
    for a in np.flatnonzero(se.legal_action_mask(s)):
        nxt, want = se.apply_action(s, int(a)), rules.apply_action(ref, int(a))
        assert nxt.fingerprint() == want.fingerprint() and nxt.round_summary == want.round_summary
        thefts += nxt.phase == Phase.THEFT
    assert thefts > 0
    env = se.raw_env(game="sab2", num_players=4)
    env.reset(options={"game": ref})  # a reference state is adopted by the environment
    assert isinstance(env.game, CoreSab2State) and env.game.fingerprint() == s.fingerprint()
    env.step(place)
    assert env.game.fingerprint() == rules.apply_action(ref, place).fingerprint()


def test_registry_and_state_checks() -> None:
    cfg = se.GameConfig(game="sab2", num_players=3)
    assert isinstance(cfg.variant, CoreSab2Variant) and cfg.variant.state_type is CoreSab2State
    game = se.new_game(cfg, np.random.default_rng(4))
    cfg.variant.check_state(game)
    assert "Saboteur" in repr(game) or "CoreSab2State" in repr(game)
    assert se.render_text(game) == se.render_text(game.to_reference())
    with pytest.raises(se.StateError, match="expected a CoreSab2State"):
        cfg.variant.check_state(game.to_reference())
    broken = game.clone()
    broken.reach[:] = 0  # an edit that breaks the maze's reach: the reference's check finds it
    with pytest.raises(se.StateError, match="reach does not match"):
        cfg.variant.check_state(broken)


def test_what_a_seat_sees_does_not_depend_on_hidden_state() -> None:
    """Resampling a core state's hidden information (tests/hidden.py) changes neither the seat's observation, view
    nor (for the seat to act) mask, while the full state does change (the check can fail)."""
    from tests.hidden import resample_sab2

    cfg = se.GameConfig(game="sab2", num_players=4)
    game = se.new_game(cfg, np.random.default_rng(6))
    rng = np.random.default_rng(7)
    segment_of = rules.action_layout(cfg).segment_of
    checked = changed = 0
    while not game.game_over:
        if game.num_decisions % 23 == 0 or (game.phase != Phase.TURN and game.num_decisions % 4 == 0):
            for seat in range(cfg.num_players):
                other = resample_sab2(game, seat, rng)
                assert isinstance(other, CoreSab2State)
                assert np.array_equal(se.encode_observation(other, seat), se.encode_observation(game, seat))
                assert _same_view(se.player_view(other, seat), se.player_view(game, seat))
                if seat == game.current:
                    assert np.array_equal(se.legal_action_mask(other), se.legal_action_mask(game))
                changed += not np.array_equal(se.encode_state(other), se.encode_state(game))
                checked += 1
        se.apply_action(game, _biased(se.legal_action_mask(game), segment_of, rng), inplace=True)
    assert checked > 40 and changed > checked // 2
