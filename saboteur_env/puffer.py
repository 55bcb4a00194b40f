"""PufferLib binding: :class:`SaboteurPuffer`, a native ``pufferlib.PufferEnv`` over :class:`LearnerVectorEnv`.

PufferLib's native API (PufferLib 3: ``pufferlib-core``) is a batch of agents with shared buffers: one agent per game
here, the learner's seat (``LearnerVectorEnv``: the other seats are played inside by the given opponents). The games
are stepped by the compiled core in one lock-step, so ``pufferlib.vector.make(SaboteurPuffer, backend=...)`` runs at
the learner-seat env's speed in each worker (``Serial`` or ``Multiprocessing``; ``backend=pufferlib.PufferEnv`` for
one process).

* Observation: one float32 ``Box`` of ``D + A``: the learner's observation (``D``), then its action mask as 0/1
  (``A``), since PufferLib's buffers carry a single array per agent: ``split(obs)`` separates them.
* Action: ``Discrete(A)``; rewards, terminals (same-step autoreset), truncations (never) as ``LearnerVectorEnv``.
* ``infos``: a list with one dict of means (``episode_return``, ``episode_length``, ``games``) when games ended in the
  step (PufferLib's loggers average dicts of scalars), empty otherwise.
* Seeds: ``reset(seed=s)`` deals slot ``b`` from seed ``s * num_envs + b``. PufferLib's vectorisation seeds its
  workers ``s, s + 1, ...``: spaced this way their games never share a deal (``LearnerVectorEnv.reset(seed=s)``
  deals slot ``b`` from ``s + b``, so two workers would play the same deals one slot apart).

Requires the ``puffer`` extra (``pufferlib-core``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.errors import ConfigError
from saboteur_env.learner import LearnerVectorEnv

try:
    import pufferlib
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "saboteur_env.puffer needs PufferLib 3 (the puffer extra: pip install -e '.[puffer]', or "
        "pip install --no-deps pufferlib-core to keep a torch of your own)"
    ) from err


class SaboteurPuffer(pufferlib.PufferEnv):  # pufferlib ships no type information (mypy: Any)
    """``num_envs`` games as ``num_envs`` PufferLib agents (the module docstring); keyword arguments go to
    :class:`LearnerVectorEnv` (``opponents``, ``opponent_policy``, ``learner_seat``, ``opponent_secret``, game config
    fields ...)."""

    def __init__(self, num_envs: int = 64, buf: Any = None, seed: int = 0, **kwargs: Any) -> None:
        fixed = sorted({"obs_format", "autoreset_mode", "copy"} & set(kwargs))
        if fixed:
            raise ConfigError(f"SaboteurPuffer fixes {', '.join(fixed)} (observation then mask, same-step autoreset, "
                              "written into PufferLib's buffers)")  # fmt: skip
        _check_seed(seed)
        self.env = LearnerVectorEnv(num_envs, copy=False, **kwargs)  # _write copies into PufferLib's buffers
        self.obs_size = d = self.env.obs_size
        self.num_actions = a = self.env.num_actions
        high = np.concatenate([self.env.obs_high, np.ones(a, dtype=np.float32)])
        self.single_observation_space = gymnasium.spaces.Box(0.0, high, (d + a,), dtype=np.float32)
        self.single_action_space: gymnasium.spaces.Discrete = gymnasium.spaces.Discrete(a)
        self.num_agents = num_envs
        self.seed = int(seed)
        super().__init__(buf)
        want = (self.num_agents, d + a)
        if self.observations.shape != want or self.actions.shape != (self.num_agents,):
            raise ConfigError(f"buf holds observations of shape {self.observations.shape} and actions of shape "
                              f"{self.actions.shape}; this env needs {want} and ({self.num_agents},) "
                              f"(num_envs={num_envs} games, {d} observation + {a} mask entries)")  # fmt: skip

    def split(self, obs: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The observations and the boolean masks of a batch of this env's observations."""
        return obs[..., : self.obs_size], obs[..., self.obs_size :] > 0.5

    def reset(self, seed: int | None = None) -> tuple[NDArray[np.float32], list[dict[str, float]]]:
        s = self.seed if seed is None else _check_seed(seed)
        b = self.num_agents
        obs, info = self.env.reset(seed=[s * b + i for i in range(b)])  # disjoint from the workers s+1, s+2, ...
        self._write(obs, info["action_mask"])
        return self.observations, []

    def step(self, actions: Any) -> tuple[Any, ...]:
        obs, reward, term, trunc, info = self.env.step(actions)  # checks the batch: size, integer ids, legality
        self._write(obs, info["action_mask"])
        self.rewards[:] = reward
        self.terminals[:] = term
        self.truncations[:] = trunc
        infos: list[dict[str, float]] = []
        if term.any():
            stats = info["episode"]
            infos.append({"episode_return": float(stats["r"][term].mean()),
                          "episode_length": float(stats["l"][term].mean()), "games": float(term.sum())})  # fmt: skip
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def _write(self, obs: NDArray[np.float32], mask: NDArray[np.int8]) -> None:
        self.observations[:, : self.obs_size] = obs
        self.observations[:, self.obs_size :] = mask

    def close(self) -> None:
        self.env.close()


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"seed={seed!r} must be a non-negative int")
    return int(seed)


__all__ = ["SaboteurPuffer"]
