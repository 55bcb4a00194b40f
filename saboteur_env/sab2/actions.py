"""Saboteur 2 action layout (seat targets are offsets from the acting seat: 0 = yourself, 1 = next clockwise).

==================  ==================  ============================================================================
segment             size                meaning
==================  ==================  ============================================================================
``place``           HW x O              a path orientation (``PLACEABLE``) at a cell
``break``           3 x P               broken pickaxe / lantern / cart on a seat
``repair``          3 x P               repair a tool of a seat
``double_repair``   3 x 2 x P           double-repair card x tool chosen x seat
``rockfall``        2 x HW              base / expansion rockfall card x cell
``map``             3                   peek at goal slot 0/1/2
``theft``           1                   Theft in front of yourself
``hands_off``       P                   discard the Theft in front of a seat
``swap_hand``       P                   swap your remaining hand with a seat's (not yourself)
``inspection``      P                   see a seat's role (not yourself)
``swap_hats``       P                   a seat (yourself included) swaps its role with the reserve
``trapped``         P                   Trapped! on a seat (not yourself)
``free_at_last``    P                   remove Trapped! from a seat (yourself included)
``discard``         55                  a card kind face down: starts a pass, or continues a pass / option C
``stop``            1                   end a pass after 1 or 2 discards
``free``            4                   option C: remove own broken pickaxe / lantern / cart / Trapped! (then 2
                                        discards)
``steal``           P                   after payouts: take 1 gold from a seat (thieves, in §2.10 order)
==================  ==================  ============================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from saboteur_env.common.cards import DOUBLE_REPAIR_TOOLS, TOOL_NAMES
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import check_action_id
from saboteur_env.common.notation import cell_text
from saboteur_env.sab2 import cards as sc

SEGMENTS = ("place", "break", "repair", "double_repair", "rockfall", "map", "theft", "hands_off", "swap_hand",
            "inspection", "swap_hats", "trapped", "free_at_last", "discard", "stop", "free", "steal")  # fmt: skip


def _symmetric(kind: int) -> bool:
    a, b = 2 * kind, 2 * kind + 1
    return bool(sc.SHAPE_OPEN[a] == sc.SHAPE_OPEN[b]) and sorted(sc.SHAPE_ARM_GROUP[a]) == sorted(
        sc.SHAPE_ARM_GROUP[b]
    ) and bool((sc.SHAPE_DOOR[:, a] == sc.SHAPE_DOOR[:, b]).all())


PLACEABLE: tuple[tuple[int, int], ...] = tuple(
    (k, r) for k in range(sc.NUM_PATH_KINDS) for r in (0, 1) if r == 0 or not _symmetric(k)
)
PLACEABLE_SHAPE = np.array([2 * k + r for k, r in PLACEABLE], dtype=np.int16)
PLACEABLE_KIND = np.array([k for k, _ in PLACEABLE], dtype=np.int16)
TOOLS = tuple(TOOL_NAMES)
FREE_TARGETS = ("pickaxe", "lantern", "cart", "trapped")  # option C: what ``free`` removes, by its index


@dataclass(frozen=True)
class Sab2Action:
    segment: str
    cell: int = -1
    orientation: int = -1
    kind: int = -1
    tool: int = -1
    target: int = -1  # seat offset
    slot: int = -1
    card: int = -1  # double repair card (0-2) or rockfall card (0 base, 1 expansion)


class Sab2ActionLayout:
    def __init__(self, num_players: int, num_cells: int, coords: Callable[[int], tuple[int, int]] | None = None):
        p, hw, o = num_players, num_cells, len(PLACEABLE)
        self.coords = coords
        self.num_players, self.num_cells, self.num_orientations = p, hw, o
        self.sizes = {"place": hw * o, "break": 3 * p, "repair": 3 * p, "double_repair": 6 * p, "rockfall": 2 * hw,
                      "map": 3, "theft": 1, "hands_off": p, "swap_hand": p, "inspection": p, "swap_hats": p,
                      "trapped": p, "free_at_last": p, "discard": sc.NUM_DECK_KINDS, "stop": 1, "free": 4,
                      "steal": p}  # fmt: skip
        self.offset: dict[str, int] = {}
        pos = 0
        for name in SEGMENTS:
            self.offset[name] = pos
            pos += self.sizes[name]
        self.num_actions = pos
        self.segment_of = np.zeros(pos, dtype=np.int8)
        for i, name in enumerate(SEGMENTS):
            self.segment_of[self.offset[name] : self.offset[name] + self.sizes[name]] = i

    def check(self, action: object) -> int:
        """Validate an action id (int, numpy integer or 0-d integer array in range) and return it as ``int``."""
        return check_action_id(action, self.num_actions)

    def decode(self, action: int) -> Sab2Action:
        a = self.check(action)
        seg = SEGMENTS[int(self.segment_of[a])]
        i = a - self.offset[seg]
        p = self.num_players
        if seg == "place":
            cell, o = divmod(i, self.num_orientations)
            return Sab2Action(seg, cell=cell, orientation=o, kind=int(PLACEABLE_KIND[o]))
        if seg in ("break", "repair"):
            tool, target = divmod(i, p)
            base = sc.FIRST_BASE_ACTION + (0 if seg == "break" else 3)
            return Sab2Action(seg, tool=tool, target=target, kind=base + tool)
        if seg == "double_repair":
            card, rest = divmod(i, 2 * p)
            choice, target = divmod(rest, p)
            return Sab2Action(seg, card=card, tool=choice, target=target, kind=sc.FIRST_BASE_ACTION + 6 + card)
        if seg == "rockfall":
            card, cell = divmod(i, self.num_cells)
            kind = sc.FIRST_BASE_ACTION + 9 if card == 0 else sc.FIRST_EXPANSION_ACTION + sc.ExpansionAction.ROCKFALL
            return Sab2Action(seg, card=card, cell=cell, kind=kind)
        if seg == "map":
            return Sab2Action(seg, slot=i, kind=sc.FIRST_BASE_ACTION + 10)
        expansion = {"theft": sc.ExpansionAction.THEFT, "hands_off": sc.ExpansionAction.HANDS_OFF,
                     "swap_hand": sc.ExpansionAction.SWAP_HAND, "inspection": sc.ExpansionAction.INSPECTION,
                     "swap_hats": sc.ExpansionAction.SWAP_HATS, "trapped": sc.ExpansionAction.TRAPPED,
                     "free_at_last": sc.ExpansionAction.FREE_AT_LAST}  # fmt: skip
        if seg in expansion:
            kind = sc.FIRST_EXPANSION_ACTION + int(expansion[seg])
            return Sab2Action(seg, target=0 if seg == "theft" else i, kind=kind)
        if seg == "discard":
            return Sab2Action(seg, kind=i)
        if seg == "free":
            return Sab2Action(seg, tool=i)  # 3 = Trapped!
        if seg == "steal":
            return Sab2Action(seg, target=i)
        return Sab2Action(seg)  # stop

    def _where(self, cell: int) -> str:
        return cell_text(*self.coords(cell)) if self.coords else f"cell {cell}"

    def to_string(self, action: int) -> str:
        """The move's name in the one notation of docs/text.md ("Move notation"), e.g. ``place X04 rot180 at
        (2,5)``, ``inspect seat+2``; ``saboteur_env.text.parse_move`` reads it (and the older spellings) back."""
        act = self.decode(action)
        seg = act.segment
        seat = f"seat+{act.target}"
        if seg == "place":
            kind, rot = PLACEABLE[act.orientation]
            return f"place {sc.KIND_CODES[kind]}{' rot180' if rot else ''} at {self._where(act.cell)}"
        if seg in ("break", "repair"):
            return f"{seg} {TOOLS[act.tool]} {seat}"
        if seg == "double_repair":
            return f"repair {TOOLS[DOUBLE_REPAIR_TOOLS[act.card][act.tool]]} {seat} with {sc.HAND_CODES[act.kind]}"
        if seg == "rockfall":
            return f"rockfall at {self._where(act.cell)}" + (" with ROCKFALL_2" if act.card else "")
        if seg == "map":
            return f"map goal {act.slot}"
        if seg in ("theft", "stop"):
            return seg
        if seg == "inspection":
            return f"inspect {seat}"
        if seg == "trapped":
            return f"trap {seat}"
        if seg == "discard":
            return f"discard {sc.HAND_CODES[act.kind]}"
        if seg == "free":
            return f"free {FREE_TARGETS[act.tool]}"
        return f"{seg} {seat}"  # hands_off, swap_hand, swap_hats, free_at_last, steal

    def encode(self, act: Sab2Action) -> int:
        seg, off, p = act.segment, self.offset[act.segment], self.num_players
        if seg == "place":
            return off + act.cell * self.num_orientations + act.orientation
        if seg in ("break", "repair"):
            return off + act.tool * p + act.target
        if seg == "double_repair":
            return off + act.card * 2 * p + act.tool * p + act.target
        if seg == "rockfall":
            return off + act.card * self.num_cells + act.cell
        if seg == "map":
            return off + act.slot
        if seg in ("theft", "stop"):
            return off
        if seg == "discard":
            return off + act.kind
        if seg == "free":
            return off + act.tool
        return off + act.target


# Deck kinds of the action cards (the card table of saboteur_env.sab2.cards, by role in the rules).
KIND_BROKEN = tuple(sc.FIRST_BASE_ACTION + t for t in range(3))
KIND_REPAIR = tuple(sc.FIRST_BASE_ACTION + 3 + t for t in range(3))
KIND_DOUBLE = tuple(sc.FIRST_BASE_ACTION + 6 + c for c in range(3))
KIND_ROCKFALL = (sc.FIRST_BASE_ACTION + 9, sc.FIRST_EXPANSION_ACTION + sc.ExpansionAction.ROCKFALL)
KIND_MAP = sc.FIRST_BASE_ACTION + 10
X = {a.name.lower(): sc.FIRST_EXPANSION_ACTION + int(a) for a in sc.ExpansionAction}


def action_layout(config: GameConfig) -> Sab2ActionLayout:
    """The layout of ``config`` (cached on the config)."""
    return config.cached("_sab2_action_layout", lambda c: Sab2ActionLayout(c.num_players, c.num_cells, c.cell_coords))
