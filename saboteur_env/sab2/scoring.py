"""Saboteur 2 end of round: winners (§2.8 with §4.3 E5-E11, both readings), payouts (§2.9) and the theft order (§2.10).

Pure functions over per-seat role lists and flags, so the rules can be checked against the rulebook's example
without a game; the engine calls them at each round end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import KIND_BROKEN, X
from saboteur_env.sab2.cards import Sab2Role

if TYPE_CHECKING:  # the state module does not need this one: no import cycle at run time
    from saboteur_env.sab2.state import Sab2State

PAYOUT_BY_WINNERS = {1: 5, 2: 4, 3: 3, 4: 2}  # five or more winners: 1 each
ROLE_DISCOUNT = {Sab2Role.BOSS: 1, Sab2Role.PROFITEER: 2}


def winners(
    roles: Sequence[int],
    trapped: Sequence[bool],
    gold_reached: bool,
    finder: int | None = None,
    open_blue: bool = False,
    open_green: bool = False,
    reading: str = "seeds",
) -> list[bool]:
    """Winner flag per seat. ``open_blue`` / ``open_green``: the gold goal connects to the start avoiding every
    tunnel with a green / blue door (§2.8). Trapped players never win; geologists never count as winners.

    ``reading="seeds"`` (seed 003): every team with a route it may pass wins, whoever found the gold.
    ``reading="official"`` (the publisher's reading): a digger finder's own team takes precedence when both teams
    have a route; a finder of another role lets both teams win."""
    out = []
    if reading == "seeds":
        blue_team, green_team = open_blue, open_green
    elif reading == "official":
        finder_role = roles[finder] if finder is not None else None
        blue_team = open_blue and (finder_role != Sab2Role.GREEN_DIGGER or not open_green)
        green_team = open_green and (finder_role != Sab2Role.BLUE_DIGGER or not open_blue)
    else:
        raise ValueError(f"reading={reading!r} is not valid; valid: 'seeds', 'official'")
    for role, is_trapped in zip(roles, trapped, strict=True):
        if is_trapped:
            out.append(False)
        elif not gold_reached:
            out.append(role in (Sab2Role.SABOTEUR, Sab2Role.PROFITEER))  # E11: the Profiteer always wins
        elif role == Sab2Role.BLUE_DIGGER:
            out.append(blue_team)
        elif role == Sab2Role.GREEN_DIGGER:
            out.append(green_team)
        else:
            out.append(role in (Sab2Role.BOSS, Sab2Role.PROFITEER))  # E6: the Boss passes any door
    return out


def payouts(roles: Sequence[int], winner: Sequence[bool], trapped: Sequence[bool], crystals: int) -> list[int]:
    """Gold per seat: the §2.9 table by number of winners (Boss -1, Profiteer -2, never below 0, E9) plus the
    geologists' ``floor(crystals / geologists)`` (a trapped geologist's share is lost, E10)."""
    n = sum(winner)
    value = PAYOUT_BY_WINNERS.get(n, 1) if n else 0
    geologists = sum(1 for r in roles if r == Sab2Role.GEOLOGIST)
    out = []
    for role, won, is_trapped in zip(roles, winner, trapped, strict=True):
        if role == Sab2Role.GEOLOGIST:
            out.append(0 if is_trapped else crystals // geologists)
        elif won:
            out.append(max(0, value - ROLE_DISCOUNT.get(Sab2Role(role), 0)))
        else:
            out.append(0)
    return out


def theft_order(thieves: Sequence[int], most_recent: int, num_players: int) -> list[int]:
    """Thieves in stealing order: the one who played Theft most recently, then clockwise from that seat (§2.10)."""
    if most_recent not in thieves:
        raise ValueError(f"most_recent={most_recent} is not among the thieves {list(thieves)}")
    return sorted(thieves, key=lambda seat: (seat - most_recent) % num_players)


def stealable(totals: Sequence[int], stolen_held: Sequence[int]) -> list[int]:
    """Gold each player can lose to a thief: everything but the gold they obtained by theft (E14)."""
    return [t - s for t, s in zip(totals, stolen_held, strict=True)]


def reward_range(config: GameConfig) -> tuple[float, float]:
    """Bounds of one seat's summed rewards over a game. Per round: ``"win"`` +1 / -1; ``"gold"`` at worst 4 thefts,
    at best every crystal (a lone geologist) or 5 gold, plus one theft."""
    if config.reward == "win":
        return -float(config.rounds), float(config.rounds)
    return -4.0 * config.rounds, 11.0 * config.rounds


def card_conservation(s: Sab2State) -> NDArray[np.int64]:
    """Count of every deck kind over the set-aside cards, pile, hands, discards, maze and cards in front of players."""
    deck = s.round_decks[s.round]
    counts = np.bincount(deck[: sc.REMOVED_PER_ROUND].astype(np.int64), minlength=sc.NUM_DECK_KINDS)
    counts += np.bincount(deck[s.deck_pos :].astype(np.int64), minlength=sc.NUM_DECK_KINDS)
    counts += s.hands.sum(0) + s.discards
    kinds = s.cell_shape[s.cell_shape >= 0] // 2
    counts += np.bincount(kinds[kinds < sc.NUM_PATH_KINDS].astype(np.int64), minlength=sc.NUM_DECK_KINDS)
    for t in range(3):
        counts[KIND_BROKEN[t]] += int(s.broken[:, t].sum())
    counts[X["trapped"]] += int(s.trapped.sum())
    counts[X["theft"]] += int(s.theft.sum())
    return counts
