"""Hand-built positions from literal ASCII boards (for tests, teaching and analysis).

A board is one line per storage row (``config.rows`` lines, margin rows included) with ``config.cols``
whitespace-separated tokens:

==========  ==================================================================
token       cell
==========  ==================================================================
``.``       empty
``S``       the start card (only on the start cell)
``?``       a face-down goal (only on goal cells; its kind comes from ``goals``)
``G``       revealed gold goal; ``A`` / ``A'`` revealed stone A at 0° / 180°; ``B`` / ``B'`` stone B
``T06``     path card T06 at 0°; ``T06'`` at 180°
==========  ==================================================================

Example (5x9 frame, margin 0)::

    . . . . . . . . ?
    . . . . . . . . .
    S T05 T05 . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from saboteur_env.base import board, observation
from saboteur_env.base import reference as rules  # set-up draws of a position
from saboteur_env.base.cards import (
    GOAL_KINDS,
    KIND_CODES,
    KIND_GOAL_GOLD,
    KIND_GOAL_STONE_A,
    KIND_GOAL_STONE_B,
    NUM_DECK_KINDS,
    SHAPE_ID,
    SHAPE_OPEN,
    TOOL_NAMES,
    Role,
)
from saboteur_env.base.state import GameState
from saboteur_env.common.config import ConfigError, GameConfig

_GOAL_TOKENS = {"G": KIND_GOAL_GOLD, "A": KIND_GOAL_STONE_A, "B": KIND_GOAL_STONE_B}
_GOAL_NAMES = {"gold": KIND_GOAL_GOLD, "stone_a": KIND_GOAL_STONE_A, "stone_b": KIND_GOAL_STONE_B}


def kind_of(name: str | int) -> int:
    """Card kind from a code such as ``"T06"``, ``"MAP"``, ``"BROKEN_CART"`` (or an int kind)."""
    if isinstance(name, (int, np.integer)):
        return int(name)
    try:
        return KIND_CODES.index(name.upper())
    except ValueError:
        raise ConfigError(f"unknown card {name!r}; valid: {', '.join(KIND_CODES[:NUM_DECK_KINDS])}") from None


def make_state(
    config: GameConfig | None = None,
    board_text: str | None = None,
    *,
    goals: Sequence[str] = ("gold", "stone_a", "stone_b"),
    hands: Mapping[int, Mapping[str | int, int]] | None = None,
    roles: Sequence[int] | None = None,
    broken: Mapping[int, Sequence[str]] | None = None,
    peeked: Mapping[int, Sequence[int]] | None = None,
    deck: Sequence[str | int] | None = None,
    current: int = 0,
    seed: int = 0,
) -> GameState:
    """A round-1 state with the given board and hidden information (everything not given comes from ``seed``).

    Args:
        goals: goal kinds on the top, middle and bottom goal cells (``"gold"``, ``"stone_a"``, ``"stone_b"``).
        hands: seat -> {card code: count}; seats not listed keep their dealt hand.
        roles: role per seat (0 gold-digger, 1 saboteur).
        broken: seat -> tool names (``"pickaxe"``, ``"lantern"``, ``"cart"``) broken in front of it.
        peeked: seat -> goal slots it used a map on.
        deck: the draw pile, top first (default: the rest of the shuffled deck).
        current: seat to act.
    """
    config = config or GameConfig()
    state = rules.new_game(config, np.random.default_rng(seed))
    p = config.num_players
    try:
        kinds = [_GOAL_NAMES[g] for g in goals]
    except KeyError:
        raise ConfigError(f"goals={list(goals)!r}: each must be one of {sorted(_GOAL_NAMES)}") from None
    if sorted(kinds) != sorted(GOAL_KINDS):
        raise ConfigError(f"goals={list(goals)!r} must hold gold, stone_a and stone_b once each")
    state.round_goals[0] = kinds
    state.goal_kind[:] = kinds
    board.init_board(state)
    if board_text is not None:
        _lay_board(state, board_text)
    if hands:
        for seat, hand in hands.items():
            state.hands[seat] = 0
            for name, count in hand.items():
                state.hands[seat, kind_of(name)] = count
    if roles is not None:
        if len(roles) != p:
            raise ConfigError(f"roles has {len(roles)} entries; expected {p}")
        state.roles[:] = [Role(r) for r in roles]
    for seat, tools in (broken or {}).items():
        for tool in tools:
            state.broken[seat, TOOL_NAMES.index(tool)] = True
    for seat, slots in (peeked or {}).items():
        state.peeked[seat, list(slots)] = True
    if deck is not None:
        width = state.round_decks.shape[1]
        if len(deck) > width:
            raise ConfigError(f"deck has {len(deck)} cards; at most {width}")
        state.deck_pos = width - len(deck)
        state.round_decks[0, state.deck_pos :] = [kind_of(k) for k in deck]
    if not 0 <= current < p:
        raise ConfigError(f"current={current} out of range; valid: 0..{p - 1}")
    state.current = current
    state.last_player = current
    state._cache.clear()
    state.board_changed()
    observation.refresh_seat_table(state)
    observation.rebuild_history(state)
    # The game users play: the variant turns the reference state into its own state type (the compiled core's).
    adopt = getattr(config.variant, "adopt", None)
    return state if adopt is None else adopt(state)


def _lay_board(state: GameState, text: str) -> None:
    cfg = state.config
    geo = board.geometry(cfg)
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    if len(rows) != cfg.rows or any(len(r) != cfg.cols for r in rows):
        raise ConfigError(f"board must have {cfg.rows} rows of {cfg.cols} tokens; got {[len(r) for r in rows]}")
    state.cell_shape[:] = -1
    state.cell_open[:] = 0
    for r, row in enumerate(rows):
        for c, token in enumerate(row):
            cell = r * cfg.cols + c
            rot = 1 if token.endswith("'") else 0
            name = token.rstrip("'")
            if cell == geo.start_cell:
                if token != "S":
                    raise ConfigError(f"the start cell ({r},{c}) must hold 'S', not {token!r}")
                shape = board.START_SHAPE
            elif cell in geo.goal_cells:
                slot = geo.goal_cells.index(cell)
                if name == "?":
                    continue
                if name not in _GOAL_TOKENS or _GOAL_TOKENS[name] != state.goal_kind[slot]:
                    raise ConfigError(f"goal cell ({r},{c}) holds {KIND_CODES[state.goal_kind[slot]]}; got {token!r}")
                state.goal_revealed[slot] = True
                shape = SHAPE_ID[(_GOAL_TOKENS[name], rot)]
            elif name == ".":
                continue
            else:
                kind = kind_of(name)
                if (kind, rot) not in SHAPE_ID or kind >= 16:
                    raise ConfigError(f"token {token!r} at ({r},{c}) is not a path card")
                shape = SHAPE_ID[(kind, rot)]
            state.cell_shape[cell] = shape
            state.cell_open[cell] = SHAPE_OPEN[shape]
    board.recompute_reach(state)
    board.refresh_planes(state)


__all__ = ["kind_of", "make_state"]
