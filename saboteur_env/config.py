"""Game configuration (RULES.md §0.6) with early validation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TypeVar

from saboteur_env.cards import DECK_SIZE, HAND_SIZE_BY_PLAYERS

FRAME_ROWS = 5
FRAME_COLS = 9
START_CELL = (2, 0)
GOAL_CELLS = ((0, 8), (2, 8), (4, 8))
MAX_MARGIN = 10
MAX_HISTORY = 256
GAMES = ("base", "duel", "sab2")
# RULES.md §3.2: Duel layouts -> (frame rows, frame cols, blue start, green start, goal cells).
DUEL_LAYOUTS: dict[str, tuple[int, int, tuple[int, int], tuple[int, int], tuple[tuple[int, int], ...]]] = {
    "seed_5x9": (5, 9, (1, 0), (3, 0), ((0, 4), (2, 4), (4, 4), (1, 6), (3, 6), (2, 8))),
    "official_5x10": (5, 10, (1, 0), (3, 0), ((0, 5), (2, 5), (4, 5), (1, 7), (3, 7), (2, 9))),
}
DUEL_LAYOUT_NAMES = tuple(DUEL_LAYOUTS)
PLAYERS_BY_GAME = {"base": (3, 10), "duel": (2, 2), "sab2": (2, 12)}
DEFAULT_PLAYERS = {"base": 4, "duel": 2, "sab2": 5}
REWARDS = ("gold", "win")


T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value is out of range; the message names the field, the value and the valid range."""


@dataclass(frozen=True)
class GameConfig:
    """Rules and encoding options of one game.

    Attributes:
        num_players: 3-10 (base game), 2 (duel); default 4 (base) or 2 (duel).
        margin: extra playable rows/cols on every side of the 5x9 frame (RULES.md §0.2), 0-10.
        rounds: rounds in a game, 1-3 (the rulebook plays 3).
        broken_tool_penalty: optional rule of RULES.md §1.11 (diggers with a broken tool get no gold).
        reward: ``"gold"`` - nuggets won at each round end; ``"win"`` - base: +1/-1 per round for the winning/losing
            team; duel: +1/-1/0 for the game's winner/loser/a draw at the end.
        history_length: public events kept in the observation, 0-256.
        game: rule set, ``"base"`` or ``"duel"`` (``"sab2"`` is planned).
        duel_layout: Duel geometry (RULES.md §3.2), ``"seed_5x9"`` or ``"official_5x10"``; only for the duel.
    """

    num_players: int = None  # type: ignore[assignment]  # resolved per game in __post_init__
    margin: int = 0
    rounds: int = 3
    broken_tool_penalty: bool = False
    reward: str = "gold"
    history_length: int = 16
    game: str = "base"
    duel_layout: str = "seed_5x9"

    def __post_init__(self) -> None:
        if self.num_players is None and self.game in DEFAULT_PLAYERS:
            object.__setattr__(self, "num_players", DEFAULT_PLAYERS[self.game])
        self.validate()

    def cached(self, key: str, factory: Callable[[GameConfig], T]) -> T:
        """Per-config memo for derived tables (layouts, geometry); kept out of pickles and comparisons."""
        value = self.__dict__.get(key)
        if value is None:
            value = factory(self)
            object.__setattr__(self, key, value)
        return value

    def __getstate__(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:
        # Cached: configs key the layout caches on every decision, and the generated hash rebuilds a tuple.
        h = self.__dict__.get("_hash")
        if h is None:
            # Only ints: string hashes differ between processes and this value travels with pickles.
            h = hash((self.num_players, self.margin, self.rounds, self.broken_tool_penalty,
                      REWARDS.index(self.reward), self.history_length, GAMES.index(self.game),
                      DUEL_LAYOUT_NAMES.index(self.duel_layout)))
            object.__setattr__(self, "_hash", h)
        return h

    def validate(self) -> None:
        """Raise :class:`ConfigError` for the first bad field."""
        if self.game not in GAMES:
            raise ConfigError(f"game={self.game!r} is not supported; valid: {', '.join(map(repr, GAMES))}")
        for name in ("num_players", "margin", "rounds", "history_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name}={value!r} must be an int")
        if not isinstance(self.broken_tool_penalty, bool):
            raise ConfigError(f"broken_tool_penalty={self.broken_tool_penalty!r} must be a bool (True or False)")
        if self.duel_layout not in DUEL_LAYOUTS:
            raise ConfigError(
                f"duel_layout={self.duel_layout!r} is not valid; valid: {', '.join(map(repr, DUEL_LAYOUTS))}"
            )
        if self.game != "duel" and self.duel_layout != "seed_5x9":
            raise ConfigError(f"duel_layout={self.duel_layout!r} only applies to game='duel'")
        if self.game != "base" and self.broken_tool_penalty:
            raise ConfigError("broken_tool_penalty=True only applies to game='base'")
        lo, hi = PLAYERS_BY_GAME[self.game]
        if not lo <= self.num_players <= hi:
            valid = f"{lo}..{hi}" if lo < hi else f"{lo}"
            raise ConfigError(
                f"num_players={self.num_players!r} is out of range for game={self.game!r}; valid: {valid}"
            )
        _check_range("margin", self.margin, 0, MAX_MARGIN)
        _check_range("rounds", self.rounds, 1, 3)
        _check_range("history_length", self.history_length, 0, MAX_HISTORY)
        if self.reward not in REWARDS:
            raise ConfigError(f"reward={self.reward!r} is not valid; valid: {', '.join(map(repr, REWARDS))}")

    # ---- derived geometry (storage coordinates = frame coordinates + margin) ----
    @property
    def frame_rows(self) -> int:
        return DUEL_LAYOUTS[self.duel_layout][0] if self.game == "duel" else FRAME_ROWS

    @property
    def frame_cols(self) -> int:
        return DUEL_LAYOUTS[self.duel_layout][1] if self.game == "duel" else FRAME_COLS

    @property
    def rows(self) -> int:
        return self.frame_rows + 2 * self.margin

    @property
    def cols(self) -> int:
        return self.frame_cols + 2 * self.margin

    @property
    def num_cells(self) -> int:
        return self.rows * self.cols

    def cell_index(self, row: int, col: int) -> int:
        """Flat storage index of frame cell ``(row, col)`` (frame coordinates may be negative with a margin)."""
        r, c = row + self.margin, col + self.margin
        if not (0 <= r < self.rows and 0 <= c < self.cols):
            raise ConfigError(
                f"cell ({row}, {col}) is outside the playable area rows "
                f"{-self.margin}..{self.frame_rows - 1 + self.margin}, "
                f"cols {-self.margin}..{self.frame_cols - 1 + self.margin}"
            )
        return r * self.cols + c

    def cell_coords(self, index: int) -> tuple[int, int]:
        """Frame coordinates ``(row, col)`` of a flat storage index."""
        r, c = divmod(index, self.cols)
        return r - self.margin, c - self.margin

    @property
    def hand_size(self) -> int:
        return 6 if self.game == "duel" else HAND_SIZE_BY_PLAYERS[self.num_players]

    @property
    def max_decisions_per_round(self) -> int:
        """Base: every decision removes one card from a hand, so a round has at most as many decisions as cards.

        Duel: once the pile is empty every decision but a bribe (8 counters) or an empty-handed pass removes a card,
        and an empty-handed pass is answered by the other player's card or bribe; before that, at most 52 draws.
        """
        if self.game == "duel":
            return 2 * (52 + 8 + 12) + 2
        return DECK_SIZE

    @property
    def max_game_length(self) -> int:
        return self.rounds * self.max_decisions_per_round


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        raise ConfigError(f"{name}={value!r} is out of range; valid: {lo}..{hi}")
