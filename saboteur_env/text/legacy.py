"""The older spellings of every move, still read as input (docs/text.md, "Move notation"; issue 34).

Before the one notation, a move had two more names: the text interface's ``play T05 at r2c5 rot0`` (storage
coordinates: row and column counted from the top-left playable cell, so shifted by the margin) and
``action_to_string``'s ``place T02 T N-S+E 180 at (1,0)`` (frame coordinates, with the card's description). Replies,
logs and scripts written with them must keep working, so :func:`legacy_names` rebuilds both per action id; the move
parser adds them as aliases of the new name. Nothing prints them any more.
"""

from __future__ import annotations

from saboteur_env import api
from saboteur_env.base import cards as bc
from saboteur_env.base.actions import ActionType
from saboteur_env.base.variant import BaseVariant
from saboteur_env.common.cards import DOUBLE_REPAIR_TOOLS, TOOL_NAMES
from saboteur_env.common.config import GameConfig
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import DOUBLE_TOOLS, PAIRS
from saboteur_env.duel.variant import DuelVariant
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import FREE_TARGETS
from saboteur_env.sab2.actions import PLACEABLE as SAB2_PLACEABLE
from saboteur_env.sab2.variant import Sab2Variant

__all__ = ["legacy_names"]

TOOLS = tuple(TOOL_NAMES)


def _rc(cell: int, cols: int) -> str:
    """The old text interface's cell: storage row and column (frame + margin)."""
    r, c = divmod(cell, cols)
    return f"r{r}c{c}"


def _base(config: GameConfig) -> list[tuple[str, str]]:
    layout = api.action_layout(config)
    cols = config.cols
    out = []
    for a in range(layout.num_actions):
        act = layout.decode(a)
        t, code, name = act.type, bc.KIND_CODES[act.kind], bc.KIND_NAMES[act.kind]
        seat = f"seat+{act.target}"
        if t == ActionType.PLACE:
            out.append((f"play {code} at {_rc(act.cell, cols)} rot{180 * act.rotation}",
                        f"place {name}{' 180' if act.rotation else ''} at ({act.row},{act.col})"))  # fmt: skip
        elif t == ActionType.BREAK:
            out.append((f"break {TOOLS[act.tool]} {seat}", f"play {name} on {seat}"))
        elif t == ActionType.REPAIR:
            out.append((f"repair {TOOLS[act.tool]} {seat}", f"play {name} on {seat} fixing {TOOLS[act.tool]}"))
        elif t == ActionType.DOUBLE_REPAIR:
            out.append((f"repair {TOOLS[act.tool]} {seat} with {code}",
                        f"play {name} on {seat} fixing {TOOLS[act.tool]}"))  # fmt: skip
        elif t == ActionType.ROCKFALL:
            out.append((f"rockfall {_rc(act.cell, cols)}", f"rockfall at ({act.row},{act.col})"))
        elif t == ActionType.MAP:
            out.append((f"map goal {act.goal}", f"map on goal {act.goal}"))
        else:
            out.append((f"discard {code}", f"discard {name}"))
    return out


def _sab2(config: GameConfig) -> list[tuple[str, str]]:
    layout = api.action_layout(config)
    cols = config.cols
    out = []
    for a in range(layout.num_actions):
        act = layout.decode(a)
        seg, seat = act.segment, f"seat+{act.target}"
        old_seat = seat if act.target > 0 else "yourself"
        rc = _rc(act.cell, cols) if act.cell >= 0 else ""
        frame = str(config.cell_coords(act.cell)) if act.cell >= 0 else ""  # the old "(2, 5)", with a space
        if seg == "place":
            kind, rot = SAB2_PLACEABLE[act.orientation]
            out.append((f"play {sc.KIND_CODES[kind]} at {rc} rot{180 * rot}",
                        f"place {sc.KIND_CODES[kind]}{' 180' if rot else ''} at {frame}"))  # fmt: skip
        elif seg == "break":
            out.append((f"break {TOOLS[act.tool]} {seat}", f"broken {TOOLS[act.tool]} on {old_seat}"))
        elif seg == "repair":
            out.append((f"repair {TOOLS[act.tool]} {seat}", f"repair {TOOLS[act.tool]} of {old_seat}"))
        elif seg == "double_repair":
            tool = TOOLS[DOUBLE_REPAIR_TOOLS[act.card][act.tool]]
            out.append((f"repair {tool} {seat} with {sc.HAND_CODES[act.kind]}", f"double repair: {tool} of {old_seat}"))
        elif seg == "rockfall":
            out.append((f"rockfall {rc}" + (" with ROCKFALL_2" if act.card else ""),
                        f"rockfall{' (expansion card)' if act.card else ''} at {frame}"))  # fmt: skip
        elif seg == "map":
            out.append((f"map goal {act.slot}", f"map on goal {act.slot}"))
        elif seg in ("theft", "stop"):
            out.append((seg, "stop discarding" if seg == "stop" else "theft"))
        elif seg == "inspection":
            out.append((f"inspect {seat}", f"inspection on {old_seat}"))
        elif seg == "trapped":
            out.append((f"trap {seat}", f"trapped on {old_seat}"))
        elif seg == "discard":
            out.append((f"discard {sc.HAND_CODES[act.kind]}", f"discard {sc.HAND_CODES[act.kind]} face down"))
        elif seg == "free":
            what = ("broken pickaxe", "broken lantern", "broken cart", "Trapped!")[act.tool]
            out.append((f"free {FREE_TARGETS[act.tool]}", f"free yourself of {what}"))
        elif seg == "steal":
            out.append((f"steal {seat}", f"steal 1 gold from {old_seat}"))
        else:  # hands_off, swap_hand, swap_hats, free_at_last
            out.append((f"{seg} {seat}", f"{seg.replace('_', ' ')} on {old_seat}"))
    return out


def _duel(config: GameConfig) -> list[tuple[str, str]]:
    layout = api.action_layout(config)
    cols = config.cols
    out = []
    for a in range(layout.num_actions):
        act = layout.decode(a)
        seg = act.segment
        rc = _rc(act.cell, cols) if act.cell >= 0 else ""
        at = f" at {config.cell_coords(act.cell)}" if act.cell >= 0 else ""
        if seg in ("place", "place_bribe"):
            kind, rot = dc.PLACEABLE[act.orientation]
            bribe = seg == "place_bribe"
            out.append((f"play {dc.KIND_CODES[kind]} at {rc} rot{180 * rot}" + (" bribe" if bribe else ""),
                        f"place {dc.KIND_NAMES[kind]}{' 180' if rot else ''}{at}"
                        + (" and bribe the troll" if bribe else "")))  # fmt: skip
        elif seg == "break":
            out.append((f"break {TOOLS[act.tool]}", f"break the opponent's {TOOLS[act.tool]}"))
        elif seg == "repair":
            out.append((f"repair {TOOLS[act.tool]}", f"repair own {TOOLS[act.tool]}"))
        elif seg == "double_repair":
            tools = DOUBLE_TOOLS[dc.KIND_DOUBLE_REPAIR.index(act.kind)]
            both = act.choice == 2
            chosen = [TOOLS[t] for t in tools] if both else [TOOLS[tools[act.choice]]]
            out.append((f"repair {'+'.join(chosen)} with {dc.KIND_CODES[act.kind]}",
                        f"{dc.KIND_NAMES[act.kind]}: repair {' and '.join(chosen)}"))  # fmt: skip
        elif seg == "rockfall":
            out.append((f"rockfall {rc}", f"rockfall{at}"))
        elif seg == "key":
            out.append((f"key {rc}", f"key on the door{at}"))
        elif seg == "bribe":
            out.append((f"bribe {rc}", f"bribe the troll{at}"))
        elif seg == "map":
            out.append((f"map goal {act.slot}", f"map on goal slot {act.slot}"))
        elif seg == "repair_discard":
            x, y = (dc.KIND_CODES[k] for k in PAIRS[act.pair])
            out.append((f"discard {x}+{y} repair {TOOLS[act.tool]}", f"discard {x} + {y} to repair {TOOLS[act.tool]}"))
        elif act.kind >= 0:
            out.append((f"discard {dc.KIND_CODES[act.kind]}", f"pass, discarding {dc.KIND_CODES[act.kind]}"))
        elif act.pair >= 0:
            x, y = (dc.KIND_CODES[k] for k in PAIRS[act.pair])
            out.append((f"discard {x}+{y}", f"pass, discarding {x} + {y}"))
        else:
            out.append(("pass", "pass (empty hand)"))
    return out


def legacy_names(config: GameConfig) -> tuple[tuple[str, ...], ...]:
    """Per action id of a game config (no claims): its older spellings (old text name, old ``action_to_string``)."""
    variant = config.variant
    if isinstance(variant, DuelVariant):
        rows = _duel(config)
    elif isinstance(variant, Sab2Variant):
        rows = _sab2(config)
    elif isinstance(variant, BaseVariant):
        rows = _base(config)
    else:
        return tuple(() for _ in range(api.num_actions(config)))
    return tuple(rows)
