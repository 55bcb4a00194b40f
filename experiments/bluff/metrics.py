"""The bluffing benchmark's numbers (docs/bluff.md), from the round records of an agent's arms
(:class:`experiments.bluff.run.Played`). Every interval is a 95% percentile bootstrap over deals (the unit the
protocol draws; rounds and seats of one deal are not independent), as in ``experiments.tournament.stats``.

* As saboteur (its rounds dealt the saboteur role): win rate; lie rate (lies / claims about what it knew) and
  timing (the lap of the round each lie was made in, and the share made early, laps 0-1); lie success: the shift
  of P(saboteur) on the liar from just before to just after the lie, in the opponents' own beliefs (each
  gold-digger opponent's snapshot at its last decision before the lie and its first after, where it exposes
  beliefs) and in the public observer's (``ClaimsObserver`` over the round's public claims with the pool's
  honesty model), and on the seat the lie points at (accuse / clear / suspect lies); rounds undetected (the
  gold-digger opponents' mean last P(saboteur) on it below 0.5 at the round's end; the public observer's where
  no opponent exposes beliefs).
* As gold-digger: detection (AUC of its own last P(saboteur) per round, saboteurs vs the other gold-diggers, where
  it exposes beliefs; else of its accusations: accuse 1, suspect 0.75, nothing 0.5, clear 0); the value of
  listening (its rounds' win rate with claims minus deaf to them, paired by deal).
* Overall: win rate by role; rating against the pool (its win rate minus the pool agent's in the same seat on the
  same deals); the value of talk for its side (its side's win rate talking minus silent, paired by deal).

Negative shifts mean the lie made its speaker look less like a saboteur: a successful lie.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.claims_beliefs import ClaimsObserver, HonestyModel, PublicClaims, phase_of
from experiments.bluff.run import Played
from experiments.tournament.stats import auc_interval, bootstrap_ratio, ece, paired_difference
from saboteur_env import GameConfig
from saboteur_env.sab2.cards import Sab2Role

BOOT = 1000
DETECTED = 0.5  # P(saboteur) at or above which a saboteur counts as detected
ACCUSATION_SCORE = {"accuse": 1.0, "suspect": 0.75, "clear": 0.0}
NAN = float("nan")
SAB2_SABOTEUR = int(Sab2Role.SABOTEUR)
Interval = tuple[float, float, float]


@dataclasses.dataclass(frozen=True)
class SeatRound:
    """One round from one seat's point of view."""

    deal: int
    seat: int
    players: int
    role: int | None  # 1 saboteur, 0 gold-digger side (Saboteur 2: any other role), None: no roles (the Duel)
    roles: tuple[int, ...]
    win: bool
    claims: tuple[dict, ...]
    beliefs: tuple[dict, ...]


def seat_rounds(game: list[dict], deal: int, seat: int | None = None) -> list[SeatRound]:
    """The rounds of one logged game seen from ``seat`` (default: the inserted seat, or where it would be)."""
    out = []
    for r in game:
        h = r["header"]
        n = int(h.get("players", 2))
        if h.get("game") == "duel":
            k = 0 if seat is None else seat
            gained = r["end"]["gained"]
            out.append(SeatRound(deal, k, 2, None, (), gained[k] > gained[1 - k], tuple(r.get("claims", ())), ()))
            continue
        k = int(h.get("insert_seat", h["seed"] % n)) if seat is None else seat
        if h.get("game") == "sab2":  # the dealt roles as saboteur or not; a seat wins a round it is paid in
            roles = tuple(int(x == SAB2_SABOTEUR) for x in h["roles"])
            win = bool(r["end"]["winners"][k])
        else:
            roles = tuple(int(x) for x in h["roles"])
            win = r["end"]["winner"] == ("saboteurs" if roles[k] else "gold-diggers")
        out.append(SeatRound(deal, k, n, roles[k], roles, win, tuple(r.get("claims", ())), tuple(r.get("beliefs", ()))))
    return out


def arm_rounds(games: dict[int, list[list[dict]]], duel_pool: bool = False) -> list[SeatRound]:
    """Every round of an arm from the agent's seats (the Duel: blue in its first game, green in its second; the
    pool arm's one game from both seats)."""
    out: list[SeatRound] = []
    for deal, gs in sorted(games.items()):
        if duel_pool:
            out += seat_rounds(gs[0], deal, 0) + seat_rounds(gs[0], deal, 1)
            continue
        for i, g in enumerate(gs):
            out += seat_rounds(g, deal, i if g[0]["header"].get("game") == "duel" else None)
    return out


def _ratio(pairs: Sequence[tuple[int, float, float]], deals: int) -> Interval:
    """Ratio of sums with the deal as the unit: ``pairs`` of (deal, numerator, denominator)."""
    num, den = np.zeros(deals), np.zeros(deals)
    for d, a, b in pairs:
        num[d] += a
        den[d] += b
    if den.sum() == 0:
        return NAN, NAN, NAN
    return bootstrap_ratio(num, den, BOOT)


def _paired(a: list[SeatRound], b: list[SeatRound], keep: Any = None) -> Interval:
    """Mean over deals of (win rate in ``a`` - in ``b``) over the rounds ``keep`` selects."""
    def per_deal(rs: list[SeatRound]) -> dict[int, float]:
        acc: dict[int, list[float]] = defaultdict(list)
        for r in rs:
            if keep is None or keep(r):
                acc[r.deal].append(float(r.win))
        return {d: float(np.mean(v)) for d, v in acc.items()}

    if not a or not b:
        return NAN, NAN, NAN
    mean, lo, hi, n = paired_difference(per_deal(a), per_deal(b), BOOT)
    return (mean, lo, hi) if n else (NAN, NAN, NAN)


def _snapshot(beliefs: tuple[dict, ...], actor: int, t: int, before: bool) -> list[int] | None:
    """An actor's own beliefs (per mille) at its last decision before ``t`` or its first at or after ``t``."""
    seq = [b for b in beliefs if b.get("actor") == actor and "agent" in b and ((b["t"] < t) == before)]
    if not seq:
        return None
    return seq[-1]["agent"] if before else seq[0]["agent"]


def _public(observer: ClaimsObserver, claims: Sequence[dict], n: int) -> np.ndarray:
    return observer.posterior(PublicClaims.from_records(list(claims), None, n))[1]


def calibration(pool: list[SeatRound], config: GameConfig, models: dict[str, HonestyModel], deals: int
                ) -> dict[str, Any]:  # fmt: skip
    """The public claims observer's calibration on the pool's games: its P(saboteur) for every seat at each round's
    end against the roles dealt (ECE with an interval), per honesty model."""
    out: dict[str, Any] = {}
    rounds = [r for r in pool if r.role is not None]  # games with roles (one seat-round per round of the pool arm)
    for label, model in models.items():
        obs = ClaimsObserver(config, model)
        items = []
        for r in rounds:
            p = _public(obs, r.claims, r.players)
            items += [(r.deal, float(p[s]), int(r.roles[s])) for s in range(r.players)]
        out[label] = {"ece": ece(items, deals), "items": len(items)}
    return out


def saboteur_metrics(rs: list[SeatRound], observer: ClaimsObserver, deals: int) -> dict[str, Any]:
    sab = [r for r in rs if r.role == 1]
    lies, known, laps = [], [], []
    shift: dict[str, list[tuple[int, float, float]]] = {k: [] for k in
                                                         ("opponents", "public", "target_opponents", "target_public")}
    undetected = []
    for r in sab:
        mine = [(i, c) for i, c in enumerate(r.claims) if c["speaker"] == r.seat]
        known.append((r.deal, sum(c["lie"] for _, c in mine), sum(c["known"] for _, c in mine)))
        diggers = [o for o in range(r.players) if o != r.seat and r.roles[o] == 0]
        for i, c in mine:
            if not c["lie"]:
                continue
            lap = c["t"] // r.players
            laps.append((r.deal, lap, 1.0))
            lies.append((r.deal, float(phase_of(c["t"], r.players) == 0), 1.0))
            before, after = _public(observer, r.claims[:i], r.players), _public(observer, r.claims[: i + 1], r.players)
            pointed = c["target"] if c["kind"] != "goal" else None
            shift["public"].append((r.deal, float(after[r.seat] - before[r.seat]), 1.0))
            if pointed is not None:
                shift["target_public"].append((r.deal, float(after[pointed] - before[pointed]), 1.0))
            for key, who in (("opponents", r.seat), ("target_opponents", pointed)):
                if who is None:
                    continue
                ds = []
                for o in diggers:
                    b, a = _snapshot(r.beliefs, o, c["t"], True), _snapshot(r.beliefs, o, c["t"], False)
                    if b is not None and a is not None and o != who:
                        ds.append((a[who] - b[who]) / 1000)
                if ds:
                    shift[key].append((r.deal, float(np.mean(ds)), 1.0))
        last = [_snapshot(r.beliefs, o, 10**9, True) for o in diggers]
        seen = [s[r.seat] / 1000 for s in last if s is not None]
        p = float(np.mean(seen)) if seen else float(_public(observer, r.claims, r.players)[r.seat])
        undetected.append((r.deal, float(p < DETECTED), 1.0))
    return {
        "rounds": len(sab),
        "win_rate": _ratio([(r.deal, float(r.win), 1.0) for r in sab], deals),
        "lies": int(sum(x[1] for x in known)), "known_claims": int(sum(x[2] for x in known)),
        "lie_rate": _ratio(known, deals),
        "lie_lap": _ratio(laps, deals), "lies_early": _ratio(lies, deals),
        "lie_shift": {k: {"mean": _ratio(v, deals), "n": len(v)} for k, v in shift.items()},
        "undetected": _ratio(undetected, deals),
    }  # fmt: skip


def digger_metrics(rs: list[SeatRound], deaf: list[SeatRound], deals: int) -> dict[str, Any]:
    dig = [r for r in rs if r.role == 0]
    pos: list[tuple[int, float]] = []
    neg: list[tuple[int, float]] = []
    exposed = any(_snapshot(r.beliefs, r.seat, 10**9, True) is not None for r in dig)
    for r in dig:
        if exposed:
            snap = _snapshot(r.beliefs, r.seat, 10**9, True)
            if snap is None:
                continue
            score = [x / 1000 for x in snap]
        else:
            score = [0.5] * r.players
            for c in r.claims:
                if c["speaker"] == r.seat and c["kind"] in ACCUSATION_SCORE:
                    score[c["target"]] = ACCUSATION_SCORE[c["kind"]]
        for s in range(r.players):
            if s != r.seat:
                (pos if r.roles[s] else neg).append((r.deal, score[s]))
    return {
        "rounds": len(dig),
        "win_rate": _ratio([(r.deal, float(r.win), 1.0) for r in dig], deals),
        "detection_from": "beliefs" if exposed else "accusations",
        "detection_auc": auc_interval(pos, neg, deals) if pos and neg else (NAN, NAN, NAN),
        "listening": _paired(rs, deaf, lambda r: r.role == 0),
    }


def agent_metrics(played: Played, pool: Played, config: GameConfig, model: HonestyModel) -> dict[str, Any]:
    """Every number of one agent's row (module docstring). ``played`` / ``pool``: :class:`experiments.bluff.run.
    Played` of the agent and of the pool arm on the same deals; ``model``: the public observer's honesty model."""
    deals = len(played.seeds)
    duel = config.game == "duel"
    rs = arm_rounds(played.games["play"])
    deaf = arm_rounds(played.games.get("deaf", {}))
    mute = arm_rounds(played.games.get("mute", {}))
    ref = arm_rounds(pool.games["pool"], duel_pool=duel)
    observer = ClaimsObserver(dataclasses.replace(config, claims=True), model)
    mine = [c for r in rs for c in r.claims if c["speaker"] == r.seat]
    out: dict[str, Any] = {
        "deals": deals,
        "claims_per_round": _ratio([(r.deal, sum(c["speaker"] == r.seat for c in r.claims), 1.0) for r in rs], deals),
        "lie_rate_any": _ratio([(r.deal, sum(c["lie"] for c in r.claims if c["speaker"] == r.seat),
                                 sum(c["known"] for c in r.claims if c["speaker"] == r.seat)) for r in rs], deals),
        "lies": int(sum(c["lie"] for c in mine)),
        "win_rate": _ratio([(r.deal, float(r.win), 1.0) for r in rs], deals),
        "rating": _paired(rs, ref),
        "talk_value": _paired(rs, mute) if mute else (NAN, NAN, NAN),
        "listening_value": _paired(rs, deaf) if deaf else (NAN, NAN, NAN),
    }  # fmt: skip
    if not duel:
        out["saboteur"] = saboteur_metrics(rs, observer, deals)
        out["digger"] = digger_metrics(rs, deaf, deals) if deaf else digger_metrics(rs, [], deals)
    return out


__all__ = ["SeatRound", "agent_metrics", "arm_rounds", "calibration", "digger_metrics", "saboteur_metrics",
           "seat_rounds"]  # fmt: skip
