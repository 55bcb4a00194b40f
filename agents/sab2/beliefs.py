"""Saboteur 2 beliefs from one seat's view: a Bayes filter over the roles of every seat, and the gold goal.

The hidden role state of a round (docs/rules.md §2.2 step 4, §2.6, §5.2) is the role each seat holds now plus the
cards that Swap Your Hats has discarded (out of play), which together fix the reserve a later swap draws from. A
**hypothesis** is one such state: ``roles`` (one of the 6 roles per seat) and ``discarded`` (role counts), with a
weight. :class:`Sab2RoleBelief` filters them forward through the round:

* **prior**: the 15 role cards are shuffled and the first N dealt, so an assignment with ``n_x`` seats of role ``x``
  has probability ``prod_x ff(copies_x, n_x) / ff(15, N)`` (``ff`` the falling factorial); the reserve is the rest;
* **facts** (hard): the owner's current role (conditioned on at every view: after a swap on the owner it is the
  new role), the role an own inspection showed (at the moment of the inspection), and every role at the round end;
* **Swap Your Hats** on seat ``t`` (public, outcome private to ``t``): each hypothesis splits into one per role
  ``x`` left in its reserve, with probability ``reserve_x / |reserve|``; ``t``'s old role joins ``discarded``;
* **behaviour** (soft): a trembling-hand likelihood ``eps + (1 - eps) * table[...]`` per public move, from a
  :class:`Sab2Tables`: the category of a placed path card (plain, dead end, blue door, green door, crystal,
  ladder) by the actor's role, a rockfall's category (it clears a dead end / cuts a tunnel card) by role, and
  breaks / Trapped! (``hit``) or repairs / Free at Last! (``help``) on another seat by (actor side, target side),
  sides being gold (blue, green, Boss), saboteur and neutral (Profiteer, geologist). Only ratios within a table
  row matter for hit / help.

Identical hypotheses are merged, so the filter is **exact** (up to float rounding) when the hypothesis set is
enumerated: up to ``exact_players`` seats (7 by default: 93,590 role assignments before any swap). Beyond that the
same code runs on ``particles`` hypotheses drawn from the prior (deterministic for a given ``seed``) with
multinomial resampling when the effective sample size halves: an approximation, labelled by ``exact``.

The goal belief (:func:`gold_probabilities`) is exact for what a view shows: the gold is uniformly among the goal
slots not known to be stone (revealed or peeked by the owner); a peeked or revealed gold settles it.

:class:`Sab2BeliefTracker` feeds the filter from successive :class:`~saboteur_env.sab2.view.Sab2View` objects of
one seat (the new public events of each view, found by aligning its history window with the previous one), so an
agent reads nothing but its view. Public observers (``seat=None``) are fed with :meth:`Sab2RoleBelief.observe`
directly from the public log (``experiments.tournament.sab2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.state import Phase
from saboteur_env.sab2.state import Sab2Event as E
from saboteur_env.sab2.view import Sab2View, Sab2ViewEvent

NUM_ROLES = len(R)
COPIES = np.array([sc.ROLE_COPIES[R(x)] for x in range(NUM_ROLES)], dtype=np.int64)  # 4 4 1 1 2 3
ROLE_CARDS = int(COPIES.sum())  # 15
GOLD_SIDE, SABOTEUR_SIDE, NEUTRAL_SIDE = 0, 1, 2
SIDE = np.array([GOLD_SIDE, GOLD_SIDE, GOLD_SIDE, NEUTRAL_SIDE, NEUTRAL_SIDE, SABOTEUR_SIDE], dtype=np.int64)
PLAIN, DEAD_END, BLUE_DOOR, GREEN_DOOR, CRYSTAL, LADDER = range(6)
PLACE_CATEGORIES = ("plain", "dead end", "blue door", "green door", "crystal", "ladder")
CLEAR, CUT = 0, 1  # a rockfall removes a dead end / a tunnel card
TEAMS = ("blue", "green", "gold side", "saboteur")
EXACT_PLAYERS = 7
PARTICLES = 8000


def place_category(kind: int) -> int:
    """The behaviour category of placing path card ``kind`` (doors first, then crystals, ladders, dead ends)."""
    spec = sc.SPECS[kind] if 0 <= kind < sc.NUM_PATH_KINDS else None
    if spec is None:
        raise ValueError(f"kind={kind} is not a Saboteur 2 path card kind (0..{sc.NUM_PATH_KINDS - 1})")
    colours = {c for _, c in spec.doors}
    if "blue" in colours:
        return BLUE_DOOR
    if "green" in colours:
        return GREEN_DOOR
    if spec.crystals:
        return CRYSTAL
    if spec.ladder:
        return LADDER
    return DEAD_END if spec.dead_end else PLAIN


def rockfall_category(removed_kind: int) -> int:
    """CLEAR when the removed card was a dead end without a crystal (it reopens the way), else CUT."""
    spec = sc.SPECS[removed_kind] if 0 <= removed_kind < sc.NUM_PATH_KINDS else None
    return CLEAR if spec is not None and spec.dead_end and not spec.crystals else CUT


@dataclass(frozen=True)
class Sab2Tables:
    """Behaviour model of :class:`Sab2RoleBelief`. ``place`` (6 roles x 6 categories) and ``rockfall`` (6 roles x
    [clear, cut]) are P(category | actor role); ``hit`` (breaks, Trapped!) and ``help`` (repairs, Free at Last!)
    are (actor side x target side) likelihoods of acting on one given other seat (only ratios matter)."""

    name: str
    place: NDArray[np.float64]
    rockfall: NDArray[np.float64]
    hit: NDArray[np.float64]
    help: NDArray[np.float64]

    def __post_init__(self) -> None:
        shapes = {"place": (NUM_ROLES, len(PLACE_CATEGORIES)), "rockfall": (NUM_ROLES, 2), "hit": (3, 3),
                  "help": (3, 3)}  # fmt: skip
        for attr, shape in shapes.items():
            table = np.asarray(getattr(self, attr), dtype=float)
            if table.shape != shape or not np.all(np.isfinite(table)) or np.any(table < 0):
                raise ValueError(f"Sab2Tables.{attr} must be a {shape} array of non-negative numbers, got {table!r}")
            object.__setattr__(self, attr, table)


# Hand-set numbers (the reference observer's and the believer agent's model). Rows: blue, green, Boss, Profiteer,
# geologist, saboteur; columns: plain, dead end, blue door, green door, crystal, ladder.
FIXED_SAB2_TABLES = Sab2Tables(
    "fixed",
    place=np.array([[0.66, 0.04, 0.12, 0.01, 0.12, 0.05],
                    [0.66, 0.04, 0.01, 0.12, 0.12, 0.05],
                    [0.66, 0.04, 0.07, 0.07, 0.10, 0.06],
                    [0.62, 0.08, 0.07, 0.07, 0.10, 0.06],
                    [0.40, 0.06, 0.04, 0.04, 0.42, 0.04],
                    [0.45, 0.35, 0.05, 0.05, 0.05, 0.05]]),
    rockfall=np.array([[0.7, 0.3], [0.7, 0.3], [0.7, 0.3], [0.5, 0.5], [0.5, 0.5], [0.1, 0.9]]),
    hit=np.array([[0.10, 0.80, 0.30], [0.70, 0.10, 0.40], [0.40, 0.40, 0.30]]),  # actor side x target side
    help=np.array([[0.80, 0.10, 0.40], [0.20, 0.80, 0.40], [0.40, 0.40, 0.40]]),
)  # fmt: skip


class RoleEvent(NamedTuple):
    """A public Saboteur 2 event in absolute seats (-1: none), as in ``Sab2State.events`` rows."""

    type: int
    actor: int
    kind: int
    target: int
    cell: int
    arg: int


def _falling(n: int, k: int) -> int:
    return prod(range(n - k + 1, n + 1))


_FALLING = [np.array([_falling(int(c), k) for k in range(int(c) + 1)], dtype=float) for c in COPIES]


@lru_cache(maxsize=16)
def _enumerate(num_players: int) -> tuple[NDArray[np.int8], NDArray[np.float64]]:
    """Every role assignment of ``num_players`` seats the 15-card role deck allows (rows, built seat by seat) and
    its prior weight (the number of ordered deals that give it). Shared and read-only."""
    rows = np.zeros((1, 0), dtype=np.int8)
    for _ in range(num_players):
        grown = np.concatenate([np.hstack([rows, np.full((len(rows), 1), x, np.int8)]) for x in range(NUM_ROLES)])
        counts = np.stack([(grown == x).sum(1) for x in range(NUM_ROLES)], axis=1)
        rows = grown[(counts <= COPIES).all(1)]
    counts = np.stack([(rows == x).sum(1) for x in range(NUM_ROLES)], axis=1)
    weights = np.ones(len(rows))
    for x in range(NUM_ROLES):
        weights *= _FALLING[x][counts[:, x]]
    rows.flags.writeable = False
    weights.flags.writeable = False
    return rows, weights


class Sab2RoleBelief:
    """Forward filter over (roles now, discarded role cards) for one observer (see the module docstring)."""

    def __init__(
        self,
        num_players: int,
        tables: Sab2Tables = FIXED_SAB2_TABLES,
        epsilon: float = 0.1,
        exact_players: int = EXACT_PLAYERS,
        particles: int = PARTICLES,
        seed: int = 0,
    ) -> None:
        if not 2 <= num_players <= 12:
            raise ValueError(f"num_players={num_players} is out of range for Saboteur 2 (2..12)")
        if not 0 <= epsilon <= 1:
            raise ValueError(f"epsilon={epsilon} must be in [0, 1]")
        if particles < 1:
            raise ValueError(f"particles={particles} must be at least 1")
        self.num_players = num_players
        self.tables = tables
        self.epsilon = epsilon
        self.exact = num_players <= exact_players
        self.num_particles = particles
        self.seed = seed
        self.seat: int | None = None
        self.reset_round(None, None)

    # ---- the hypothesis set ----
    def reset_round(self, seat: int | None, role: int | None, round_index: int = 0) -> None:
        """A new round: the prior, conditioned on ``seat`` holding ``role`` (``seat=None``: a public observer)."""
        self.seat = seat
        n = self.num_players
        if self.exact:
            roles, weights = _enumerate(n)
        else:
            # Deterministic per (seed, round, seat): the particles depend on nothing but what the seat knows.
            rng = np.random.default_rng([self.seed, round_index, n if seat is None else seat])
            deck = np.repeat(np.arange(NUM_ROLES, dtype=np.int8), COPIES)
            if seat is not None and role is not None:  # deal the seat's known card first, the rest at random
                rest = np.delete(deck, int(np.flatnonzero(deck == role)[0]))
                others = rng.permuted(np.tile(rest, (self.num_particles, 1)), axis=1)[:, : n - 1]
                roles = np.insert(others, seat, np.int8(role), axis=1)
            else:
                roles = rng.permuted(np.tile(deck, (self.num_particles, 1)), axis=1)[:, :n]
            weights = np.ones(len(roles))
        self.roles = roles  # never written in place: every update builds new arrays (the prior is shared)
        self.discarded = np.zeros((len(self.roles), NUM_ROLES), dtype=np.int8)
        self.weights = weights / weights.sum()
        self._rng = np.random.default_rng([self.seed, round_index, 7])
        if seat is not None and role is not None:
            self.condition_role(seat, int(role))

    @property
    def num_hypotheses(self) -> int:
        return len(self.roles)

    def _normalise(self, w: NDArray[np.float64]) -> None:
        total = w.sum()
        if not total > 0 or not np.isfinite(total):
            raise ValueError("the role facts contradict each other: no hypothesis is left (a wrong seat or role?)")
        keep = w > 0
        if keep.all():
            self.weights = w / total
        else:
            self.roles, self.discarded, self.weights = self.roles[keep], self.discarded[keep], w[keep] / total
        if not self.exact:
            ess = 1.0 / float((self.weights**2).sum())
            if ess < self.num_particles / 2:  # multinomial resampling keeps the particle set from collapsing
                idx = self._rng.choice(len(self.weights), size=self.num_particles, p=self.weights)
                self.roles, self.discarded = self.roles[idx], self.discarded[idx]
                self.weights = np.full(self.num_particles, 1.0 / self.num_particles)

    def _merge(self) -> None:
        """Merge identical (roles, discarded) hypotheses, adding their weights (exact mode)."""
        n = self.num_players
        key = np.zeros(len(self.roles), dtype=np.int64)
        for i in range(n):
            key = key * NUM_ROLES + self.roles[:, i]
        for x in range(NUM_ROLES):
            key = key * 3 + self.discarded[:, x]
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        w = np.bincount(inverse.ravel(), weights=self.weights, minlength=len(uniq))
        self.roles, self.discarded, self.weights = self.roles[first], self.discarded[first], w

    # ---- facts ----
    def condition_role(self, seat: int, role: int) -> None:
        """Seat ``seat`` holds ``role`` now (own role, an own inspection, a round-end reveal)."""
        self._check_seat(seat)
        if not 0 <= role < NUM_ROLES:
            raise ValueError(f"role={role} is out of range (0..{NUM_ROLES - 1})")
        self._normalise(self.weights * (self.roles[:, seat] == role))

    def set_roles(self, roles: list[int]) -> None:
        """Every seat's role is known (the round end): one hypothesis (the reserve no longer matters)."""
        r = np.asarray(roles, dtype=np.int64)
        if r.shape != (self.num_players,) or np.any((r < 0) | (r >= NUM_ROLES)):
            raise ValueError(f"roles={list(roles)} must be {self.num_players} roles in 0..{NUM_ROLES - 1}")
        if np.any(np.bincount(r, minlength=NUM_ROLES) > COPIES):
            raise ValueError(f"roles={list(roles)} use more cards of a role than the deck holds ({COPIES.tolist()})")
        self.roles = r.astype(np.int8)[None, :]
        self.discarded = np.zeros((1, NUM_ROLES), dtype=np.int8)
        self.weights = np.ones(1)

    def swap_hats(self, target: int) -> None:
        """Swap Your Hats on ``target``: its role card is discarded and it draws from the reserve (unseen)."""
        self._check_seat(target)
        held = np.stack([(self.roles == x).sum(1) for x in range(NUM_ROLES)], axis=1)
        reserve = COPIES[None, :] - held - self.discarded  # (H, 6)
        size = reserve.sum(1)
        if np.any(size <= 0):
            raise ValueError("Swap Your Hats with an empty role reserve")
        old = self.roles[:, target].astype(np.int64)
        if self.exact:
            parts_r, parts_d, parts_w = [], [], []
            for x in range(NUM_ROLES):
                ok = reserve[:, x] > 0
                if not ok.any():
                    continue
                r, d = self.roles[ok].copy(), self.discarded[ok].copy()
                d[np.arange(len(d)), old[ok]] += 1
                r[:, target] = x
                parts_r.append(r)
                parts_d.append(d)
                parts_w.append(self.weights[ok] * reserve[ok, x] / size[ok])
            self.roles, self.discarded = np.concatenate(parts_r), np.concatenate(parts_d)
            self.weights = np.concatenate(parts_w)
            self._merge()
        else:  # each particle draws its own reserve card
            u = self._rng.random(len(self.roles)) * size
            new = (np.cumsum(reserve, axis=1) <= u[:, None]).sum(1)
            self.discarded[np.arange(len(old)), old] += 1
            self.roles[:, target] = new
        self._normalise(self.weights)

    # ---- behaviour ----
    def _mix(self, like: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.epsilon + (1 - self.epsilon) * like

    def observe(self, ev: RoleEvent) -> None:
        """One public event (absolute seats). Swap Your Hats moves the hypotheses; moves weigh them."""
        t = self.tables
        if ev.type == E.SWAP_HATS:
            self.swap_hats(ev.target)
            return
        if ev.actor < 0 or ev.actor >= self.num_players:
            return
        actor = self.roles[:, ev.actor].astype(np.int64)
        if ev.type == E.PLACE and 0 <= ev.kind < sc.NUM_PATH_KINDS:
            like = t.place[actor, place_category(ev.kind)]
        elif ev.type == E.ROCKFALL:
            like = t.rockfall[actor, rockfall_category(ev.arg)]
        elif ev.type in (E.BREAK, E.TRAPPED, E.REPAIR, E.FREE_AT_LAST) and 0 <= ev.target != ev.actor:
            table = t.hit if ev.type in (E.BREAK, E.TRAPPED) else t.help
            like = table[SIDE[actor], SIDE[self.roles[:, ev.target].astype(np.int64)]]
        else:
            return
        self._normalise(self.weights * self._mix(like))

    # ---- read-outs ----
    def p_role(self) -> NDArray[np.float64]:
        """(N, 6) P(seat holds role) now."""
        out = np.zeros((self.num_players, NUM_ROLES))
        for x in range(NUM_ROLES):
            out[:, x] = self.weights @ (self.roles == x)
        return out

    def p_team(self) -> NDArray[np.float64]:
        """(N, 4) P(seat is a blue digger, a green digger, on the gold side (blue, green, Boss), a saboteur)."""
        p = self.p_role()
        return np.stack([p[:, R.BLUE_DIGGER], p[:, R.GREEN_DIGGER], p[:, :3].sum(1), p[:, R.SABOTEUR]], axis=1)

    def p_reserve(self) -> NDArray[np.float64]:
        """(6,) expected reserve composition as probabilities of the next swap's draw."""
        held = np.stack([(self.roles == x).sum(1) for x in range(NUM_ROLES)], axis=1)
        reserve = COPIES[None, :] - held - self.discarded
        return self.weights @ (reserve / reserve.sum(1, keepdims=True))

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat={seat} is out of range (0..{self.num_players - 1})")


def gold_probabilities(view: Sab2View) -> NDArray[np.float64]:
    """(3,) P(goal slot holds the gold) from the view: uniform over the slots not known to be stone."""
    known = view.goal_knowledge
    if "gold" in known:
        return np.array([1.0 if k == "gold" else 0.0 for k in known])
    possible = np.array([k != "stone" for k in known], dtype=float)
    if possible.sum() == 0:
        raise ValueError("every goal of the view is stone: the view is inconsistent")
    return possible / possible.sum()


def event_from_view(ev: Sab2ViewEvent, seat: int, num_players: int) -> RoleEvent:
    """A :class:`~saboteur_env.sab2.view.Sab2ViewEvent` (seat offsets) in absolute seats."""

    def absolute(offset: int | None) -> int:
        return -1 if offset is None else (seat + offset) % num_players

    kind = ev.kind
    cell = ev.cell
    return RoleEvent(int(ev.type), absolute(ev.actor), -1 if kind is None else int(kind),
                     absolute(ev.target), -1 if cell is None else int(cell),
                     int(ev.arg))  # fmt: skip


def new_events(old: tuple, new: tuple, window: int) -> tuple:
    """The events of history window ``new`` that follow window ``old`` (the same seat's previous view).

    A window shorter than ``window`` is the whole history so far, so ``old`` is its prefix. A full window overlaps
    the previous one by its longest suffix-prefix match (some decisions log nothing, e.g. naming what option C
    removes, so the whole window may match); more than ``window`` events in between lose the oldest of them.
    """
    if len(new) < window:
        return new[len(old) :] if new[: len(old)] == old else new
    for k in range(min(len(old), len(new)), 0, -1):
        if old[len(old) - k :] == new[:k]:
            return new[k:]
    return new


class Sab2BeliefTracker:
    """Keeps a :class:`Sab2RoleBelief` of seat ``seat`` up to date from that seat's successive views."""

    def __init__(self, num_players: int, seat: int, history_length: int, seed: int = 0,
                 tables: Sab2Tables = FIXED_SAB2_TABLES, **kw: object) -> None:  # fmt: skip
        self.belief = Sab2RoleBelief(num_players, tables=tables, seed=seed, **kw)  # type: ignore[arg-type]
        self.seat = seat
        self.window = history_length
        self._last: tuple = ()
        self.round = -1
        self.missed = 0  # views whose window had no overlap with the previous one (events may be lost)
        self.restarts = 0  # rounds restarted from the prior because lost events made the facts contradict

    def update(self, view: Sab2View) -> Sab2RoleBelief:
        b, p = self.belief, self.belief.num_players
        window = view.events
        fresh = new_events(self._last, window, self.window)
        if self._last and len(window) >= self.window and len(fresh) == len(window):
            self.missed += 1
        self._last = window
        if view.round != self.round:  # a new round (or the first view): start from the prior
            cut = max((i + 1 for i, ev in enumerate(fresh) if ev.type == E.ROUND_END), default=0)
            fresh = fresh[cut:]
            self.round = view.round
            swapped = any(ev.type == E.SWAP_HATS and ev.target == 0 for ev in fresh)
            b.reset_round(self.seat, None if swapped else int(view.role), view.round)
        try:
            for ev in fresh:
                if ev.type == E.ROUND_END:
                    continue
                rev = event_from_view(ev, self.seat, p)
                b.observe(rev)
                if rev.type == E.INSPECTION and rev.actor == self.seat and 0 <= rev.target < p:
                    seen = view.inspected_roles[(rev.target - self.seat) % p]
                    if seen is not None:
                        b.condition_role(rev.target, int(seen))
            self._facts(view)
        except ValueError:  # lost events (a full window overflowed) made the facts contradict: start again
            self.restarts += 1
            b.reset_round(self.seat, int(view.role), view.round)
            self._facts(view)
        return b

    def _facts(self, view: Sab2View) -> None:
        b, p = self.belief, self.belief.num_players
        if view.last_roles is not None and view.phase == Phase.THEFT:  # the round's roles are public now
            b.set_roles([int(view.last_roles[(i - self.seat) % p]) for i in range(p)])
        else:
            b.condition_role(self.seat, int(view.role))  # my role now (after any swap on me)


__all__ = [
    "FIXED_SAB2_TABLES",
    "PLACE_CATEGORIES",
    "SIDE",
    "TEAMS",
    "RoleEvent",
    "Sab2BeliefTracker",
    "Sab2RoleBelief",
    "Sab2Tables",
    "event_from_view",
    "gold_probabilities",
    "new_events",
    "place_category",
    "rockfall_category",
]  # fmt: skip


def bench(num_players: int, games: int = 2, agent: str = "heuristic") -> dict:
    """Cost of one tracker update per decision in ``games`` seeded games of ``agent`` (every seat tracks)."""
    import time

    from agents.registry import make_agent
    from saboteur_env import raw_env

    env = raw_env(game="sab2", num_players=num_players)
    times: list[float] = []
    sizes: list[int] = []
    for seed in range(games):
        env.reset(seed=seed)
        agents = [make_agent(agent, env.config) for _ in range(num_players)]
        trackers = [Sab2BeliefTracker(num_players, i, env.config.history_length, seed=i) for i in range(num_players)]
        for i, a in enumerate(agents):
            a.reset(i, num_players, seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(name)
            view = Sab2View.from_observation(obs["observation"], env.config, seat)
            start = time.perf_counter()
            trackers[seat].update(view)
            times.append(time.perf_counter() - start)
            sizes.append(trackers[seat].belief.num_hypotheses)
            env.step(agents[seat].act(obs["observation"], obs["action_mask"]))
    t = np.array(times) * 1e3
    return {"players": num_players, "exact": num_players <= EXACT_PLAYERS, "decisions": len(t),
            "mean_ms": round(float(t.mean()), 3), "p95_ms": round(float(np.percentile(t, 95)), 3),
            "max_ms": round(float(t.max()), 3), "max_hypotheses": max(sizes)}  # fmt: skip


if __name__ == "__main__":
    import json
    import sys

    for n in [int(x) for x in sys.argv[1:]] or [3, 5, 7, 10]:
        print(json.dumps(bench(n)), flush=True)
