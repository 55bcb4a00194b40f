"""The learner-seat targets of ``python -m experiments.bench`` (issue 38): ``learner`` and ``puffer``.

* ``learner``: :class:`~saboteur_env.learner.LearnerVectorEnv` of B games, one learner seat each (``rotate``), the
  other seats played inside by random legal moves (one in-kernel ``LegalSampler`` call per opponent turn, batched
  over the games). Counted: learner steps (one per game per ``step``); every step also plays the opponents' turns.
* ``puffer``: PufferLib's ``Serial`` and ``Multiprocessing`` vectorisation over
  :class:`~saboteur_env.puffer.SaboteurPuffer`, B games split over ``PUFFER_WORKERS`` environments (one per worker
  process with ``Multiprocessing``, all of them stepped each time). Counted: agent steps, each a learner step.

In both the learner's actions are uniform over the legal ones, drawn from the mask it is handed (``info`` there,
the observation's tail here) with :func:`random_legal`: the mask read a trainer pays for, in the timed loop.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.learner import LearnerVectorEnv
from saboteur_env.vector import legal_indices

PUFFER_BACKENDS = ("Serial", "Multiprocessing")
PUFFER_WORKERS = 2  # the development machine's cores


def random_legal(mask: NDArray[Any], rng: np.random.Generator) -> NDArray[np.int64]:
    """One uniformly random legal action per row of a 0/1 byte (or bool) mask."""
    rows, cols = legal_indices(mask)
    counts = np.bincount(rows, minlength=mask.shape[0])
    starts = np.cumsum(counts) - counts
    return cols[starts + (rng.random(mask.shape[0]) * counts).astype(np.int64)]


def bench_learner(num_players: int, num_envs: int, seconds: float, seed: int,
                  **config: Any) -> tuple[float, float, dict[str, Any]]:  # fmt: skip
    """Learner steps/s, finished games/s and facts of a ``LearnerVectorEnv`` run of at least ``seconds``."""
    rng = np.random.default_rng(seed)
    env = LearnerVectorEnv(num_envs, num_players=num_players, opponent_secret=seed + 1, stats_key=None, **config)
    try:
        _, info = env.reset(seed=seed)
        for _ in range(3):  # warm caches (and compile on first use)
            _, _, _, _, info = env.step(random_legal(info["action_mask"], rng))
        steps = games = 0
        start = time.perf_counter()
        while True:
            _, _, done, _, info = env.step(random_legal(info["action_mask"], rng))
            games += int(done.sum())
            steps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds and steps >= 5:
                break
    finally:
        env.close()
    facts = {"num_envs": num_envs, "opponents": "random", "counted": "learner steps"}
    return steps * num_envs / elapsed, games / elapsed, facts


def bench_puffer(backend: str, num_players: int, num_envs: int, seconds: float, seed: int,
                 **config: Any) -> tuple[float, float, dict[str, Any]]:  # fmt: skip
    """Agent steps/s and finished games/s of PufferLib's ``backend`` over ``SaboteurPuffer`` (B = ``num_envs``
    games in ``PUFFER_WORKERS`` environments), for at least ``seconds``."""
    import pufferlib.vector

    from saboteur_env.puffer import SaboteurPuffer

    if num_envs % PUFFER_WORKERS:
        raise ValueError(f"--num-envs {num_envs} must be a multiple of {PUFFER_WORKERS} for the puffer target")
    kwargs: dict[str, Any] = {"num_workers": PUFFER_WORKERS} if backend == "Multiprocessing" else {}
    vecenv = pufferlib.vector.make(SaboteurPuffer, backend=getattr(pufferlib.vector, backend),
                                   num_envs=PUFFER_WORKERS, seed=seed,
                                   env_kwargs={"num_envs": num_envs // PUFFER_WORKERS, "num_players": num_players,
                                               "opponent_secret": seed + 1, **config}, **kwargs)  # fmt: skip
    rng = np.random.default_rng(seed)
    actions = vecenv.single_action_space.n
    try:
        vecenv.async_reset(seed=seed)

        def turn() -> int:
            obs, _, terminals, *_ = vecenv.recv()
            vecenv.send(random_legal(obs[:, -actions:] > 0.5, rng))
            return int(terminals.sum())

        for _ in range(3):
            turn()
        steps = games = 0
        start = time.perf_counter()
        while True:
            games += turn()
            steps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds and steps >= 5:
                break
    finally:
        vecenv.close()
    facts = {"num_envs": num_envs, "backend": backend, "workers": PUFFER_WORKERS, "opponents": "random",
             "counted": "learner steps"}
    return steps * num_envs / elapsed, games / elapsed, facts
