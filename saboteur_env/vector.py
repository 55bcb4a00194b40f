"""``VectorEnv``: ``num_envs`` games stepped in lock-step by the compiled core (one kernel call per step).

Multi-agent vector convention (Gymnasium's vector API where it fits):

* ``reset(seed)`` returns ``(obs, info)``; ``step(actions)`` returns ``(obs, rewards, terminations, truncations,
  info)``. ``obs[b]`` is the observation of the seat to act in game ``b`` (``info["seat"][b]``), and only that
  seat's: a policy never sees another seat's private information. ``info["action_mask"][b]`` is that seat's
  legal actions.
* ``rewards`` has shape ``(num_envs, num_players)``: what **every** seat earned by this step (the nuggets, or
  +1/-1, of a round end). A seat's return is the sum over the steps, whoever acted; a trainer assigns them to each
  seat's own transitions (issue 14's per-seat turn accounting).
* **Same-step automatic reset** (Gymnasium's ``AutoresetMode.SAME_STEP``): when game ``b`` ends,
  ``terminations[b]`` is True, ``rewards[b]`` holds the last round's rewards, ``info["final_returns"][b]`` the
  final scores (nuggets per seat) of the finished game, and ``obs[b]``, ``info["seat"][b]`` and
  ``info["action_mask"][b]`` already belong to the slot's next game. ``truncations`` is always False (every game
  ends by the rules within ``config.max_game_length`` decisions).
* Seeds: ``reset(seed=s)`` seeds slot ``b`` with ``np.random.default_rng(s + b)`` (a list gives one seed per
  slot; ``None`` draws fresh entropy). The slot's first game is then exactly the game ``new_game(config,
  np.random.default_rng(s + b))`` deals, and each automatic reset deals the next game from the same generator,
  as ``raw_env.reset()`` without a seed does.
* Observations: ``obs_format="float"`` is the float32 layout of the AEC environment (``observation_layout``),
  ``"compact"`` an int16 vector holding the same information (the ``COMPACT_DOC`` of the game's kernel module:
  ``saboteur_env.<game>.kernels``;
  :func:`expand_compact` rebuilds the float layout), ``"none"`` skips observations (use :meth:`observe`).
  ``mask_format="int8"`` gives ``(num_envs, num_actions)`` int8 rows, ``"bits"`` packed bits
  (``np.packbits(mask, axis=1, bitorder="little")``).
* ``copy=True`` (the default) returns fresh arrays every step; ``copy=False`` returns read-only views of buffers
  that the next step overwrites (the fast path for trainers that copy into their own storage). They are read-only
  because ``step`` rewrites only what changed in its observation and mask rows: a write into them would leak into
  later steps.
* ``num_threads=K`` steps K shards of the batch in K threads (the kernels release the GIL); the results are
  identical to ``K=1`` because every game is stepped by the same code on its own data.
* Claims (``claims=True``, ``saboteur_env.claims``): the claim ids follow the game's, the claims block follows each
  observation (float and compact; ``expand_compact`` keeps it), ``info["seat"][b]`` is the seat with an open report
  window where there is one, a claim leaves its game unchanged (rewards 0, not done), and ``claims_log()`` /
  ``claims.records()`` hold every claim with its truth labels (not for agents). The kernels step the slots that
  play a game action (contiguous runs of them, cut at the shard bounds and run in the shard's thread with
  ``num_threads > 1``: identical results), then the claims are bookkept and the observations of the seats to act
  written in the calling thread. Without claims nothing of this runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from saboteur_env import claims as _claims
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ActionError, ConfigError, IllegalActionError, SeatError, as_int_array
from saboteur_env.core import common as kcommon
from saboteur_env.core import rng as crng
from saboteur_env.core.batch import Batch, kernels, padded

OBS_FORMATS = ("float", "compact", "none")
MASK_FORMATS = ("int8", "bits")
_OBS_MODE = {"float": 0, "compact": 1, "none": 2}


class VectorEnv:
    """``num_envs`` games of one configuration, stepped together (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        *,
        config: GameConfig | None = None,
        obs_format: str = "float",
        mask_format: str = "int8",
        num_threads: int = 1,
        copy: bool = True,
        **config_kwargs: Any,
    ) -> None:
        if config is not None and config_kwargs:
            raise ConfigError(f"give either config or config fields, not both (got {sorted(config_kwargs)})")
        self.config = config if config is not None else GameConfig(**config_kwargs)
        if obs_format not in OBS_FORMATS:
            raise ConfigError(f"obs_format={obs_format!r} is not valid; valid: {', '.join(map(repr, OBS_FORMATS))}")
        if mask_format not in MASK_FORMATS:
            raise ConfigError(f"mask_format={mask_format!r} is not valid; valid: {', '.join(map(repr, MASK_FORMATS))}")
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or not 1 <= num_threads <= 64:
            raise ConfigError(f"num_threads={num_threads!r} is out of range; valid: 1..64")
        # The games play the config without claims; claims are a layer over them (saboteur_env.claims).
        self._batch = Batch(self.config.game_config, num_envs)
        self.num_envs = b = self.batch.batch
        self.num_players = p = self.config.num_players
        self.num_actions = a = self.batch.num_actions
        self.claims: _claims.ClaimsBatch | None = None
        if self.config.claims:
            self.claims = _claims.ClaimsBatch(self.config, b)
            self.num_actions = a = self.claims.lay.num_actions
        self.obs_format, self.mask_format, self.copy = obs_format, mask_format, copy
        self.num_threads = min(num_threads, b)
        bounds = np.linspace(0, b, self.num_threads + 1).astype(int)
        self._shards = [(int(x), int(y)) for x, y in itertools.pairwise(bounds)]
        self._pool = ThreadPoolExecutor(self.num_threads) if self.num_threads > 1 else None
        self._buf: dict[str, NDArray[Any]] = {
            "mask": np.zeros((b, padded(a)), dtype=np.int8),
            "num_legal": np.zeros(b, dtype=np.int64),
            "obs_f": np.zeros((b if obs_format == "float" else 1, self.batch.obs_size), dtype=np.float32),
            "obs_c": np.zeros((b if obs_format == "compact" else 1, self.batch.compact_size), dtype=np.int16),
            "rewards": np.zeros((b, p), dtype=np.float32),
            "done": np.zeros(b, dtype=np.int8),
            "seats": np.zeros(b, dtype=np.int64),
            "final_returns": np.zeros((b, p), dtype=np.float32),
            "bits": np.zeros((b, (a + 7) // 8), dtype=np.uint8),
        }
        if self.claims is not None:
            extra = self.claims.lay.size
            self._buf["cmask"] = np.zeros((b, padded(a)), dtype=np.int8)
            self._buf["cnum"] = np.zeros(b, dtype=np.int64)
            self._buf["obs_fc"] = np.zeros((b if obs_format == "float" else 1, self.batch.obs_size + extra), np.float32)
            self._buf["obs_cc"] = np.zeros((b if obs_format == "compact" else 1, self.batch.compact_size + extra),
                                           np.int16)  # fmt: skip
        # The lock-step's actions (each step's are written here) and its kernel calls per shard, bound once.
        self._acts = np.zeros(b, dtype=np.int64)
        self._step_calls: list[Callable[[], int]] = []
        if self.claims is None:
            mode = _OBS_MODE[obs_format]
            self._step_calls = [self.batch.step_call(x, y, self._acts, self._buf, mode) for x, y in self._shards]
        self._started = False
        # Spaces of one game and of the batch (Gymnasium's single_* / batched naming).
        lay = self.config.variant.observation_layout(self.config.game_config)
        high = lay.high if self.claims is None else np.concatenate([lay.high, self.claims.lay.high])
        compact_size = self.batch.compact_size + (0 if self.claims is None else self.claims.lay.size)
        if obs_format == "compact":
            self.single_observation_space: gym.Space[Any] = gym.spaces.Box(
                -1, np.iinfo(np.int16).max, (compact_size,), dtype=np.int16
            )
        else:
            self.single_observation_space = gym.spaces.Box(0.0, high, dtype=np.float32)
        self.single_action_space: gym.spaces.Discrete = gym.spaces.Discrete(a)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, b)
        self.action_space = gym.spaces.MultiDiscrete(np.full(b, a))

    @property
    def batch(self) -> Batch:
        """The games (``core.batch.Batch``). Read-only: the lock-step's kernel calls are bound to its arrays; write a
        state into it in place (``batch.field(name)[...] = ...``, ``<game>.convert.from_reference``) instead."""
        return self._batch

    # ---- the vector API -------------------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[Any], dict[str, Any]]:
        """Start a new game in every slot (seeding as in the module docstring)."""
        if options:
            raise ConfigError(f"reset options are not supported by VectorEnv (got {sorted(options)})")
        self.batch.seed(self._seeds(seed))
        self.batch.setup()
        self.batch.field("sc")[:, self.batch.k.SC_GAMES] = 1
        buf = self._buf
        self.batch.masks(buf["mask"], buf["num_legal"])
        buf["seats"][:] = self.batch.scalar(self.batch.k.SC_CURRENT)
        if self.claims is not None:
            self.claims.new_games()
            self._claims_refresh()
        else:
            self._write_obs()
        self._started = True
        obs = self._obs()
        info = self._info(with_final=False)
        return obs, info

    def set_games(
        self, games: Batch, claims: _claims.ClaimsBatch | None = None
    ) -> tuple[NDArray[Any], dict[str, Any]]:
        """Continue from given games instead of dealing new ones (e.g. a search's determinizations:
        ``Batch.from_states`` then ``take``): slot ``b`` becomes a copy of ``games``' slot ``b`` (the game's config
        without claims, this env's size; its generator words too) and, under the claims rule, takes the claims state
        of ``claims``' slot ``b`` (``ClaimsBatch.from_blocks``; None: nobody has claimed). Returns the observations
        and info of the seats to act, as :meth:`reset` does."""
        if not isinstance(games, Batch) or games.config != self.config.game_config or games.batch != self.num_envs:
            raise ConfigError(f"games must be a Batch of {self.num_envs} games of {self.config.game_config!r} (got "
                              f"{getattr(games, 'batch', None)} of {getattr(games, 'config', type(games).__name__)!r})")
        if claims is not None and self.claims is None:
            raise ConfigError("claims state given to a VectorEnv without the claims rule (config.claims=False)")
        for name, v in games.views_by_name.items():
            self.batch.views_by_name[name][:] = v
        self.batch.forget_lockstep()
        buf = self._buf
        self.batch.masks(buf["mask"], buf["num_legal"])
        buf["seats"][:] = self.batch.scalar(self.batch.k.SC_CURRENT)
        if self.claims is not None:
            if claims is None:
                self.claims.new_games()
            else:
                self.claims.copy_state(claims)
            self._claims_refresh()
        else:
            self._write_obs()
        self._started = True
        return self._obs(), self._info(with_final=False)

    def step(
        self, actions: NDArray[np.integer] | list[int]
    ) -> tuple[NDArray[Any], NDArray[np.float32], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """One action per game for its seat to act; illegal actions raise before any game changes."""
        if not self._started:
            raise ConfigError("call reset() before step()")
        acts = self._check(actions)  # the actions, in self._acts
        buf = self._buf
        bad = -1
        if self.claims is not None:
            self._step_claims(acts)
        elif self._pool is None:  # one thread, or threads closed: the shards one after another
            bad = max(call() for call in self._step_calls)
        else:
            bad = max(self._pool.map(_call, self._step_calls))
        if bad >= 0:  # unreachable after _check: the kernel's own guard
            raise IllegalActionError(f"the core refused the action of game {bad}")
        done = buf["done"].astype(bool)
        rewards = buf["rewards"].copy() if self.copy else buf["rewards"]
        return self._obs(), rewards, done, np.zeros(self.num_envs, dtype=bool), self._info(with_final=True)

    def step_where(
        self, actions: NDArray[np.integer] | list[int], where: NDArray[np.bool_]
    ) -> tuple[NDArray[Any], NDArray[np.float32], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """``step`` for the games ``where[b]`` is True only; the others keep their state, observation and mask.

        ``actions`` has one entry per game (those of the games not stepped are ignored: any value). The results are
        those of ``step`` with rewards 0 and ``terminations`` False for the games not stepped (their ``obs`` rows
        and masks are unchanged). This is what a learner-seat view needs (``saboteur_env.learner``): the games whose
        learner is to act wait while the opponents play in the others. Illegal actions of stepped games raise before
        any game changes. Not with ``claims=True``.
        """
        if not self._started:
            raise ConfigError("call reset() before step_where()")
        if self.claims is not None:
            raise ConfigError("step_where does not support claims=True yet; use step()")
        w = np.asarray(where)
        b = self.num_envs
        if w.shape != (b,) or w.dtype != np.bool_:
            raise ConfigError(f"where must be {b} bools, one per game (got shape {w.shape}, {w.dtype})")
        given = np.asarray(actions)
        if given.shape != (b,) or given.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be {b} integer action ids (got shape {given.shape}, {given.dtype})")
        buf = self._buf
        slots = np.flatnonzero(w)
        sel = given[slots].astype(np.int64)  # checked before any game changes (the kernel checks again)
        a = self.num_actions
        bad = np.flatnonzero((sel < 0) | (sel >= a))
        if bad.size:
            g = int(slots[bad[0]])
            raise IllegalActionError(f"action {int(given[g])} of game {g} is out of range; valid: 0..{a - 1}")
        bad = np.flatnonzero(buf["mask"][slots, sel] == 0)
        if bad.size:
            g = int(slots[bad[0]])
            raise IllegalActionError(f"action {int(sel[bad[0]])} of game {g} is not legal for seat "
                                     f"{int(buf['seats'][g])} (see info['action_mask']); no game was changed")
        acts = self._acts
        acts[slots] = sel
        if slots.size:
            # Runs of consecutive stepped slots, cut at the shard bounds (as _step_claims does): the kernel steps a
            # contiguous range, and every slot is stepped by the same code on its own data.
            cuts = np.flatnonzero(np.diff(slots) != 1) + 1
            runs = [(int(r[0]), int(r[-1]) + 1) for r in np.split(slots, cuts)]
            per_shard = [[(max(x, lo), min(y, hi)) for x, y in runs if x < hi and y > lo] for lo, hi in self._shards]
            mode = _OBS_MODE[self.obs_format]
            batch = self.batch

            def play(shard_runs: list[tuple[int, int]]) -> int:
                return max((batch.step(x, y, acts, buf, mode) for x, y in shard_runs), default=-1)

            results = map(play, per_shard) if self._pool is None else self._pool.map(play, per_shard)
            if max(results) >= 0:
                raise IllegalActionError("the core refused an action")  # unreachable after _check
        idle = ~w
        buf["rewards"][idle] = 0.0  # the buffers of the games not stepped still hold their last step's results
        buf["done"][idle] = 0
        done = buf["done"].astype(bool)
        rewards = buf["rewards"].copy() if self.copy else buf["rewards"]
        return self._obs(), rewards, done, np.zeros(b, dtype=bool), self._info(with_final=True)

    def observe(self, seats: NDArray[np.integer] | list[int] | None = None, compact: bool = False) -> NDArray[Any]:
        """Observations of ``seats[b]`` in game ``b`` (default: the seats to act), float or compact."""
        b = self.num_envs
        # errors.as_int_array: integer seats only (a float or string seat was once truncated or parsed, while step
        # refused such actions); -1 means the seat to act.
        n = self.num_players
        s = np.full(b, -1, dtype=np.int64) if seats is None else as_int_array(seats, "seats", b, -1, n - 1, SeatError)
        if self.claims is not None:
            s = np.where(s < 0, self._buf["seats"], s)
        if compact:
            out_c = np.zeros((b, self.batch.compact_size), dtype=np.int16)
            self.batch.observe_compact(s, out_c)
            return out_c if self.claims is None else np.concatenate([out_c, self._claim_block(s).astype(np.int16)], 1)
        out = np.zeros((b, self.batch.obs_size), dtype=np.float32)
        self.batch.observe(s, out)
        return out if self.claims is None else np.concatenate([out, self._claim_block(s)], axis=1)

    def claims_log(self) -> list[dict[str, Any]]:
        """Every claim so far in every slot (``slot``, ``game``: the slot's game number from 1), with truth labels:
        for logs and analysis, NOT for agents. Empty without ``claims=True``."""
        return [] if self.claims is None else self.claims.records()

    def sample_actions(self, rng: LegalSampler) -> NDArray[np.int64]:
        """Uniformly random legal actions for every game, drawn by ``rng`` (cheap: one kernel call)."""
        return rng.sample(self)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- helpers --------------------------------------------------------------------------------------------------
    def _seeds(self, seed: int | list[int] | None) -> list[int]:
        b = self.num_envs
        if seed is None:
            base = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
            return [base + i for i in range(b)]
        if isinstance(seed, list | tuple | np.ndarray):
            seeds = [int(s) for s in seed]
            if len(seeds) != b or any(s < 0 for s in seeds):
                raise ConfigError(f"seed list must hold {b} non-negative ints (got {len(seeds)})")
            return seeds
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ConfigError(f"seed={seed!r} must be a non-negative int, a list of {b} of them, or None")
        return [int(seed) + i for i in range(b)]

    def _check(self, actions: NDArray[np.integer] | list[int]) -> NDArray[np.int64]:
        """The actions as int64, written into ``self._acts`` (what the bound lock-step reads), after checking them
        all against the masks: on any illegal action this raises and nothing changes (the games keep their state)."""
        given = np.asarray(actions)
        b, a = self.num_envs, self.num_actions
        if given.shape != (b,) or given.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be {b} integer action ids (got shape {given.shape}, {given.dtype})")
        acts = self._acts
        np.copyto(acts, given, casting="unsafe")  # as astype(int64): a uint64 beyond int64 wraps, and is refused
        if self.claims is not None:
            ok = (acts >= 0) & (acts < a)
            ok[ok] = self._buf["cmask"][np.flatnonzero(ok), acts[ok]] == 1
            g = int(np.flatnonzero(~ok)[0]) if not ok.all() else -1
        else:
            g = self.batch.check(self._buf["mask"], acts)  # one kernel pass; nothing changes on failure
        if g >= 0:
            if not 0 <= acts[g] < a:  # the given value: a uint64 beyond int64 wrapped to a negative in acts
                raise IllegalActionError(f"action {int(given[g])} of game {g} is out of range; valid: 0..{a - 1}")
            raise IllegalActionError(
                f"action {int(acts[g])} of game {g} is not legal for seat {int(self._buf['seats'][g])} "
                "(see info['action_mask']); no game was changed"
            )
        return acts

    # ---- claims (saboteur_env.claims) -----------------------------------------------------------------------------
    def _claim_block(self, seats: NDArray[np.int64]) -> NDArray[np.float32]:
        assert self.claims is not None
        k = self.batch.k
        return self.claims.encode(seats, self.batch.scalar(k.SC_ROUND).astype(np.int64),
                                  self.batch.scalar(k.SC_CURRENT).astype(np.int64))  # fmt: skip

    def _step_claims(self, acts: NDArray[np.int64]) -> None:
        """Claims are recorded, game actions stepped by the kernels in runs of consecutive slots, then masks and
        observations of the seats to act (report windows included) are rebuilt."""
        cl, buf, batch = self.claims, self._buf, self.batch
        assert cl is not None
        k, a = batch.k, batch.num_actions
        current = batch.scalar(k.SC_CURRENT).astype(np.int64)
        is_claim = acts >= a
        csl, gsl = np.flatnonzero(is_claim), np.flatnonzero(~is_claim)
        if csl.size:
            cl.apply_claims(csl, acts[csl], current, batch.scalar(k.SC_ROUND).astype(np.int64), batch.field)
        before = cl.knowledge(batch.field)
        if gsl.size:
            # Runs of consecutive game-action slots, cut at the shard bounds: each shard's runs go to its thread
            # (the slots are independent, so the result does not depend on the number of threads).
            cuts = np.flatnonzero(np.diff(gsl) != 1) + 1
            runs = [(int(r[0]), int(r[-1]) + 1) for r in np.split(gsl, cuts)]
            per_shard = [[(max(x, lo), min(y, hi)) for x, y in runs if x < hi and y > lo] for lo, hi in self._shards]

            def play(shard_runs: list[tuple[int, int]]) -> int:
                return max((batch.step(x, y, acts, buf, _OBS_MODE["none"]) for x, y in shard_runs), default=-1)

            results = map(play, per_shard) if self._pool is None else self._pool.map(play, per_shard)
            if max(results) >= 0:
                raise IllegalActionError("the core refused a game action")  # unreachable after _check
        buf["rewards"][csl] = 0.0
        buf["done"][csl] = 0
        done = buf["done"].astype(bool)
        ended = batch.scalar(k.SC_JUST_ENDED).astype(bool)
        cl.after_game_actions(gsl, current[gsl], before, batch.field, ended, done)
        cl.new_games(np.flatnonzero(done))
        self._claims_refresh()

    def _claims_refresh(self) -> None:
        cl, buf, batch = self.claims, self._buf, self.batch
        assert cl is not None
        current = batch.scalar(batch.k.SC_CURRENT).astype(np.int64)
        seats = cl.acting(current)
        buf["seats"][:] = seats
        full = cl.full_mask(buf["mask"][:, : batch.num_actions], batch.field)
        buf["cmask"][:, : self.num_actions] = full
        buf["cnum"][:] = full.sum(axis=1)
        if self.obs_format == "float":
            batch.observe(seats, buf["obs_f"])
            buf["obs_fc"][:, : batch.obs_size] = buf["obs_f"]
            buf["obs_fc"][:, batch.obs_size:] = self._claim_block(seats)
        elif self.obs_format == "compact":
            batch.observe_compact(seats, buf["obs_c"])
            buf["obs_cc"][:, : batch.compact_size] = buf["obs_c"]
            buf["obs_cc"][:, batch.compact_size:] = self._claim_block(seats)

    def _write_obs(self) -> None:
        buf = self._buf
        if self.obs_format == "float":
            self.batch.observe(buf["seats"], buf["obs_f"])
        elif self.obs_format == "compact":
            self.batch.observe_compact(buf["seats"], buf["obs_c"])

    def _obs(self) -> NDArray[Any]:
        if self.obs_format == "none":
            return np.zeros((self.num_envs, 0), dtype=np.float32)
        c = "c" if self.claims is not None else ""
        out = self._buf["obs_f" + c] if self.obs_format == "float" else self._buf["obs_c" + c]
        return out.copy() if self.copy else _read_only(out)

    def _masks(self) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
        """The padded int8 mask rows and legal counts of the seats to act (claims included when on)."""
        buf = self._buf
        if self.claims is not None:
            return buf["cmask"], buf["cnum"]
        return buf["mask"], buf["num_legal"]

    def _info(self, with_final: bool) -> dict[str, Any]:
        buf = self._buf
        full, num_legal = self._masks()
        mask = full[:, : self.num_actions]
        if self.mask_format == "bits":
            bits = buf["bits"] if not self.copy else np.empty_like(buf["bits"])
            kcommon.pack_bits(full, self.num_actions, bits)
            mask = bits
        elif self.copy:
            mask = mask.copy()
        else:
            mask = _read_only(mask)
        info = {
            "seat": buf["seats"].copy() if self.copy else buf["seats"],
            "action_mask": mask,
            "num_legal": num_legal.copy() if self.copy else num_legal,
        }
        if with_final:
            info["final_returns"] = buf["final_returns"].copy() if self.copy else buf["final_returns"]
            info["_final_returns"] = buf["done"].astype(bool)
        return info


def _call(call: Callable[[], int]) -> int:
    return call()


def _read_only(a: NDArray[Any]) -> NDArray[Any]:
    """A view of ``a`` that refuses writes (``a`` itself stays writable for the kernels)."""
    v = a.view()
    v.flags.writeable = False
    return v


class LegalSampler:
    """Uniform random legal actions for a :class:`VectorEnv`, from one PCG64 generator per game slot.

    ``LegalSampler(seed)``: slot ``b`` draws from ``np.random.default_rng([seed, b])`` (independent streams).
    """

    def __init__(self, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ConfigError(f"seed={seed!r} must be a non-negative int")
        self.seed = int(seed)
        self._words: NDArray[np.uint64] | None = None
        self._out: NDArray[np.int64] | None = None

    def sample(self, env: VectorEnv) -> NDArray[np.int64]:
        b = env.num_envs
        if self._words is None or self._words.shape[0] != b:
            self._words = np.stack([crng.words_of(np.random.default_rng([self.seed, i])) for i in range(b)])
            self._out = np.zeros(b, dtype=np.int64)
        assert self._out is not None
        mask, num_legal = env._masks()
        env.batch.sample(mask, num_legal, self._words, self._out, lockstep=env.claims is None and env._started)
        return self._out.copy()


def expand_compact(compact: NDArray[np.int16], config: GameConfig) -> NDArray[np.float32]:
    """Float observations rebuilt from compact ones (shape ``(..., compact_size)``), by the game's kernel module;
    with claims the claims block at the end is kept as it is (its values are small integers)."""
    if not config.claims:
        return kernels(config).expand_compact(compact, config)
    size = _claims.layout(config).size
    g = config.game_config
    head = kernels(g).expand_compact(compact[..., : compact.shape[-1] - size], g)
    return np.concatenate([head, compact[..., compact.shape[-1] - size:].astype(np.float32)], axis=-1)


def legal_indices(mask: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.nonzero(mask)`` of a 2-D batch of action masks (int8, uint8 or bool rows, e.g. the ``int8``
    ``info["action_mask"]``): the row and the action of every legal entry, row-major. A policy that scores only the
    legal actions needs exactly this; it is several times faster than ``np.nonzero`` or ``torch.nonzero`` on such
    masks, which hold about a dozen legal actions in a thousand.

    Raises ``ActionError`` (a ``ValueError``) for another dimension or dtype.
    """
    m = np.asarray(mask)
    if m.ndim != 2:
        raise ActionError(f"mask must be 2-D (rows x actions), got shape {m.shape}")
    if m.dtype not in (np.int8, np.uint8, np.bool_):
        raise ActionError(f"mask dtype {m.dtype} is not a 0/1 byte mask; valid: int8, uint8, bool")
    flat = np.ascontiguousarray(m).view(np.int8).reshape(-1)
    n = int(np.count_nonzero(flat))
    rows, cols = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    if n:
        kcommon.nonzero_flat(flat, max(m.shape[1], 1), rows, cols)
    return rows, cols
