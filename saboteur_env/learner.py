"""``LearnerVectorEnv``: ``num_envs`` games, one learner seat each, as a real ``gymnasium.vector.VectorEnv``.

The multi-agent :class:`~saboteur_env.vector.VectorEnv` hands out whichever seat is to act and every seat's rewards;
this view gives a single-agent learner one seat per game (``learner_seat``: a fixed seat, ``"rotate"`` or
``"random"`` per game) and plays all the other seats inside, in batch, with the given opponents, so that every
``step`` returns at the learner's next decision in every game:

* ``step(actions)``: ``actions[b]`` is the learner's action in game ``b``; then the opponents play (their turns
  stepped in batch by ``VectorEnv.step_where`` until every game is back at its learner's seat). ``rewards[b]`` is
  everything the learner's seat earned from its decision to its next one (or to the game's end), whoever acted.
* ``terminations[b]``: the game ended; ``truncations`` is always False (every game ends by the rules).
* Autoreset (``autoreset_mode``, also in ``metadata``): ``SAME_STEP`` (default; what a CleanRL-style loop expects):
  in the step that ends game ``b``, ``obs[b]`` and the masks already belong to the slot's next game, at its
  learner's first decision. ``NEXT_STEP`` (Gymnasium's default, which its observation wrappers such as
  ``NormalizeObservation`` require): the step after the end is the reset step (``actions[b]`` ignored, reward 0,
  not terminated). In both, the observation returned with ``terminations[b]`` is the next game's first one: the core
  deals the next game inside the step, so the finished game's final state is never observed; nothing bootstraps
  from a terminated game and there is no truncation, so no ``final_obs`` is given. Rewards the learner's seat earns
  in a new game before its first decision (none in the shipped games) are added to its first step's reward.
* ``infos``: ``"action_mask"`` (``num_envs x num_actions`` int8, the learner's legal actions), ``"seat"`` (the
  learner's seat in the current game); in a step where games end, ``"final_returns"`` (their final scores per seat)
  and ``"final_seat"`` (the learner's seat in them) with ``"_final_returns"`` marking the ended games, and the episode
  statistics of Gymnasium's ``RecordEpisodeStatistics`` under ``stats_key`` (``{"r", "l", "t"}`` and ``"_episode"``;
  ``stats_key=None`` leaves them to that wrapper).
* ``obs_format="float"``: the learner's observation (the float layout of the AEC environment); ``"dict"``:
  ``{"observation": ..., "action_mask": ...}`` for libraries that read the mask from the observation.
* ``copy=True`` (the default) returns fresh observations and masks; ``copy=False`` read-only views of buffers that
  the next ``step`` overwrites (as ``VectorEnv``'s: for code that copies them into its own storage at once, like
  the PufferLib binding).

Opponents (keyword ``opponents``, one of):

* ``"random"`` (default): uniformly random legal actions (``LegalSampler``, one kernel call per opponent turn).
* a callable ``seat -> agent`` with ``reset(seat, num_players, seed)`` and ``act(observation, action_mask)`` (the
  agents protocol, as ``SingleSeatEnv`` takes it: ``lambda s: make_agent("heuristic", config)``). One agent per game
  slot and seat, reset at each new game; scripted agents play one decision at a time.
* ``opponent_policy=`` a batched callable ``(obs[n, D] float32, mask[n, A] int8, seats[n] int64) -> actions[n]``:
  one call per opponent turn for all games whose opponents are to act (a network, or a frozen self-play snapshot).
  It is probed once at construction on one real observation of a deal of this game; a policy that fails there, or
  answers with something other than one legal action id per row, is refused before any game starts.

Seeds: ``reset(seed=s)`` deals slot ``b``'s games as ``VectorEnv.reset(seed=s)`` does. The opponents' seeds are
sealed (``saboteur_env.common.seeding``): from ``opponent_secret`` (default: 128 bits from ``os.urandom`` per env)
and the game's key, never from ``s``; the same ``opponent_secret`` and ``seed`` give the same games.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ConfigError, IllegalActionError
from saboteur_env.common.seeding import SecretError, check_secret, draw_secret, seat_seeds
from saboteur_env.vector import LegalSampler, VectorEnv, _read_only

BatchPolicy = Callable[[NDArray[np.float32], NDArray[np.int8], NDArray[np.int64]], Any]
LEARNER_SEATS = ("rotate", "random")
OBS_FORMATS = ("float", "dict")
MAX_ENVS = 1 << 20


class LearnerVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games with one learner seat each (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012 - Gymnasium's type

    def __init__(
        self,
        num_envs: int,
        *,
        opponents: str | Callable[[int], Any] = "random",
        opponent_policy: BatchPolicy | None = None,
        learner_seat: int | str = "rotate",
        obs_format: str = "float",
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        stats_key: str | None = "episode",
        opponent_secret: int | None = None,
        copy: bool = True,
        num_threads: int = 1,
        config: GameConfig | None = None,
        **config_kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or not 1 <= num_envs <= MAX_ENVS:
            raise ConfigError(f"num_envs={num_envs!r} is out of range; valid: 1..{MAX_ENVS}")
        if config is not None and config_kwargs:
            raise ConfigError(f"give either config or config fields, not both (got {sorted(config_kwargs)})")
        cfg = config if config is not None else GameConfig(**config_kwargs)
        if cfg.claims:
            raise ConfigError("claims=True is not supported by LearnerVectorEnv yet (use SingleSeatEnv)")
        n = cfg.num_players
        if isinstance(learner_seat, str):
            if learner_seat not in LEARNER_SEATS:
                raise ConfigError(f"learner_seat={learner_seat!r} is not valid; valid: a seat 0..{n - 1}, "
                                  f"{', '.join(map(repr, LEARNER_SEATS))}")  # fmt: skip
        elif isinstance(learner_seat, bool) or not isinstance(learner_seat, int | np.integer) or not (
            0 <= learner_seat < n
        ):
            raise ConfigError(f"learner_seat={learner_seat!r} is out of range for {n} players; valid: a seat "
                              f"0..{n - 1}, 'rotate' or 'random'")  # fmt: skip
        if obs_format not in OBS_FORMATS:
            raise ConfigError(f"obs_format={obs_format!r} is not valid; valid: {', '.join(map(repr, OBS_FORMATS))}")
        modes = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value)), None)
        if mode is None:
            raise ConfigError(f"autoreset_mode={autoreset_mode!r} is not valid; valid: "
                              f"{', '.join(str(m) for m in modes)} (or their values)")  # fmt: skip
        self.autoreset_mode = mode
        # Per instance: Gymnasium's wrappers read the mode from metadata.
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        if stats_key is not None and (not isinstance(stats_key, str) or not stats_key):
            raise ConfigError(f"stats_key={stats_key!r} must be a non-empty string or None")
        try:
            self._secret = draw_secret() if opponent_secret is None else check_secret(opponent_secret,
                                                                                      "opponent_secret")
        except SecretError as err:
            raise ConfigError(str(err)) from None
        if opponent_policy is not None and not (isinstance(opponents, str) and opponents == "random"):
            raise ConfigError("give either opponents or opponent_policy, not both")
        if opponent_policy is not None and not callable(opponent_policy):
            raise ConfigError(f"opponent_policy={opponent_policy!r} must be a callable (obs, mask, seats) -> actions")
        if isinstance(opponents, str):
            if opponents != "random":
                raise ConfigError(f"opponents={opponents!r} is not valid; valid: 'random', a callable seat -> agent, "
                                  "or opponent_policy=(obs, mask, seats) -> actions")  # fmt: skip
        elif not callable(opponents):
            raise ConfigError(f"opponents={opponents!r} must be 'random' or a callable seat -> agent")

        self.config = cfg
        self.num_envs = b = int(num_envs)
        self.num_players = n
        self.learner_seat = learner_seat
        self.obs_format, self.stats_key = obs_format, stats_key
        self.copy = bool(copy)
        self._venv = VectorEnv(b, config=cfg, obs_format="float", num_threads=num_threads, copy=False)
        self.num_actions = a = self._venv.num_actions
        self._policy = opponent_policy
        self._factory = None if isinstance(opponents, str) else opponents
        self._agents: list[dict[int, Any]] = [{} for _ in range(b)]
        self._sampler = LegalSampler(seat_seeds(1, ("learner_vector", "random"), self._secret)[0])

        box = cast(gym.spaces.Box, self._venv.single_observation_space)
        self.obs_size = int(box.shape[0])
        self.obs_high: NDArray[np.float32] = np.asarray(box.high, dtype=np.float32)  # bounds of the float layout
        mask_space = gym.spaces.Box(0, 1, (a,), dtype=np.int8)
        self.single_observation_space = (
            box if obs_format == "float" else gym.spaces.Dict({"observation": box, "action_mask": mask_space})
        )
        self.single_action_space = gym.spaces.Discrete(a)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, b)
        self.action_space = gym.spaces.MultiDiscrete(np.full(b, a))

        slots = np.arange(b)
        self._slots = slots
        self._ls = np.zeros(b, dtype=np.int64)  # the learner's seat in each slot's current game
        self._games = np.zeros(b, dtype=np.int64)  # games started per slot since reset
        self._deal = np.zeros(b, dtype=np.int64)  # each slot's deal seed (a key for the sealed opponent seeds)
        self._carry = np.zeros(b, dtype=np.float32)  # learner rewards of a new game before its first decision
        self._ret = np.zeros(b, dtype=np.float64)
        self._len = np.zeros(b, dtype=np.int64)
        self._t0 = np.zeros(b, dtype=np.float64)
        self._seat_rng = np.random.default_rng()
        self._pending = np.zeros(b, dtype=bool)  # NEXT_STEP: the game ended last step; this step is the reset step
        self._started = False
        self._check_opponents()

    # ---- construction checks ------------------------------------------------------------------------------------
    def _check_opponents(self) -> None:
        """Opponents that do not fit the game are refused here, before any game starts."""
        n, cfg = self.num_players, self.config
        if self._factory is not None:
            for seat in range(n):
                try:
                    agent = self._factory(seat)
                except Exception as err:
                    raise ConfigError(f"opponents({seat}) failed: {type(err).__name__}: {err}") from err
                for method in ("reset", "act"):
                    if not callable(getattr(agent, method, None)):
                        raise ConfigError(f"opponents({seat}) returned {type(agent).__name__}, which has no "
                                          f"{method}(); an agent needs reset(seat, num_players, seed) and "
                                          "act(observation, action_mask)")  # fmt: skip
                own = getattr(agent, "config", None)
                if isinstance(own, GameConfig) and (own.game, own.num_players) != (cfg.game, cfg.num_players):
                    raise ConfigError(f"opponents({seat}) is an agent for game={own.game!r} with {own.num_players} "
                                      f"players; this env plays game={cfg.game!r} with {cfg.num_players} players")
                self._agents[0][seat] = agent
        if self._policy is not None:
            # One real observation (a throwaway deal of a fixed public seed): a network built for another game or
            # player count fails here, not in the middle of training.
            obs, info = self._venv.reset(seed=0)
            o, m, s = obs[:1].copy(), np.ascontiguousarray(info["action_mask"][:1]), info["seat"][:1].copy()
            try:
                out = self._policy(o, m, s)
            except Exception as err:
                raise ConfigError(f"opponent_policy failed on a batch of 1 observation of shape {o.shape[1:]} "
                                  f"(game={cfg.game!r}, {n} players, {self.num_actions} actions): "
                                  f"{type(err).__name__}: {err}") from err  # fmt: skip
            acts = _as_actions(out, 1, "opponent_policy", ConfigError)
            if not 0 <= acts[0] < self.num_actions or not m[0, acts[0]]:
                raise ConfigError(f"opponent_policy answered action {int(acts[0])} on a probe observation, which is "
                                  f"not legal there (valid: the mask's actions, ids 0..{self.num_actions - 1})")
            self._started = False

    # ---- the vector API -----------------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """New games in every slot, each advanced to its learner's first decision."""
        if options:
            raise ConfigError(f"reset options are not supported by LearnerVectorEnv (got {sorted(options)})")
        seeds = self._venv._seeds(seed)  # the same checks and per-slot seeds as VectorEnv.reset
        self._deal[:] = seeds
        self._seat_rng = np.random.default_rng(seeds)  # the learner's seat is public: drawn from the deal's seeds
        self._venv.reset(seed=seeds)
        self._games[:] = 0
        self._carry[:] = 0.0
        self._ret[:] = 0.0
        self._len[:] = 0
        self._t0[:] = time.perf_counter()
        self._pending[:] = False
        self._new_games(self._slots)
        self._started = True
        reward = np.zeros(self.num_envs, dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=bool)
        self._advance(reward, ended, {})
        self._carry += reward  # a reward before the first decision goes to the first step
        return self._out_obs(), self._info({}, ended)

    def step(self, actions: Any) -> tuple[Any, NDArray[np.float32], NDArray[np.bool_], NDArray[np.bool_], dict]:
        if not self._started:
            raise ConfigError("call reset() before step()")
        b = self.num_envs
        acts = _as_actions(actions, b, "actions", IllegalActionError)
        a = self.num_actions
        mask = self._venv._masks()[0]
        live = ~self._pending  # NEXT_STEP: a game that ended last step takes this step as its reset (action ignored)
        bad = np.flatnonzero(((acts < 0) | (acts >= a)) & live)
        if bad.size:
            g = int(bad[0])
            raise IllegalActionError(f"action {int(acts[g])} of game {g} is out of range; valid: 0..{a - 1}")
        bad = np.flatnonzero((mask[self._slots, np.clip(acts, 0, a - 1)] == 0) & live)
        if bad.size:
            g = int(bad[0])
            raise IllegalActionError(f"action {int(acts[g])} of game {g} is not legal for the learner (seat "
                                     f"{int(self._ls[g])}; see info['action_mask']); no game was changed")
        if live.all():  # every game is at its learner's decision: a plain lock-step
            _, r, term, _, info = self._venv.step(acts)
        else:
            _, r, term, _, info = self._venv.step_where(acts, live)
        reward = np.where(live, self._carry + r[self._slots, self._ls], 0.0).astype(np.float32)
        self._carry[live] = 0.0
        ended = term.copy()
        final: dict[str, NDArray[Any]] = {}
        if ended.any():
            self._finish(np.flatnonzero(ended), info, final)
        self._advance(reward, ended, final)
        self._ret[live] += reward[live]
        self._len[live] += 1
        info_out = self._info(final, ended)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._pending = ended.copy()
        return self._out_obs(), reward, ended, np.zeros(b, dtype=bool), info_out

    def close_extras(self, **kwargs: Any) -> None:
        venv = getattr(self, "_venv", None)  # absent when the constructor refused its arguments (then __del__ closes)
        if venv is not None:
            venv.close()

    # ---- internals ----------------------------------------------------------------------------------------------
    def _advance(self, reward: NDArray[np.float32], ended: NDArray[np.bool_], final: dict[str, NDArray[Any]]) -> None:
        """The opponents play, in batch, until every game is at its learner's decision. Rewards of the learner's seat
        go to ``reward`` (or to ``_carry`` in a game started during this call); games that end are marked in
        ``ended`` and restarted at once (same-step autoreset)."""
        venv = self._venv
        seats = venv._buf["seats"]
        while True:
            active = seats != self._ls
            if not active.any():
                return
            acts = self._opponent_actions(active)
            _, r, term, _, info = venv.step_where(acts, active)
            gain = r[self._slots, self._ls]
            np.add(reward, gain, out=reward, where=~ended)
            np.add(self._carry, gain, out=self._carry, where=ended)
            if term.any():
                again = np.flatnonzero(term & ended)
                if again.size:  # a new game ended before its learner's first decision: nothing for the learner
                    self._carry[again] = 0.0
                    self._new_games(again)
                first = np.flatnonzero(term & ~ended)
                if first.size:
                    ended[first] = True
                    self._finish(first, info, final)

    def _finish(self, slots: NDArray[np.int64], info: dict[str, Any], final: dict[str, NDArray[Any]]) -> None:
        """Games ``slots`` ended in this step: record their results and start the learner's next games."""
        if not final:
            final["final_returns"] = np.zeros((self.num_envs, self.num_players), dtype=np.float32)
            final["final_seat"] = np.full(self.num_envs, -1, dtype=np.int64)
        final["final_returns"][slots] = info["final_returns"][slots]
        final["final_seat"][slots] = self._ls[slots]
        self._new_games(slots)

    def _new_games(self, slots: NDArray[np.int64]) -> None:
        """The learner's seat and fresh opponents for the games just dealt in ``slots``."""
        n = self.num_players
        if isinstance(self.learner_seat, str) and self.learner_seat == "rotate":
            self._ls[slots] = (slots + self._games[slots]) % n
        elif isinstance(self.learner_seat, str):
            self._ls[slots] = self._seat_rng.integers(n, size=slots.size)
        else:
            self._ls[slots] = int(self.learner_seat)
        if self._factory is not None:
            for b in slots.tolist():
                key = ("learner_vector", int(self._deal[b]), b, int(self._games[b]))
                seeds = seat_seeds(n, key, self._secret)  # sealed: from the secret, never from the deal seed alone
                agents, ls = self._agents[b], int(self._ls[b])
                for s in range(n):
                    if s == ls:
                        continue
                    if s not in agents:
                        agents[s] = self._factory(s)
                    agents[s].reset(s, n, seeds[s])
        self._games[slots] += 1

    def _opponent_actions(self, active: NDArray[np.bool_]) -> NDArray[np.int64]:
        venv = self._venv
        buf = venv._buf
        if self._policy is None and self._factory is None:
            return self._sampler.sample(venv)
        acts = np.zeros(self.num_envs, dtype=np.int64)
        idx = np.flatnonzero(active)
        mask = buf["mask"]
        a = self.num_actions
        if self._policy is not None:
            out = self._policy(buf["obs_f"][idx], mask[idx, :a], buf["seats"][idx].copy())
            chosen = _as_actions(out, idx.size, "opponent_policy", IllegalActionError)
        else:
            chosen = np.array([self._agents[b][int(buf["seats"][b])].act(buf["obs_f"][b].copy(), mask[b, :a].copy())
                               for b in idx.tolist()], dtype=np.int64)  # fmt: skip
        ok = (chosen >= 0) & (chosen < a)
        ok[ok] = mask[idx[ok], chosen[ok]] == 1
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            who = "opponent_policy" if self._policy is not None else "the opponent agent"
            raise IllegalActionError(f"{who} chose action {int(chosen[j])} for seat {int(buf['seats'][idx[j]])} in "
                                     f"game {int(idx[j])}, which is not legal there (valid ids 0..{a - 1}, masked)")
        acts[idx] = chosen
        return acts

    def _out_obs(self) -> Any:
        obs = self._venv._buf["obs_f"]
        obs = obs.copy() if self.copy else _read_only(obs)
        if self.obs_format == "dict":
            return {"observation": obs, "action_mask": self._mask()}
        return obs

    def _mask(self) -> NDArray[np.int8]:
        mask = self._venv._buf["mask"][:, : self.num_actions]
        return mask.copy() if self.copy else _read_only(mask)

    def _info(self, final: dict[str, NDArray[Any]], ended: NDArray[np.bool_]) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self._mask(), "seat": self._ls.copy()}
        if final:
            info.update(final)
            info["_final_returns"] = info["_final_seat"] = ended.copy()
        if ended.any():
            now = time.perf_counter()
            if self.stats_key is not None:
                info[self.stats_key] = {
                    "r": np.where(ended, self._ret, 0.0),
                    "l": np.where(ended, self._len, 0),
                    "t": np.where(ended, np.round(now - self._t0, 6), 0.0),
                }
                info["_" + self.stats_key] = ended.copy()
            self._ret[ended] = 0.0
            self._len[ended] = 0
            self._t0[ended] = now
        return info

    def action_masks(self) -> NDArray[np.bool_]:
        """The learner's legal actions per game as bools (sb3-contrib's ``action_masks`` convention)."""
        return self._venv._buf["mask"][:, : self.num_actions].astype(bool)


def _as_actions(out: Any, n: int, what: str, error: type[Exception]) -> NDArray[np.int64]:
    """``out`` as ``n`` int64 action ids (a torch tensor too: anything ``np.asarray`` reads)."""
    if hasattr(out, "detach"):  # a torch tensor, without importing torch
        out = out.detach().cpu().numpy()
    arr = np.asarray(out)
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        raise error(f"{what} must give {n} integer action ids, one per row (got shape {arr.shape}, {arr.dtype})")
    return arr.astype(np.int64)


__all__ = ["BatchPolicy", "LearnerVectorEnv"]
