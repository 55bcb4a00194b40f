"""Why an action is not legal now, in words (error messages; not on the hot path).

Reads a ``GameState`` record (``CoreGameState.to_reference()``) and only explains: legality itself is decided by
the compiled core's mask.
"""

from __future__ import annotations

from saboteur_env.base import board
from saboteur_env.base.actions import ActionType, action_layout
from saboteur_env.base.cards import KIND_NAMES, PLACEABLE, TOOL_NAMES
from saboteur_env.base.state import GameState


def explain_illegal(state: GameState, action: int) -> str:
    """Why ``action`` is not legal now (for error messages; not on the hot path)."""
    layout = action_layout(state.config)
    act = layout.decode(action)
    seat = state.current
    if state.game_over:
        return "the game is over"
    if state.hands[seat, act.kind] == 0:
        return f"seat {seat} holds no {KIND_NAMES[act.kind]}"
    target = (seat + act.target) % state.config.num_players if act.target >= 0 else -1
    if act.type == ActionType.PLACE:
        if state.broken[seat].any():
            return f"seat {seat} has a broken tool"
        if state.cell_shape[act.cell] >= 0 or board.geometry(state.config).is_goal_cell[act.cell]:
            return "the cell is not empty"
        code = int(board.cell_codes(state)[act.cell])
        o = PLACEABLE.index((act.kind, act.rotation))
        open_bits = int(board.PLACEABLE_OPEN[o])
        if (open_bits & code & 15) != (code >> 4) & 15:
            return "the card's edges do not match a neighbouring maze card"
        return "no open edge of the card meets a tunnel connected to the start"
    if act.type == ActionType.BREAK:
        return f"seat {target}'s {TOOL_NAMES[act.tool]} is already broken"
    if act.type in (ActionType.REPAIR, ActionType.DOUBLE_REPAIR):
        return f"seat {target}'s {TOOL_NAMES[act.tool]} is not broken"
    if act.type == ActionType.ROCKFALL:
        return "the cell holds no removable path card (start and goals are never removed)"
    if act.type == ActionType.MAP:
        return f"goal {act.goal} is already face up"
    return "not legal"


__all__ = ["explain_illegal"]
