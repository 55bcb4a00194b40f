"""Hand-built duel positions from ASCII boards (tests, teaching, analysis).

One line per storage row, ``config.cols`` whitespace-separated tokens:

=============  ==================================================================================
token          cell
=============  ==================================================================================
``.``          empty
``B`` / ``R``  the blue / green start card (only on its start cell)
``?``          a face-down goal (only on goal cells; its card comes from ``goals``)
``U06``        path card U06 at 0°; ``U06'`` at 180°
``G05``        a revealed goal card (``G05'`` at 180°)
suffixes       ``*b`` / ``*g``: a counter of blue / green (secured gold, or a bribed troll); ``+k``: a key
=============  ==================================================================================

Example (``seed_5x9``)::

    . . . . ? . . . .
    B U06 . . . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from saboteur_env.common.config import ConfigError, GameConfig
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.reference import new_game  # set-up draws of a position
from saboteur_env.duel.state import DuelState

TOOLS = ("pickaxe", "lantern", "cart")


def duel_kind(code: str) -> int:
    """Duel card kind from its code (``"U06"``, ``"KEY"``, ``"G05"``...)."""
    try:
        return dc.KIND_CODES.index(code.upper())
    except ValueError:
        raise ConfigError(f"unknown duel card {code!r}; valid: {', '.join(dc.KIND_CODES)}") from None


def make_duel_state(
    board_text: str | None = None,
    *,
    config: GameConfig | None = None,
    goals: Sequence[str] | None = None,
    hands: Mapping[int, Mapping[str, int]] | None = None,
    broken: Mapping[int, Sequence[str]] | None = None,
    deck: Sequence[str] | None = None,
    scores: Mapping[int, Sequence[int]] | None = None,
    current: int = 0,
    seed: int = 0,
) -> DuelState:
    """A round-1 duel state with the given board; everything not given comes from ``seed``.

    Args:
        goals: the six goal cards (codes) on the goal slots in layout order (revealed ones are given on the board).
        hands: seat -> {card code: count}; seats not listed keep their dealt hand.
        broken: seat -> broken tools (``"pickaxe"``, ``"lantern"``, ``"cart"``).
        deck: the draw pile, top first (default: what is left of the shuffled pile).
        scores: seat -> nugget values already in its score pile.
    """
    config = config or GameConfig(game="duel")
    s = new_game(config, np.random.default_rng(seed))
    geo = board.geometry(config)
    if goals is not None:
        if len(goals) != dc.GOALS_PER_ROUND:
            raise ConfigError(f"goals needs {dc.GOALS_PER_ROUND} codes, got {len(goals)}")
        s.goal_card = np.array([duel_kind(g) - dc.FIRST_GOAL_KIND for g in goals], dtype=np.int16)
    if board_text is not None:
        rows = [line.split() for line in board_text.strip().splitlines()]
        if len(rows) != config.rows or any(len(r) != config.cols for r in rows):
            raise ConfigError(f"board must be {config.rows} rows of {config.cols} tokens")
        counters = 0
        keys = 0
        for r, tokens in enumerate(rows):
            for c, token in enumerate(tokens):
                cell = r * config.cols + c
                token, counter, key = _suffixes(token)
                if token in ("B", "R"):
                    if cell != geo.start_cells["BR".index(token)]:
                        raise ConfigError(f"start {token} at {(r, c)} is not its start cell")
                    continue
                if cell in geo.start_cells and token != ".":
                    raise ConfigError(f"{(r, c)} is a start cell; use B or R")
                if token == "?":
                    if cell not in geo.goal_slot:
                        raise ConfigError(f"'?' at {(r, c)} is not a goal cell")
                    continue
                if token == ".":
                    if cell in geo.goal_slot:
                        raise ConfigError(f"goal cell {(r, c)} must be '?' or a revealed goal")
                    continue
                rot = 1 if token.endswith("'") else 0
                kind = duel_kind(token.rstrip("'"))
                if kind >= dc.FIRST_GOAL_KIND:
                    slot = geo.goal_slot.get(cell)
                    if slot is None:
                        raise ConfigError(f"goal {token} at {(r, c)} is not on a goal cell")
                    s.goal_card[slot] = kind - dc.FIRST_GOAL_KIND
                    s.goal_revealed[slot] = True
                elif kind >= dc.NUM_PATH_KINDS:
                    raise ConfigError(f"{token} is not a path card")
                s.cell_shape[cell] = dc.shape_id(kind, rot)
                if counter >= 0:
                    s.cell_counter[cell] = counter
                    counters += 1
                if key:
                    s.cell_key[cell] = True
                    keys += 1
        s.counters_left = dc.NUM_COUNTERS - counters
        s.keys_left = dc.NUM_KEYS - keys
    for seat, hand in (hands or {}).items():
        s.hands[seat] = 0
        for code, n in hand.items():
            s.hands[seat, duel_kind(code)] = n
    for seat, tools in (broken or {}).items():
        for t in tools:
            s.broken[seat, TOOLS.index(t)] = True
    if deck is not None:
        s.deck = np.array([duel_kind(c) for c in deck], dtype=np.int16)
        s.deck_pos = 0
    for seat, values in (scores or {}).items():
        s.score[seat] = list(values)
    s.current = current
    board.refresh_reach(s)
    # The game users play: the variant turns the reference state into its own state type (the compiled core's).
    adopt = getattr(config.variant, "adopt", None)
    return s if adopt is None else adopt(s)


def _suffixes(token: str) -> tuple[str, int, bool]:
    counter, key = -1, False
    while True:
        if token.endswith("*b") or token.endswith("*g"):
            counter = 0 if token.endswith("*b") else 1
            token = token[:-2]
        elif token.endswith("+k"):
            key = True
            token = token[:-2]
        else:
            return token, counter, key
