"""Base-game score facts: the reward range, the final ranking and the card-conservation check (docs/rules.md §1.6)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base import board
from saboteur_env.base.cards import KIND_BROKEN, MAX_GOLD_DRAWN, NUM_DECK_KINDS
from saboteur_env.base.state import GameState
from saboteur_env.common.config import GameConfig


def returns(state: GameState) -> NDArray[np.float64]:
    """Nuggets per seat so far (the final score once the game is over)."""
    return state.gold_nuggets.astype(np.float64)


def reward_range(config: GameConfig) -> tuple[float, float]:
    """Bounds of one seat's summed rewards over a game (``"gold"``: at most 9 cards of 3 nuggets per round)."""
    if config.reward == "win":
        return -float(config.rounds), float(config.rounds)
    return 0.0, float(MAX_GOLD_DRAWN * 3 * config.rounds)


def final_ranking(state: GameState) -> list[int]:
    """Rank per seat by nuggets (1 = best; tied players share a rank)."""
    g = returns(state)
    return [1 + int((g > g[i]).sum()) for i in range(state.config.num_players)]


def card_conservation(state: GameState) -> NDArray[np.int64]:
    """Count of every deck kind over draw pile, hands, maze, tools in front of players and discards."""
    counts = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
    deck = state.round_decks[state.round][state.deck_pos :]
    np.add.at(counts, deck.astype(np.int64), 1)
    counts += state.hands.sum(axis=0)
    counts += state.discards
    shapes = state.cell_shape[board.removable_cells(state)]
    np.add.at(counts, board.SHAPE_KIND[shapes].astype(np.int64), 1)
    for t in range(3):
        counts[KIND_BROKEN[t]] += int(state.broken[:, t].sum())
    return counts


__all__ = ["card_conservation", "final_ranking", "returns", "reward_range"]
