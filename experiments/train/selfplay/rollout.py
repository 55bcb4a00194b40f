"""Per-seat turn accounting over the vector env's batched games (a seat's transition runs from its decision to its
next one) and the env's state in a checkpoint."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from saboteur_env.vector import VectorEnv


# ---- the rollout with per-seat turn accounting --------------------------------------------------------------------
class Rollout:
    """Decisions of ``rows`` vector steps plus up to one carried decision per (slot, seat), and their credit.

    Row ``s < N`` holds seat ``s``'s carried decision of each slot; row ``N + t`` the decisions of step ``t``.
    Call :meth:`decide` when a step's decisions are recorded (it closes each actor's previous transition with the
    rewards it accumulated), :meth:`earn` with the step's results, :meth:`advantages` at the rollout's end, then
    :meth:`carry` to move the open decisions into the carry rows."""

    ARRAYS = ("obs", "mask", "action", "logp", "value", "role", "seat", "learner")

    def __init__(self, steps: int, num_envs: int, num_players: int, obs_size: int, num_actions: int) -> None:
        n, b = num_players, num_envs
        self.steps, self.num_envs, self.num_players = steps, b, n
        r = n + steps
        self.obs = np.zeros((r, b, obs_size), dtype=np.float32)
        self.mask = np.zeros((r, b, num_actions), dtype=np.int8)
        self.action = np.zeros((r, b), dtype=np.int64)
        self.logp = np.zeros((r, b), dtype=np.float32)
        self.value = np.zeros((r, b), dtype=np.float32)
        self.role = np.zeros((r, b), dtype=np.int64)  # the actor's role (statistics; heads come from obs)
        self.seat = np.zeros((r, b), dtype=np.int64)
        self.seat[:n] = np.arange(n)[:, None]
        self.learner = np.ones((r, b), dtype=bool)  # the decision was the learner's (a league opponent's: not trained)
        self.valid = np.zeros((r, b), dtype=bool)  # a decision is stored here
        self.complete = np.zeros((r, b), dtype=bool)  # its transition has ended (next decision or game end)
        self.reward = np.zeros((r, b), dtype=np.float32)
        self.done = np.zeros((r, b), dtype=bool)
        self.open = np.full((b, n), -1, dtype=np.int64)  # row of each (slot, seat)'s open decision, -1: none
        self.acc = np.zeros((b, n), dtype=np.float32)  # rewards each seat earned since its open decision
        self._slots = np.arange(b)

    def row(self, t: int) -> int:
        return self.num_players + t

    def decide(self, row: int, seats: NDArray[np.int64]) -> None:
        """Step ``row``'s decisions are stored: seat ``seats[b]`` acted in slot ``b``."""
        b = self._slots
        prev = self.open[b, seats]
        has = prev >= 0
        self.reward[prev[has], b[has]] = self.acc[b[has], seats[has]]
        self.complete[prev[has], b[has]] = True
        self.done[prev[has], b[has]] = False
        self.acc[b, seats] = 0.0
        self.open[b, seats] = row
        self.seat[row] = seats
        self.valid[row] = True
        self.complete[row] = False

    def earn(self, rewards: NDArray[np.float32], terminated: NDArray[np.bool_]) -> None:
        """A step's ``rewards`` (slots x seats) go to every seat's open transition; finished games close them all."""
        self.acc += rewards
        ended = np.flatnonzero(terminated)
        if ended.size:
            for s in range(self.num_players):
                prev = self.open[ended, s]
                has = prev >= 0
                rows, slots = prev[has], ended[has]
                self.reward[rows, slots] = self.acc[slots, s]
                self.complete[rows, slots] = True
                self.done[rows, slots] = True
            self.open[ended] = -1
            self.acc[ended] = 0.0

    def advantages(self, gamma: float, lam: float) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """GAE along each (slot, seat) stream; an open decision bootstraps its predecessor and gets NaN itself."""
        b, n = self.num_envs, self.num_players
        next_adv = np.zeros((b, n), dtype=np.float32)
        next_val = np.zeros((b, n), dtype=np.float32)
        adv = np.full(self.value.shape, np.nan, dtype=np.float32)
        slots = self._slots
        for r in range(self.value.shape[0] - 1, -1, -1):
            v = self.valid[r]
            if not v.any():
                continue
            sl, st = slots[v], self.seat[r, v]
            val = self.value[r, v]
            comp = self.complete[r, v]
            live = (~self.done[r, v]).astype(np.float32)
            delta = self.reward[r, v] + gamma * live * next_val[sl, st] - val
            a = delta + gamma * lam * live * next_adv[sl, st]
            adv[r, v] = np.where(comp, a, np.nan)
            next_adv[sl, st] = np.where(comp, a, 0.0)
            next_val[sl, st] = val
        return adv, adv + self.value

    def trainable(self) -> NDArray[np.bool_]:
        return self.valid & self.complete & self.learner

    def carry(self) -> None:
        """Move every open decision to its seat's carry row; the step rows become free."""
        self.carry_into(self)

    def carry_into(self, other: Rollout) -> None:
        """Move every open decision to its seat's carry row of ``other`` (this rollout or one of the same shape,
        whose step rows become free); another rollout leaves this one whole: the overlapped trainer collects into
        ``other`` while it updates on this one."""
        n = self.num_players
        slots, seats = np.nonzero(self.open >= 0)
        src = self.open[slots, seats]
        for name in self.ARRAYS:
            getattr(other, name)[seats, slots] = getattr(self, name)[src, slots]
        other.valid[:] = False
        other.complete[:] = False
        other.reward[:] = 0.0
        other.done[:] = False
        other.valid[seats, slots] = True
        other.open[:] = -1
        other.open[slots, seats] = seats
        other.acc[:] = self.acc
        other.seat[:n] = np.arange(n)[:, None]

    def state(self) -> dict[str, torch.Tensor]:
        """The carried decisions and the ledger (for checkpoints)."""
        n = self.num_players
        out = {name: torch.from_numpy(getattr(self, name)[:n].copy()) for name in self.ARRAYS}
        out.update(valid=torch.from_numpy(self.valid[:n].copy()), open=torch.from_numpy(self.open.copy()),
                   acc=torch.from_numpy(self.acc.copy()))  # fmt: skip
        return out

    def load(self, state: dict[str, torch.Tensor]) -> None:
        n = self.num_players
        for name in (*self.ARRAYS, "valid"):
            getattr(self, name)[:n] = state[name].numpy()
        self.open[:] = state["open"].numpy()
        self.acc[:] = state["acc"].numpy()


# ---- training -----------------------------------------------------------------------------------------------------
def _arrays(env: VectorEnv) -> tuple[tuple[str, dict[str, NDArray[Any]]], ...]:
    # VectorEnv has no public state API yet: its games live in the batch arenas, the last step's outputs in _buf,
    # the claims of a claims game in its ClaimsBatch (its log of truth labels is not game state).
    parts: tuple[tuple[str, dict[str, NDArray[Any]]], ...] = (("arena_", env.batch.arenas), ("buf_", env._buf))
    if env.claims is not None:
        parts += (("claims_", {k: getattr(env.claims, k) for k in env.claims.STATE}),)
    return parts


def _env_state(env: VectorEnv) -> dict[str, torch.Tensor]:
    out = {}
    for prefix, arrays in _arrays(env):
        for k, a in arrays.items():
            a = a.view(np.int64) if a.dtype == np.uint64 else a
            out[prefix + k] = torch.from_numpy(a.copy())
    return out


def _load_env_state(env: VectorEnv, state: dict[str, torch.Tensor]) -> None:
    for prefix, arrays in _arrays(env):
        for k, a in arrays.items():
            src = state[prefix + k].numpy()
            if src.shape != a.shape:  # e.g. a checkpoint written before the core's state layout changed
                raise ValueError(f"checkpoint field {prefix + k} has shape {src.shape}; this version's game state "
                                 f"needs {a.shape} (the checkpoint is from another saboteur-env version: start a "
                                 f"new run)")  # fmt: skip
            (a.view(np.int64) if a.dtype == np.uint64 else a)[...] = src
    env._started = True
