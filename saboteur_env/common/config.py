"""A game's configuration and the protocol of the game it names: :class:`GameConfig`, the :class:`Variant`
protocol every game implements (with the shapes of its state and layouts), and the registry's storage.

The two types refer to each other (a config caches its variant; a variant's functions take a config), so they live
in one module: no import cycle, type-only ones included. ``saboteur_env.variants`` is the registry's public face
(``register``, ``get``, ``names``); ``saboteur_env.Variant`` and ``saboteur_env.Frame`` are the public names.

GameConfig. ``GameConfig.game`` names a registered variant. The variant declares its player range, which
game-specific fields apply (``options``), its frame, hand size and a bound on decisions per round; the config
validates against those declarations and caches the variant on itself (``config.variant``). It knows no game.

The protocol. A variant is one object holding the game's facts as data (name, rules version, player range, which
config options apply, frame) and its functions (set-up, legality, transition, observation, rendering). The engine API
(``saboteur_env.api``) and the PettingZoo environment (``saboteur_env.aec``) only ever talk to a variant through
this protocol, so they know no game; ``saboteur_env.variants`` is the registry that maps ``config.game`` to a
variant. This module imports nothing from any game.

=========================  ==================================================================================
member                     meaning
=========================  ==================================================================================
``name``                   the ``GameConfig.game`` value (``"base"``, ``"sab2"``, ``"duel"``, or a user's own)
``title``                  human name of the game
``rules_version``          bumped whenever game behaviour changes (golden files and logs record it)
``min_players``            smallest ``num_players``
``max_players``            largest ``num_players``
``default_players``        ``num_players`` when the config leaves it out
``options``                the game-specific ``GameConfig`` fields that apply (others must keep defaults)
``state_type``             the class of the game's states
``check_config``           raise ``ConfigError`` for a bad value of a game-specific option
``frame``                  ``Frame`` of a config: rows x cols of the rulebook frame, start and goal cells
``hand_size``              cards dealt per hand
``max_decisions_per_round``  a true upper bound on decisions in one round (so ``max_game_length`` is a bound)
``reward_range``           bounds of one seat's summed rewards over a game
``action_layout``          the flat action space (``ActionLayout``), built once per config
``observation_layout``     the flat observation vector (``ObservationLayout``), built once per config
``state_size``             length of ``encode_state``
``new_game``               every random element of a whole game drawn from ``rng``; round 1 started
``legal_action_mask``      bool mask of the seat to act (the one legality predicate)
``apply_action``           the transition (pure unless ``inplace``); raises on illegal input
``returns``                score per seat so far
``encode_observation``     the one gate for hidden information: what ``seat`` may know, as a vector
``encode_state``           the full state as a vector, for centralised critics (not for agents)
``player_view``            a structured view decoded from ``encode_observation`` (what scripted agents read)
``render_text``            text picture for a seat, ``None`` (spectator) or ``"omniscient"``
``render_image``           the same as an ``(H, W, 3)`` uint8 image
``public_round_result``    a fresh copy of a round result holding only what ``seat`` may know
``check_state``            raise ``StateError`` when a state breaks the game's invariants
=========================  ==================================================================================
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.errors import ConfigError, is_int


@dataclass(frozen=True)
class Frame:
    """The rulebook's card frame: ``rows x cols`` cells (frame coordinates), start and goal cells in it."""

    rows: int
    cols: int
    start_cells: tuple[tuple[int, int], ...]
    goal_cells: tuple[tuple[int, int], ...]


@runtime_checkable
class State(Protocol):
    """What every game's state offers (the rest is the game's own)."""

    config: GameConfig
    current: int
    game_over: bool
    round: int
    round_just_ended: bool
    last_rewards: NDArray[np.float64]
    round_results: list[dict[str, Any]]

    def clone(self) -> Self: ...

    def fingerprint(self) -> str: ...


class ActionLayout(Protocol):
    """A game's flat action space."""

    num_actions: int

    def check(self, action: object) -> int: ...

    def decode(self, action: int) -> Any: ...

    def to_string(self, action: int) -> str: ...


class ObservationLayout(Protocol):
    """A game's flat observation vector: named slices, shapes and per-element upper bounds."""

    size: int
    high: NDArray[np.float32]
    slices: dict[str, slice]
    shapes: dict[str, tuple[int, ...]]

    def split(self, obs: NDArray[np.float32]) -> dict[str, NDArray[np.float32]]: ...


Viewer = int | str | None


@runtime_checkable
class Variant(Protocol):
    """One game behind the engine API; see the module docstring for the members."""

    # Facts as data (read-only, so a class attribute of a narrower type satisfies them).
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def rules_version(self) -> str: ...

    @property
    def min_players(self) -> int: ...

    @property
    def max_players(self) -> int: ...

    @property
    def default_players(self) -> int: ...

    @property
    def options(self) -> tuple[str, ...]: ...

    @property
    def state_type(self) -> type[Any]: ...


    def check_config(self, config: GameConfig) -> None: ...

    def frame(self, config: GameConfig) -> Frame: ...

    def hand_size(self, config: GameConfig) -> int: ...

    def max_decisions_per_round(self, config: GameConfig) -> int: ...

    def reward_range(self, config: GameConfig) -> tuple[float, float]: ...

    def action_layout(self, config: GameConfig) -> Any: ...

    def observation_layout(self, config: GameConfig) -> Any: ...

    def state_size(self, config: GameConfig) -> int: ...

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> Any: ...

    def legal_action_mask(self, state: Any) -> NDArray[np.bool_]: ...

    def apply_action(self, state: Any, action: int, *, inplace: bool = False) -> Any: ...

    def returns(self, state: Any) -> NDArray[np.float64]: ...

    def encode_observation(self, state: Any, seat: int) -> NDArray[np.float32]: ...

    def encode_state(self, state: Any) -> NDArray[np.float32]: ...

    def player_view(self, state: Any, seat: int) -> Any: ...

    def render_text(self, state: Any, viewer: Viewer = None) -> str: ...

    def render_image(self, state: Any, viewer: Viewer = None) -> NDArray[np.uint8]: ...

    def public_round_result(self, result: dict[str, Any], seat: int) -> dict[str, Any]: ...

    def check_state(self, state: Any) -> None: ...


# ---- the registry's storage (``saboteur_env.variants`` registers the games) ----------------------------------------
_VARIANTS: dict[str, Variant] = {}


def registered_names() -> tuple[str, ...]:
    """Registered variant names, in registration order."""
    return tuple(_VARIANTS)


def lookup_variant(name: str) -> Variant:
    try:
        return _VARIANTS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"game={name!r} is not supported; valid: {', '.join(map(repr, _VARIANTS))}") from None


def add_variant(variant: Variant) -> None:
    _VARIANTS[variant.name] = variant


def remove_variant(name: str) -> None:
    del _VARIANTS[name]


MAX_MARGIN = 10
MAX_HISTORY = 256
REWARDS = ("gold", "win")
# Readings of the rules where the customer's seed documents and the publisher differ (docs/rules.md §0.6).
READINGS = ("seeds", "official")
# Game-specific fields and their defaults: a field applies only to the variants that list it in ``options``.
GAME_OPTIONS: dict[str, Any] = {"broken_tool_penalty": False, "duel_layout": "seed_5x9", "rules": "seeds"}
# The claims rule (cheap talk, saboteur_env.claims) and its defaults: a layer over every game, so configs without
# claims leave these out of hashes and pickles (byte-identical to configs from before the option existed).
CLAIM_OPTIONS: dict[str, Any] = {"claims": False, "claims_per_turn": 1}
MAX_CLAIMS_PER_TURN = 8

T = TypeVar("T")

__all__ = ["CLAIM_OPTIONS", "GAME_OPTIONS", "MAX_CLAIMS_PER_TURN", "MAX_HISTORY", "MAX_MARGIN", "READINGS", "REWARDS",
           "ConfigError", "GameConfig"]


@dataclass(frozen=True, repr=False)
class GameConfig:
    """Rules and encoding options of one game.

    Attributes:
        num_players: base 3-10, Saboteur 2 2-12, the Duel 2; default per game (4, 5, 2).
        margin: extra playable rows/cols on every side of the rulebook frame (rules reference §0.2), 0-10.
        rounds: rounds in a game, 1-3 (the rulebooks play 3).
        broken_tool_penalty: optional base-game rule (diggers with a broken tool get no gold); base game only.
        reward: ``"gold"`` - nuggets won at each round end; ``"win"`` - +1/-1 per round for winners/losers (Duel:
            +1/-1/0 for the game's winner/loser/a draw at the end).
        history_length: public events kept in the observation, 0-256.
        game: a registered variant: ``"base"``, ``"sab2"``, ``"duel"`` or one added with
            ``saboteur_env.variants.register``.
        duel_layout: Duel geometry, ``"seed_5x9"`` or ``"official_5x10"``; Duel only.
        rules: which reading of the rules where the customer's seed documents and the publisher differ:
            ``"seeds"`` (default) or ``"official"``; Saboteur 2 only (winners when the gold is reached, where
            ladders may go; docs/rules.md §2.5, §2.8), the other games have one reading.
        claims: the optional claims rule (docs/rules.md "Claims (optional rule)", ``saboteur_env.claims``): free
            public statements ("goal g is gold / stone", "seat s is a saboteur" ...) in the action space, the
            observation and the log; they never change the game. Default False: everything as without the option.
        claims_per_turn: at most this many claims before each own decision and in each report window after a map
            (or a Saboteur 2 inspection), 1-8; only with ``claims=True``.
    """

    num_players: int = None  # type: ignore[assignment]  # None: the variant's default, resolved in __post_init__
    margin: int = 0
    rounds: int = 3
    broken_tool_penalty: bool = False
    reward: str = "gold"
    history_length: int = 16
    game: str = "base"
    duel_layout: str = "seed_5x9"
    rules: str = "seeds"
    claims: bool = False
    claims_per_turn: int = 1
    # The registered variant that plays this config, set once in __post_init__ as a plain instance attribute (read
    # on every decision; not a dataclass field, so it stays out of comparisons, asdict and pickles).
    variant: ClassVar[Variant]

    def __post_init__(self) -> None:
        if not isinstance(self.game, str):
            raise ConfigError(f"game={self.game!r} must be a str; valid: {', '.join(map(repr, registered_names()))}")
        variant = lookup_variant(self.game)
        object.__setattr__(self, "variant", variant)
        if not self.claims and self.claims_per_turn == CLAIM_OPTIONS["claims_per_turn"]:
            # ``dataclasses.fields``/``asdict``/``replace`` read the instance's ``__dataclass_fields__`` first: a
            # config without claims shows only the fields from before the option, so whatever serialises configs
            # (golden files, model files, logs) writes exactly what it wrote before. A claims config keeps them all
            # (``replace`` and ``asdict`` carry the claims).
            object.__setattr__(self, "__dataclass_fields__", _FIELDS_WITHOUT_CLAIMS)
        if self.num_players is None:
            object.__setattr__(self, "num_players", variant.default_players)
        self.validate()
        object.__setattr__(self, "_frame", variant.frame(self))

    def cached(self, key: str, factory: Callable[[GameConfig], T]) -> T:
        """Per-config memo for derived tables (layouts, geometry); kept out of pickles and comparisons."""
        value = self.__dict__.get(key)
        if value is None:
            value = factory(self)
            object.__setattr__(self, key, value)
        return value

    def __getstate__(self) -> dict:
        # fields(self): without claims the claim fields stay out (see __post_init__), so it pickles as before.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict) -> None:
        for name, value in {**CLAIM_OPTIONS, **state}.items():  # pickles without claim fields: the defaults
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __repr__(self) -> str:
        # State fingerprints hash repr(config): claim fields at their defaults stay out, so a config without claims
        # has the repr (and fingerprints) it had before the option existed.
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                          if not (f.name in CLAIM_OPTIONS and getattr(self, f.name) == CLAIM_OPTIONS[f.name]))
        return f"GameConfig({shown})"

    def __hash__(self) -> int:
        # Cached: configs key the layout caches on every decision, and the generated hash rebuilds a tuple.
        h = self.__dict__.get("_hash")
        if h is None:
            # Strings by CRC: str hashes differ between processes.
            h = hash((self.num_players, self.margin, self.rounds, self.broken_tool_penalty,
                      REWARDS.index(self.reward), self.history_length, zlib.crc32(self.game.encode()),
                      zlib.crc32(self.duel_layout.encode()), READINGS.index(self.rules))
                     + ((True, self.claims_per_turn) if self.claims else ()))
            object.__setattr__(self, "_hash", h)
        return h

    def validate(self) -> None:
        """Raise :class:`ConfigError` for the first bad field."""
        variant = self.variant
        ranges = {"num_players": (variant.min_players, variant.max_players), "margin": (0, MAX_MARGIN),
                  "rounds": (1, 3), "history_length": (0, MAX_HISTORY),
                  "claims_per_turn": (1, MAX_CLAIMS_PER_TURN)}  # fmt: skip
        for name, (lo, hi) in ranges.items():
            _coerce(self, name, lo, hi)
        for name in ("broken_tool_penalty", "claims"):
            if isinstance(getattr(self, name), np.bool_):
                object.__setattr__(self, name, bool(getattr(self, name)))
        if not isinstance(self.broken_tool_penalty, bool):
            raise ConfigError(f"broken_tool_penalty={self.broken_tool_penalty!r} must be a bool (True or False)")
        if not isinstance(self.duel_layout, str):
            raise ConfigError(f"duel_layout={self.duel_layout!r} must be a str")
        if not isinstance(self.reward, str) or self.reward not in REWARDS:
            raise ConfigError(f"reward={self.reward!r} is not valid; valid: {', '.join(map(repr, REWARDS))}")
        if not isinstance(self.rules, str) or self.rules not in READINGS:
            raise ConfigError(f"rules={self.rules!r} is not valid; valid: {', '.join(map(repr, READINGS))}")
        for name, default in GAME_OPTIONS.items():
            if name not in variant.options and getattr(self, name) != default:
                games = [v for v in registered_names() if name in lookup_variant(v).options]
                raise ConfigError(
                    f"{name}={getattr(self, name)!r} only applies to game={' or '.join(map(repr, games))} "
                    f"(game={self.game!r})"
                )
        variant.check_config(self)
        lo, hi = variant.min_players, variant.max_players
        if not lo <= self.num_players <= hi:
            valid = f"{lo}..{hi}" if lo < hi else f"{lo}"
            raise ConfigError(
                f"num_players={self.num_players!r} is out of range for game={self.game!r}; valid: {valid}"
            )
        _check_range("margin", self.margin, 0, MAX_MARGIN)
        _check_range("rounds", self.rounds, 1, 3)
        _check_range("history_length", self.history_length, 0, MAX_HISTORY)
        if not isinstance(self.claims, bool):
            raise ConfigError(f"claims={self.claims!r} must be a bool (True or False)")
        if not self.claims and self.claims_per_turn != CLAIM_OPTIONS["claims_per_turn"]:
            raise ConfigError(f"claims_per_turn={self.claims_per_turn!r} only applies with claims=True")
        _check_range("claims_per_turn", self.claims_per_turn, 1, MAX_CLAIMS_PER_TURN)

    @property
    def game_config(self) -> GameConfig:
        """This config without the claims rule: what the game itself (engine, core, variant) plays. Claims are a
        layer over it (``saboteur_env.claims``), so a game with claims is the very game without them."""
        if not self.claims:
            return self
        return self.cached("_game_config", lambda c: dataclasses.replace(c, claims=False, claims_per_turn=1))

    @property
    def rules_version(self) -> str:
        """The variant's rules version, with the reading where the variant has two (``"base-2"``,
        ``"sab2-2/seeds"``); logs and golden files record it."""
        if "rules" in self.variant.options:
            return f"{self.variant.rules_version}/{self.rules}"
        return self.variant.rules_version

    # ---- derived geometry (storage coordinates = frame coordinates + margin) ----
    @property
    def frame(self) -> Frame:
        """The variant's frame for this config (rows, cols, start and goal cells in frame coordinates)."""
        return self.__dict__["_frame"]

    @property
    def frame_rows(self) -> int:
        return self.frame.rows

    @property
    def frame_cols(self) -> int:
        return self.frame.cols

    @property
    def rows(self) -> int:
        return self.frame.rows + 2 * self.margin

    @property
    def cols(self) -> int:
        return self.frame.cols + 2 * self.margin

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
        return self.variant.hand_size(self)

    @property
    def max_decisions_per_round(self) -> int:
        """A true upper bound on the decisions of one round (the variant's proof is in its docstring). With claims,
        each game decision is preceded by at most K claims and followed by at most a report window of K claims and
        one "done" (K = ``claims_per_turn``): the game's bound times 2K + 2."""
        if self.claims:
            return self.game_config.max_decisions_per_round * (2 * self.claims_per_turn + 2)
        return self.variant.max_decisions_per_round(self)

    @property
    def max_game_length(self) -> int:
        return self.rounds * self.max_decisions_per_round


_FIELDS_WITHOUT_CLAIMS = {k: f for k, f in GameConfig.__dataclass_fields__.items() if k not in CLAIM_OPTIONS}


def _coerce(config: GameConfig, name: str, lo: int, hi: int) -> None:
    """Store an integer field as a Python int (errors.is_int's rule: numpy integers are taken, bool, float and str
    refused), so configs hash, compare and serialise (JSON, logs, model files) as plain values."""
    value = getattr(config, name)
    if type(value) is int:
        return
    if not is_int(value):
        raise ConfigError(f"{name}={value!r} must be an int in {lo}..{hi}")
    object.__setattr__(config, name, int(value))


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        raise ConfigError(f"{name}={value!r} is out of range; valid: {lo}..{hi}")
