"""Beliefs about hidden roles and the gold goal, from public events (plus the owner's own role and map results).

Two models share one interface (``reset_round``, ``observe``, ``observe_peek``, ``p_saboteur``, ``p_gold``):

* :class:`SuspicionModel` - the rule-based log-odds suspicion score of ``shared/notes/AGENTS_AND_EVALUATION.md``
  §4.3: progress lowers suspicion, sabotage raises it, breaking trusted players or repairing suspects raises it.
* :class:`BayesModel` - the exact posterior over (set of saboteur seats A) x (gold goal g) by enumeration
  (at most 330 x 3 hypotheses), with the uniform prior implied by the role deck and its left-over card, and a
  trembling-hand behaviour model: ``P(event | h) = eps + (1 - eps) * pi(event | roles in h, g)``.

The behaviour model ``pi`` is a :class:`BehaviourTables`. ``FIXED_TABLES`` (hand-set numbers, the named baseline
and the tournament's reference observer) are far from real play: over-confident against random agents and
under-confident against the scripted ones. :class:`BehaviourCounts` fits tables from games of a given population
(counts with the true roles and gold slot, Laplace-smoothed); ``experiments.tournament.report --calibration`` fits
them on one half of each cell's games and scores both on the other half (reliability diagrams, ECE).

Seats are absolute. A model built with ``seat=None`` and ``role=None`` is a public observer (the tournament's
reference observer is a :class:`BayesModel` of that kind).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import expectation
from agents.base.tracker import PublicEvent
from saboteur_env.base.cards import DIGGERS_BY_PLAYERS, GOAL_KINDS, KIND_GOAL_GOLD, SABOTEURS_BY_PLAYERS, Role
from saboteur_env.base.state import EventType

PROGRESS, NEUTRAL, HARM = 0, 1, 2


def event_categories(ev: PublicEvent) -> NDArray[np.int64] | None:
    """Per goal slot: whether a path placement or rockfall made progress, was neutral or did harm (None: n/a)."""
    if ev.type == EventType.PLACE:
        cats = np.where(ev.after < ev.before, PROGRESS, np.where(ev.after > ev.before, HARM, NEUTRAL))
        if ev.dead_end:  # a dead end never helps; near the tunnel front it is sabotage
            cats = np.where(ev.before <= 3, HARM, NEUTRAL)
        return cats
    if ev.type == EventType.ROCKFALL:
        if ev.dead_end:
            return np.full(3, PROGRESS)  # clearing a dead end helps the diggers
        return np.where(ev.after > ev.before, HARM, np.where(ev.after < ev.before, PROGRESS, NEUTRAL))
    return None


def public_prior_saboteurs(num_players: int) -> float:
    """P(a given seat is a saboteur) before any evidence, for a public observer."""
    return SABOTEURS_BY_PLAYERS[num_players] / (num_players + 1)


class _GoalBelief:
    """Which goal slots may hold the gold: reveals and own peeks remove candidates."""

    def __init__(self, goal_cells: tuple[int, ...]) -> None:
        self.goal_cells = goal_cells
        self.possible = np.ones(3, dtype=bool)
        self.gold: int | None = None

    def observe(self, ev: PublicEvent) -> None:
        if ev.type == EventType.REVEAL and ev.kind in GOAL_KINDS:
            self.set(self.goal_cells.index(ev.cell), ev.kind == KIND_GOAL_GOLD)

    def set(self, slot: int, is_gold: bool) -> None:
        if is_gold:
            self.gold = slot
            self.possible[:] = False
            self.possible[slot] = True
        else:
            self.possible[slot] = False
            if self.possible.sum() == 1:
                self.gold = int(np.flatnonzero(self.possible)[0])

    def probabilities(self) -> NDArray[np.float64]:
        p = self.possible.astype(float)
        return p / p.sum() if p.sum() else np.full(3, 1 / 3)


class BeliefModel:
    """Common interface; subclasses fill ``_p_sab`` and ``_p_gold``."""

    name = "belief"

    def __init__(self, num_players: int, goal_cells: tuple[int, ...]) -> None:
        self.num_players = num_players
        self.goal_cells = goal_cells
        self.seat: int | None = None
        self.role: int | None = None

    def reset_round(self, seat: int | None, role: int | None) -> None:
        self.seat, self.role = seat, role

    def observe(self, ev: PublicEvent) -> None:
        raise NotImplementedError

    def observe_peek(self, slot: int, is_gold: bool) -> None:
        raise NotImplementedError

    def p_saboteur(self) -> NDArray[np.float64]:
        raise NotImplementedError

    def p_gold(self) -> NDArray[np.float64]:
        raise NotImplementedError


class SuspicionModel(BeliefModel):
    """Rule-based log-odds suspicion per seat (notes §4.3). Weights are parameters."""

    name = "suspicion"

    def __init__(
        self,
        num_players: int,
        goal_cells: tuple[int, ...],
        progress: float = 0.6,
        harm: float = 1.2,
        dead_end: float = 0.8,
        bad_break: float = 1.0,
        bad_repair: float = 0.8,
        trust_transfer: float = 0.2,
        rockfall_harm: float = 1.5,
    ) -> None:
        super().__init__(num_players, goal_cells)
        self.w = dict(progress=progress, harm=harm, dead_end=dead_end, bad_break=bad_break, bad_repair=bad_repair,
                      trust_transfer=trust_transfer, rockfall_harm=rockfall_harm)  # fmt: skip
        self.reset_round(None, None)

    def reset_round(self, seat: int | None, role: int | None) -> None:
        super().reset_round(seat, role)
        n = self.num_players
        s = SABOTEURS_BY_PLAYERS[n]
        if seat is None:
            prior = s / (n + 1)
        elif role == Role.SABOTEUR:
            prior = (s - 1) / n
        else:
            prior = s / n
        prior = min(max(prior, 0.02), 0.98)
        self.score = np.full(n, np.log(prior / (1 - prior)))
        if seat is not None:
            self.score[seat] = 10.0 if role == Role.SABOTEUR else -10.0
        self.goals = _GoalBelief(self.goal_cells)

    def _p(self, seat: int) -> float:
        return float(1 / (1 + np.exp(-self.score[seat])))

    def observe(self, ev: PublicEvent) -> None:
        self.goals.observe(ev)
        if ev.type == EventType.ROUND_END:
            return
        j, w = ev.actor, self.w
        pg = self.goals.probabilities()
        if ev.type in (EventType.PLACE, EventType.ROCKFALL):
            before = np.minimum(ev.before, 20)
            after = np.minimum(ev.after, 20)
            delta = float(expectation(before - after, pg))  # expected progress towards the gold
            if ev.type == EventType.PLACE:
                if ev.dead_end and float(expectation(before, pg)) <= 4:
                    self.score[j] += w["dead_end"]
                elif delta > 0:
                    self.score[j] -= w["progress"] * min(delta, 2.0)
                elif delta < 0:
                    self.score[j] += w["harm"] * min(-delta, 2.0)
            else:
                if ev.dead_end:
                    self.score[j] -= w["progress"]
                elif delta < 0:
                    self.score[j] += w["rockfall_harm"]
        elif ev.type == EventType.BREAK and ev.target != j:
            pk = self._p(ev.target)
            self.score[j] += w["bad_break"] * (1 - 2 * pk)
        elif ev.type == EventType.REPAIR and ev.target != j:
            pk = self._p(ev.target)
            self.score[j] += w["bad_repair"] * (2 * pk - 1)
            self.score[ev.target] += w["trust_transfer"] * (self.score[j] - self.score[ev.target])
        if self.seat is not None:  # own role is known for certain
            self.score[self.seat] = 10.0 if self.role == Role.SABOTEUR else -10.0

    def observe_peek(self, slot: int, is_gold: bool) -> None:
        self.goals.set(slot, is_gold)

    def p_saboteur(self) -> NDArray[np.float64]:
        return 1 / (1 + np.exp(-self.score))

    def p_gold(self) -> NDArray[np.float64]:
        return self.goals.probabilities()


# Behaviour model of BayesModel: P(category | actor role) for path placements and rockfalls ...
PLACE_LIKELIHOOD = np.array([[0.60, 0.32, 0.08], [0.20, 0.40, 0.40]])  # [miner, saboteur] x [progress, neutral, harm]
# ... and P(action on target | actor role, target role) for breaks and repairs of another seat.
BREAK_LIKELIHOOD = np.array([[0.15, 0.85], [0.80, 0.30]])  # [actor miner, actor saboteur] x [target miner, saboteur]
REPAIR_LIKELIHOOD = np.array([[0.75, 0.25], [0.35, 0.60]])


@dataclass(frozen=True)
class BehaviourTables:
    """A behaviour model for :class:`BayesModel`: ``place`` = P(category | actor role, a path placement or
    rockfall) ([miner, saboteur] x [progress, neutral, harm] towards the gold slot); ``breaks`` / ``repairs`` =
    the likelihood of acting on one given other seat ([actor role] x [target role]; only ratios matter)."""

    name: str
    place: NDArray[np.float64]
    breaks: NDArray[np.float64]
    repairs: NDArray[np.float64]

    def __post_init__(self) -> None:
        for attr, shape in (("place", (2, 3)), ("breaks", (2, 2)), ("repairs", (2, 2))):
            table = np.asarray(getattr(self, attr), dtype=float)
            if table.shape != shape or not np.all(np.isfinite(table)) or np.any(table < 0):
                raise ValueError(f"BehaviourTables.{attr} must be a {shape} array of non-negative numbers, "
                                 f"got {table!r}")  # fmt: skip


@dataclass
class BehaviourCounts:
    """Counts from games with known roles and gold slot, from which :meth:`fit` builds :class:`BehaviourTables`:
    placement categories by actor role, and breaks / repairs of another seat per opportunity (a decision of an
    actor of one role with a seat of the other role present)."""

    place: NDArray[np.float64] = field(default_factory=lambda: np.zeros((2, 3)))
    breaks: NDArray[np.float64] = field(default_factory=lambda: np.zeros((2, 2)))
    repairs: NDArray[np.float64] = field(default_factory=lambda: np.zeros((2, 2)))
    exposure: NDArray[np.float64] = field(default_factory=lambda: np.zeros((2, 2)))  # decisions x other seats
    games: int = 0

    def decision(self, actor: int, roles: NDArray[np.int64] | list[int]) -> None:
        """One decision by seat ``actor``: every other seat was a possible target."""
        r = np.asarray(roles, dtype=np.int64)
        others = np.delete(r, actor)
        self.exposure[r[actor]] += np.bincount(others, minlength=2)[:2]

    def event(self, ev: PublicEvent, roles: NDArray[np.int64] | list[int], gold_slot: int) -> None:
        r = np.asarray(roles, dtype=np.int64)
        cats = event_categories(ev)
        if cats is not None:
            self.place[r[ev.actor], cats[gold_slot]] += 1
        elif ev.type in (EventType.BREAK, EventType.REPAIR) and 0 <= ev.target != ev.actor:
            table = self.breaks if ev.type == EventType.BREAK else self.repairs
            table[r[ev.actor], r[ev.target]] += 1

    def fit(self, name: str = "fitted", pseudo: float = 1.0) -> BehaviourTables:
        """Tables with ``pseudo`` (Laplace) counts added: a category never seen keeps a small probability."""
        if pseudo <= 0:
            raise ValueError(f"pseudo={pseudo} must be positive (zero probabilities make the posterior brittle)")
        place = (self.place + pseudo) / (self.place.sum(axis=1, keepdims=True) + 3 * pseudo)
        exposure = self.exposure + 2 * pseudo
        return BehaviourTables(name, place, (self.breaks + pseudo) / exposure, (self.repairs + pseudo) / exposure)


FIXED_TABLES = BehaviourTables("fixed", PLACE_LIKELIHOOD, BREAK_LIKELIHOOD, REPAIR_LIKELIHOOD)


class BayesModel(BeliefModel):
    """Exact posterior over (saboteur set, gold goal) by enumeration, with a trembling-hand behaviour model
    (``tables``; the hand-set :data:`FIXED_TABLES` unless given)."""

    name = "bayes"

    def __init__(
        self,
        num_players: int,
        goal_cells: tuple[int, ...],
        epsilon: float = 0.1,
        tables: BehaviourTables = FIXED_TABLES,
    ) -> None:
        super().__init__(num_players, goal_cells)
        if not 0 <= epsilon <= 1:
            raise ValueError(f"epsilon={epsilon} must be in [0, 1]")
        self.epsilon = epsilon
        self.tables = tables
        n = num_players
        s = SABOTEURS_BY_PLAYERS[n]
        sets = [c for size in (s, s - 1) if size >= 0 for c in combinations(range(n), size)]
        self.all_sets = np.zeros((len(sets), n), dtype=bool)
        for i, c in enumerate(sets):
            self.all_sets[i, list(c)] = True
        assert len(sets) == comb(n, s) + comb(n, s - 1)
        assert DIGGERS_BY_PLAYERS[n] + s == n + 1
        self.reset_round(None, None)

    def reset_round(self, seat: int | None, role: int | None) -> None:
        super().reset_round(seat, role)
        keep = np.ones(len(self.all_sets), dtype=bool)
        if seat is not None:
            keep = self.all_sets[:, seat] == (role == Role.SABOTEUR)
        self.sets = self.all_sets[keep]
        self.loglik = np.zeros((len(self.sets), 3))  # uniform prior over consistent (A, g)
        self.goals = _GoalBelief(self.goal_cells)

    def _mix(self, like: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):  # epsilon = 0 and a zero likelihood: that hypothesis is ruled out
            return np.log(self.epsilon + (1 - self.epsilon) * like)

    def observe(self, ev: PublicEvent) -> None:
        if ev.type == EventType.REVEAL:
            self.goals.observe(ev)
            self._apply_goals()
            return
        if ev.type == EventType.ROUND_END:
            return
        j = ev.actor
        role_j = self.sets[:, j].astype(np.int64)  # (H,)
        cats = event_categories(ev)
        if cats is not None:
            like = self.tables.place[:, cats]  # (2 roles, 3 goals)
            self.loglik += self._mix(like[role_j])
        elif ev.type in (EventType.BREAK, EventType.REPAIR) and ev.target != j:
            table = self.tables.breaks if ev.type == EventType.BREAK else self.tables.repairs
            role_k = self.sets[:, ev.target].astype(np.int64)
            self.loglik += self._mix(table[role_j, role_k])[:, None]

    def observe_peek(self, slot: int, is_gold: bool) -> None:
        self.goals.set(slot, is_gold)
        self._apply_goals()

    def _apply_goals(self) -> None:
        self.loglik[:, ~self.goals.possible] = -np.inf

    def posterior(self) -> NDArray[np.float64]:
        """(hypotheses, 3) posterior over (saboteur set, gold slot); rows follow ``self.sets``."""
        ll = self.loglik
        top = ll.max()
        if not np.isfinite(top):
            return np.full(ll.shape, 1.0 / ll.size)
        w = np.exp(ll - top)
        return w / w.sum()

    def p_saboteur(self) -> NDArray[np.float64]:
        return self.posterior().sum(axis=1) @ self.sets

    def p_gold(self) -> NDArray[np.float64]:
        return self.posterior().sum(axis=0)

    def expected_saboteurs(self) -> float:
        return float(self.posterior().sum(axis=1) @ self.sets.sum(axis=1))
