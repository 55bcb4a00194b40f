"""The numba port of numpy's PCG64 and Generator.permutation (saboteur_env.core.rng) against numpy itself."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from saboteur_env.core import jit
from saboteur_env.core import rng as crng


# Cached under the package's digest (``jit.cached``): they link ``core.rng``'s helpers, and numba's own stamp is
# this file only.
@jit.cached
@nb.njit(cache=True)
def _perms(words, sizes, out):  # type: ignore[no-untyped-def]
    for k in range(sizes.shape[0]):
        n = sizes[k]
        for i in range(n):
            out[k, i] = i % 100
        crng.shuffle(words, out[k, :n])


@pytest.mark.parametrize("seed", [0, 1, 7, 2**31 - 1, 2**40 + 3, 123456789012])
def test_permutations_and_final_state_match_numpy(seed: int) -> None:
    sizes = np.array([67, 67, 5, 11, 3, 28, 52, 112, 1, 2, 200], dtype=np.int64)
    rng = np.random.default_rng(seed)
    words = crng.words_of(rng)
    out = np.zeros((len(sizes), 200), dtype=np.int8)
    _perms(words, sizes, out)
    for k, n in enumerate(sizes):
        expected = rng.permutation(np.arange(n) % 100)
        assert np.array_equal(out[k, :n], expected), (seed, n)
    assert np.array_equal(words, crng.words_of(rng))  # the generator state after all draws, buffered half included


def test_many_seeds() -> None:
    sizes = np.array([67, 5, 3, 28], dtype=np.int64)
    out = np.zeros((4, 67), dtype=np.int8)
    for seed in range(300):
        rng = np.random.default_rng(seed)
        words = crng.words_of(rng)
        _perms(words, sizes, out)
        for k, n in enumerate(sizes):
            assert np.array_equal(out[k, :n], rng.permutation(np.arange(n) % 100))


def test_written_back_words_continue_the_stream() -> None:
    rng = np.random.default_rng(5)
    words = crng.words_of(rng)
    out = np.zeros((1, 67), dtype=np.int8)
    _perms(words, np.array([67]), out)
    copy = np.random.default_rng(0)
    crng.set_words(copy, words)
    rng.permutation(67)
    assert copy.integers(0, 2**62, 20).tolist() == rng.integers(0, 2**62, 20).tolist()


@jit.cached
@nb.njit(cache=True)
def _interval(words, mx):  # type: ignore[no-untyped-def]
    return crng.interval(words, mx)


def test_interval_edges() -> None:
    words = crng.words_of(np.random.default_rng(3))
    assert _interval(words, 0) == 0
    draws = [_interval(words, 1) for _ in range(200)]
    assert set(draws) == {0, 1}


def test_self_check_and_errors() -> None:
    assert crng.self_check()
    with pytest.raises(ValueError, match="MT19937"):
        crng.words_of(np.random.Generator(np.random.MT19937(0)))
    w = crng.seed_words([1, 2])
    assert w.shape == (2, 6) and w.dtype == np.uint64
    assert np.array_equal(w[1], crng.words_of(np.random.default_rng(2)))
