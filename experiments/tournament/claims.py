"""Tournaments under the claims rule (issue 18): agent names ``claims:NAME`` / ``claims@K:NAME`` and the claims per
turn of a cell. The tournament loop (:mod:`experiments.tournament.loop`) plays a claims cell of any game as an option
of the game's config, and re-plays it without the claims (they never change the game).

A claims name may carry options before its colon, ``claims[@K]+OPTION[+OPTION...]:NAME`` (``agents.claims.
claims_kwargs``): ``deaf`` (talks, plays as without claims), ``mute`` (never talks, plays as without claims), ``fit``
(its beliefs use the fitted honesty model shipped for the game and player count) or ``fit=PATH`` (a fitted model's
file). The options are part of the name, so of the log key and the header: ``verify --full`` re-builds the agent."""

from __future__ import annotations

import re

CLAIMS_PREFIX = "claims:"


_CLAIMS_K = re.compile(r"claims(?:@(\d+))?((?:\+[^:+]+)*):(.+)")  # claims[@K][+OPTION...]:NAME (K = 1 without @)


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
    return m.group(3) if m else name


def claims_options(name: str) -> tuple[str, ...]:
    """The options of a claims name (``claims@2+fit+deaf:bayes`` -> ``("fit", "deaf")``; others: none)."""
    m = _CLAIMS_K.fullmatch(name)
    return tuple(o for o in m.group(2).split("+") if o) if m else ()


def claims_name(bare: str, k: int = 1, options: tuple[str, ...] = ()) -> str:
    """The claims name of ``bare`` with K claims per turn and ``options`` (:func:`claims_options`)."""
    return f"claims{'' if k == 1 else f'@{k}'}{''.join('+' + o for o in options)}:{bare}"


def check_claims_options(name: str, game: str, players: int) -> None:
    """``ValueError`` naming a claims name's bad option (unknown, or an honesty model that does not exist or was
    fitted for another game): said before a worker builds the agent."""
    from agents.claims import claims_kwargs
    from saboteur_env import GameConfig

    if claims_options(name):
        try:
            claims_kwargs(claims_options(name), GameConfig(game=game, num_players=players, claims=True))
        except ValueError as err:
            raise ValueError(f"agent {name!r}: {err}") from None


def with_claims_per_turn(name: str, k: int) -> str:
    """``claims:NAME`` with K claims per turn (``claims@K:NAME``; K = 1 keeps ``claims:NAME``): the cell's name
    carries K, so logs of different K never share a key. Options stay."""
    if not _claims_k(name):
        raise ValueError(f"--claims-per-turn applies to claims agents (claims:NAME), not {name!r}")
    return claims_name(_bare(name), k, claims_options(name))


def _claims_cell(*names: str | None) -> int:
    """Claims per turn of a cell (0: no claims rule): its agents are named ``claims:NAME`` / ``claims@K:NAME``
    (ClaimsAgent around NAME), all of them with the same K, or none is."""
    given = [n for n in names if n is not None]
    ks = {_claims_k(n) for n in given}
    if len(ks) > 1:
        raise ValueError(f"agents {given}: either every agent of a cell is claims:NAME (the claims rule, one K) or "
                         "none is")  # fmt: skip
    return ks.pop()
