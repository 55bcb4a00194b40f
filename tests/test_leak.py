"""Information the base game must show: each seat sees its own private information.

The leak test (resampling what a seat cannot know changes nothing it sees) runs for every registered variant in
tests/test_conformance.py, with the resamplers in tests/hidden.py; a view that showed nothing would pass it, so
this checks the other direction.
"""

from __future__ import annotations

import numpy as np
from conftest import random_states

from saboteur_env import encode_observation, render_text  # the public API: the game users play


def test_leak__own_private_information_is_visible():
    """Each seat sees its own hand and role."""
    state = next(random_states(4, seed=2))
    for seat in range(4):
        flipped = state.clone()
        flipped.roles[seat] = 1 - flipped.roles[seat]
        assert not np.array_equal(encode_observation(state, seat), encode_observation(flipped, seat))
        assert render_text(state, seat) != render_text(flipped, seat)
        other = state.clone()
        kinds = np.flatnonzero(other.hands[seat])
        other.hands[seat, kinds[0]] -= 1
        other.hands[seat, (kinds[0] + 1) % other.hands.shape[1]] += 1
        assert not np.array_equal(encode_observation(state, seat), encode_observation(other, seat))
