"""One Duel game on the compiled core (a batch of one): the state users play, and the variant that plays it.

:class:`CoreDuelState` keeps the reference ``DuelState``'s field names and meanings, as views of the core's arrays.
The reference replaces whole arrays (``s.deck = ...``), so every array field is a property: reading gives the view
(writes through it change the game; call :meth:`CoreDuelState.board_changed` after editing, as with the
reference), assigning copies into the view (same shape; ``deck`` may change length up to 52). Scalars are
properties over the core's ``sc`` row; ``score``, ``events`` and ``round_results`` are rebuilt from the core's rows
as the reference's Python lists. ``to_reference()`` gives the numpy engine's ``DuelState`` of the same game
(fingerprints, error explanations, pictures).

:class:`CoreDuelVariant` is the Duel's :class:`~saboteur_env.common.config.Variant` on this state: set-up draws from the
caller's generator exactly as the reference does (the generator's words are read, advanced in the kernel and written
back), masks and observations come from the kernels, and illegal actions are refused before anything changes with
the reference's explanation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig, Viewer
from saboteur_env.common.errors import GameOverError, IllegalActionError, StateError
from saboteur_env.core.batch import Batch, OneGame, setup_one
from saboteur_env.core.jit import bound
from saboteur_env.duel import cards as dc
from saboteur_env.duel import kernels as kd
from saboteur_env.duel import render
from saboteur_env.duel.convert import from_reference, round_results, to_reference
from saboteur_env.duel.explain import explain_illegal
from saboteur_env.duel.state import DuelState
from saboteur_env.duel.variant import RECORDS, DuelVariant
from saboteur_env.duel.view import DuelView

# Array fields: name -> dtype the view is read as (bool for the core's int8 0/1 flags, uint8 for arm bits).
_ARRAYS: dict[str, type | None] = {
    "card_rank": None, "goal_rank": None, "card_out": np.bool_, "goal_out": np.bool_, "hands": None,
    "broken": np.bool_, "discards": None, "cell_shape": None, "cell_counter": None, "cell_key": np.bool_,
    "goal_card": None, "goal_revealed": np.bool_, "peeked": np.bool_, "reach": np.uint8, "last_rewards": None,
}  # fmt: skip
_INT_SCALARS = {
    "round": kd.SC_ROUND, "starter": kd.SC_STARTER, "current": kd.SC_CURRENT, "counters_left": kd.SC_COUNTERS,
    "keys_left": kd.SC_KEYS, "deck_pos": kd.SC_DECK_POS, "num_decisions": kd.SC_DECISIONS,
    "round_first_event": kd.SC_FIRST_EVENT, "round_first_decision": kd.SC_FIRST_DECISION,
}  # fmt: skip
_BOOL_SCALARS = {"game_over": kd.SC_OVER, "round_just_ended": kd.SC_JUST_ENDED}


def _array(name: str) -> property:
    def get(self: CoreDuelState) -> NDArray[Any]:
        return self._views[name]

    def set_(self: CoreDuelState, value: Any) -> None:
        view = self._views[name]
        value = np.asarray(value)
        if value.shape != view.shape:
            raise StateError(f"{name} must have shape {view.shape}, got {value.shape}")
        view[...] = value
        self._mask = None

    return property(get, set_, doc=f"``{name}`` of the reference state, a view of the core's array")


def _int_scalar(index: int) -> property:
    def get(self: CoreDuelState) -> int:
        return int(self._sc[index])

    def set_(self: CoreDuelState, value: int) -> None:
        self._sc[index] = value
        self._mask = None

    return property(get, set_)


def _bool_scalar(index: int) -> property:
    def get(self: CoreDuelState) -> bool:
        return bool(self._sc[index])

    def set_(self: CoreDuelState, value: bool) -> None:
        self._sc[index] = int(bool(value))
        self._mask = None

    return property(get, set_)


class CoreDuelState(OneGame):
    """A Duel game in the compiled core (see the module docstring). Build with ``CoreDuelVariant.new_game``."""

    config: GameConfig
    batch: Batch

    card_rank = _array("card_rank")
    goal_rank = _array("goal_rank")
    card_out = _array("card_out")
    goal_out = _array("goal_out")
    hands = _array("hands")
    broken = _array("broken")
    discards = _array("discards")
    cell_shape = _array("cell_shape")
    cell_counter = _array("cell_counter")
    cell_key = _array("cell_key")
    goal_card = _array("goal_card")
    goal_revealed = _array("goal_revealed")
    peeked = _array("peeked")
    reach = _array("reach")
    last_rewards = _array("last_rewards")

    round = _int_scalar(kd.SC_ROUND)
    starter = _int_scalar(kd.SC_STARTER)
    current = _int_scalar(kd.SC_CURRENT)
    counters_left = _int_scalar(kd.SC_COUNTERS)
    keys_left = _int_scalar(kd.SC_KEYS)
    deck_pos = _int_scalar(kd.SC_DECK_POS)
    num_decisions = _int_scalar(kd.SC_DECISIONS)
    round_first_event = _int_scalar(kd.SC_FIRST_EVENT)
    round_first_decision = _int_scalar(kd.SC_FIRST_DECISION)
    game_over = _bool_scalar(kd.SC_OVER)
    round_just_ended = _bool_scalar(kd.SC_JUST_ENDED)

    def __init__(self, config: GameConfig, batch: Batch | None = None) -> None:
        self.config = config
        self.batch = batch if batch is not None else Batch(config, 1)
        self._bind()

    def _bind(self) -> None:
        f = self.batch.views_by_name.__getitem__  # the batch's (B, ...) views, built once
        self._views: dict[str, NDArray[Any]] = {}
        for name, dtype in _ARRAYS.items():
            view = f(name)[0]
            self._views[name] = view if dtype is None else view.view(dtype)
        self._sc = f("sc")[0]
        self._deck = f("deck")[0]
        self._events = f("events")[0]
        self._bind_buffers()
        self._cache: dict[str, Any] = {}  # the board helpers' (duel.board) per-board cache, as on the reference

    def _step_call(self) -> Callable[[], Any]:
        b = self.batch
        return bound(kd.apply_mask1, b._args[0], b.cfg, self._action, self._mask_buf, self._num_legal)

    # ---- reference-compatible reads ----------------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return 2

    @property
    def deck(self) -> NDArray[np.int8]:
        """This round's pile in draw order (a view; ``deck_pos`` cards of it are drawn)."""
        return self._deck[: int(self._sc[kd.SC_DECK_LEN])]

    @deck.setter
    def deck(self, value: Any) -> None:
        value = np.asarray(value)
        if value.ndim != 1 or len(value) > dc.DECK_SIZE:
            raise StateError(f"deck must be a 1-d pile of 0..{dc.DECK_SIZE} card kinds, got shape {value.shape}")
        self._deck[:] = 0
        self._deck[: len(value)] = value
        self._sc[kd.SC_DECK_LEN] = len(value)
        self._mask = None

    @property
    def deck_size(self) -> int:
        return int(self._sc[kd.SC_DECK_LEN]) - self.deck_pos

    @property
    def score(self) -> list[list[int]]:
        """Nugget value of each card in the two score piles (rebuilt; assign to change)."""
        piles = self.batch.field("score_vals")[0]
        return [[int(x) for x in piles[s, : int(self._sc[kd.SC_SCORE_LEN + s])]] for s in (0, 1)]

    @score.setter
    def score(self, value: list[list[int]]) -> None:
        if len(value) != 2 or any(len(p) > kd.SCORE_CAP for p in value):
            raise StateError(f"score must be two piles of 0..{kd.SCORE_CAP} cards")
        piles = self.batch.field("score_vals")[0]
        piles[:] = 0
        for s in (0, 1):
            piles[s, : len(value[s])] = value[s]
            self._sc[kd.SC_SCORE_LEN + s] = len(value[s])
        self._mask = None

    @property
    def nuggets(self) -> list[int]:
        return [sum(p) for p in self.score]

    @property
    def num_events(self) -> int:
        return int(self._sc[kd.SC_NUM_EVENTS])

    @property
    def events(self) -> list[tuple[int, int, int, int, int]]:
        """The public event log as the reference's list of ``(type, actor, kind, cell, arg)`` (rebuilt)."""
        return [tuple(row) for row in self._events[: self.num_events].tolist()]

    @property
    def round_results(self) -> list[dict[str, Any]]:
        return round_results(self.batch, 0)

    def board_changed(self) -> None:
        """Forget the cached mask and board tables (call after editing arrays in place)."""
        self._mask = None
        self._cache = {}

    # ---- copies ---------------------------------------------------------------------------------------------------
    def to_reference(self) -> DuelState:
        """The numpy reference engine's state of this game (an independent copy)."""
        return to_reference(self.batch, 0)

    def __repr__(self) -> str:
        return (f"CoreDuelState(layout={self.config.duel_layout!r}, round={self.round}, current={self.current}, "
                f"decisions={self.num_decisions}, game_over={self.game_over})")  # fmt: skip


# ---- the variant functions ----------------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> CoreDuelState:
    """Draw the whole game's set-up from ``rng`` as the reference does; green starts round 1."""
    if config.game != "duel":
        raise ValueError(f"the duel's new_game needs game='duel', got game={config.game!r}")
    state = CoreDuelState(config)
    batch = state.batch

    def draw_in_numpy(f: Callable[[str], Any]) -> None:  # the reference's draws, for the fallback
        f("card_rank")[0] = np.stack([rng.permutation(dc.DECK_SIZE) for _ in range(config.rounds)])
        f("goal_rank")[0] = np.stack([rng.permutation(dc.NUM_GOALS) for _ in range(config.rounds)])

    setup_one(batch, rng, draw_in_numpy)
    return state


def legal_action_mask(state: CoreDuelState) -> NDArray[np.bool_]:
    """Bool mask (read-only) for the seat to act; cached until the state changes."""
    mask = state._mask
    return mask if mask is not None else state._run_masks()


def apply_action(state: CoreDuelState, action: int, *, inplace: bool = False) -> CoreDuelState:
    """The reference's ``apply_action`` on the core (same errors, raised before any change)."""
    if state.game_over:
        raise GameOverError("the game is over; call new_game()")
    layout = state.config.variant.action_layout(state.config)
    a = layout.check(action)
    if not legal_action_mask(state)[a]:
        ref = state.to_reference()
        raise IllegalActionError(
            f"illegal action {a} ({layout.to_string(a)}) for seat {state.current}: {explain_illegal(ref, a)}"
        )
    s = state if inplace else state.clone()
    s._run_step(a)  # the action and the next mask in one kernel call
    s._cache = {}
    return s


def encode_observation(state: CoreDuelState, seat: int) -> NDArray[np.float32]:
    if seat not in (0, 1):
        raise ValueError(f"seat={seat!r} is out of range; valid: 0..1")
    state._run_observe(seat)
    return state._obs_buf[0].copy()


def encode_state(state: CoreDuelState) -> NDArray[np.float32]:
    """The reference's ``encode_state``: seat 0's observation, then seat 1's hand, the pile's counts and the six
    goal cards (one-hot)."""
    hidden = np.zeros(dc.NUM_DECK_KINDS * 2 + dc.GOALS_PER_ROUND * dc.NUM_GOALS, dtype=np.float32)
    hidden[: dc.NUM_DECK_KINDS] = state.hands[1]
    pile = state.deck[state.deck_pos :].astype(np.int64)
    hidden[dc.NUM_DECK_KINDS : 2 * dc.NUM_DECK_KINDS] = np.bincount(pile, minlength=dc.NUM_DECK_KINDS)
    goals = hidden[2 * dc.NUM_DECK_KINDS :].reshape(dc.GOALS_PER_ROUND, dc.NUM_GOALS)
    goals[np.arange(dc.GOALS_PER_ROUND), state.goal_card.astype(np.int64)] = 1
    return np.concatenate([encode_observation(state, 0), hidden])


class CoreDuelVariant(DuelVariant):
    """Saboteur: The Duel played by the compiled core (see the module docstring)."""

    state_type = CoreDuelState  # type: ignore[assignment]

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> CoreDuelState:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)
    encode_observation = staticmethod(encode_observation)  # type: ignore[assignment]

    def adopt(self, state: Any) -> Any:
        """A reference ``DuelState`` (e.g. ``positions.make_duel_state``) as the core's state of the same game."""
        if isinstance(state, DuelState):
            core = CoreDuelState(state.config)
            from_reference(state, core.batch, 0)
            core._bind()
            return core
        return state

    def returns(self, state: CoreDuelState) -> NDArray[np.float64]:  # type: ignore[override]
        return np.array(state.nuggets, dtype=np.float64)

    def encode_state(self, state: CoreDuelState) -> NDArray[np.float32]:  # type: ignore[override]
        return encode_state(state)

    def player_view(self, state: CoreDuelState, seat: int) -> DuelView:  # type: ignore[override]
        return DuelView.from_observation(encode_observation(state, seat), state.config, seat)

    def render_text(self, state: CoreDuelState, viewer: Viewer = None) -> str:  # type: ignore[override]
        return render.render_text(state.to_reference(), viewer)

    def render_image(self, state: CoreDuelState, viewer: Viewer = None) -> NDArray[np.uint8]:  # type: ignore[override]
        return render.render_image(state.to_reference(), viewer)

    def check_state(self, state: CoreDuelState) -> None:  # type: ignore[override]
        if not isinstance(state, CoreDuelState):
            raise StateError(f"expected a CoreDuelState, got {type(state).__name__}")
        if state.batch.field("sc")[0, kd.SC_ERROR]:
            raise StateError("the core flagged an internal error in this game (event log or score pile overflow)")
        RECORDS.check_state(state.to_reference())  # the reference's invariants on the same game
