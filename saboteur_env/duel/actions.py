"""The Duel's flat action space (one id per complete turn; sizes for the 5x9 layout, HW = 45 cells).

===================  =========================  ==============================================================
segment              size                       meaning
===================  =========================  ==============================================================
``place``            HW x 48                    option A: orientation ``o`` (``cards.PLACEABLE``) at a cell
``place_bribe``      HW x 5                     option A with a troll card, bribed at once (``TROLL_PLACEABLE``)
``break``            3                          broken pickaxe / lantern / cart on the opponent
``repair``           3                          repair one own tool
``double_repair``    3 x 3                      double-repair card x (first tool, second tool, both)
``rockfall``         HW                         remove the path card at a cell
``map``              6                          peek at a face-down goal slot
``key``              HW                         key token on the door at a cell
``repair_discard``   780 x 3                    option C: discard an unordered pair of kinds, repair a tool
``pass``             39 + 780 + 1               option D: discard one kind, an unordered pair, or nothing
                                                (only with an empty hand)
``bribe``            HW                         option E: counter on the unbribed troll at a cell
===================  =========================  ==============================================================

Pairs of kinds ``a <= b`` (``b == a`` needs two copies) are numbered row by row: ``(0,0), (0,1) ... (38,38)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from saboteur_env.common.cards import TOOL_NAMES
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import check_action_id
from saboteur_env.common.notation import cell_text
from saboteur_env.duel import cards as dc

SEGMENTS = ("place", "place_bribe", "break", "repair", "double_repair", "rockfall", "map", "key",
            "repair_discard", "pass", "bribe")  # fmt: skip
PAIRS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(dc.NUM_DECK_KINDS) for b in range(a, dc.NUM_DECK_KINDS)
)
PAIR_A = np.array([a for a, _ in PAIRS])
PAIR_B = np.array([b for _, b in PAIRS])
NUM_PAIRS = len(PAIRS)  # 780
PASS_EMPTY = dc.NUM_DECK_KINDS + NUM_PAIRS  # offset of "pass without discarding" inside ``pass``
DOUBLE_TOOLS = ((0, 1), (0, 2), (1, 2))  # tools of the three double-repair cards (pickaxe, lantern, cart)


@dataclass(frozen=True)
class DuelAction:
    """A decoded action: ``segment`` and its fields (unused ones are -1)."""

    segment: str
    cell: int = -1
    orientation: int = -1
    kind: int = -1
    tool: int = -1
    choice: int = -1
    slot: int = -1
    pair: int = -1


class DuelActionLayout:
    """Offsets of the segments for one configuration, with encode/decode/to_string."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        hw = config.num_cells
        self.num_orientations = len(dc.PLACEABLE)
        sizes = {
            "place": hw * self.num_orientations,
            "place_bribe": hw * len(dc.TROLL_PLACEABLE),
            "break": 3,
            "repair": 3,
            "double_repair": 9,
            "rockfall": hw,
            "map": dc.GOALS_PER_ROUND,
            "key": hw,
            "repair_discard": NUM_PAIRS * 3,
            "pass": PASS_EMPTY + 1,
            "bribe": hw,
        }
        self.offset: dict[str, int] = {}
        pos = 0
        for name in SEGMENTS:
            self.offset[name] = pos
            pos += sizes[name]
        self.size = self.num_actions = pos
        self.sizes = sizes
        self.segment_of = np.zeros(self.size, dtype=np.int8)
        for i, name in enumerate(SEGMENTS):
            self.segment_of[self.offset[name] : self.offset[name] + sizes[name]] = i

    def check(self, action: object) -> int:
        """Validate an action id (int, numpy integer or 0-d integer array in range) and return it as ``int``."""
        return check_action_id(action, self.size)

    def decode(self, action: int) -> DuelAction:
        a = self.check(action)
        segment = SEGMENTS[int(self.segment_of[a])]
        i = a - self.offset[segment]
        if segment == "place":
            cell, o = divmod(i, self.num_orientations)
            return DuelAction(segment, cell=cell, orientation=o, kind=dc.PLACEABLE[o][0])
        if segment == "place_bribe":
            cell, t = divmod(i, len(dc.TROLL_PLACEABLE))
            o = dc.TROLL_PLACEABLE[t]
            return DuelAction(segment, cell=cell, orientation=o, kind=dc.PLACEABLE[o][0])
        if segment == "break":
            return DuelAction(segment, tool=i, kind=dc.KIND_BROKEN[i])
        if segment == "repair":
            return DuelAction(segment, tool=i, kind=dc.KIND_REPAIR[i])
        if segment == "double_repair":
            card, choice = divmod(i, 3)
            return DuelAction(segment, kind=dc.KIND_DOUBLE_REPAIR[card], choice=choice)
        if segment in ("rockfall", "key", "bribe"):
            kind = {"rockfall": dc.KIND_ROCKFALL, "key": dc.KIND_KEY, "bribe": -1}[segment]
            return DuelAction(segment, cell=i, kind=kind)
        if segment == "map":
            return DuelAction(segment, slot=i, kind=dc.KIND_MAP)
        if segment == "repair_discard":
            pair, tool = divmod(i, 3)
            return DuelAction(segment, pair=pair, tool=tool)
        # pass
        if i < dc.NUM_DECK_KINDS:
            return DuelAction(segment, kind=i)
        if i < PASS_EMPTY:
            return DuelAction(segment, pair=i - dc.NUM_DECK_KINDS)
        return DuelAction(segment)

    def encode(self, act: DuelAction) -> int:
        s, off = act.segment, self.offset[act.segment]
        if s == "place":
            return off + act.cell * self.num_orientations + act.orientation
        if s == "place_bribe":
            return off + act.cell * len(dc.TROLL_PLACEABLE) + dc.TROLL_PLACEABLE.index(act.orientation)
        if s in ("break", "repair"):
            return off + act.tool
        if s == "double_repair":
            return off + dc.KIND_DOUBLE_REPAIR.index(act.kind) * 3 + act.choice
        if s in ("rockfall", "key", "bribe"):
            return off + act.cell
        if s == "map":
            return off + act.slot
        if s == "repair_discard":
            return off + act.pair * 3 + act.tool
        if act.kind >= 0:
            return off + act.kind
        if act.pair >= 0:
            return off + dc.NUM_DECK_KINDS + act.pair
        return off + PASS_EMPTY

    def to_string(self, action: int) -> str:
        """The move's name in the one notation of docs/text.md ("Move notation"), e.g. ``place U06 rot180 at
        (1,3)``, ``discard U01+U05 repair cart``; ``saboteur_env.text.parse_move`` reads it (and the older
        spellings) back."""
        act = self.decode(action)
        seg = act.segment
        where = f"at {cell_text(*self.config.cell_coords(act.cell))}" if act.cell >= 0 else ""
        if seg in ("place", "place_bribe"):
            kind, rot = dc.PLACEABLE[act.orientation]
            bribe = " bribe" if seg == "place_bribe" else ""
            return f"place {dc.KIND_CODES[kind]}{' rot180' if rot else ''} {where}{bribe}"
        if seg in ("break", "repair"):
            return f"{seg} {TOOL_NAMES[act.tool]}"
        if seg == "double_repair":
            tools = DOUBLE_TOOLS[dc.KIND_DOUBLE_REPAIR.index(act.kind)]
            chosen = "+".join(TOOL_NAMES[t] for t in tools) if act.choice == 2 else TOOL_NAMES[tools[act.choice]]
            return f"repair {chosen} with {dc.KIND_CODES[act.kind]}"
        if seg in ("rockfall", "key", "bribe"):
            return f"{seg} {where}"
        if seg == "map":
            return f"map goal {act.slot}"
        if seg == "repair_discard":
            x, y = PAIRS[act.pair]
            return f"discard {dc.KIND_CODES[x]}+{dc.KIND_CODES[y]} repair {TOOL_NAMES[act.tool]}"
        if act.kind >= 0:
            return f"discard {dc.KIND_CODES[act.kind]}"
        if act.pair >= 0:
            x, y = PAIRS[act.pair]
            return f"discard {dc.KIND_CODES[x]}+{dc.KIND_CODES[y]}"
        return "pass"


def duel_action_layout(config: GameConfig) -> DuelActionLayout:
    return config.cached("_duel_action_layout", DuelActionLayout)
