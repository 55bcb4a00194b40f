"""Beliefs from claims (``GameConfig(claims=True)``; docs/claims.md): the honesty model, the public claims of a
round, and the observers that turn claims into beliefs. The talking agents that use them are in ``agents.claims``.

* :class:`HonestyModel` - how often a digger / a saboteur tells the truth in a goal claim, and how accusations,
  clearings and suspicions depend on the speaker's and the target's roles (likelihood tables): hand-set numbers
  (the named baseline ``handset``), or a table of truth rates by role x claim kind x phase of the round fitted from
  logged games (``agents.honesty.HonestyTable``).
* :class:`PublicClaims` - the round's latest public claims, read from the observation's claims block.
* :class:`ClaimsObserver` - beliefs from claims: ``posterior(...)`` gives P(gold at each goal) and P(saboteur) per
  seat from the latest claims of the round, what the viewer knows (its own role, goals it saw or that are face up),
  and optional prior suspicions (e.g. another belief model's ``p_saboteur``). With one gold goal (base game,
  Saboteur 2) the gold slot is enumerated exactly and the roles are independent given it (a mean-field prior: the
  role deck's expected share of saboteurs); seat claims are a second, mean-field pass. In the Duel every goal is
  gold or not independently and the opponent's honesty is one parameter.
* :class:`ClaimsBayesModel` - :class:`agents.base.beliefs.BayesModel` (the exact base-game posterior over saboteur
  sets and the gold slot) that also takes claims (``observe_claim``) with the same honesty model.
* :class:`ClaimsBeliefs` - any other belief model with the claims observer's evidence folded in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base.beliefs import BayesModel
from saboteur_env import GameConfig
from saboteur_env.claims import ACCUSE, CLEAR, GOAL, SUSPECT, ClaimLayout, layout

ROLE_CLAIMS = (ACCUSE, CLEAR, SUSPECT)
PHASES = ("early", "middle", "late")  # of a round, by lap (agents.honesty fits truth rates per phase)
PHASE_LAPS = (2, 5)  # the first lap of the middle and of the late phase


def phase_of(decisions: int, num_players: int) -> int:
    """The phase (index into :data:`PHASES`) of a claim made after ``decisions`` game decisions of its round: its
    lap ``decisions // num_players``; laps 0-1 early, 2-4 middle, 5 on late."""
    lap = int(decisions) // max(1, int(num_players))
    return sum(lap >= b for b in PHASE_LAPS)


@dataclass(frozen=True)
class HonestyModel:
    """The honesty model of an observer.

    ``digger_truth`` / ``saboteur_truth``: P(a goal claim is true | the speaker's role); ``opponent_truth``: the
    Duel's one speaker. ``seat_tables[kind]``: P(a claim of that kind about a target | speaker role, target role),
    rows = speaker digger / saboteur, columns = target digger / saboteur (relative weights: only ratios matter).

    ``table`` (fitted, ``agents.honesty.HonestyTable.model()``): P(a claim is true | speaker role, claim kind, phase)
    as nested tuples ``[role][kind][phase]`` (roles digger side / saboteur; kinds goal, accuse, clear, suspect;
    phases ``agents.honesty.PHASES``), and ``pooled[role][kind]`` the same over every phase, for claims whose phase
    is unknown. It replaces the scalars and the seat tables: a seat claim's table is then ``q`` for a true claim and
    ``1 - q`` for a false one (the hand-set tables have that form too). Without it the numbers are the hand-set ones,
    exactly as before fitted models existed.
    """

    digger_truth: float = 0.9
    saboteur_truth: float = 0.3
    opponent_truth: float = 0.6
    seat_tables: dict[int, tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=lambda: {
        ACCUSE: ((0.3, 0.7), (0.6, 0.4)),
        CLEAR: ((0.7, 0.3), (0.4, 0.6)),
        SUSPECT: ((0.4, 0.6), (0.55, 0.45)),
    })  # fmt: skip
    table: tuple[tuple[tuple[float, ...], ...], ...] | None = None
    pooled: tuple[tuple[float, ...], ...] | None = None
    name: str = "handset"

    def __post_init__(self) -> None:
        for name in ("digger_truth", "saboteur_truth", "opponent_truth"):
            v = getattr(self, name)
            if not 0.0 < v < 1.0:
                raise ValueError(f"{name}={v!r} must be in (0, 1) (exclusive: a claim never proves anything)")
        if (self.table is None) != (self.pooled is None):
            raise ValueError("table and pooled come together (agents.honesty.HonestyTable.model())")
        if self.table is not None:
            q = np.asarray(self.table, float)
            if q.ndim != 3 or q.shape[:2] != (2, 4) or not ((q > 0) & (q < 1)).all():
                raise ValueError(f"table must be [2 roles][4 kinds][phases] of truth rates in (0, 1), got shape "
                                 f"{q.shape}")  # fmt: skip

    def truth(self, role: int, kind: int, phase: int | None = None) -> float:
        """P(a claim of ``kind`` is true | speaker ``role`` (0 digger side, 1 saboteur), ``phase``)."""
        if self.table is not None and self.pooled is not None:
            return self.pooled[role][kind] if phase is None else self.table[role][kind][phase]
        if kind == GOAL:
            return self.digger_truth if role == 0 else self.saboteur_truth
        row = self.seat_tables[kind][role]
        return row[kind != CLEAR] / (row[0] + row[1])  # accuse / suspect are true of a saboteur, clear of a digger

    def goal_likelihood(self, says_gold: bool, gold: NDArray[np.bool_], phase: int | None = None
                        ) -> NDArray[np.float64]:  # fmt: skip
        """``(2, ...)``: P(the claim | speaker digger / saboteur) for each truth value in ``gold``."""
        true = np.asarray(gold) == says_gold
        d, s = (self.digger_truth, self.saboteur_truth) if self.table is None else (
            self.truth(0, GOAL, phase), self.truth(1, GOAL, phase))
        return np.stack([np.where(true, d, 1 - d), np.where(true, s, 1 - s)])

    def seat_table(self, kind: int, phase: int | None = None) -> NDArray[np.float64]:
        """``(2, 2)``: P(a ``kind`` claim | speaker role, target role) (rows speaker, columns target digger /
        saboteur; relative weights)."""
        if self.table is None:
            return np.asarray(self.seat_tables[kind], float)
        q = np.array([self.truth(0, kind, phase), self.truth(1, kind, phase)])
        true_of_saboteur = np.stack([1 - q, q], axis=1)
        return true_of_saboteur[:, ::-1] if kind == CLEAR else true_of_saboteur

    def duel_truth(self, phase: int | None = None) -> float:
        """The Duel's one speaker: P(a goal claim is true) (its digger-side row when fitted)."""
        return self.opponent_truth if self.table is None else self.truth(0, GOAL, phase)


@dataclass(frozen=True)
class PublicClaims:
    """The latest claims of a round, absolute seats: ``goals`` (speaker, goal, says_gold) and ``seats`` (speaker,
    kind, target). ``goal_phases`` / ``seat_phases``: the phase of the round each was made in
    (``agents.honesty.PHASES``), aligned with them; absent (shorter) or ``None``: unknown (a fitted honesty model
    then uses its rates pooled over phases; the hand-set one has no phases)."""

    goals: tuple[tuple[int, int, bool], ...] = ()
    seats: tuple[tuple[int, int, int], ...] = ()
    goal_phases: tuple[int | None, ...] = ()
    seat_phases: tuple[int | None, ...] = ()

    def goal_phase(self, i: int) -> int | None:
        return self.goal_phases[i] if i < len(self.goal_phases) else None

    def seat_phase(self, i: int) -> int | None:
        return self.seat_phases[i] if i < len(self.seat_phases) else None

    @staticmethod
    def from_block(lay: ClaimLayout, block: NDArray[np.float32], seat: int) -> PublicClaims:
        """The latest claims of this round from an observation's claims block (seat-relative -> absolute)."""
        parts = lay.split(block)
        n = lay.num_players
        goals = tuple(((seat + s) % n, g, bool(parts["goals"][s, g, 0] > 0.5))
                      for s, g in zip(*np.nonzero(parts["goals"].sum(axis=2) > 0.5), strict=True))  # fmt: skip
        seats: tuple[tuple[int, int, int], ...] = ()
        if lay.roles:
            seats = tuple(((seat + s) % n, ROLE_CLAIMS[k], (seat + t) % n)
                          for s, t, k in zip(*np.nonzero(parts["seats"] > 0.5), strict=True))  # fmt: skip
        return PublicClaims(goals, seats)

    @staticmethod
    def from_records(records: list[dict[str, Any]], round_: int | None, num_players: int | None = None
                     ) -> PublicClaims:  # fmt: skip
        """The latest public claims of ``round_`` (``None``: records of one round, without ``round``) from log
        records (only the public fields are read). With ``num_players``, a record's ``t`` (the round's game
        decisions before it, as the tournament logs it) gives its phase (``agents.honesty.phase_of``)."""
        goals: dict[tuple[int, int], tuple[bool, int | None]] = {}
        seats: dict[tuple[int, int], tuple[int, int | None]] = {}
        for r in records:
            if round_ is not None and r["round"] != round_:
                continue
            phase = phase_of(r["t"], num_players) if num_players and "t" in r else None
            if r["kind"] == "goal":
                goals[(r["speaker"], r["target"])] = (bool(r["value"]), phase)
            else:
                seats[(r["speaker"], r["target"])] = (("accuse", "clear", "suspect").index(r["kind"]) + ACCUSE, phase)
        return PublicClaims(tuple((s, g, v) for (s, g), (v, _) in goals.items()),
                            tuple((s, k, t) for (s, t), (k, _) in seats.items()),
                            tuple(p for _, p in goals.values()), tuple(p for _, p in seats.values()))  # fmt: skip


class ClaimsObserver:
    """Beliefs about the gold goal and the saboteurs from claims (module docstring)."""

    def __init__(self, config: GameConfig, model: HonestyModel | None = None) -> None:
        self.config = config
        self.lay = layout(config) if config.claims else layout(_with_claims(config))
        self.model = model or HonestyModel()
        self.num_players, self.num_goals = config.num_players, self.lay.num_goals
        self.prior_saboteur = _prior_saboteur(config)

    def posterior(
        self,
        claims: PublicClaims,
        *,
        gold_known: NDArray[np.int8] | None = None,
        seat: int | None = None,
        saboteur: bool | None = None,
        prior: NDArray[np.float64] | None = None,
        gold_prior: NDArray[np.float64] | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(p_gold[G], p_saboteur[N])``. ``gold_known[g]``: 1 gold, 0 stone, -1 unknown (the viewer's maps and the
        face-up goals); ``seat``/``saboteur``: the viewer and its own role; ``prior``: P(saboteur) per seat;
        ``gold_prior``: P(gold) per goal before the claims (one gold goal; default uniform over the possible)."""
        n, g = self.num_players, self.num_goals
        known = np.full(g, -1, dtype=np.int8) if gold_known is None else np.asarray(gold_known, dtype=np.int8)
        pri = np.full(n, self.prior_saboteur) if prior is None else np.clip(np.asarray(prior, float), 1e-3, 1 - 1e-3)
        if seat is not None and saboteur is not None:
            pri = pri.copy()
            pri[seat] = 1.0 if saboteur else 0.0
        if not self.lay.roles:
            return self._duel(claims, known, seat), np.zeros(n)
        # Hypotheses: the gold is at slot h (one gold goal). Known goals restrict them.
        hyp = np.ones(g, dtype=bool)
        if (known == 1).any():
            hyp[:] = False
            hyp[int(np.flatnonzero(known == 1)[0])] = True
        hyp &= known != 0
        if not hyp.any():
            hyp[:] = True
        log_prior = np.zeros(g)
        if gold_prior is not None:
            gp = np.asarray(gold_prior, float)
            if (hyp & (gp > 0)).any():
                hyp &= gp > 0
            log_prior = np.log(np.maximum(gp, 1e-300))
        gold = np.eye(g, dtype=bool)  # gold[h, goal]: is `goal` gold under hypothesis h
        like = np.ones((n, 2, g))  # per seat, role, hypothesis
        for i, (s, goal, says_gold) in enumerate(claims.goals):
            like[s] *= self.model.goal_likelihood(says_gold, gold[:, goal], claims.goal_phase(i))
        m = (1 - pri)[:, None] * like[:, 0] + pri[:, None] * like[:, 1]  # (n, g)
        log_post = np.where(hyp, np.log(np.maximum(m, 1e-300)).sum(axis=0) + log_prior, -np.inf)
        w = np.exp(log_post - log_post.max())
        p_hyp = w / w.sum()
        p_sab = (p_hyp[None, :] * pri[:, None] * like[:, 1] / np.maximum(m, 1e-300)).sum(axis=1)
        # Seat claims, mean field: the speaker's and the target's marginals.
        odds_s = np.ones((n, 2))  # evidence on each seat as a speaker (digger, saboteur)
        odds_t = np.ones((n, 2))  # and as a target
        for i, (s, kind, t) in enumerate(claims.seats):
            table = self.model.seat_table(kind, claims.seat_phase(i))
            pt = np.array([1 - p_sab[t], p_sab[t]])
            ps = np.array([1 - p_sab[s], p_sab[s]])
            odds_s[s] *= table @ pt
            odds_t[t] *= ps @ table
        ev = odds_s * odds_t
        num = p_sab * ev[:, 1]
        p_sab = num / (num + (1 - p_sab) * ev[:, 0])
        if seat is not None and saboteur is not None:
            p_sab[seat] = float(saboteur)
        return p_hyp, p_sab

    def _duel(self, claims: PublicClaims, known: NDArray[np.int8], seat: int | None) -> NDArray[np.float64]:
        from saboteur_env.duel.cards import GOAL_NUGGETS

        logit = np.full(self.num_goals, np.log((GOAL_NUGGETS > 0).mean() / (GOAL_NUGGETS == 0).mean()))
        for i, (s, goal, says_gold) in enumerate(claims.goals):
            h = self.model.duel_truth(claims.goal_phase(i))
            if s != seat:
                logit[goal] += np.log(h / (1 - h)) * (1 if says_gold else -1)
        p = 1 / (1 + np.exp(-logit))
        return np.where(known >= 0, known.astype(float), p)


class ClaimsBayesModel(BayesModel):
    """The exact base-game posterior (``BayesModel``) that also takes claims: a goal claim multiplies each
    (saboteur set, gold slot) hypothesis by the honesty model's likelihood for the speaker's role in it; a seat
    claim by the seat table for the speaker's and the target's roles.

    Two ways in: ``observe_claim`` (accumulates, like an event) and ``set_claims`` (the round's latest claims, as
    an observation's claims block holds them: replaced at each call, kept across ``reset_round`` because the block
    is already per round; what a :class:`ClaimsAgent` feeds its wrapped agent). Without claims it is exactly
    ``BayesModel``."""

    name = "claims_bayes"
    model: HonestyModel

    def __init__(self, num_players: int, goal_cells: tuple[int, ...], model: HonestyModel | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(num_players, goal_cells, **kwargs)
        object.__setattr__(self, "model", model or HonestyModel())
        self.claims = PublicClaims()

    def set_claims(self, claims: PublicClaims) -> None:
        """The round's latest public claims (absolute seats); replaces the previous set."""
        self.claims = claims

    def _claims_loglik(self) -> NDArray[np.float64]:
        ll = np.zeros((len(self.sets), 3))
        for i, (speaker, goal, says_gold) in enumerate(self.claims.goals):
            role = self.sets[:, speaker].astype(np.int64)
            like = self.model.goal_likelihood(says_gold, np.eye(3, dtype=bool)[:, goal], self.claims.goal_phase(i))
            ll += np.log(like[role])
        for i, (speaker, kind, target) in enumerate(self.claims.seats):
            table = self.model.seat_table(kind, self.claims.seat_phase(i))
            ll += np.log(table[self.sets[:, speaker].astype(np.int64), self.sets[:, target].astype(np.int64)])[:, None]
        return ll

    def posterior(self) -> NDArray[np.float64]:
        if not (self.claims.goals or self.claims.seats):
            return super().posterior()
        ll = self.loglik + self._claims_loglik()
        top = ll.max()
        if not np.isfinite(top):
            return np.full(ll.shape, 1.0 / ll.size)
        w = np.exp(ll - top)
        return w / w.sum()

    def observe_claim(self, speaker: int, kind: int, target: int, value: int = 1, phase: int | None = None) -> None:
        role = self.sets[:, speaker].astype(np.int64)  # (H,)
        if kind == GOAL:
            gold = np.eye(3, dtype=bool)[:, target]  # per gold slot: is the claimed goal gold
            like = self.model.goal_likelihood(bool(value), gold, phase)  # (2 roles, 3 slots)
            self.loglik += np.log(like[role])
        else:
            table = self.model.seat_table(kind, phase)
            self.loglik += np.log(table[role, self.sets[:, target].astype(np.int64)])[:, None]


class ClaimsBeliefs:
    """Another belief model (``p_saboteur`` / ``p_gold``, e.g. ``SuspicionModel``) with the round's claims folded
    in by a :class:`ClaimsObserver`: its marginals are the observer's priors (roles and the gold slot), so without
    claims it returns exactly the wrapped model's values. Everything else (``observe``, ``reset_round``, ...) goes
    to the wrapped model."""

    def __init__(self, inner: Any, observer: ClaimsObserver) -> None:
        self.inner, self.observer = inner, observer
        self.claims = PublicClaims()
        self.seat: int | None = None
        self.saboteur: bool | None = None

    def set_claims(self, claims: PublicClaims, seat: int | None = None, saboteur: bool | None = None) -> None:
        self.claims, self.seat, self.saboteur = claims, seat, saboteur

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "observer", "claims", "seat", "saboteur"):  # not set yet (copy / unpickle)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _posterior(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.observer.posterior(self.claims, seat=self.seat, saboteur=self.saboteur,
                                       prior=np.asarray(self.inner.p_saboteur(), float),
                                       gold_prior=np.asarray(self.inner.p_gold(), float))  # fmt: skip

    def p_saboteur(self) -> NDArray[np.float64]:
        if not (self.claims.goals or self.claims.seats):
            return np.asarray(self.inner.p_saboteur())
        return self._posterior()[1]

    def p_gold(self) -> NDArray[np.float64]:
        if not self.claims.goals:  # seat claims alone leave the gold slot's marginal as it is (mean field)
            return np.asarray(self.inner.p_gold())
        return self._posterior()[0]


def _with_claims(config: GameConfig) -> GameConfig:
    import dataclasses

    return dataclasses.replace(config, claims=True)


def _prior_saboteur(config: GameConfig) -> float:
    n = config.num_players
    if config.game == "duel":
        return 0.0
    if config.game == "sab2":
        return 3 / 15  # 3 saboteur cards among the 15 role cards (docs/rules.md §2.7)
    from saboteur_env.base.cards import SABOTEURS_BY_PLAYERS

    return SABOTEURS_BY_PLAYERS.get(n, 1) / (n + 1)  # n + 1 role cards, one left over


__all__ = ["PHASES", "PHASE_LAPS", "ROLE_CLAIMS", "ClaimsBayesModel", "ClaimsBeliefs", "ClaimsObserver", "HonestyModel",
           "PublicClaims", "phase_of"]  # fmt: skip
