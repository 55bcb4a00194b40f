"""The Duel's beliefs (agents.duel.beliefs): goal slots and the opponent's hand against brute force, the tracker
on real games against the hidden truth, and invariance under resampling hidden state."""

from __future__ import annotations

from collections import deque
from itertools import combinations

import numpy as np
import pytest

from agents.duel.beliefs import (
    DuelBelief,
    brute_force_slot_goals,
    hand_distribution,
    slot_goal_probabilities,
)
from saboteur_env import raw_env
from saboteur_env.duel import cards as dc
from saboteur_env.duel.view import duel_view
from tests.hidden import resample_duel


@pytest.mark.parametrize(("pool", "known"), [
    ([0, 1, 2, 3, 4, 5, 6], [None, 3, None, None, 6, None]),
    ([2, 5, 7, 9, 11, 13, 15, 17], [None, None, 17, None, None, 2]),
    ([1, 2, 3, 4, 5, 6], [None] * 6),
])  # fmt: skip
def test_slot_goals_match_brute_force(pool: list[int], known: list[int | None]) -> None:
    np.testing.assert_allclose(slot_goal_probabilities(pool, known), brute_force_slot_goals(pool, known), atol=1e-12)


def test_slot_goals_hand_built() -> None:
    p = slot_goal_probabilities(list(range(18)), [4, None, None, None, None, 9])
    assert p[0, 4] == 1.0 and p[5, 9] == 1.0
    np.testing.assert_allclose(p[1], [0.0 if g in (4, 9) else 1 / 16 for g in range(18)])
    expected = (dc.GOAL_NUGGETS.sum() - dc.GOAL_NUGGETS[4] - dc.GOAL_NUGGETS[9]) / 16
    assert p[2] @ dc.GOAL_NUGGETS == pytest.approx(expected)


def test_slot_goals_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="repeats"):
        slot_goal_probabilities([1, 1, 2], [None])
    with pytest.raises(ValueError, match="members of the pool"):
        slot_goal_probabilities([1, 2, 3], [5, None])
    with pytest.raises(ValueError, match="unknown slots"):
        slot_goal_probabilities([1, 2], [None, None, None])


@pytest.mark.parametrize(("unseen", "h"), [([2, 0, 1, 3], 3), ([1, 1, 1, 1, 1], 2), ([4, 2], 6), ([3, 1], 0)])
def test_hand_matches_brute_force(unseen: list[int], h: int) -> None:
    cards = np.repeat(np.arange(len(unseen)), unseen)
    hands = [np.bincount(cards[list(c)], minlength=len(unseen)) for c in combinations(range(len(cards)), h)]
    counts = np.array(hands, dtype=float)
    expected, holds = hand_distribution(np.array(unseen), h)
    np.testing.assert_allclose(expected, counts.mean(0), atol=1e-12)
    np.testing.assert_allclose(holds, (counts > 0).mean(0), atol=1e-12)


def test_hand_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="hand_size=4"):
        hand_distribution(np.array([1, 2]), 4)
    with pytest.raises(ValueError, match="non-negative"):
        hand_distribution(np.array([1, -1]), 0)
    with pytest.raises(ValueError, match="seat=2"):
        DuelBelief(raw_env(game="duel").config, 2)


def play(seed: int, stop: int | None = None):
    """Greedy duel; each seat's DuelBelief is fed from its own views and its own actions."""
    from agents import make_agent

    env = raw_env(game="duel")
    env.reset(seed=seed)
    cfg = env.config
    agents = [make_agent("greedy", cfg) for _ in range(2)]
    for i, a in enumerate(agents):
        a.reset(i, 2, seed + i)
    beliefs = [DuelBelief(cfg, i) for i in range(2)]
    for step, name in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.split("_")[-1])
        beliefs[seat].update(duel_view(env.unwrapped.game, seat))
        yield env.unwrapped.game, beliefs, seat
        if stop is not None and step >= stop:
            return
        action = agents[seat].act(obs["observation"], obs["action_mask"])
        beliefs[seat].note_action(action)
        env.step(action)


@pytest.mark.parametrize("seed", [0, 5])
def test_tracker_agrees_with_the_hidden_truth(seed: int) -> None:
    steps = 0
    for game, beliefs, seat in play(seed):
        b = beliefs[seat]
        steps += 1
        assert b.consistent
        revealed_now = {int(game.goal_card[s]) for s in range(6) if game.goal_revealed[s]}  # out after this round
        assert b.goals_out == set(np.flatnonzero(game.goal_out).tolist()) - revealed_now
        opp = game.hands[1 - seat]
        assert np.all(opp <= b.unseen) and int(opp.sum()) == b.opp_hand  # the hand lies in the unseen cards
        deck = np.bincount(game.deck[game.deck_pos :], minlength=dc.NUM_DECK_KINDS)
        assert np.all(deck <= b.unseen)
        probs = b.goal_probabilities()
        for slot in range(6):
            assert probs[slot, int(game.goal_card[slot])] > 0  # the truth is never ruled out
            if game.goal_revealed[slot] or game.peeked[seat, slot]:
                assert probs[slot, int(game.goal_card[slot])] == 1.0
    assert steps > 50


def test_invariant_under_resampling_hidden_state() -> None:
    rng = np.random.default_rng(1)
    game, _, seat = deque(play(3, stop=15), maxlen=1)[0]
    ref = DuelBelief(game.config, seat).update(duel_view(game, seat))
    changed = 0
    for _ in range(5):
        other = resample_duel(game, seat, rng)
        changed += not np.array_equal(other.hands[1 - seat], game.hands[1 - seat])
        b = DuelBelief(game.config, seat).update(duel_view(other, seat))
        np.testing.assert_array_equal(b.goal_probabilities(), ref.goal_probabilities())
        np.testing.assert_array_equal(b.opponent_hand()[0], ref.opponent_hand()[0])
    assert changed > 0


# ---- the believer agent (agents.duel.ladder.DuelBeliever) ----
def test_believer_values_goals_by_the_pool_and_breaks_what_cannot_be_repaired() -> None:
    from agents.duel.ladder import DuelBeliever

    game, _, seat = deque(play(2, stop=12), maxlen=1)[0]
    agent = DuelBeliever(game.config)
    agent.reset(seat, 2, 0)
    view = duel_view(game, seat)
    agent.belief.update(view)
    np.testing.assert_allclose(agent._slot_values(view), agent.belief.expected_nuggets())
    unseen = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
    unseen[dc.KIND_REPAIR[0]] = unseen[dc.KIND_REPAIR[2]] = 1  # repairs for tools 0 and 2 may be out there
    unseen[0] = 10
    agent.belief.unseen, agent.belief.opp_hand = unseen, 3
    layout = agent.layout
    breaks = [layout.offset["break"] + t for t in range(3)]
    assert layout.decode(agent._pick_break(view, breaks)).tool == 1  # no repair for tool 1 is unseen


def test_believer_actions_do_not_leak() -> None:
    from agents.duel.ladder import DuelBeliever
    from saboteur_env.duel.observation import encode_observation
    from saboteur_env.duel.reference import legal_action_mask

    rng = np.random.default_rng(2)
    game, _, _ = deque(play(4, stop=14), maxlen=1)[0]
    seat = game.current

    def action(state) -> int:
        agent = DuelBeliever(state.config)
        agent.reset(seat, 2, 99)
        return agent.act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))

    ref = action(game)
    for _ in range(4):
        assert action(resample_duel(game, seat, rng)) == ref
