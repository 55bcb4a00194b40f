"""Shared helpers: hand-built positions and small random-play drivers."""

from __future__ import annotations

import numpy as np
from toy_variant import LiteVariant

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game, variants
from saboteur_env.base.actions import Action, ActionType, action_layout
from saboteur_env.base.positions import kind_of, make_state

__all__ = ["BOARD_ROW2", "EMPTY_BOARD", "legal_moves", "make_state", "place", "random_states"]

variants.register(LiteVariant(), replace=True)  # the toy fourth game (tests/toy_variant.py): one registry line

EMPTY_BOARD = """
. . . . . . . . ?
. . . . . . . . .
S . . . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


BOARD_ROW2 = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


def place(state, card: str, row: int, col: int, rotation: int = 0) -> int:
    """Action id placing ``card`` (e.g. "T05") at frame cell (row, col)."""
    layout = action_layout(state.config)
    return layout.encode(Action(ActionType.PLACE, kind_of(card), row=row, col=col, rotation=rotation))


def legal_moves(state) -> set[str]:
    layout = action_layout(state.config)
    return {layout.to_string(int(a)) for a in np.flatnonzero(legal_action_mask(state))}


def random_states(num_players: int, seed: int, every: int = 7):
    """Yield states along one random game (every ``every`` decisions)."""
    rng = np.random.default_rng(seed)
    state = new_game(GameConfig(num_players=num_players), rng)
    k = 0
    while not state.game_over:
        if k % every == 0:
            yield state
        a = int(rng.choice(np.flatnonzero(legal_action_mask(state))))
        state = apply_action(state, a)
        k += 1
