"""The ``bayes`` belief features of many games at once, from the compiled core's event logs (issue 35: rollouts
that read beliefs).

:class:`~agents.base.belief_features.BeliefFeatures` follows one seat in Python: a public board replayed from the
events (:class:`~agents.base.tracker.ViewTracker`) and two exact Bayes models over (saboteur set, gold slot)
(:class:`~agents.base.beliefs.BayesModel`, the fixed behaviour tables), the seat's own and a public observer's.
Inside a search's rollouts every seat of every row would need one, advanced at every step - so the rollouts
played a network that reads the observation alone, whose seats never grow suspicious of a saboteur beyond the last
16 public events. :class:`BatchedBeliefs` computes the same features for a whole :class:`~saboteur_env.core.batch.Batch`
in two compiled loops, with no Python per game:

* :meth:`BatchedBeliefs.follow` replays each row's new events (the core's public event log, read from where the
  row was last followed) on the row's own public board and adds their log-likelihoods to the row's *public*
  log-likelihood table ``(H, 3)``: the replay, the tile distances, the event categories and the trembling-hand
  likelihoods of the Python models, ported one to one.
* :meth:`BatchedBeliefs.features` reads the features of the seat to act: a seat's own model is the public table
  restricted to the saboteur sets that agree with its own role, and to the goal slots its own map results leave
  (its own model differs from the public one by exactly those two facts: both add the same log-likelihoods).

A row's state starts at the round's beginning (a fresh game) or at a given root (a search: the searching seat's
public model and board, shared by every determinization). ``tests/test_batched_beliefs.py`` checks the features
against a :class:`BeliefFeatures` follower of every seat over whole games.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import DEAD_END_KIND, INF, PublicBoard
from agents.base.beliefs import FIXED_TABLES, BayesModel, BehaviourTables
from agents.base.ladder import CAP
from saboteur_env import GameConfig
from saboteur_env.base.board import geometry
from saboteur_env.base.cards import GOAL_KINDS, KIND_GOAL_GOLD, SHAPE_ID
from saboteur_env.base.kernels import CLOSURE, S_OPEN  # the core's arm closure per shape, open arms per shape
from saboteur_env.base.state import EventType

__all__ = ["BatchedBeliefs"]

_PLACE, _BREAK, _REPAIR, _ROCKFALL = int(EventType.PLACE), int(EventType.BREAK), int(EventType.REPAIR), int(
    EventType.ROCKFALL
)
_REVEAL, _ROUND_END = int(EventType.REVEAL), int(EventType.ROUND_END)


def _shape_of() -> NDArray[np.int64]:
    """Shape id by (kind, rotation), -1 where none: the public board's ``place`` as a table."""
    shape_of = np.full((1 + max(k for k, _ in SHAPE_ID), 2), -1, dtype=np.int64)
    for (kind, rot), sid in SHAPE_ID.items():
        shape_of[kind, rot] = sid
    return shape_of


_SHAPE_OF = _shape_of()
_DEAD = DEAD_END_KIND.astype(np.int64)
_GOAL_KIND = np.zeros(len(_DEAD) + 8, dtype=np.int64)  # 1 at the goal cards' kinds (a table over every kind id)
_GOAL_KIND[list(GOAL_KINDS)] = 1


@numba.njit(cache=True, nogil=True)
def _distance(shape, nbr, goals, start, closure, s_open, reach, stack, frontier, dist, out):
    """``out[g]``: the tiles still needed from the start's network to goal slot ``g`` on the board ``shape`` (shape
    ids, -1 empty or face-down), exactly ``agents.base.analysis.PublicBoard.distance``."""
    hw = shape.size
    for c in range(hw):
        reach[c] = 0
    reach[start] = closure[shape[start], 15]
    stack[0] = start
    sp = 1
    while sp > 0:  # the arms connected to the start: the core's flood fill
        sp -= 1
        c = stack[sp]
        r = reach[c]
        for d in range(4):
            if (r >> d) & 1:
                j = nbr[c, d]
                if j < 0 or shape[j] < 0:
                    continue
                od = (d + 2) & 3
                if (s_open[shape[j]] >> od) & 1 and not (reach[j] >> od) & 1:
                    reach[j] |= closure[shape[j], 1 << od]
                    stack[sp] = j
                    sp += 1
    nf = 0
    for c in range(hw):  # the frontier: empty (or face-down goal) cells that a connected arm points at
        if shape[c] >= 0:
            continue
        for d in range(4):
            j = nbr[c, d]
            if j >= 0 and (reach[j] >> ((d + 2) & 3)) & 1:
                frontier[nf] = c
                nf += 1
                break
    for g in range(3):
        gcell = goals[g]
        out[g] = INF
        facing = False
        for i in range(nf):
            if frontier[i] == gcell:
                facing = True
        if facing:
            out[g] = 0
            continue
        if nf == 0:
            continue
        for c in range(hw):  # breadth first from the goal through empty cells that are not goal cells
            dist[c] = INF
        head, tail = 0, 0
        for d in range(4):
            j = nbr[gcell, d]
            if j >= 0 and shape[j] < 0 and not _is_goal(j, goals):
                dist[j] = 1
                stack[tail] = j
                tail += 1
        while head < tail:
            x = stack[head]
            head += 1
            for d in range(4):
                j = nbr[x, d]
                if j >= 0 and shape[j] < 0 and not _is_goal(j, goals) and dist[j] == INF:
                    dist[j] = dist[x] + 1
                    stack[tail] = j
                    tail += 1
        best = INF
        for i in range(nf):
            if dist[frontier[i]] < best:
                best = dist[frontier[i]]
        out[g] = best


@numba.njit(cache=True, nogil=True, inline="always")
def _is_goal(cell, goals):
    return cell == goals[0] or cell == goals[1] or cell == goals[2]


@numba.njit(cache=True, nogil=True)
def _follow(n, events, num_events, seen, ll, board, dist, start_board, start_dist, sets, lp_place, lp_break,
            lp_repair, shape_of, dead, goal_kind, gold_kind, nbr, goals, start, closure, s_open):  # fmt: skip
    """Replay the new events of rows ``0..n-1`` (see :meth:`BatchedBeliefs.follow`)."""
    hw = board.shape[1]
    h_count = sets.shape[0]
    reach = np.zeros(hw, dtype=np.int64)
    stack = np.zeros(4 * hw + 4, dtype=np.int64)
    frontier = np.zeros(hw, dtype=np.int64)
    work = np.zeros(hw, dtype=np.int64)
    before = np.zeros(3, dtype=np.int64)
    cats = np.zeros(3, dtype=np.int64)
    for b in range(n):
        for i in range(seen[b], num_events[b]):
            et = events[b, i, 0]
            actor = events[b, i, 1]
            kind = events[b, i, 2]
            target = events[b, i, 3]
            cell = events[b, i, 4]
            arg = events[b, i, 5]
            if et == _PLACE or et == _ROCKFALL:  # a placement or a rockfall: categories by the distances it changed
                for g in range(3):
                    before[g] = dist[b, g]
                board[b, cell] = shape_of[kind, arg] if et == _PLACE else -1
                _distance(board[b], nbr, goals, start, closure, s_open, reach, stack, frontier, work, dist[b])
                de = dead[kind] if et == _PLACE else dead[arg]
                for g in range(3):
                    a = dist[b, g]
                    if et == _PLACE and de:
                        cats[g] = 2 if before[g] <= 3 else 1  # a dead end near the tunnel front is sabotage
                    elif et == _ROCKFALL and de:
                        cats[g] = 0  # clearing a dead end helps
                    elif a < before[g]:
                        cats[g] = 0
                    elif a > before[g]:
                        cats[g] = 2
                    else:
                        cats[g] = 1
                for h in range(h_count):
                    r = sets[h, actor]
                    for g in range(3):
                        ll[b, h, g] += lp_place[r, cats[g]]
            elif et == _BREAK or et == _REPAIR:  # a break or a repair of another seat
                if target != actor:
                    for h in range(h_count):
                        x = lp_break[sets[h, actor], sets[h, target]] if et == _BREAK else lp_repair[
                            sets[h, actor], sets[h, target]]
                        for g in range(3):
                            ll[b, h, g] += x
            elif et == _REVEAL:  # a goal card turned: the board, and the gold slot's candidates
                board[b, cell] = shape_of[kind, arg]
                _distance(board[b], nbr, goals, start, closure, s_open, reach, stack, frontier, work, dist[b])
                if goal_kind[kind]:
                    slot = 0 if cell == goals[0] else 1 if cell == goals[1] else 2
                    for h in range(h_count):
                        for g in range(3):
                            if (g != slot) if kind == gold_kind else (g == slot):
                                ll[b, h, g] = -np.inf
            elif et == _ROUND_END:  # the round is over: a fresh round's board and a uniform prior
                for c in range(hw):
                    board[b, c] = start_board[c]
                for g in range(3):
                    dist[b, g] = start_dist[g]
                for h in range(h_count):
                    for g in range(3):
                        ll[b, h, g] = 0.0
        seen[b] = num_events[b]


@numba.njit(cache=True, nogil=True)
def _posterior(llb, sets, seat, role, possible, p_out, gold_out):
    """P(saboteur) per seat and P(gold) per slot under the table ``llb`` (H, 3), restricted to the sets with
    ``sets[h, seat] == role`` (``seat`` -1: every set) and the slots ``possible``; uniform over those sets and every
    slot when nothing is left (the Python model's fallback)."""
    h_count, p = sets.shape
    for k in range(p):
        p_out[k] = 0.0
    for g in range(3):
        gold_out[g] = 0.0
    top = -np.inf
    for h in range(h_count):
        if seat >= 0 and sets[h, seat] != role:
            continue
        for g in range(3):
            if possible[g] and llb[h, g] > top:
                top = llb[h, g]
    if np.isfinite(top):
        tot = 0.0
        for h in range(h_count):
            if seat >= 0 and sets[h, seat] != role:
                continue
            m = 0.0
            for g in range(3):
                x = np.exp(llb[h, g] - top) if possible[g] else 0.0
                gold_out[g] += x
                m += x
            tot += m
            for k in range(p):
                if sets[h, k]:
                    p_out[k] += m
        for k in range(p):
            p_out[k] /= tot
        for g in range(3):
            gold_out[g] /= tot
        return
    count = 0
    for h in range(h_count):
        if seat < 0 or sets[h, seat] == role:
            count += 1
    for h in range(h_count):
        if seat < 0 or sets[h, seat] == role:
            for k in range(p):
                p_out[k] += sets[h, k] / count
    for g in range(3):
        gold_out[g] = 1.0 / 3.0


@numba.njit(cache=True, nogil=True)
def _features(n, seats, roles, peeked, goal_kind, gold_kind, ll, dist, sets, cap, out):
    """The ``bayes`` features of the seat to act in rows ``0..n-1`` (see :meth:`BatchedBeliefs.features`)."""
    p = sets.shape[1]
    p_own = np.zeros(p)
    p_pub = np.zeros(p)
    gold = np.zeros(3)
    unused = np.zeros(3)
    every = np.ones(3, dtype=np.bool_)
    possible = np.zeros(3, dtype=np.bool_)
    for b in range(n):
        s = seats[b]
        # the public observer: every set, the gold slots the reveals leave (already -inf in the table)
        _posterior(ll[b], sets, -1, 0, every, p_pub, unused)
        # the seat's own model: the sets that agree with its role, the slots its own map results leave
        found = -1
        for g in range(3):
            possible[g] = True
            if peeked[b, s, g]:
                if goal_kind[b, g] == gold_kind:
                    found = g
                else:
                    possible[g] = False
        if found >= 0:
            for g in range(3):
                possible[g] = g == found
        _posterior(ll[b], sets, s, roles[b, s], possible, p_own, gold)
        for i in range(p):
            k = (s + i) % p
            out[b, i] = p_own[k]
            out[b, p + i] = p_pub[k]
        for g in range(3):
            out[b, 2 * p + g] = gold[g]
            out[b, 2 * p + 3 + g] = min(dist[b, g], cap) / cap


class BatchedBeliefs:
    """The ``bayes`` features of the base game for every row of a batch (see the module docstring).

    A row's state lives in four arrays (:meth:`start` returns them; keep them with the rows when rows move, e.g.
    ``Batch.move_rows(keep, state)``): the public log-likelihood table ``(B, H, 3)``, the public board ``(B, HW)``,
    the tile distances ``(B, 3)`` and the number of the row's events already followed ``(B,)``.
    """

    def __init__(self, config: GameConfig, tables: BehaviourTables = FIXED_TABLES, epsilon: float = 0.1) -> None:
        if config.game != "base":
            raise ValueError(f"BatchedBeliefs covers the base game only, not game={config.game!r}")
        self.config = config
        geo = geometry(config)
        model = BayesModel(config.num_players, geo.goal_cells, epsilon=epsilon, tables=tables)
        self.sets = model.all_sets.astype(np.int64)  # the Python model's order: a root table can be copied in
        self.num_hypotheses = len(self.sets)
        mix = model._mix
        self.lp_place, self.lp_break, self.lp_repair = mix(tables.place), mix(tables.breaks), mix(tables.repairs)
        self.nbr = geo.nbr.astype(np.int64)
        self.goals = np.asarray(geo.goal_cells, dtype=np.int64)
        self.start_cell = int(geo.start_cell)
        fresh = PublicBoard(config)
        self.start_board = fresh.shape.astype(np.int16)
        self.start_dist = np.asarray(fresh.distance, dtype=np.int64)
        self.size = 2 * config.num_players + 6

    def start(
        self,
        batch: Any,
        public_loglik: NDArray[np.float64] | None = None,
        board: NDArray[np.integer[Any]] | None = None,
    ) -> tuple[NDArray[Any], ...]:
        """The state of every row of ``batch``, followed from the events the rows hold now on: a fresh round
        (``public_loglik`` and ``board`` None), or a root shared by every row - a public model's log-likelihood
        table (``BayesModel(seat=None).loglik``, ``(H, 3)``) and the public board's shape ids (``(HW,)``, -1 for
        empty cells and face-down goals)."""
        b, hw, h = batch.batch, self.config.num_cells, self.num_hypotheses
        ll = np.zeros((b, h, 3))
        shape = self.start_board if board is None else np.asarray(board, dtype=np.int16)
        if shape.shape != (hw,):
            raise ValueError(f"board must hold {hw} shape ids (got shape {shape.shape})")
        if public_loglik is not None:
            table = np.asarray(public_loglik, dtype=np.float64)
            if table.shape != (h, 3):
                raise ValueError(f"public_loglik must be ({h}, 3) for {self.config.num_players} players "
                                 f"(got {table.shape})")  # fmt: skip
            ll[:] = table
        boards = np.repeat(shape[None], b, axis=0)
        dist = np.zeros((b, 3), dtype=np.int64)
        dist[:] = self.start_dist if board is None else _board_distance(self, shape)
        seen = batch.scalar(batch.k.SC_NUM_EVENTS).astype(np.int64)
        return ll, boards, dist, seen

    def follow(self, batch: Any, n: int, state: tuple[NDArray[Any], ...]) -> None:
        """Bring rows ``0..n-1`` of ``state`` up to their games' event logs."""
        ll, boards, dist, seen = state
        _follow(n, batch.field("events"), batch.scalar(batch.k.SC_NUM_EVENTS), seen, ll, boards, dist,
                self.start_board, self.start_dist, self.sets, self.lp_place, self.lp_break, self.lp_repair,
                _SHAPE_OF, _DEAD, _GOAL_KIND, KIND_GOAL_GOLD, self.nbr, self.goals, self.start_cell, CLOSURE,
                S_OPEN)  # fmt: skip

    def features(self, batch: Any, n: int, state: tuple[NDArray[Any], ...],
                 seats: NDArray[np.int64] | None = None) -> NDArray[np.float32]:  # fmt: skip
        """``(n, 2P + 6)``: the features of seat ``seats[r]`` (default: the seat to act) in rows ``0..n-1``, as
        :class:`~agents.base.belief_features.BeliefFeatures` would give after that seat's view now."""
        ll, _, dist, _ = state
        who = batch.scalar(batch.k.SC_CURRENT)[:n].astype(np.int64) if seats is None else seats
        out = np.zeros((n, self.size), dtype=np.float64)
        _features(n, who, batch.field("roles").astype(np.int64), batch.field("peeked"), batch.field("goal_kind"),
                  KIND_GOAL_GOLD, ll, dist, self.sets, CAP, out)  # fmt: skip
        return out.astype(np.float32)


def _board_distance(beliefs: BatchedBeliefs, shape: NDArray[np.int16]) -> NDArray[np.int64]:
    hw = shape.size
    out = np.zeros(3, dtype=np.int64)
    _distance(shape, beliefs.nbr, beliefs.goals, beliefs.start_cell, CLOSURE, S_OPEN, np.zeros(hw, dtype=np.int64),
              np.zeros(4 * hw + 4, dtype=np.int64), np.zeros(hw, dtype=np.int64), np.zeros(hw, dtype=np.int64),
              out)  # fmt: skip
    return out
