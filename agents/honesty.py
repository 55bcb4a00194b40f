"""Honesty models fitted from logged games (issue 36; docs/bluff.md): how often a claim is true, by the speaker's
role, the claim's kind and the phase of the round, as Beta posteriors with their counts.

* :data:`PHASES` / :func:`phase_of` - a claim's phase: the lap of the round it was made in (``t // N``, ``t`` the
  round's game decisions before it, as the tournament logs it): laps 0-1 early, 2-4 middle, 5 on late.
* :class:`HonestyTable` - the data object: counts of true and false claims per (role, kind, phase) cell, the prior
  (the hand-set model's rates, worth :data:`PRIOR_STRENGTH` claims, so an empty cell says what the hand-set model
  says), the posterior mean and a 95% interval per cell, fit / JSON save and load, and ``model()``: the
  :class:`~agents.claims_beliefs.HonestyModel` the believers' Bayes update uses.
* :func:`handset_table` - the hand-set model (a saboteur's goal claim is true with 0.3, ...) as a table with no
  counts: the named baseline ``handset``.
* :func:`honesty_model` - a model by name, as the agent names ``claims+fit:NAME`` / ``claims+fit=PATH:NAME`` give
  it: ``handset``, ``fit`` (the model shipped for the game and player count, ``agents/fitted/honesty-*.json``)
  or a path to a JSON file.

A Saboteur 2 speaker's role is its dealt role (saboteur or not); the Duel has no roles: every claim is the digger
side's row, and its hand-set prior is the Duel's ``opponent_truth``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.claims_beliefs import PHASE_LAPS, PHASES, HonestyModel, phase_of

FORMAT = "saboteur-honesty-v1"
ROLES = ("digger", "saboteur")  # digger side: every role but the saboteur (the Duel: its speakers)
KINDS = ("goal", "accuse", "clear", "suspect")  # the claim kinds' order of saboteur_env.claims (GOAL = 0, ...)
PRIOR_STRENGTH = 2.0  # the prior is worth this many claims
SHIPPED_DIR = Path(__file__).resolve().parent / "fitted"  # fitted honesty models shipped with the repository
LEVEL = 0.95


def handset_truth(game: str) -> NDArray[np.float64]:
    """``(roles, kinds)``: the hand-set model's truth rates (the Duel: ``opponent_truth`` for goal claims)."""
    h = HonestyModel()
    q = np.array([[h.truth(r, k) for k in range(len(KINDS))] for r in range(len(ROLES))])
    if game == "duel":
        q[:, 0] = h.opponent_truth
    return q


@dataclass(frozen=True, eq=False)
class HonestyTable:
    """Truth counts per (role, kind, phase) with a Beta prior centred on ``prior`` (module docstring).

    ``counts[role, kind, phase] = (true, false)``; ``meta``: what it was fitted on (game, players, population, the
    deals' seeds, the source logs), saved with it."""

    counts: NDArray[np.int64]  # (roles, kinds, phases, 2)
    prior: NDArray[np.float64]  # (roles, kinds): prior mean of each cell (the same for every phase)
    strength: float = PRIOR_STRENGTH
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        shape = (len(ROLES), len(KINDS), len(PHASES), 2)
        if self.counts.shape != shape or (self.counts < 0).any():
            raise ValueError(f"counts must be non-negative with shape {shape}, got {self.counts.shape}")
        if self.prior.shape != shape[:2] or not ((self.prior > 0) & (self.prior < 1)).all():
            raise ValueError(f"prior must be truth rates in (0, 1) with shape {shape[:2]}")
        if not self.strength > 0:
            raise ValueError(f"strength={self.strength!r} must be > 0")

    # ---- the posterior ----
    def _ab(self, pooled: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        c = self.counts.sum(axis=2) if pooled else self.counts
        pri = self.prior if pooled else self.prior[:, :, None]
        return self.strength * pri + c[..., 0], self.strength * (1 - pri) + c[..., 1]

    def mean(self, pooled: bool = False) -> NDArray[np.float64]:
        """Posterior mean truth rate per (role, kind, phase) (``pooled``: per (role, kind), every phase)."""
        a, b = self._ab(pooled)
        return a / (a + b)

    def interval(self, pooled: bool = False, level: float = LEVEL, grid: int = 20_000
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
        """Equal-tailed Beta posterior interval per cell (the Beta CDF integrated on a grid of ``grid`` points:
        deterministic, to about 1e-4)."""
        a, b = self._ab(pooled)
        x = (np.arange(grid) + 0.5) / grid
        logpdf = (a[..., None] - 1) * np.log(x) + (b[..., None] - 1) * np.log1p(-x)
        pdf = np.exp(logpdf - logpdf.max(axis=-1, keepdims=True))
        cdf = np.cumsum(pdf, axis=-1)
        cdf /= cdf[..., -1:]
        flat = cdf.reshape(-1, grid)
        lo = np.array([x[int(np.searchsorted(c, (1 - level) / 2))] for c in flat]).reshape(a.shape)
        hi = np.array([x[min(grid - 1, int(np.searchsorted(c, (1 + level) / 2)))] for c in flat]).reshape(a.shape)
        return lo, hi

    def model(self) -> HonestyModel:
        """The believers' honesty model: the posterior means (``HonestyModel.table`` / ``pooled``)."""
        def nest(a: NDArray[np.float64]) -> Any:
            return tuple(nest(x) for x in a) if a.ndim > 1 else tuple(float(x) for x in a)

        return HonestyModel(table=nest(self.mean()), pooled=nest(self.mean(pooled=True)),
                            name=str(self.meta.get("name", "fit")))  # fmt: skip

    # ---- fitting ----
    @classmethod
    def fit(cls, rows: Iterable[tuple[int, int, int, bool]], game: str, strength: float = PRIOR_STRENGTH,
            **meta: Any) -> HonestyTable:  # fmt: skip
        """Count ``(role, kind, phase, truth)`` rows (role 0 digger side / 1 saboteur; kind and phase indices)."""
        counts = np.zeros((len(ROLES), len(KINDS), len(PHASES), 2), dtype=np.int64)
        for role, kind, phase, truth in rows:
            counts[role, kind, phase, 0 if truth else 1] += 1
        return cls(counts, handset_truth(game), strength, {"game": game, **meta})

    # ---- files ----
    def to_json(self) -> dict[str, Any]:
        mean, (lo, hi) = self.mean(), self.interval()
        cells = [{"role": ROLES[r], "kind": KINDS[k], "phase": PHASES[p], "true": int(self.counts[r, k, p, 0]),
                  "false": int(self.counts[r, k, p, 1]), "mean": round(float(mean[r, k, p]), 4),
                  "ci": [round(float(lo[r, k, p]), 4), round(float(hi[r, k, p]), 4)]}
                 for r in range(len(ROLES)) for k in range(len(KINDS)) for p in range(len(PHASES))]  # fmt: skip
        prior = {f"{ROLES[r]}/{KINDS[k]}": float(self.prior[r, k]) for r in range(len(ROLES))
                 for k in range(len(KINDS))}  # fmt: skip
        return {"format": FORMAT, "phases": {"names": list(PHASES), "first_laps": list(PHASE_LAPS)},
                "prior": {"mean": prior, "strength": self.strength}, "meta": self.meta, "cells": cells}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HonestyTable:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise ValueError(f"not a {FORMAT} honesty file (format {found!r})")
        if data["phases"]["names"] != list(PHASES) or data["phases"]["first_laps"] != list(PHASE_LAPS):
            raise ValueError(f"honesty file phases {data['phases']} differ from this code's {PHASES} {PHASE_LAPS}")
        counts = np.zeros((len(ROLES), len(KINDS), len(PHASES), 2), dtype=np.int64)
        for c in data["cells"]:
            counts[ROLES.index(c["role"]), KINDS.index(c["kind"]), PHASES.index(c["phase"])] = (c["true"], c["false"])
        prior = np.array([[data["prior"]["mean"][f"{r}/{k}"] for k in KINDS] for r in ROLES], float)
        return cls(counts, prior, float(data["prior"]["strength"]), dict(data.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> HonestyTable:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"honesty file {str(path)!r} cannot be read: {err}") from None


def handset_table(game: str) -> HonestyTable:
    """The hand-set model as a table without counts (the named baseline ``handset``)."""
    return HonestyTable.fit((), game, name="handset")


def shipped_path(game: str, players: int) -> Path:
    """Where the fitted model shipped for a game and player count lives (``agents/fitted/honesty-base-5.json``)."""
    return SHIPPED_DIR / f"honesty-{game}-{players}.json"


def honesty_model(name: str, game: str, players: int) -> HonestyModel:
    """The honesty model called ``name``: ``handset`` (``HonestyModel()``, the hand-set baseline), ``fit`` (the
    fitted model shipped for ``game`` at ``players`` players) or a JSON file's path (``HonestyTable.save``).
    ``ValueError`` naming the value otherwise."""
    if name == "handset":
        return HonestyModel()
    path = shipped_path(game, players) if name == "fit" else Path(name)
    if not path.is_file():
        shipped = sorted(p.stem.removeprefix("honesty-") for p in SHIPPED_DIR.glob("honesty-*.json"))
        raise ValueError(f"honesty model {name!r}: no file {str(path)!r}; valid: handset, fit (shipped for "
                         f"{', '.join(shipped) or 'no configuration'}) or a path to a .json file")  # fmt: skip
    table = HonestyTable.load(path)
    if table.meta.get("game", game) != game:
        raise ValueError(f"honesty model {name!r} was fitted for game {table.meta.get('game')!r}, not {game!r}")
    return table.model()


__all__ = ["FORMAT", "KINDS", "PHASES", "PHASE_LAPS", "ROLES", "HonestyTable", "handset_table", "handset_truth",
           "honesty_model", "phase_of", "shipped_path"]  # fmt: skip
