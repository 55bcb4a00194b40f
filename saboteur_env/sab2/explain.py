"""Why a Saboteur 2 action is not legal now, in words (error messages; not on the hot path).

Reads a ``Sab2State`` record (``CoreSab2State.to_reference()``); legality itself is decided by the compiled core.
"""

from __future__ import annotations

from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import action_layout
from saboteur_env.sab2.state import Phase, Sab2State


def explain_illegal(s: Sab2State, a: int) -> str:
    """The whole error message for illegal action ``a`` (the id is already in range)."""
    layout = action_layout(s.config)
    return (f"illegal action {a} ({layout.to_string(a)}) for seat {s.current} in phase "
            f"{Phase(s.phase).name.lower()}: {_why(s, a)}")  # fmt: skip


def _why(s: Sab2State, a: int) -> str:
    act = action_layout(s.config).decode(a)
    if s.phase == Phase.THEFT:
        return "only a steal is possible now (a thief chooses a seat with stealable gold)"
    if s.phase in (Phase.PASS, Phase.FREE) and act.segment not in ("discard", "stop"):
        return "finish the pass / option C first (discard" + (" or stop)" if s.phase == Phase.PASS else ")")
    plays_card = 0 <= act.kind < sc.NUM_DECK_KINDS and act.segment not in ("free", "steal", "stop")
    if plays_card and not s.hands[s.current, act.kind]:
        return f"seat {s.current} holds no {sc.HAND_CODES[act.kind]} card"
    if act.segment == "place" and (s.broken[s.current].any() or s.trapped[s.current]):
        return "a player with a broken tool or Trapped! cannot place path cards"
    return "no legal target or placement"


__all__ = ["explain_illegal"]
