"""Tournaments under the claims rule (issue 18): agent names ``claims:NAME`` / ``claims@K:NAME`` and the claims per
turn of a cell. The tournament loop (:mod:`experiments.tournament.loop`) plays a claims cell of any game as an option
of the game's config, and re-plays it without the claims (they never change the game)."""

from __future__ import annotations

import re

CLAIMS_PREFIX = "claims:"


_CLAIMS_K = re.compile(r"claims(?:@(\d+))?:(.+)")  # claims:NAME (K = 1) or claims@K:NAME


def _claims_k(name: str) -> int:
    """Claims per turn of an agent name: ``claims:NAME`` 1, ``claims@K:NAME`` K, anything else 0 (no claims)."""
    m = _CLAIMS_K.fullmatch(name)
    if m is None:
        return 0
    k = int(m.group(1) or 1)
    if not 1 <= k <= 8:
        raise ValueError(f"agent {name!r}: claims per turn {k} is out of range; valid: 1..8")
    return k


def _bare(name: str) -> str:
    m = _CLAIMS_K.fullmatch(name)
    return m.group(2) if m else name


def with_claims_per_turn(name: str, k: int) -> str:
    """``claims:NAME`` with K claims per turn (``claims@K:NAME``; K = 1 keeps ``claims:NAME``): the cell's name
    carries K, so logs of different K never share a key."""
    if not _claims_k(name):
        raise ValueError(f"--claims-per-turn applies to claims agents (claims:NAME), not {name!r}")
    return f"claims:{_bare(name)}" if k == 1 else f"claims@{k}:{_bare(name)}"


def _claims_cell(*names: str | None) -> int:
    """Claims per turn of a cell (0: no claims rule): its agents are named ``claims:NAME`` / ``claims@K:NAME``
    (ClaimsAgent around NAME), all of them with the same K, or none is."""
    given = [n for n in names if n is not None]
    ks = {_claims_k(n) for n in given}
    if len(ks) > 1:
        raise ValueError(f"agents {given}: either every agent of a cell is claims:NAME (the claims rule, one K) or "
                         "none is")  # fmt: skip
    return ks.pop()
