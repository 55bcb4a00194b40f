"""The flat action space and its codec: the only module that knows the layout.

Actions are indexed by **card kind**, never by hand slot, so an id always means the same move. Targets are
**seat-relative** (offset 0 = the acting seat, 1 = the next seat clockwise, ...). With ``HW = rows * cols``
playable cells (cell index ``(row + margin) * cols + col + margin``), ``O = 26`` placeable orientations
(``cards.PLACEABLE``: the 16 path kinds at 0°, plus 180° for the 10 asymmetric ones) and ``P`` players:

=================  ==========================  ===========================================================
segment            size                        index within the segment
=================  ==========================  ===========================================================
``place``          ``HW * O``                  ``cell * O + orientation``
``break``          ``3 * P``                   ``tool * P + target`` (broken pickaxe / lantern / cart)
``repair``         ``3 * P``                   ``tool * P + target`` (single-tool repair cards)
``double_repair``  ``3 * 2 * P``               ``(card * 2 + choice) * P + target``; card 0 = pickaxe-or-lantern,
                                               1 = pickaxe-or-cart, 2 = lantern-or-cart; choice picks the tool
``rockfall``       ``HW``                      ``cell``
``map``            ``3``                       goal slot (0 = top (0,8), 1 = middle (2,8), 2 = bottom (4,8))
``discard``        ``27``                      card kind (pass: discard one card face down)
=================  ==========================  ===========================================================

Base game, 5x9 frame, margin 0: ``1170 + 12 P + 45 + 3 + 27`` actions (1293 for 4 players, 1365 for 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from saboteur_env.base.cards import (
    DOUBLE_REPAIR_TOOLS,
    KIND_BROKEN,
    KIND_CODES,
    KIND_DOUBLE_REPAIR,
    KIND_MAP,
    KIND_NAMES,
    KIND_REPAIR,
    KIND_ROCKFALL,
    NUM_DECK_KINDS,
    PLACEABLE,
    TOOL_NAMES,
)
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ActionError, check_action_id
from saboteur_env.common.notation import cell_text


class ActionType(IntEnum):
    PLACE = 0
    BREAK = 1
    REPAIR = 2
    DOUBLE_REPAIR = 3
    ROCKFALL = 4
    MAP = 5
    DISCARD = 6


@dataclass(frozen=True)
class Action:
    """A decoded action. Unused fields are -1. ``row``/``col`` are frame coordinates."""

    type: ActionType
    kind: int  # card kind played or discarded
    cell: int = -1  # flat storage cell (place, rockfall)
    row: int = -1
    col: int = -1
    rotation: int = -1  # 0 or 1 (= 180°) for place
    target: int = -1  # seat offset (0 = me) for break / repair
    tool: int = -1  # tool broken or repaired
    goal: int = -1  # goal slot for map


class ActionLayout:
    """Offsets of each segment and vectorised decode tables for one configuration."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.num_players = p = config.num_players
        self.num_cells = hw = config.num_cells
        self.num_orientations = o = len(PLACEABLE)
        sizes = {
            "place": hw * o,
            "break": 3 * p,
            "repair": 3 * p,
            "double_repair": 6 * p,
            "rockfall": hw,
            "map": 3,
            "discard": NUM_DECK_KINDS,
        }
        self.offsets: dict[str, int] = {}
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            self.offsets[name] = start
            self.slices[name] = slice(start, start + size)
            start += size
        self.num_actions = start
        self.num_place = sizes["place"]
        # Row v: the seat offsets whose bit is set in v (builds the tool-card part of the mask).
        self.seat_bit_rows = ((np.arange(1 << p)[:, None] >> np.arange(p)) & 1).astype(bool)
        self.tool_rows_memo: dict[tuple[int, ...], np.ndarray] = {}  # 12 bit rows -> flat tool-card segment
        self.segment_shapes: dict[str, tuple[int, ...]] = {
            "place": (hw, o),
            "break": (3, p),
            "repair": (3, p),
            "double_repair": (3, 2, p),
            "rockfall": (hw,),
            "map": (3,),
            "discard": (NUM_DECK_KINDS,),
        }
        # Decode tables as Python lists (fast scalar access on the hot path).
        types, kinds, args, targets, tools = [], [], [], [], []
        for a in range(self.num_actions):
            act = self._decode_slow(a)
            types.append(int(act.type))
            kinds.append(act.kind)
            args.append(act.cell if act.cell >= 0 else act.goal)
            targets.append(act.target)
            tools.append(act.tool if act.tool >= 0 else act.rotation)
        self.type_of, self.kind_of, self.arg_of, self.target_of, self.tool_of = types, kinds, args, targets, tools
        # The same tables as arrays, for vectorised use by agents: arg = cell (place, rockfall) or goal (map);
        # tool = tool (break, repair) or rotation (place); orientation = index into cards.PLACEABLE (place).
        self.type_arr = np.array(types)
        self.kind_arr = np.array(kinds)
        self.arg_arr = np.array(args)
        self.target_arr = np.array(targets)
        self.tool_arr = np.array(tools)
        self.orientation_arr = np.where(self.type_arr == ActionType.PLACE, np.arange(self.num_actions) % o, -1)
        self._strings = [self._to_string_slow(a) for a in range(self.num_actions)]

    # ---- decoding -----------------------------------------------------------------------------------------------
    def _decode_slow(self, a: int) -> Action:
        p, o, cfg = self.num_players, self.num_orientations, self.config
        if a < self.offsets["break"]:
            cell, orient = divmod(a, o)
            kind, rot = PLACEABLE[orient]
            r, c = cfg.cell_coords(cell)
            return Action(ActionType.PLACE, kind, cell=cell, row=r, col=c, rotation=rot)
        if a < self.offsets["repair"]:
            tool, target = divmod(a - self.offsets["break"], p)
            return Action(ActionType.BREAK, KIND_BROKEN[tool], target=target, tool=tool)
        if a < self.offsets["double_repair"]:
            tool, target = divmod(a - self.offsets["repair"], p)
            return Action(ActionType.REPAIR, KIND_REPAIR[tool], target=target, tool=tool)
        if a < self.offsets["rockfall"]:
            cc, target = divmod(a - self.offsets["double_repair"], p)
            card, choice = divmod(cc, 2)
            tool = int(DOUBLE_REPAIR_TOOLS[card][choice])
            return Action(ActionType.DOUBLE_REPAIR, KIND_DOUBLE_REPAIR[card], target=target, tool=tool)
        if a < self.offsets["map"]:
            cell = a - self.offsets["rockfall"]
            r, c = cfg.cell_coords(cell)
            return Action(ActionType.ROCKFALL, KIND_ROCKFALL, cell=cell, row=r, col=c)
        if a < self.offsets["discard"]:
            return Action(ActionType.MAP, KIND_MAP, goal=a - self.offsets["map"])
        return Action(ActionType.DISCARD, a - self.offsets["discard"])

    def check(self, action: object) -> int:
        """Validate an action id (int, numpy integer or 0-d integer array in range) and return it as ``int``."""
        return check_action_id(action, self.num_actions)

    def decode(self, action: int) -> Action:
        return self._decode_slow(self.check(action))

    def encode(self, act: Action) -> int:
        """Inverse of :meth:`decode` (uses ``cell``, or ``row``/``col`` when ``cell`` is -1)."""
        p, o = self.num_players, self.num_orientations
        cell = act.cell
        if cell < 0 and act.type in (ActionType.PLACE, ActionType.ROCKFALL):
            cell = self.config.cell_index(act.row, act.col)
        if act.type in (ActionType.BREAK, ActionType.REPAIR, ActionType.DOUBLE_REPAIR) and not 0 <= act.target < p:
            raise ActionError(f"target offset {act.target} out of range; valid: 0..{p - 1}")
        if act.type == ActionType.PLACE:
            if (act.kind, act.rotation) not in PLACEABLE:
                if (act.kind, 0) in PLACEABLE and act.rotation == 1:
                    raise ActionError(f"{KIND_NAMES[act.kind]} is symmetric: use rotation 0")
                raise ActionError(f"kind {act.kind} rotation {act.rotation} is not a placeable path card")
            return self.offsets["place"] + cell * o + PLACEABLE.index((act.kind, act.rotation))
        if act.type == ActionType.BREAK:
            return self.offsets["break"] + act.tool * p + act.target
        if act.type == ActionType.REPAIR:
            return self.offsets["repair"] + act.tool * p + act.target
        if act.type == ActionType.DOUBLE_REPAIR:
            card = KIND_DOUBLE_REPAIR.index(act.kind)
            choice = DOUBLE_REPAIR_TOOLS[card].index(act.tool)
            return self.offsets["double_repair"] + (card * 2 + choice) * p + act.target
        if act.type == ActionType.ROCKFALL:
            return self.offsets["rockfall"] + cell
        if act.type == ActionType.MAP:
            return self.offsets["map"] + act.goal
        return self.offsets["discard"] + act.kind

    # ---- strings ----------------------------------------------------------------------------------------------
    def _to_string_slow(self, a: int) -> str:
        act = self._decode_slow(a)
        code = KIND_CODES[act.kind]
        if act.type == ActionType.PLACE:
            return f"place {code}{' rot180' if act.rotation else ''} at {cell_text(act.row, act.col)}"
        if act.type == ActionType.BREAK:
            return f"break {TOOL_NAMES[act.tool]} seat+{act.target}"
        if act.type == ActionType.REPAIR:
            return f"repair {TOOL_NAMES[act.tool]} seat+{act.target}"
        if act.type == ActionType.DOUBLE_REPAIR:
            return f"repair {TOOL_NAMES[act.tool]} seat+{act.target} with {code}"
        if act.type == ActionType.ROCKFALL:
            return f"rockfall at {cell_text(act.row, act.col)}"
        if act.type == ActionType.MAP:
            return f"map goal {act.goal}"
        return f"discard {code}"

    def to_string(self, action: int) -> str:
        """The move's name in the one notation of docs/text.md ("Move notation"), e.g. ``place T06 rot180 at
        (2,3)``; ``saboteur_env.text.parse_move`` reads it (and the older spellings) back."""
        return self._strings[self.check(action)]


def action_layout(config: GameConfig) -> ActionLayout:
    """The layout of a base-game configuration (built once per config object)."""
    return config.cached("_action_layout", ActionLayout)
