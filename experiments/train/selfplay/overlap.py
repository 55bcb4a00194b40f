"""``--overlap`` (issue 37): the next rollout collected in a thread while the PPO update trains on the last one.

The two halves of an iteration, the rollout (env steps, the batched forward, the draws) and the update, ran one after
the other on one core. Here the trainer's thread updates on the rollout that waits while a second thread collects
the next one with a copy of the current weights (before this update): the data lag the weights by one
iteration. The default loss is decoupled PPO (:func:`proximal`: the ratio clipped around the policy at the update's
start, the surrogate weighted by that policy's ratio to the behaviour one); ``--overlap-objective behaviour`` clips
around the logged behaviour log-probabilities instead (it learned less per decision: docs/selfplay.md). Each shard
alternates two rollout buffers (:meth:`Shard.next_roll`: the open decisions carried into the spare one). Torch ops and
the numba kernels release the GIL, so the threads overlap on two cores. The update draws its minibatches from its
own generator (the trainer's ``update_gen``), the collection samples with the shards' own, so the run does not
depend on the threads' timing.
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any, Protocol

import numpy as np
import torch
from numpy.typing import NDArray

from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import taken_logp
from experiments.train.selfplay.rollout import Rollout
from experiments.train.selfplay.shard import Model, Shard


class Learner(Protocol):
    """What the pipeline needs of the trainer (``experiments.train.selfplay.trainer.Trainer``, which owns it)."""

    args: Args
    model: Model
    shards: list[Shard]
    decisions: int

    def collect(self, account: bool = True) -> dict[str, float]: ...

    def update(self, rolls: list[Rollout] | None = None) -> dict[str, float]: ...

    def _account(self, games: int) -> None: ...


class Pipeline:
    """The trainer's collect-beside-update loop state: the copy of the weights the collecting thread plays, and
    whether a collected rollout waits for its update (``pending``)."""

    def __init__(self, trainer: Learner) -> None:
        self.trainer = trainer
        self.behaviour: Model | None = None
        self.pending = False  # a collected rollout waits for its update
        self.waiting: list[dict[str, Any]] = []  # its statistics per shard (Shard.take_stats)

    def step(self, more: bool) -> tuple[dict[str, float], dict[str, float]]:
        """One update on the waiting rollout (collected first if none waits), with the next rollout collected in a
        thread meanwhile when ``more`` and the decision budget allows (else the pipeline drains: the shards'
        rollouts carry as after a plain update). The counters and the shards' statistics (the progress row) are the
        trained rollout's, as in a plain run. Returns the env / policy / learn seconds and the update's statistics."""
        tr = self.trainer
        times = {"env_s": 0.0, "policy_s": 0.0}
        if not self.pending:  # the start, a resume or the iteration after a drain
            times.update(tr.collect(account=False))
            self.waiting = [shard.take_stats() for shard in tr.shards]
            self.pending = True
        rolls = [shard.roll for shard in tr.shards]
        batch = tr.args.rollout * tr.args.num_envs
        launch = more and tr.decisions + batch < tr.args.steps  # the decisions collected so far, as a plain run
        tr._account(sum(int(st["st_games"]) for st in self.waiting))
        thread: threading.Thread | None = None
        result: dict[str, Any] = {}
        if launch:
            if self.behaviour is None:
                self.behaviour = copy.deepcopy(tr.model)
            self.behaviour.load_state_dict(tr.model.state_dict())  # the current weights, before this update
            behaviour = self.behaviour
            for shard in tr.shards:
                shard.roll = shard.next_roll()

            def run() -> None:
                try:
                    with torch.no_grad():  # grad mode is per thread
                        result["times"] = [shard.collect(behaviour) for shard in tr.shards]
                except BaseException as err:  # re-raised in the trainer's thread after the join
                    result["error"] = err

            thread = threading.Thread(target=run, name="selfplay-rollout", daemon=True)
            thread.start()
        t1 = time.perf_counter()
        try:
            stats = tr.update(rolls)
        finally:
            if thread is not None:
                thread.join()
        times["learn_s"] = time.perf_counter() - t1
        if "error" in result:
            raise result["error"]
        collected = [shard.take_stats() for shard in tr.shards] if thread is not None else []
        for shard, st in zip(tr.shards, self.waiting, strict=True):
            shard.put_stats(st)  # the row reports the rollout just trained on
        self.waiting, self.pending = collected, thread is not None
        for shard_times in result.get("times", []):
            for k, v in shard_times.items():
                times[k] += v
        return times, stats


def proximal(model: Model, obs: torch.Tensor, action: torch.Tensor, logp_behaviour: torch.Tensor,
             train: torch.Tensor, legal: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
             blocks: int, iw_max: float) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The decoupled objective's inputs (Hilton et al. 2021, "Batch size-invariance for policy optimization"): the
    taken actions' log-probabilities under the update-start weights (one forward over the rollout, no gradient;
    PPO clips its ratio around these) and the importance weights ``exp(proximal - behaviour)`` truncated at
    ``iw_max`` (the loss is an expectation under the policy that collected the data, one iteration older). Entries
    that are not trained (``train`` 0) keep the behaviour's value and weight 1. ``legal``: the rollout's flat legal
    entries and the row segments of :meth:`Trainer.update`; shapes follow ``logp_behaviour`` (rows x slots)."""
    flat_rows, flat_cols, seg = legal
    num_rows, n_slots = logp_behaviour.shape
    prox = torch.zeros_like(logp_behaviour).view(-1)
    with torch.no_grad():
        for chunk in np.array_split(np.arange(num_rows), min(blocks, num_rows)):
            if chunk.size == 0:
                continue
            lo, hi = int(chunk[0]), int(chunk[-1]) + 1
            rows = torch.from_numpy(flat_rows[seg[lo] : seg[hi]] - lo * n_slots).to(obs.device)
            cols = torch.from_numpy(flat_cols[seg[lo] : seg[hi]]).to(obs.device)
            logp_all, _ = model.legal(obs[lo:hi].reshape(-1, obs.shape[-1]), rows, cols)
            block = prox[lo * n_slots : hi * n_slots]  # a view: written in place
            block.copy_(taken_logp(logp_all, rows, cols, action[lo:hi].reshape(-1), block))
    prox = torch.where(train.view(-1) > 0, prox, logp_behaviour.view(-1)).view(num_rows, n_slots)
    return prox, (prox - logp_behaviour).exp().clamp(max=iw_max)


def weight_stats(iw: torch.Tensor, train: torch.Tensor, iw_max: float) -> dict[str, float]:
    """How far a rollout is off the update-start policy: the mean importance weight of its trained decisions and the
    share of them truncated at ``iw_max`` (progress columns ``iw_mean``, ``iw_truncated``; NaN with none trained)."""
    on = train.reshape(-1) > 0
    w = iw.reshape(-1)[on]
    if w.numel() == 0:
        return {"iw_mean": float("nan"), "iw_truncated": float("nan")}
    return {"iw_mean": float(w.mean()), "iw_truncated": float((w >= iw_max).float().mean())}
