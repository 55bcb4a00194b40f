"""Batched self-play PPO on the compiled core (issue 14): ``python -m experiments.train.selfplay --game base --players
5``.

A CleanRL-style PPO with action masking, in one package, on :class:`saboteur_env.vector.VectorEnv`. Every seat of the
``B`` games is played by the current policy (self-play). Design (docs/selfplay.md):

* **Per-seat turn accounting** (:class:`Rollout`). Step ``t`` of the vector env is one decision per game, by the
  seat ``info["seat"][b]``. A seat's transition starts at its decision and ends at its *next* decision in the same
  game; its reward is everything that seat earned in between (``rewards[b, seat]`` of every step, whoever acted),
  and when the game ends every seat's open transition closes with ``done`` and the rewards of the last step. GAE
  runs along each (game slot, seat) stream. A seat's last decision of a rollout has no successor yet: it bootstraps
  the transition before it (truncated GAE) and is *carried* into the next rollout, where it completes; so no
  reward is ever dropped at a rollout boundary (the carried decision's log-probability is one update old, which
  PPO's ratio accounts for). Rewards a seat earns before its first decision of a game are credited to no one.
* **Role-aware**: the role is in the observation; ``--role-heads`` gives each role (base: gold-digger/saboteur,
  Saboteur 2: its six roles) its own policy and value head on a shared trunk.
* **Threads**: ``torch.set_num_threads(--threads)`` (default 1) and one inter-op thread. Torch's default (one
  thread per core, plus inter-op pools) oversubscribes this 2-core machine, slowing SB3 6-10x here; with one
  process the batched matrix products are large enough that 1-2 threads are best (measure with ``--bench``).
* **Checkpoints** (``OUT/checkpoint.pt``): plain tensors, numbers and strings only (the model and optimizer state
  dicts, the torch generator, the trainer's counters, the vector env's game arrays and the carried decisions),
  loaded with ``torch.load(weights_only=True)``; ``--resume`` continues exactly as an uninterrupted run would.
* **Overlap** (``--overlap``): the next rollout is collected in a thread, with a copy of the current weights
  (before this update), while the update trains on the rollout collected before: both cores work (the env and the
  forward in one, the update in the other), and the data lag the weights by one iteration (the decoupled loss:
  PPO's clip around the update-start policy, an importance weight from the logged behaviour to it). The
  pipeline drains before every checkpoint (that iteration's collection waits for its update), so a resumed run
  continues exactly as an uninterrupted one. Shard 0 then samples with its own generator, the update its own.
* Outputs in ``OUT``: ``progress.csv`` (learning curves), ``checkpoint.pt``, ``policy.npz`` (numpy weights for
  ``make_agent("learned:OUT/policy.npz", config)``, see ``agents.learned``).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from agents import make_agent
from agents.files import FileRefusedError, open_regular
from agents.learned import role_names, role_slice
from experiments.train.league import League, Seating, evaluate, talking
from experiments.train.selfplay.args import Args, parse_args
from experiments.train.selfplay.compact import CompactPolicy, FloatInput, export, load_init
from experiments.train.selfplay.overlap import Pipeline, proximal, weight_stats
from experiments.train.selfplay.policy import (
    CheckpointError,
    _first_line,
    taken_logp,
    write_atomic,
)
from experiments.train.selfplay.rollout import Rollout
from experiments.train.selfplay.shard import TALK_KINDS, Joined, Model, Shard, ShardWorker, build_model
from experiments.workers import WorkerSet
from saboteur_env.vector import VectorEnv, legal_indices

CHECKPOINT_FORMAT = "saboteur-env/selfplay-checkpoint"
CHECKPOINT_VERSION = 2  # 2: league seating and the learner flag of every stored decision
MAX_CHECKPOINT_BYTES = 4 << 30  # a checkpoint read (the game arrays of many envs, the model and Adam's moments)
MAX_PROGRESS_BYTES = 1 << 30


def _iteration_of(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return math.inf  # not a row of ours: dropped with the rows after the checkpoint


@contextlib.contextmanager
def _stop_signals() -> Iterator[list[int]]:
    """SIGTERM and SIGINT ask training to stop after the iteration in flight (the list gets the signal number); a
    second one stops at once (KeyboardInterrupt). The previous handlers come back on exit. Outside the main thread
    (where Python delivers signals) nothing is installed."""
    stop: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    sigs = (signal.SIGTERM, signal.SIGINT)
    saved = {sig: signal.getsignal(sig) for sig in sigs}

    def handle(signum: int, frame: object) -> None:
        if stop:
            raise KeyboardInterrupt
        stop.append(signum)
        print(f"\n{signal.Signals(signum).name}: finishing this iteration, then checkpointing (again: stop now)",
              file=sys.stderr, flush=True)  # fmt: skip

    for sig in sigs:
        signal.signal(sig, handle)
    try:
        yield stop
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


class Trainer:
    """Self-play PPO on one VectorEnv; :meth:`train` runs to ``args.steps`` learner decisions."""

    def __init__(self, args: Args) -> None:
        args.check()
        self.args = args
        self.config = args.config()
        torch.set_num_threads(args.threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set in this process (only allowed once)
            pass
        torch.manual_seed(args.seed)
        self.gen = torch.Generator().manual_seed(args.seed)
        self.compact = args.net == "compact"  # the env writes compact observations, the rollout packed rows
        self.model: Model = build_model(args, self.config)
        if args.init:
            load_init(self.model, args.init, self.config)
        self.device = torch.device(args.device)
        self.model.to(self.device)
        if args.freeze_trunk:  # the heads learn; the trunk (and a bottleneck) keep the --init weights
            for layer in (self.model.fc0, self.model.fc1, self.model.pe):
                for prm in layer.parameters() if layer is not None else ():
                    prm.requires_grad_(False)
        # fused: one pass per tensor instead of a dozen (the compact net's token table is ~1M weights)
        self.optim = torch.optim.Adam([p for p in self.model.parameters() if p.requires_grad], lr=args.lr, eps=1e-5,
                                      fused=True)  # fmt: skip
        self._train_role = role_names(self.config).index(args.train_role) if args.train_role else -1
        self.role_names = role_names(self.config)
        self._role = role_slice(self.config) or slice(0, 0)  # the acting seat's role, for the ladder check
        self.iteration = self.decisions = self.games = 0
        self.wall = 0.0
        self.out = Path(args.out)
        self.league = League(self.config, args.league_names(), args.pool_size)
        # The games in shards (--shards; one by default), collected here or on workers (--backend, --workers).
        size = args.num_envs // args.shards
        self.shards = [Shard(args, self.config, i, size, self.model, self.league, self.gen if i == 0 else None)
                       for i in range(args.shards)]  # fmt: skip
        # --overlap: the update draws its minibatches from its own generator (shard 0's samples in the other thread)
        self.update_gen = torch.Generator().manual_seed(args.seed + 0x0E1A) if args.overlap else self.gen
        self.pipeline = Pipeline(self) if args.overlap else None
        self.workers: WorkerSet | None = None
        if args.backend != "local" or args.workers > 1:
            self.workers = WorkerSet(ShardWorker, "collect", args.backend, args.workers, args.address or None,
                                     "rollout shards")  # fmt: skip
        # a bad --eval-opponent fails now, not at the first check
        make_agent(talking(args.opponent(), self.config), self.config)
        self.tb: Any = None
        self.stopped_by = 0  # the signal that stopped train(), if any
        self.last_row: dict[str, float] = {}

    # ---- state -----------------------------------------------------------------------------------------------------
    @property
    def env(self) -> VectorEnv:
        """The first shard's vector env (the only one by default)."""
        return self.shards[0].env

    @property
    def roll(self) -> Rollout:
        return self.shards[0].roll

    @property
    def seating(self) -> Seating:
        return self.shards[0].seating

    def start(self) -> None:
        ckpt = self.out / "checkpoint.pt"
        if self.args.resume and ckpt.exists():
            self.load(ckpt)
        else:
            for shard in self.shards:
                shard.start()

    def close(self) -> None:
        """Stop the rollout workers (if any)."""
        if self.workers is not None:
            self.workers.close()

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "args": dataclasses.asdict(self.args),
            "model": self.model.state_dict(),
            "optim": self.optim.state_dict(),
            "gen": self.gen.get_state(),
            **({"update_gen": self.update_gen.get_state()} if self.args.overlap else {}),
            "torch_rng": torch.get_rng_state(),
            "counters": {
                "iteration": self.iteration,
                "decisions": self.decisions,
                "games": self.games,
                "wall": self.wall,
            },
            "league": self.league.state(),
            **self.shards[0].state(),  # "env", "rollout", "last_role", "seating" (as before shards existed)
            "shards": [shard.state() for shard in self.shards[1:]],
        }
        write_atomic(path, lambda fh: torch.save(state, fh))

    def load(self, path: Path) -> None:
        """Resume from ``path``; :class:`CheckpointError` (one line naming the file and the problem) for a checkpoint
        that is unreadable, truncated, not a checkpoint or of other settings."""
        try:
            with open_regular(path, MAX_CHECKPOINT_BYTES) as fh:
                state = torch.load(fh, weights_only=True)  # tensors, numbers and strings only: no code runs
        except FileRefusedError as err:
            raise CheckpointError(f"checkpoint {err}") from None
        except Exception as err:  # torch reports damage as RuntimeError, EOFError, UnpicklingError, ...
            raise CheckpointError(
                f"checkpoint {path} is unreadable (truncated or not a checkpoint: "
                f"{type(err).__name__}: {_first_line(err)}); move it away to start afresh"
            ) from None
        if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"{path} is not a self-play checkpoint (format {CHECKPOINT_FORMAT!r})")
        if state.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{path} has checkpoint version {state.get('version')!r}; this code reads "
                                  f"{CHECKPOINT_VERSION}")  # fmt: skip
        try:
            self._load_state(path, state)
        except CheckpointError:
            raise
        except Exception as err:  # a missing key or a tensor of the wrong shape: a damaged or foreign payload
            raise CheckpointError(
                f"checkpoint {path} does not fit this run ({type(err).__name__}: {_first_line(err)})"
            ) from None

    def _load_state(self, path: Path, state: dict[str, Any]) -> None:
        saved = state["args"]
        if not isinstance(saved, dict):
            raise CheckpointError(f"{path} has no settings ('args')")
        fixed = ("game", "players", "num_envs", "rollout", "hidden", "embed", "role_heads", "seed", "features", "net",
                 "shards", "claims", "claims_per_turn", "overlap")  # fmt: skip
        saved = {
            "embed": 0,
            "features": "",
            "net": "mlp",
            "shards": 1,
            "claims": False,
            "claims_per_turn": 1,
            "overlap": False,
        } | saved  # checkpoints from before these options had none
        if self.args.overlap:  # the loss of an --overlap run (its checkpoints from before the option: PPO's)
            fixed, saved = (*fixed, "overlap_objective"), {"overlap_objective": "behaviour"} | saved
        diff = {k: (saved.get(k), getattr(self.args, k)) for k in fixed if saved.get(k) != getattr(self.args, k)}
        if diff:
            raise CheckpointError(f"{path} was trained with other settings (saved, given): {diff}")
        self.model.load_state_dict(state["model"])
        self.optim.load_state_dict(state["optim"])
        self.gen.set_state(state["gen"])
        if self.args.overlap:
            self.update_gen.set_state(state["update_gen"])
        torch.set_rng_state(state["torch_rng"])
        c = state["counters"]
        self.iteration, self.decisions, self.games, self.wall = c["iteration"], c["decisions"], c["games"], c["wall"]
        self.league.load(state["league"], self.model)
        self.shards[0].load(state)
        for shard, st in zip(self.shards[1:], state.get("shards", []), strict=True):
            shard.load(st)
        if self.args.features:
            # A checkpoint holds no belief follower (each is a Python object that remembers its seat's game), so
            # the games in flight are dropped and fresh ones dealt (seeded by the iteration), and the decisions
            # carried into this rollout with them: the run resumes its weights, optimizer, counters and league.
            for shard in self.shards:
                shard.redeal(self.iteration)

    # ---- one iteration ---------------------------------------------------------------------------------------------
    def collect(self, account: bool = True) -> dict[str, float]:
        """Every shard's rollout with the current weights (here, or on the workers); the env and policy seconds.
        ``account``: count its decisions and games now (``--overlap`` counts them when it trains on the rollout)."""
        times = {"env_s": 0.0, "policy_s": 0.0}
        if self.workers is None:
            for shard in self.shards:
                for k, v in shard.collect(self.model).items():
                    times[k] += v
        else:
            args = dataclasses.asdict(self.args)
            weights = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
            league = self.league.state() if self.league.snapshots else None
            jobs = [{"args": args, "index": shard.index, "num_envs": shard.num_envs, "shard": shard.pack(full=False),
                     "weights": weights, "league": league} for shard in self.shards]  # fmt: skip
            for shard, packed in zip(self.shards, self.workers.results(jobs), strict=True):
                shard.unpack(packed)
                for k, v in shard.times.items():
                    times[k] += v
        if account:
            self._account(sum(shard.st_games for shard in self.shards))
            for shard in self.shards:
                shard.st_games = 0
        return times

    def _account(self, games: int) -> None:
        """A rollout's games and decisions into the counters (before its update, which anneals by them)."""
        self.games += games
        self.decisions += self.args.rollout * self.args.num_envs

    def update(self, rolls: list[Rollout] | None = None) -> dict[str, float]:
        """PPO epochs over the rollout. A minibatch is a random set of whole rollout rows (each row: one decision
        of every game slot), so it is a few large block copies instead of a gather of scattered observations (the
        gather cost as much as the network); entries that are not trainable (open decisions, empty carry slots)
        have weight 0. ``rolls``: the shards' rollouts to train on (--overlap; default: the shards' own), which
        carry their open decisions afterwards only if they are still the shards' own."""
        a = self.args
        rolls = [s.roll for s in self.shards] if rolls is None else rolls
        roll = rolls[0] if len(rolls) == 1 else Joined(rolls)
        adv_np, ret_np = roll.advantages(a.gamma, a.gae_lambda)
        train = roll.trainable()
        if self._train_role >= 0:  # --train-role: the other roles' decisions only pass on their values (GAE)
            train &= roll.role == self._train_role
        dev = self.device
        weight_all = torch.from_numpy(train.astype(np.float32)).to(dev)
        adv_all = torch.from_numpy(np.where(train, adv_np, 0.0).astype(np.float32)).to(dev)
        ret_all = torch.from_numpy(np.where(train, ret_np, 0.0).astype(np.float32)).to(dev)
        obs_all = torch.from_numpy(roll.obs).to(dev)
        act_all, logp_old_all = torch.from_numpy(roll.action).to(dev), torch.from_numpy(roll.logp).to(dev)
        num_rows, n_slots, n_act = roll.mask.shape
        # The legal actions of every stored decision, found once per update (not per minibatch and epoch):
        # decision (row r, slot b) is flat row r * n_slots + b, and rollout row r's entries are seg[r]:seg[r + 1].
        flat_rows, flat_cols = legal_indices(roll.mask.reshape(num_rows * n_slots, n_act))
        seg = np.searchsorted(flat_rows, np.arange(num_rows + 1) * n_slots)
        iw_all = None  # --overlap's decoupled loss: clip around the update-start policy, weight from the behaviour's
        if a.overlap and a.overlap_objective == "decoupled":
            logp_old_all, iw_all = proximal(self.model, obs_all, act_all, logp_old_all, weight_all.view(num_rows, -1),
                                            (flat_rows, flat_cols, seg), a.minibatches, a.iw_max)  # fmt: skip
        if a.anneal_lr:
            frac = max(0.0, 1.0 - self.decisions / a.steps)
            for g in self.optim.param_groups:
                g["lr"] = a.lr * max(frac, 0.05)
        stats: dict[str, list[float]] = {k: [] for k in ("entropy", "approx_kl", "clip_frac", "pg_loss", "v_loss")}
        for _ in range(a.epochs):
            perm = torch.randperm(num_rows, generator=self.update_gen)
            for chunk in perm.tensor_split(min(a.minibatches, num_rows)):
                chunk = chunk.to(dev)
                w = weight_all.index_select(0, chunk).view(-1)
                n = float(w.sum())
                if n == 0:
                    continue
                # The chunk's rollout rows, in chunk order: their observations as views (no copy) and their
                # legal entries renumbered to the minibatch's decisions (j * n_slots + slot).
                picked = chunk.tolist()
                rows_np = np.concatenate([flat_rows[seg[r] : seg[r + 1]] + (j - r) * n_slots
                                          for j, r in enumerate(picked)])  # fmt: skip
                cols_np = np.concatenate([flat_cols[seg[r] : seg[r + 1]] for r in picked])
                rows, cols = torch.from_numpy(rows_np).to(dev), torch.from_numpy(cols_np).to(dev)
                logp_all, value = self.model.legal([obs_all[r] for r in picked], rows, cols)
                act = act_all.index_select(0, chunk).view(-1)
                logp = taken_logp(logp_all, rows, cols, act, torch.zeros_like(w))  # none taken: weight 0
                ratio_log = torch.where(w > 0, logp - logp_old_all.index_select(0, chunk).view(-1), 0.0)
                ratio = ratio_log.exp()
                b_adv = adv_all.index_select(0, chunk).view(-1)
                mean = (b_adv * w).sum() / n
                std = (((b_adv - mean) ** 2 * w).sum() / max(n - 1, 1)).sqrt()
                b_adv = (b_adv - mean) / (std + 1e-8)
                pg_w = w if iw_all is None else w * iw_all.index_select(0, chunk).view(-1)
                pg = (torch.max(-b_adv * ratio, -b_adv * ratio.clamp(1 - a.clip, 1 + a.clip)) * pg_w).sum() / n
                v_loss = 0.5 * (((value - ret_all.index_select(0, chunk).view(-1)) ** 2) * w).sum() / n
                ent = torch.zeros_like(w).index_add(0, rows, -(logp_all.exp() * logp_all))
                entropy = (ent * w).sum() / n
                loss = pg + a.vf_coef * v_loss - a.ent_coef * entropy
                self.optim.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), a.max_grad_norm)
                self.optim.step()
                with torch.no_grad():
                    stats["approx_kl"].append(float((((ratio - 1) - ratio_log) * w).sum() / n))
                    stats["clip_frac"].append(float((((ratio - 1).abs() > a.clip).float() * w).sum() / n))
                    stats["entropy"].append(float(entropy))
                    stats["pg_loss"].append(float(pg))
                    stats["v_loss"].append(float(v_loss))
        ret, old_v = ret_np[train], roll.value[train]
        for shard, r in zip(self.shards, rolls, strict=True):
            if shard.roll is r:  # not if --overlap collects the next rollout into the spare (carried there)
                r.carry()
        var = float(ret.var()) if ret.size > 1 else 0.0
        out = {k: float(np.mean(v)) if v else float("nan") for k, v in stats.items()}
        out["explained_var"] = float(1 - (ret - old_v).var() / var) if var > 0 else float("nan")
        out["trained"] = float(ret.size)
        if iw_all is not None:  # how far the data are off the update-start policy (the progress columns iw_*)
            out |= weight_stats(iw_all, weight_all, a.iw_max)
        return out

    # ---- the loop --------------------------------------------------------------------------------------------------
    def columns(self) -> list[str]:
        cols = ["iteration", "decisions", "games", "wall_s", "decisions_per_s", "return_mean"]
        cols += [f"win_{r}" for r in self.role_names] + [f"round_reward_{r}" for r in self.role_names]
        cols += ["entropy", "approx_kl", "clip_frac", "pg_loss", "v_loss", "explained_var", "trained", "league_games"]
        if self.config.claims:  # the learner's talk (_row)
            for r in self.role_names:
                cols += [f"claims_per_decision_{r}", f"lie_rate_{r}", *[f"{k}_claims_{r}" for k in TALK_KINDS]]
        return [*cols, "eval_diff", "eval_lo", "eval_hi", *[f"eval_diff_{r}" for r in self.role_names],
                *(["iw_mean", "iw_truncated"] if self.args.overlap else [])]  # fmt: skip

    def ladder_check(self) -> dict[str, float]:
        """The paired ladder check (:func:`experiments.train.league.evaluate`) of the current policy."""
        sl = self._role

        def role_of(obs: NDArray[np.float32]) -> NDArray[np.int64]:
            return obs[:, sl].argmax(axis=1) if sl.stop > sl.start else np.zeros(len(obs), dtype=np.int64)

        seed = self.args.seed * 1_000_003 + self.iteration  # fresh deals each check, reproducible
        if self.args.features:  # the learned agent keeps its own followers: check the exported file
            path = export(self.model, self.config, self.out / "ladder_check.npz", self.decisions)
            return evaluate(self.config, f"learned:{path}", self.args.opponent(), self.args.eval_games, seed,
                            self.role_names, role_of)  # fmt: skip
        model = FloatInput(self.model, self.config) if isinstance(self.model, CompactPolicy) else self.model
        return evaluate(self.config, model, self.args.opponent(), self.args.eval_games, seed, self.role_names,
                        role_of)  # fmt: skip

    def _tensorboard(self) -> Any:
        if not self.args.tensorboard:
            return None
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard is in the train extra; without it the CSV is the record
            print("note: tensorboard is not installed; writing progress.csv only", file=sys.stderr)
            return None
        # purge_step drops what a killed run wrote after its last checkpoint, so a resumed curve has no doubles.
        return SummaryWriter(str(self.out / "tb"), purge_step=self.decisions if self.args.resume else None)

    def train(self, max_iterations: int | None = None, quiet: bool = False) -> dict[str, float]:
        """Run iterations until ``args.steps`` decisions (or ``max_iterations`` in all); returns the last row."""
        self.start()
        self.out.mkdir(parents=True, exist_ok=True)
        csv_path = self.out / "progress.csv"
        cols = self.columns()
        self._trim_progress(csv_path, cols)
        self.tb = self._tensorboard()
        t_start, d_start = time.perf_counter(), self.decisions
        spent = {"env_s": 0.0, "policy_s": 0.0, "learn_s": 0.0}
        with _stop_signals() as stop, contextlib.closing(self):  # closing: the rollout workers stop at the end
            self._iterate(max_iterations, quiet, csv_path, cols, spent, stop)
            if stop:  # checkpoint and export below, then exit 128 + signum (main)
                self.stopped_by = stop[0]
                print(
                    f"{signal.Signals(stop[0]).name}: stopped after iteration {self.iteration}; writing "
                    f"{self.out / 'checkpoint.pt'} and policy.npz (--resume continues)",
                    file=sys.stderr,
                    flush=True,
                )
            # The last checkpoint and export run with the signals still caught: a second signal stops at once, but
            # both files are written atomically, so the previous ones stay whole.
            self.save(self.out / "checkpoint.pt")
            export(self.model, self.config, self.out / "policy.npz", self.decisions)
        if self.tb is not None:
            self.tb.close()
        row = self.last_row
        row.update(spent, elapsed_s=time.perf_counter() - t_start)
        row["rate"] = (self.decisions - d_start) / max(row["elapsed_s"], 1e-9)
        if "first_s" in spent:  # the rate after the first iteration (nan with one iteration)
            rest = row["elapsed_s"] - spent["first_s"]
            done = self.decisions - d_start - spent["first_decisions"]
            row["rate_after_first"] = done / rest if rest > 0 else math.nan
        return row

    def _trim_progress(self, csv_path: Path, cols: list[str]) -> None:
        """A fresh ``progress.csv`` (header only), or on resume the rows up to the checkpoint's iteration: a killed
        run wrote rows after its last checkpoint, which the resumed run writes again (TensorBoard's purge_step)."""
        rows: list[list[str]] = []
        if self.args.resume and self.iteration > 0 and csv_path.exists():
            try:
                with open_regular(csv_path, MAX_PROGRESS_BYTES) as fh:
                    lines = fh.read().decode("utf-8", "replace").splitlines()
            except FileRefusedError as err:
                raise CheckpointError(f"cannot resume: {err}") from None
            reader = list(csv.reader(lines))
            if reader and reader[0] == cols:
                rows = [r for r in reader[1:] if r and _iteration_of(r[0]) <= self.iteration]

        def write(fh: Any) -> None:
            text = io.StringIO()
            csv.writer(text).writerows([cols, *rows])
            fh.write(text.getvalue().encode())

        write_atomic(csv_path, write)

    def _iterate(self, max_iterations: int | None, quiet: bool, csv_path: Path, cols: list[str],
                 spent: dict[str, float], stop: list[int]) -> None:  # fmt: skip
        """The training loop: iterations until ``args.steps`` decisions, ``max_iterations``, or a signal in ``stop``."""
        a = self.args
        t_start, d_start, last_log = time.perf_counter(), self.decisions, 0.0
        row: dict[str, float] = {}
        # --overlap: a rollout collected but not yet trained on is trained on before the loop ends (a stop signal
        # included), so a checkpoint never holds one
        while (self.pipeline is not None and self.pipeline.pending) or (
            not stop and self.decisions < a.steps and (max_iterations is None or self.iteration < max_iterations)
        ):
            t0 = time.perf_counter()
            if self.pipeline is not None:  # the next rollout meanwhile, unless it is the last or a checkpoint is due
                nxt = self.iteration + 1
                more = (not stop and nxt % a.checkpoint_every != 0
                        and (max_iterations is None or nxt < max_iterations))  # fmt: skip
                times, stats = self.pipeline.step(more)  # with its own learn_s
                t1 = t0
            else:
                times = self.collect()
                t1 = time.perf_counter()
                stats = self.update()
            self.iteration += 1
            if a.league > 0 and a.snapshot_every and self.iteration % a.snapshot_every == 0:
                self.league.add_snapshot(self.model, self.iteration)
            if a.eval_every and self.iteration % a.eval_every == 0:
                stats.update(self.ladder_check())
            t2 = time.perf_counter()
            self.wall += t2 - t0
            if "first_s" not in spent:  # start-up (a Ray cluster, compiling) lands in the first iteration: --bench
                spent["first_s"], spent["first_decisions"] = t2 - t_start, self.decisions - d_start
            rate = (self.decisions - d_start) / max(t2 - t_start, 1e-9)
            row = self._row(rate, stats)
            with csv_path.open("a", newline="") as fh:
                csv.writer(fh).writerow([row.get(c, float("nan")) for c in cols])
            if self.tb is not None:
                for c in cols[4:]:
                    v = row.get(c, float("nan"))
                    if not math.isnan(v):
                        self.tb.add_scalar(c, v, self.decisions)
            for shard in self.shards:
                shard.reset_stats()
            if self.iteration % a.checkpoint_every == 0:
                self.save(self.out / "checkpoint.pt")
            times.setdefault("learn_s", t2 - t1)
            for k in ("env_s", "policy_s", "learn_s"):
                spent[k] += times[k]
            if not quiet and (t2 - last_log >= a.log_every or self.decisions >= a.steps):
                last_log = t2
                print(self._line(row, rate), file=sys.stderr, flush=True)
        self.last_row = row

    def _row(self, rate: float, stats: dict[str, float]) -> dict[str, float]:
        row: dict[str, float] = {"iteration": self.iteration, "decisions": self.decisions, "games": self.games,
                                 "wall_s": round(self.wall, 3), "decisions_per_s": round(rate, 1)}  # fmt: skip
        returns = [x for shard in self.shards for x in shard.st_returns]
        rounds, wins, reward = (sum(getattr(sh, k) for sh in self.shards)
                                for k in ("st_rounds", "st_wins", "st_round_reward"))  # fmt: skip
        row["return_mean"] = float(np.mean(returns)) if returns else float("nan")
        for i, r in enumerate(self.role_names):
            n = rounds[i]
            row[f"win_{r}"] = float(wins[i] / n) if n else float("nan")
            row[f"round_reward_{r}"] = float(reward[i] / n) if n else float("nan")
        row["league_games"] = float(sum(v for sh in self.shards for k, v in sh.seating.counts.items() if k != "self"))
        if self.config.claims:  # the learner's talk (shard.TALK_KINDS): claims per decision, lies per known claim
            talk = sum(sh.st_talk for sh in self.shards)
            for i, r in enumerate(self.role_names):
                dec, made, known, lies = talk[i, :4]
                row[f"claims_per_decision_{r}"] = float(made / dec) if dec else float("nan")
                row[f"lie_rate_{r}"] = float(lies / known) if known else float("nan")
                for j, kind in enumerate(TALK_KINDS):
                    row[f"{kind}_claims_{r}"] = float(talk[i, 4 + j])
        row.update(stats)
        return row

    def _line(self, row: dict[str, float], rate: float) -> str:
        a = self.args
        frac = min(1.0, self.decisions / a.steps)
        eta = max(0, a.steps - self.decisions) / max(rate, 1e-9)
        bar = "#" * int(20 * frac) + "." * (20 - int(20 * frac))
        wins = " ".join(f"{r}={row[f'win_{r}']:.2f}" for r in self.role_names if not math.isnan(row[f"win_{r}"]))
        clock = time.strftime("%H:%M:%S", time.gmtime(eta))
        check = ""
        if not math.isnan(row.get("eval_diff", float("nan"))):
            check = (f" | vs {a.opponent()} {row['eval_diff']:+.2f} [{row['eval_lo']:+.2f}, {row['eval_hi']:+.2f}]"
                     f" over {a.eval_games}")  # fmt: skip
        return (f"[{bar}] {self.decisions:,}/{a.steps:,} {rate:,.0f} dec/s ETA {clock}"
                f" | it {self.iteration} return {row['return_mean']:.2f} win {wins or '-'} ent {row['entropy']:.2f}"
                f" kl {row['approx_kl']:.4f} clip {row['clip_frac']:.2f}{check}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        trainer = Trainer(args)
    except ValueError as e:  # ConfigError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        row = trainer.train()
    except CheckpointError as e:  # --resume with a damaged or foreign checkpoint: one line, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    if trainer.stopped_by:
        return 128 + trainer.stopped_by  # as a process killed by the signal would report it
    if args.bench:
        total = row["elapsed_s"]
        print(f"game={args.game} players={trainer.config.num_players} num_envs={args.num_envs} "
              f"threads={args.threads} decisions={trainer.decisions:,} elapsed={total:.1f}s "
              f"rate={row['rate']:,.0f} decisions/s (env {row['env_s']:.1f}s, policy {row['policy_s']:.1f}s, "
              f"learning {row['learn_s']:.1f}s); after the first iteration ({row.get('first_s', math.nan):.1f}s) "
              f"steady={row.get('rate_after_first', math.nan):,.0f} decisions/s")  # fmt: skip
    return 0
