"""The protocol every game implements: a :class:`Variant` and the shapes of its state and layouts.

A variant is one object holding the game's facts as data (name, rules version, player range, which config options
apply, frame) and its functions (set-up, legality, transition, observation, rendering). The engine API
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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from saboteur_env.common.config import GameConfig


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
