"""Rollouts to the end of the round: every game of a :class:`~saboteur_env.core.batch.Batch` played by one batched
policy, in lock-step, one kernel call per step (issue 35: search on a blueprint).

:func:`rollout` steps all live rows with the game's lock-step kernel (``Batch.step_call``: it applies the actions
and writes every row's next mask and float observation of the seat to act), asks the policy once per step for the
logits of every legal action of every live row (``policy.logits(obs, rows, cols)``: one numpy forward over the
rows, no Python per game), draws each row's action, and stops a row when its round ends (or its game, the last
round). What comes back is each row's rewards per seat from the first action to that end: the round's gold.

Randomness (common random numbers). Each row reads a *stream* ``s``: the uniforms of
``np.random.default_rng([seed, s])``, one per step (a stream's numbers do not depend on the other rows of the batch),
and a row picks its action by inverting the cumulative distribution of its policy at its step's uniform. Rows of
the same stream (a determinization, once per candidate move) therefore play identically as long as their games are
identical, and the game's own draws come from each row's generator words, copied with the row. So two rows with
the same state and the same first action have the same rollout, and rows that differ only in their first action
differ only through what that action changed: the comparison of candidate moves is paired.

Finished rows are moved out of the stepped range in bulk (``Batch.move_rows``, when a quarter of the range is
finished) so that the cost follows the live rows; until then they are stepped along and ignored.

The core knows no game and no agent: the policy is any object with a ``logits`` method (see
:class:`RolloutPolicy`), e.g. ``agents.blueprint``'s networks. A policy that keeps state per game (beliefs built
from each game's event log, :class:`StatefulRolloutPolicy`) also gets ``begin(batch)`` once, whose per-row arrays
move with their rows, and ``follow(batch, n)`` before each ``logits`` call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.errors import ConfigError, StateError
from saboteur_env.core import common as kcommon
from saboteur_env.core.batch import Batch, padded

_OBS_FLOAT = 0  # the lock-step's obs_mode: float observations (what the shipped networks read)
UNIFORMS_CHUNK = 64  # steps of uniforms drawn per stream at a time
COMPACT_EVERY = 4  # move the live rows first once this fraction (1/4) of the stepped range is finished


class RolloutPolicy(Protocol):
    """A policy evaluated for many games at once."""

    def logits(
        self, obs: NDArray[np.float32], rows: NDArray[np.int64], cols: NDArray[np.int64]
    ) -> NDArray[np.floating[Any]]:
        """The logit of action ``cols[i]`` in game ``rows[i]`` (``obs[r]``: the float observation of the seat to act
        in game ``r``); ``rows`` is sorted and every game has at least one entry."""
        ...


class StatefulRolloutPolicy(RolloutPolicy, Protocol):
    """A policy with state per game, e.g. beliefs followed from each game's public event log."""

    def begin(self, batch: Batch) -> tuple[NDArray[Any], ...]:
        """Start the state of every game of ``batch``: arrays with one row per game (the loop moves them with their
        games)."""
        ...

    def follow(self, batch: Batch, n: int) -> None:
        """Bring the state of games ``0..n-1`` (the live ones) up to their games, before ``logits`` is asked."""
        ...


@dataclass
class RolloutResult:
    """Per row of the batch (in its order when :func:`rollout` was called)."""

    returns: NDArray[np.float64]  # (B, P): rewards per seat from the first action to the round's end
    steps: NDArray[np.int64]  # (B,): decisions played
    finished: NDArray[np.bool_]  # (B,): the round (or the game) ended; False: cut by max_steps or the deadline
    estimated: NDArray[np.bool_] | None = None  # (B,): cut rows whose returns include the ``leaf`` estimate


# leaf(batch, slots, rows) -> (len(slots), P): the estimated rewards per seat from the cut to the round's end of the
# games in batch slots ``slots`` (the caller's rows ``rows``), added to their returns.
Leaf = Callable[[Batch, NDArray[np.int64], NDArray[np.int64]], NDArray[np.floating[Any]]]


def pick(
    rows: NDArray[np.int64], cols: NDArray[np.int64], logits: NDArray[np.floating[Any]], u: NDArray[np.float64],
    n: int, temperature: float,
) -> NDArray[np.int64]:  # fmt: skip
    """One action per game ``0..n-1`` from its legal entries (``rows`` sorted, every game present): sampled from
    ``softmax(logits / temperature)`` by inverting its cumulative distribution at ``u[game]`` (the entries in
    ``cols`` order), or the first highest logit when ``temperature == 0``. Vectorised over all games."""
    counts = np.bincount(rows, minlength=n)
    if counts.size != n or (counts == 0).any():
        raise StateError("every game needs at least one legal action")
    ends = np.cumsum(counts)
    starts = ends - counts
    z = np.asarray(logits, dtype=np.float64)
    zmax = np.maximum.reduceat(z, starts)
    if temperature == 0:
        idx = np.minimum.reduceat(np.where(z == zmax[rows], np.arange(z.size), z.size), starts)
        return cols[idx]
    w = np.exp((z - zmax[rows]) / temperature)
    c = np.cumsum(w)
    before = c[starts] - w[starts]
    target = before + u[:n] * (c[ends - 1] - before)
    idx = np.searchsorted(c, target, side="right")
    return cols[np.clip(idx, starts, ends - 1)]


def rollout(
    batch: Batch,
    policy: RolloutPolicy,
    *,
    first_actions: NDArray[np.integer[Any]] | None = None,
    streams: NDArray[np.integer[Any]] | None = None,
    seed: int = 0,
    temperature: float = 1.0,
    max_steps: int | None = None,
    deadline: float | None = None,
    leaf: Leaf | None = None,
) -> RolloutResult:
    """Play every game of ``batch`` (changed in place) with ``policy`` to the end of its round.

    ``first_actions``: the first move of every row (the candidate moves; checked against the masks, ValueError
    naming the first illegal one) instead of the policy's. ``streams``: the random stream of each row (default:
    its own); rows of one stream read the same uniforms (common random numbers, see the module docstring).
    ``seed``: a non-negative int, the streams' root seed. ``temperature``: 0 plays the policy's highest logit, > 0
    samples ``softmax(logits / temperature)``. ``max_steps``: decisions at most per row (None: to the round's end;
    the game's length bounds it). ``deadline``: a ``time.perf_counter()`` value after which no step starts (the rows
    still playing come back unfinished). ``leaf``: called once on the rows still playing when the loop stops (by
    ``max_steps`` or the deadline) with their batch slots; its estimates of their remaining rewards are added to
    their returns and ``estimated`` marks them (a value function cuts the rollouts short).
    """
    if not (isinstance(temperature, int | float) and 0 <= temperature <= 100):
        raise ConfigError(f"temperature={temperature!r} is out of range; valid: 0..100")
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
        raise ConfigError(f"max_steps={max_steps!r} is out of range; valid: an int >= 1 or None")
    b, k = batch.batch, batch.k
    p = int(batch.config.num_players)
    a = batch.num_actions
    stream = np.arange(b, dtype=np.int64) if streams is None else np.asarray(streams, dtype=np.int64)
    if stream.shape != (b,) or stream.min() < 0:
        raise ConfigError(f"streams must hold {b} non-negative stream ids (got shape {stream.shape})")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"seed={seed!r} is out of range; valid: an int >= 0")
    used, stream = np.unique(stream, return_inverse=True)  # only the streams the rows read get a generator
    gens = [np.random.default_rng([int(seed), int(s)]) for s in used]
    table = np.zeros((used.size, UNIFORMS_CHUNK))
    buf: dict[str, NDArray[Any]] = {
        "mask": np.zeros((b, padded(a)), dtype=np.int8),
        "num_legal": np.zeros(b, dtype=np.int64),
        "obs_f": np.zeros((b, batch.obs_size), dtype=np.float32),
        "obs_c": np.zeros((1, batch.compact_size), dtype=np.int16),
        "rewards": np.zeros((b, p), dtype=np.float32),
        "done": np.zeros(b, dtype=np.int8),
        "seats": np.zeros(b, dtype=np.int64),
        "final_returns": np.zeros((b, p), dtype=np.float32),
    }
    # The lock-step reads the previous step's mask (its legality check) and keeps its output rows incrementally:
    # start them in full (the batch's caches were forgotten when it was built, see Batch.from_states).
    batch.masks(buf["mask"], buf["num_legal"])
    buf["seats"][:] = batch.scalar(k.SC_CURRENT)
    batch.observe(buf["seats"], buf["obs_f"])
    begin = getattr(policy, "begin", None)
    follow = getattr(policy, "follow", None)
    state: tuple[NDArray[Any], ...] = tuple(begin(batch)) if begin is not None else ()
    acts = np.zeros(b, dtype=np.int64)
    sc = batch.field("sc")
    row_id = np.arange(b, dtype=np.int64)  # the caller's row of each slot (slots move when finished rows leave)
    alive = np.ones(b, dtype=bool)
    returns = np.zeros((b, p), dtype=np.float64)
    steps = np.zeros(b, dtype=np.int64)
    finished = np.zeros(b, dtype=bool)
    if first_actions is not None:
        first = np.asarray(first_actions)
        if first.shape != (b,) or first.dtype.kind not in "iu":
            raise ConfigError(f"first_actions must be {b} integer action ids (got {first.shape}, {first.dtype})")
        acts[:] = first
        bad = batch.check(buf["mask"], acts)
        if bad >= 0:
            raise ConfigError(f"first action {int(first[bad])} of row {bad} is not legal there")
    n = b
    call = batch.step_call(0, n, acts, buf, _OBS_FLOAT)
    t = 0
    while True:
        if t % UNIFORMS_CHUNK == 0:  # each stream's next uniforms, one per step, drawn a chunk at a time
            for i, g in enumerate(gens):
                table[i] = g.random(UNIFORMS_CHUNK)
        u = table[:, t % UNIFORMS_CHUNK]
        if t > 0 or first_actions is None:
            rows, cols = _legal(buf["mask"], n)
            if follow is not None:
                follow(batch, n)
            acts[:n] = pick(rows, cols, policy.logits(buf["obs_f"][:n], rows, cols), u[stream[row_id[:n]]], n,
                            temperature)  # fmt: skip
        bad = call()
        if bad >= 0:  # unreachable: the actions come from the masks the kernel wrote
            raise StateError(f"the core refused the action of row {int(row_id[bad])}")
        t += 1
        live = alive[:n]
        ids = row_id[:n][live]
        returns[ids] += buf["rewards"][:n][live]
        steps[ids] += 1
        ended = (buf["done"][:n] != 0) | (sc[:n, k.SC_JUST_ENDED] != 0)
        finished[row_id[:n][live & ended]] = True
        live &= ~ended
        left = int(live.sum())
        if left == 0 or (max_steps is not None and t >= max_steps):
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if (n - left) * COMPACT_EVERY >= n:
            keep = np.flatnonzero(live)
            batch.move_rows(keep, (buf["mask"], buf["num_legal"], buf["obs_f"], buf["seats"], *state))
            row_id[:left] = row_id[keep]
            alive[:left] = True
            n = left
            call = batch.step_call(0, n, acts, buf, _OBS_FLOAT)
    estimated = None
    if leaf is not None:
        estimated = np.zeros(b, dtype=bool)
        slots = np.flatnonzero(alive[:n] & ~finished[row_id[:n]])
        if slots.size:
            ids = row_id[slots]
            est = np.asarray(leaf(batch, slots, ids), dtype=np.float64)
            if est.shape != (slots.size, p):
                raise ConfigError(f"leaf returned shape {est.shape}; expected {(slots.size, p)}")
            returns[ids] += est
            estimated[ids] = True
    return RolloutResult(returns=returns, steps=steps, finished=finished, estimated=estimated)


def _legal(mask: NDArray[np.int8], n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Row and action of every legal entry of mask rows ``0..n-1`` (padded rows: the pad bytes are 0)."""
    flat = mask[:n].reshape(-1)  # the first n rows of a C-contiguous buffer: contiguous
    nnz = int(np.count_nonzero(flat))
    rows, cols = np.empty(nnz, dtype=np.int64), np.empty(nnz, dtype=np.int64)
    if nnz:
        kcommon.nonzero_flat(flat, mask.shape[1], rows, cols)
    return rows, cols
