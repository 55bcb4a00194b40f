"""Per-seat transitions from the multi-agent :class:`~saboteur_env.vector.VectorEnv` stream.

``VectorEnv.step`` hands out the decision of whichever seat is to act in each game and the rewards of **every** seat
(``rewards[b, p]``, a round end pays all seats at once). A trainer needs transitions per seat instead: from one
decision of a seat to that seat's next decision (or to the end of the game), with everything the seat earned in
between, whoever acted. :class:`SeatTransitions` is that bookkeeping and nothing else: it keeps no observations, only
the caller's *keys* (an int64 per decision, e.g. the row of the caller's buffer where it stored the decision).

Contract (one instance per ``VectorEnv``, same ``num_envs`` and ``num_players``)::

    tr = SeatTransitions(env.num_envs, env.num_players)
    obs, info = env.reset(seed=0)
    for t in range(T):
        actions = policy(obs, info["action_mask"])           # store obs / actions / values under keys[b]
        keys = t * env.num_envs + np.arange(env.num_envs)
        done1 = tr.decide(info["seat"], keys)                  # closes each actor's previous decision
        obs, rewards, term, trunc, info = env.step(actions)
        done2 = tr.earn(rewards, term | trunc)                 # credits every seat; closes finished games
    open_keys = tr.open_keys()                                 # decisions still waiting for their seat's next one

* :meth:`decide` must be called with the seats that act (``info["seat"]``) *before* the step, :meth:`earn` with that
  step's results after it: each decision is closed exactly once, by its seat's next :meth:`decide` in the same slot
  (``done=False``, ``next_key`` = that decision's key, the bootstrap) or by the end of its game in :meth:`earn`
  (``done=True``, ``next_key=-1``).
* ``reward`` of a closed transition is the sum of ``rewards[b, seat]`` over the steps from its decision (included)
  to the closing one (excluded): summed over a game, a seat's transitions give its return (``final_returns`` with
  ``reward="gold"``).
* The games' automatic reset is followed: a decision made in a slot's new game starts a new chain.
* A decision whose seat has not acted again when the rollout stops stays open: :meth:`open_keys` lists them (bootstrap
  from their value), and the next rollout's :meth:`decide` / :meth:`earn` close them as usual.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.errors import ConfigError, SeatError


class Closed(NamedTuple):
    """Transitions closed by one call, as parallel arrays (one entry per transition)."""

    slot: NDArray[np.int64]
    seat: NDArray[np.int64]
    key: NDArray[np.int64]  # the decision that started the transition (the caller's key)
    next_key: NDArray[np.int64]  # the same seat's next decision in the same game, -1 when the game ended
    reward: NDArray[np.float32]  # what the seat earned from its decision to the next one (or the game's end)
    done: NDArray[np.bool_]  # the game ended (do not bootstrap)

    @property
    def size(self) -> int:
        """The number of transitions (``len()`` of a NamedTuple is its number of fields)."""
        return int(self.key.shape[0])


class SeatTransitions:
    """Per-seat transition bookkeeping over a multi-agent ``VectorEnv`` (the module docstring has the contract)."""

    def __init__(self, num_envs: int, num_players: int) -> None:
        for name, value in (("num_envs", num_envs), ("num_players", num_players)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ConfigError(f"{name}={value!r} must be a positive int")
        self.num_envs, self.num_players = int(num_envs), int(num_players)
        b, n = self.num_envs, self.num_players
        self._open = np.full((b, n), -1, dtype=np.int64)  # key of each (slot, seat)'s open decision, -1: none
        self._acc = np.zeros((b, n), dtype=np.float32)  # rewards the seat earned since that decision
        self._slots = np.arange(b)

    def decide(self, seats: NDArray[np.integer], keys: NDArray[np.integer]) -> Closed:
        """Seat ``seats[b]`` decides in slot ``b``, its decision stored under ``keys[b]``; returns the transitions
        this closes (each actor's previous decision in its slot, ``done=False``)."""
        b, n = self.num_envs, self.num_players
        s = np.asarray(seats)
        k = np.asarray(keys)
        if s.shape != (b,) or s.dtype.kind not in "iu":
            raise SeatError(f"seats must be {b} integer seats, one per game (got shape {s.shape}, {s.dtype})")
        if s.size and (s.min() < 0 or s.max() >= n):
            bad = int(s[(s < 0) | (s >= n)][0])
            raise SeatError(f"seat {bad} is out of range; valid: 0..{n - 1}")
        if k.shape != (b,) or k.dtype.kind not in "iu":
            raise ConfigError(f"keys must be {b} integer keys, one per game (got shape {k.shape}, {k.dtype})")
        if k.size and k.min() < 0:
            raise ConfigError(f"keys must be >= 0 (got {int(k.min())}); -1 means 'no decision'")
        s, k = s.astype(np.int64), k.astype(np.int64)
        sl = self._slots
        prev = self._open[sl, s]
        has = prev >= 0
        out = Closed(sl[has], s[has], prev[has], k[has], self._acc[sl[has], s[has]].copy(),
                     np.zeros(int(has.sum()), dtype=bool))  # fmt: skip
        self._acc[sl, s] = 0.0
        self._open[sl, s] = k
        return out

    def earn(self, rewards: NDArray[np.floating], ended: NDArray[np.bool_]) -> Closed:
        """A step's ``rewards`` (``num_envs x num_players``) go to every seat's open decision; in the slots where
        ``ended`` is True the game is over and all its open decisions close (``done=True``)."""
        b, n = self.num_envs, self.num_players
        r = np.asarray(rewards)
        e = np.asarray(ended)
        if r.shape != (b, n):
            raise ConfigError(f"rewards must have shape ({b}, {n}) (games x seats), got {r.shape}")
        if e.shape != (b,) or e.dtype != np.bool_:
            raise ConfigError(f"ended must be {b} bools, one per game (got shape {e.shape}, {e.dtype})")
        self._acc += r
        slots = np.flatnonzero(e)
        if not slots.size:
            return _empty()
        sub = self._open[slots]
        sl, st = np.nonzero(sub >= 0)
        slot = slots[sl]
        out = Closed(slot, st.astype(np.int64), sub[sl, st], np.full(sl.size, -1, dtype=np.int64),
                     self._acc[slot, st].copy(), np.ones(sl.size, dtype=bool))  # fmt: skip
        self._open[slots] = -1
        self._acc[slots] = 0.0
        return out

    def open_keys(self) -> NDArray[np.int64]:
        """``(num_envs, num_players)``: the key of each seat's open decision in each slot, -1 where none."""
        return self._open.copy()

    def pending_rewards(self) -> NDArray[np.float32]:
        """``(num_envs, num_players)``: what each seat earned since its open decision (not yet in a transition)."""
        return self._acc.copy()

    def reset(self) -> None:
        """Forget every open decision (after ``env.reset()``: the games they belonged to are gone)."""
        self._open[:] = -1
        self._acc[:] = 0.0


def _empty() -> Closed:
    z = np.zeros(0, dtype=np.int64)
    return Closed(z, z.copy(), z.copy(), z.copy(), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=bool))


__all__ = ["Closed", "SeatTransitions"]
