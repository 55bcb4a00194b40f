"""Duel score facts: the reward range and the card-conservation check (docs/rules.md §3)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelState


def reward_range(config: GameConfig) -> tuple[float, float]:
    if config.reward == "win":
        return -1.0, 1.0
    # Worst round: three troll payments of 3-nugget cards; best: every nugget of the game.
    return -9.0, float(dc.GOAL_NUGGETS.sum() + 5)


def card_conservation(s: DuelState) -> NDArray[np.int64]:
    """Count of every deck kind over draw pile, hands, discards, maze and cards out of the game (= DECK_COUNTS)."""
    counts = np.bincount(s.deck[s.deck_pos :].astype(np.int64), minlength=dc.NUM_DECK_KINDS)
    counts += s.hands.sum(axis=0) + s.discards
    kinds = dc.SHAPE_KIND[s.cell_shape[s.cell_shape >= 0]]
    counts += np.bincount(kinds[kinds < dc.NUM_PATH_KINDS].astype(np.int64), minlength=dc.NUM_DECK_KINDS)
    counts += np.bincount(dc.CARD_KIND[s.card_out].astype(np.int64), minlength=dc.NUM_DECK_KINDS)
    return counts


__all__ = ["card_conservation", "reward_range"]
