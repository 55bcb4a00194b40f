"""Information leaks: resampling what a seat cannot see leaves its observation, mask and rendering unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_states

from saboteur_env import legal_action_mask, render_image, render_text
from saboteur_env.base.cards import NUM_DECK_KINDS
from saboteur_env.base.observation import encode_observation, rebuild_history
from saboteur_env.base.state import EventType, GameState


def resample_hidden(state: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """A state that agrees with everything ``seat`` may know, with everything else redrawn."""
    s = state.clone()
    p = s.config.num_players
    others = [q for q in range(p) if q != seat]
    # Other hands and the draw pile: one pool of unseen cards, redealt with the same hand sizes.
    deck = s.round_decks[s.round]
    rest = deck[s.deck_pos :]
    pool = np.concatenate([np.repeat(np.arange(NUM_DECK_KINDS), s.hands[q]) for q in others] + [rest])
    rng.shuffle(pool)
    k = 0
    for q in others:
        size = int(s.hands[q].sum())
        s.hands[q] = np.bincount(pool[k : k + size], minlength=NUM_DECK_KINDS)
        k += size
    deck[s.deck_pos :] = pool[k:]
    # Other roles and the left-over role card.
    role_pool = np.array([s.roles[q] for q in others] + [s.leftover_role])
    rng.shuffle(role_pool)
    s.roles[others] = role_pool[:-1]
    s.leftover_role = int(role_pool[-1])
    # Face-down goals the seat has not peeked.
    unknown = [g for g in range(3) if not s.goal_revealed[g] and not s.peeked[seat, g]]
    s.goal_kind[unknown] = rng.permutation(s.goal_kind[unknown])
    # Later rounds, the gold deck order, other seats' nuggets, other seats' face-down discards.
    for r in range(s.round + 1, s.config.rounds):
        s.round_decks[r] = rng.permutation(s.round_decks[r])
        s.round_roles[r] = rng.permutation(s.round_roles[r])
        s.round_goals[r] = rng.permutation(s.round_goals[r])
    left = np.flatnonzero(s.gold_left)
    s.gold_deck[left] = rng.permutation(s.gold_deck[left])
    s.gold_nuggets[others] = rng.integers(0, 20, size=len(others))
    ev = s.events[: s.num_events]
    hidden = (ev[:, 0] == EventType.DISCARD) & (ev[:, 1] != seat)
    ev[hidden, 2] = rng.integers(0, NUM_DECK_KINDS, size=int(hidden.sum()))
    rebuild_history(s)
    s._cache.clear()
    return s


@pytest.mark.parametrize("num_players", [3, 4, 7, 10])
def test_leak__resampled_hidden_information_is_invisible(num_players):
    rng = np.random.default_rng(100 + num_players)
    checked = 0
    for state in random_states(num_players, seed=num_players, every=9):
        for seat in range(num_players):
            other = resample_hidden(state, seat, rng)
            assert np.array_equal(encode_observation(state, seat), encode_observation(other, seat))
            assert render_text(state, seat) == render_text(other, seat)
            assert render_text(state, None) == render_text(other, None)
            if seat == state.current:
                assert np.array_equal(legal_action_mask(state), legal_action_mask(other))
                assert np.array_equal(render_image(state, seat), render_image(other, seat))
            checked += 1
    assert checked > 20


def test_leak__resampling_changes_hidden_state():
    """The resampler really changes hidden information (so the test above can fail)."""
    state = next(s for i, s in enumerate(random_states(5, seed=1, every=5)) if i == 3)
    rng = np.random.default_rng(0)
    changed = 0
    for _ in range(10):
        other = resample_hidden(state, 0, rng)
        changed += not np.array_equal(other.hands[1:], state.hands[1:]) or not np.array_equal(other.roles, state.roles)
        assert render_text(state, "omniscient") != render_text(other, "omniscient") or changed == 0
    assert changed >= 5


def test_leak__own_private_information_is_visible():
    """Each seat sees its own hand and role (a view that showed nothing would pass the leak test)."""
    state = next(random_states(4, seed=2))
    for seat in range(4):
        flipped = state.clone()
        flipped.roles[seat] = 1 - flipped.roles[seat]
        assert not np.array_equal(encode_observation(state, seat), encode_observation(flipped, seat))
