"""Hand-built Saboteur 2 positions from ASCII boards (tests, teaching, analysis).

Same board tokens as :mod:`saboteur_env.base.positions` (``.`` empty, ``S`` start, ``?`` face-down goal,
``G``/``A``/``B`` revealed goals with ``'`` for 180°, path codes such as ``T05`` or ``X07'``), with the expansion
codes X01-X20.
Roles use :class:`saboteur_env.sab2.cards.Sab2Role` values; hands use card codes (``"T05"``, ``"THEFT"``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from saboteur_env.common.config import ConfigError, GameConfig
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.reference import _refresh_reach, new_game  # set-up draws of a position
from saboteur_env.sab2.state import Sab2State

_GOALS = {"G": sc.KIND_GOALS[0], "A": sc.KIND_GOALS[1], "B": sc.KIND_GOALS[2]}
_GOAL_NAMES = {"gold": sc.KIND_GOALS[0], "stone_a": sc.KIND_GOALS[1], "stone_b": sc.KIND_GOALS[2]}
TOOLS = ("pickaxe", "lantern", "cart")


def sab2_kind(code: str) -> int:
    """Kind id of a hand card code (``"T05"``, ``"X07"``, ``"MAP"``, ``"THEFT"``, ``"SWAP_HATS"``...)."""
    if code.upper() in sc.HAND_CODES:
        return sc.HAND_CODES.index(code.upper())
    raise ConfigError(f"unknown Saboteur 2 card {code!r}; valid: {', '.join(sc.HAND_CODES)}")


def make_sab2_state(
    config: GameConfig,
    board_text: str | None = None,
    *,
    goals: Sequence[str] = ("gold", "stone_a", "stone_b"),
    roles: Sequence[int] | None = None,
    hands: Mapping[int, Mapping[str, int]] | None = None,
    broken: Mapping[int, Sequence[str]] | None = None,
    trapped: Sequence[int] = (),
    theft: Mapping[int, int] | None = None,
    gold: Sequence[int] | None = None,
    stolen_held: Sequence[int] | None = None,
    current: int = 0,
    seed: int = 0,
) -> Sab2State:
    """A round-1 state with the given board and hidden information (everything not given comes from ``seed``).

    ``theft``: seat -> the decision index its Theft was played at (orders the thieves); ``gold`` / ``stolen_held``:
    totals from earlier rounds.
    """
    s = new_game(config, np.random.default_rng(seed))
    geo = geometry(config)
    s.goal_kind = np.array([_GOAL_NAMES[g] for g in goals], dtype=np.int16)
    if board_text is not None:
        rows = [line.split() for line in board_text.strip().splitlines()]
        if len(rows) != config.rows or any(len(r) != config.cols for r in rows):
            raise ConfigError(f"board must be {config.rows} rows of {config.cols} tokens")
        for r, tokens in enumerate(rows):
            for c, token in enumerate(tokens):
                cell = r * config.cols + c
                if token in (".", "?", "S"):
                    continue
                rot = 1 if token.endswith("'") else 0
                code = token.rstrip("'")
                if code in _GOALS:
                    slot = geo.goal_cells.index(cell)
                    s.goal_kind[slot] = _GOALS[code]
                    s.goal_revealed[slot] = True
                    s.cell_shape[cell] = 2 * _GOALS[code] + rot
                else:
                    s.cell_shape[cell] = 2 * sc.kind_of(code) + rot
    if roles is not None:
        s.roles = np.array(roles, dtype=np.int8)
    for seat, hand in (hands or {}).items():
        s.hands[seat] = 0
        for code, n in hand.items():
            s.hands[seat, sab2_kind(code)] = n
    for seat, tools in (broken or {}).items():
        for t in tools:
            s.broken[seat, TOOLS.index(t)] = True
    for seat in trapped:
        s.trapped[seat] = True
    for seat, when in (theft or {}).items():
        s.theft[seat] = True
        s.theft_time[seat] = when
    if gold is not None:
        s.gold = np.array(gold, dtype=np.int32)
    if stolen_held is not None:
        s.stolen_held = np.array(stolen_held, dtype=np.int32)
    s.current = current
    _refresh_reach(s)
    # The game users play: the variant turns the reference state into its own state type (the compiled core's).
    adopt = getattr(config.variant, "adopt", None)
    return s if adopt is None else adopt(s)
