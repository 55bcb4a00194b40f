"""A shard of the self-play trainer's games: a vector env of ``num_envs / shards`` games, its rollout, seating, belief
followers and sampling generator (issue 37: rollouts on several processes or Ray actors feeding one learner).

The trainer collects each shard's rollout with the current weights: in its own process (the default, one shard), or
on workers (:class:`ShardWorker` through :class:`experiments.workers.WorkerSet`): a job carries the shard's state
(:meth:`Shard.pack`: the game arrays, the carried decisions, the seating with its scripted agents, the followers and
the generator's state) and the weights; the worker collects and returns the packed shard with the rollout's rows. A
job is deterministic (its result depends on its input only), so a worker that dies loses nothing: the job re-runs,
and the run's data equals a one-process run with the same ``--shards`` whatever the backend and worker count.
"""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from agents.base.belief_features import BeliefFeatures, feature_size
from agents.learned import role_names, role_slice
from experiments.train.league import League, Seating, Snapshot, sample_rows
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.compact import CompactPolicy
from experiments.train.selfplay.policy import Policy
from experiments.train.selfplay.rollout import Rollout, _env_state, _load_env_state
from saboteur_env import GameConfig, PlayerView
from saboteur_env.base.cards import Role
from saboteur_env.claims import KIND as CLAIM_KIND
from saboteur_env.claims import KNOWN as CLAIM_KNOWN
from saboteur_env.claims import SLOT as CLAIM_SLOT
from saboteur_env.claims import TRUTH as CLAIM_TRUTH
from saboteur_env.claims import ClaimsBatch
from saboteur_env.vector import VectorEnv, expand_compact

Model = Policy | CompactPolicy
TALK_KINDS = ("goal", "accuse", "clear", "suspect")  # saboteur_env.claims.GOAL .. SUSPECT, in id order


def shard_seed(seed: int, index: int) -> int:
    """Shard ``index``'s seed: the run's seed for shard 0 (a one-shard run deals as before shards existed), a
    derived 62-bit seed for the others."""
    if index == 0:
        return seed
    return int(np.random.SeedSequence([seed, index, 0x5A4D]).generate_state(1, np.uint64)[0] >> np.uint64(2))


def build_model(args: Args, config: GameConfig) -> Model:
    """The trainer's network for ``args`` (weights at initialisation)."""
    if args.net == "compact":
        return CompactPolicy(config, args.hidden, args.role_heads)
    return Policy(config, args.hidden, args.role_heads, args.embed, args.features)


class Shard:
    """Games ``index * num_envs ...`` of the trainer's batch: their env, rollout rows and who plays them."""

    def __init__(self, args: Args, config: GameConfig, index: int, num_envs: int, model: Model, league: League,
                 gen: torch.Generator | None = None) -> None:  # fmt: skip
        n = config.num_players
        self.args, self.config, self.index, self.num_envs = args, config, index, num_envs
        self.seed = shard_seed(args.seed, index)
        self.compact = args.net == "compact"
        self.env = VectorEnv(num_envs, config=config, copy=False, obs_format="compact" if self.compact else "float")
        self.obs_size, self.num_actions = model.obs_size, model.num_actions
        self.num_heads = model.num_heads
        self.reader = model.reader if isinstance(model, CompactPolicy) else None
        self.roll = Rollout(args.rollout, num_envs, n, model.obs_size, model.num_actions)
        self.spare: Rollout | None = None  # --overlap: the rollout buffer the next collection fills
        self.league = league
        self.seating = Seating(config, num_envs, league, args.league, self.seed)
        # Shard 0 samples with the trainer's generator (one stream for sampling and minibatches, as before shards).
        self.gen = gen if gen is not None else torch.Generator().manual_seed(self.seed)
        # Belief features: one follower per (slot, seat) that a network plays (the learner, snapshots), reset when
        # its slot starts a game; self.fresh marks the seats whose follower has not seen this game yet.
        self.env_obs = model.obs_size - feature_size(args.features, config)
        self.followers: list[list[BeliefFeatures | None]] = [[None] * n for _ in range(num_envs)]
        self.fresh = np.ones((num_envs, n), dtype=bool)
        self.role = role_slice(config) or slice(0, 0)  # the acting seat's role, for the statistics by role
        self.last_role = np.zeros((num_envs, n), dtype=np.int64)
        self.obs: NDArray[Any] | None = None
        self.info: dict[str, Any] = {}
        self.times = {"env_s": 0.0, "policy_s": 0.0}
        self.reset_stats()

    # ---- statistics of the learner's rounds and games since the last progress row ------------------------------------
    def reset_stats(self) -> None:
        k = len(role_names(self.config))
        self.st_returns: list[float] = []
        self.st_rounds = np.zeros(k)
        self.st_wins = np.zeros(k)
        self.st_round_reward = np.zeros(k)
        self.st_games = 0
        # Claims rule: per role the learner's decisions, claims, claims about facts it knew, lies (known and false),
        # then its claims by kind (goal, accuse, clear, suspect): what the progress rows report as its talk.
        self.st_talk = np.zeros((k, 4 + len(TALK_KINDS)))

    STATS = ("st_returns", "st_rounds", "st_wins", "st_round_reward", "st_games", "st_talk")

    def take_stats(self) -> dict[str, Any]:
        """This shard's statistics since the last reset (the progress row's), and a fresh set in their place."""
        out = {k: getattr(self, k) for k in self.STATS}
        self.reset_stats()
        return out

    def put_stats(self, stats: dict[str, Any]) -> None:
        """Report ``stats`` (of :meth:`take_stats`) in the next progress row: ``--overlap`` rows describe the rollout
        the iteration trained on, not the one collected meanwhile."""
        for k in self.STATS:
            setattr(self, k, stats[k])

    # ---- games -------------------------------------------------------------------------------------------------------
    def start(self) -> None:
        self.obs, self.info = self.env.reset(seed=self.seed)
        self.new_games(np.arange(self.num_envs))

    def new_games(self, slots: NDArray[np.int64]) -> None:
        """Seat the games that just started in ``slots``; their seats' belief followers start afresh."""
        eligible = None
        if self.args.learner_seat == "saboteur":  # the seats dealt the saboteur card in the most rounds
            n = self.config.num_players
            count = (self.env.batch.field("round_roles")[slots, :, :n] == Role.SABOTEUR).sum(axis=1)
            eligible = (count == count.max(axis=1, keepdims=True)) & (count > 0)
        self.seating.new_games(slots, eligible)
        self.fresh[slots] = True

    def redeal(self, iteration: int) -> None:
        """Drop the games in flight and deal fresh ones (seeded by ``iteration``) with the decisions carried with them:
        a checkpoint holds no belief follower (each is a Python object that remembers its seat's game)."""
        self.obs, self.info = self.env.reset(seed=self.seed * 1_000_003 + iteration + 1)
        self.roll.valid[: self.config.num_players] = False
        self.roll.open[:] = -1
        self.roll.acc[:] = 0.0
        self.last_role[:] = 0
        self.new_games(np.arange(self.num_envs))

    def _view_outputs(self) -> None:
        """The last step's observation and info, read from the env's buffers (after its state was loaded)."""
        n, c = self.env.num_actions, ("c" if self.env.claims is not None else "")  # claims: the buffers with them
        self.obs = self.env._buf[("obs_c" if self.compact else "obs_f") + c]
        self.info = {"seat": self.env._buf["seats"], "action_mask": self.env._buf["cmask" if c else "mask"][:, :n],
                     "final_returns": self.env._buf["final_returns"]}  # fmt: skip

    # ---- one rollout -------------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def _act(self, row: int, model: Model) -> None:
        roll = self.roll
        assert self.obs is not None
        seats = np.asarray(self.info["seat"], dtype=np.int64)
        learner = self.seating.learner_rows(seats)
        if self.args.features:
            roll.obs[row, :, : self.env_obs] = self.obs
            self._features(row, seats, np.flatnonzero(learner | self.seating.snapshot))
        elif self.reader is not None:
            self.reader.pack(self.obs, out=roll.obs[row])
        else:
            np.copyto(roll.obs[row], self.obs)
        np.copyto(roll.mask[row], self.info["action_mask"])
        if learner.all():  # self-play: every row is the learner's, one batched forward
            roll.action[row], roll.logp[row], roll.value[row] = sample_rows(model, roll.obs[row], roll.mask[row],
                                                                            self.gen)  # fmt: skip
        else:
            mine, theirs = np.flatnonzero(learner), np.flatnonzero(~learner)
            if mine.size:
                a, lp, v = sample_rows(model, roll.obs[row][mine], roll.mask[row][mine], self.gen)
                roll.action[row, mine], roll.logp[row, mine], roll.value[row, mine] = a, lp, v
            roll.logp[row, theirs] = 0.0
            roll.value[row, theirs] = 0.0
            # scripted agents read float observations
            obs = expand_compact(self.obs, self.config) if self.compact and self.league.scripted else self.obs
            self.seating.act(theirs, obs, roll.mask[row], seats, self.gen, roll.action[row], roll.obs[row])
        roll.learner[row] = learner
        if self.compact:
            roll.role[row] = roll.obs[row][:, -1] if self.num_heads > 1 or self.role.stop else 0
        else:
            roll.role[row] = self.obs[:, self.role].argmax(axis=1) if self.role.stop > self.role.start else 0
        roll.decide(row, seats)

    def _features(self, row: int, seats: NDArray[np.int64], slots: NDArray[np.int64]) -> None:
        """Each network-played decision's belief features, after its observation in rollout row ``row``."""
        assert self.obs is not None
        roll_obs = self.roll.obs[row]
        for b in slots.tolist():
            s = int(seats[b])
            f = self.followers[b][s]
            if f is None:
                f = self.followers[b][s] = BeliefFeatures(self.config, self.args.features)
            if self.fresh[b, s]:
                f.reset(s)
                self.fresh[b, s] = False
            roll_obs[b, self.env_obs :] = f.update(PlayerView.from_observation(self.obs[b], self.config))

    def next_roll(self) -> Rollout:
        """The spare rollout buffer with this rollout's open decisions carried into it (this one is left whole for
        the update that trains on it; the two buffers alternate)."""
        if self.spare is None:
            r = self.roll
            self.spare = Rollout(r.steps, r.num_envs, r.num_players, self.obs_size, self.num_actions)
        nxt, self.spare = self.spare, self.roll
        self.roll.carry_into(nxt)
        return nxt

    def collect(self, model: Model) -> dict[str, float]:
        """Play ``args.rollout`` vector steps with ``model``; returns the seconds spent in the env and the policy."""
        roll, times = self.roll, {"env_s": 0.0, "policy_s": 0.0}
        slots = np.arange(self.num_envs)
        n = self.config.num_players
        for t in range(self.args.rollout):
            row = roll.row(t)
            t0 = time.perf_counter()
            self._act(row, model)
            self.last_role[slots, roll.seat[row]] = roll.role[row]
            t1 = time.perf_counter()
            talk = self.env.claims
            logged = 0 if talk is None else talk.log_size
            self.obs, rewards, term, _, self.info = self.env.step(roll.action[row])
            times["env_s"] += time.perf_counter() - t1
            if talk is not None:
                self._talk_stats(row, talk, logged)
            times["policy_s"] += t1 - t0
            roll.earn(rewards, term)
            ended = rewards.any(axis=1) | term  # a round ended: each seat won it if it earned something
            if ended.any():
                # The learner's seats only (every seat in self-play; the league games' one seat).
                sl = self.seating.learner[ended]
                mine = (sl[:, None] < 0) | (sl[:, None] == np.arange(n))
                roles, got = self.last_role[ended][mine], rewards[ended][mine]
                np.add.at(self.st_rounds, roles, 1)
                np.add.at(self.st_wins, roles, got > 0)
                np.add.at(self.st_round_reward, roles, got)
            if term.any():
                done = np.flatnonzero(term)
                self.st_games += int(done.size)
                finals, sl = self.info["final_returns"][done], self.seating.learner[done]
                mean = finals.mean(axis=1)
                own = finals[np.arange(done.size), np.maximum(sl, 0)]
                self.st_returns.extend(np.where(sl < 0, mean, own).tolist())
                self.new_games(done)  # the slots' next games (same-step autoreset)
        self.times = times
        return times

    def _talk_stats(self, row: int, talk: ClaimsBatch, logged: int) -> None:
        """Count the learner's decisions and the claims it made at this step (their truth labels are in the env's
        claims log, drained here: a long run would otherwise keep every claim of every game)."""
        roll = self.roll
        learner = roll.learner[row]
        np.add.at(self.st_talk[:, 0], roll.role[row][learner], 1)
        new = talk.log[logged:]
        mine = new[learner[new[:, CLAIM_SLOT]]]
        if mine.size:
            role = roll.role[row][mine[:, CLAIM_SLOT]]
            known = mine[:, CLAIM_KNOWN] > 0
            np.add.at(self.st_talk[:, 1], role, 1)
            np.add.at(self.st_talk[:, 2], role, known)
            np.add.at(self.st_talk[:, 3], role, known & (mine[:, CLAIM_TRUTH] == 0))
            kinds = np.asarray(mine[:, CLAIM_KIND], dtype=np.int64)
            ok = kinds < len(TALK_KINDS)
            np.add.at(self.st_talk, (role[ok], 4 + kinds[ok]), 1)
        talk.log_size = 0

    # ---- checkpoints -------------------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The games, the carried decisions and the seating (checkpoints; plain tensors, numbers and strings)."""
        out = {"env": _env_state(self.env), "rollout": self.roll.state(),
               "last_role": torch.from_numpy(self.last_role.copy()), "seating": self.seating.state()}  # fmt: skip
        if self.index:  # shard 0's generator is the trainer's, saved with it
            out["gen"] = self.gen.get_state()
        return out

    def load(self, state: dict[str, Any]) -> None:
        _load_env_state(self.env, state["env"])
        self.roll.load(state["rollout"])
        self.last_role[:] = state["last_role"].numpy()
        self.seating.load(state["seating"])
        if self.index:
            self.gen.set_state(state["gen"])
        self._view_outputs()

    # ---- a worker's job ----------------------------------------------------------------------------------------------
    def pack(self, full: bool) -> bytes:
        """Everything a worker needs to continue this shard exactly (pickled by the transport): the game arrays, the
        rollout (``full``: every row, the worker's answer; else only the carried decisions), the seating with its
        scripted agents' memory, the belief followers, the generator and the statistics, pickled here: a transport's
        zero-copy arrays (Ray's object store) would be read-only inside the agents that update them in place."""
        s = self.seating
        seating = {"learner": s.learner.copy(), "snapshot": s.snapshot.copy(), "agents": s.agents,
                   "opponents": [o.name if isinstance(o, Snapshot) else o for o in s.opponent],
                   "rng": json.dumps(s.rng.bit_generator.state), "games": s.games,
                   "counts": dict(s.counts)}  # fmt: skip
        return pickle.dumps({"env": {k: v.numpy() for k, v in _env_state(self.env).items()},
                "rollout": self.roll if full else self.roll.state(), "seating": seating,
                "gen": self.gen.get_state(), "last_role": self.last_role.copy(), "followers": self.followers,
                "fresh": self.fresh.copy(), "times": dict(self.times),
                "stats": (self.st_returns, self.st_rounds, self.st_wins, self.st_round_reward,
                          self.st_games, self.st_talk)}, protocol=pickle.HIGHEST_PROTOCOL)  # fmt: skip

    def unpack(self, data: bytes) -> None:
        """Continue from :meth:`pack`'s output (this shard's, from the driver or a worker: our own processes)."""
        packed = pickle.loads(data)
        _load_env_state(self.env, {k: torch.from_numpy(v) for k, v in packed["env"].items()})
        self._view_outputs()
        roll = packed["rollout"]
        if isinstance(roll, Rollout):
            self.roll = roll
        else:  # the carried decisions into a clean rollout (as the driver's carry() leaves it)
            self.roll = Rollout(self.args.rollout, self.num_envs, self.config.num_players, self.obs_size,
                                self.num_actions)  # fmt: skip
            self.roll.load(roll)
        s, p = self.seating, packed["seating"]
        s.learner[:], s.snapshot[:] = p["learner"], p["snapshot"]
        s.agents = p["agents"]
        snaps = {x.name: x for x in self.league.snapshots}
        s.opponent = [snaps[o] if isinstance(o, str) and o.startswith("snapshot:") else o for o in p["opponents"]]
        s.rng.bit_generator.state = json.loads(p["rng"])
        s.games, s.counts = p["games"], dict(p["counts"])
        self.gen.set_state(packed["gen"])
        self.last_role[:] = packed["last_role"]
        self.followers = packed["followers"]
        self.fresh[:] = packed["fresh"]
        self.times = dict(packed["times"])
        (self.st_returns, self.st_rounds, self.st_wins, self.st_round_reward, self.st_games,
         self.st_talk) = packed["stats"]


class ShardWorker:
    """Collects shards' rollouts in a worker process or Ray actor (its envs and network are kept between jobs)."""

    def __init__(self) -> None:
        self._key = ""
        self._model: Model | None = None
        self._league: League | None = None
        self._shards: dict[int, Shard] = {}

    def collect(self, job: dict[str, Any]) -> bytes:
        """``job``: ``args`` (the trainer's options as a dict), ``index`` and ``num_envs`` of the shard, ``shard``
        (:meth:`Shard.pack`), ``weights`` (the network's state dict) and ``league`` (its snapshots' weights)."""
        key = json.dumps(job["args"], sort_keys=True)
        args = Args(**job["args"])
        config = args.config()
        if key != self._key:  # another run: start afresh
            torch.set_num_threads(args.threads)  # the same arithmetic as the driver's forward
            self._key, self._shards = key, {}
            self._model = build_model(args, config)
            self._league = League(config, args.league_names(), args.pool_size)
        assert self._model is not None and self._league is not None
        self._model.load_state_dict(job["weights"])
        self._model.eval()
        league_state = job["league"]
        have = [s.iteration for s in self._league.snapshots]
        if league_state is not None and have != league_state["snap_iterations"].tolist():
            self._league.load(league_state, self._model)
        i = int(job["index"])
        shard = self._shards.get(i)
        if shard is None:
            shard = self._shards[i] = Shard(args, config, i, int(job["num_envs"]), self._model, self._league)
        shard.unpack(job["shard"])
        shard.collect(self._model)
        return shard.pack(full=True)


class Joined:
    """The shards' rollouts side by side (slots of shard 0, then shard 1, ...), as one rollout for the update."""

    def __init__(self, rolls: list[Rollout]) -> None:
        self.rolls = rolls

        def joined(name: str) -> NDArray[Any]:
            return np.concatenate([getattr(r, name) for r in rolls], axis=1)

        self.obs, self.mask, self.action = joined("obs"), joined("mask"), joined("action")
        self.logp, self.value, self.role = joined("logp"), joined("value"), joined("role")

    def advantages(self, gamma: float, lam: float) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        parts = [r.advantages(gamma, lam) for r in self.rolls]
        return np.concatenate([p[0] for p in parts], axis=1), np.concatenate([p[1] for p in parts], axis=1)

    def trainable(self) -> NDArray[np.bool_]:
        return np.concatenate([r.trainable() for r in self.rolls], axis=1)
