"""Why a Duel action is not legal now, in words (error messages; not on the hot path).

Reads a ``DuelState`` record (``CoreDuelState.to_reference()``); legality itself is decided by the compiled core.
"""

from __future__ import annotations

from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import duel_action_layout
from saboteur_env.duel.state import DuelState


def explain_illegal(s: DuelState, action: int) -> str:
    layout = duel_action_layout(s.config)
    act = layout.decode(action)
    p = s.current
    if act.kind >= 0 and act.kind < dc.NUM_DECK_KINDS and act.segment != "pass" and s.hands[p, act.kind] == 0:
        return f"seat {p} holds no {dc.KIND_CODES[act.kind]}"
    if act.segment.startswith("place") and s.broken[p].any():
        return f"seat {p} has a broken tool and cannot place path cards"
    return "not allowed in this position"


__all__ = ["explain_illegal"]
