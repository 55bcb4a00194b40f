"""One base game on the compiled core (a batch of one): the state users play, and the variant that plays it.

:class:`CoreGameState` keeps the reference ``GameState``'s field names and meanings, as views of the core's
arrays (writes through them change the game; call :meth:`CoreGameState.board_changed` after editing, as with
the reference). Scalars (``round``, ``current``, ``deck_pos``, ...) are properties over the core's ``sc`` row;
``events`` is the logged part of the event array; ``round_results`` is rebuilt from the core's rows.
``to_reference()`` gives the numpy engine's ``GameState`` of the same game (fingerprints, error explanations,
pictures).

:class:`CoreBaseVariant` is the base game's :class:`~saboteur_env.common.config.Variant` on this state: set-up draws
from the caller's generator exactly as the reference does (the generator's words are read, advanced in the
kernel and written back), masks and observations come from the kernels, and illegal actions are refused before
anything changes with the reference's explanation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base import image, render
from saboteur_env.base import kernels as kb
from saboteur_env.base.cards import GOAL_KINDS, NUM_DECK_KINDS, deck_counts
from saboteur_env.base.convert import from_reference, round_results, to_reference
from saboteur_env.base.explain import explain_illegal
from saboteur_env.base.observation import PlayerView
from saboteur_env.base.state import GameState
from saboteur_env.base.variant import RECORDS, BaseVariant
from saboteur_env.common.config import GameConfig, Viewer
from saboteur_env.common.errors import GameOverError, IllegalActionError, StateError
from saboteur_env.common.geometry import geometry
from saboteur_env.core.batch import Batch, OneGame, setup_one
from saboteur_env.core.jit import bound

_ARRAYS = (
    "round_decks", "round_roles", "round_goals", "gold_deck", "hands", "roles", "cell_shape", "cell_reach",
    "goal_kind", "last_round_roles", "discarded", "discards", "gold_cards", "gold_nuggets", "last_rewards",
)  # fmt: skip
_BOOLS = ("gold_left", "broken", "peeked", "goal_revealed")  # int8 0/1 in the core, bool views here
_INT_SCALARS = {
    "round": kb.SC_ROUND, "current": kb.SC_CURRENT, "last_player": kb.SC_LAST, "leftover_role": kb.SC_LEFTOVER,
    "deck_pos": kb.SC_DECK_POS, "num_decisions": kb.SC_DECISIONS, "num_events": kb.SC_NUM_EVENTS,
    "gold_deck_size": kb.SC_GOLD_DECK,
}  # fmt: skip
_BOOL_SCALARS = {"game_over": kb.SC_OVER, "round_just_ended": kb.SC_JUST_ENDED}


def _int_scalar(index: int) -> property:
    def get(self: CoreGameState) -> int:
        return int(self._sc[index])

    def set_(self: CoreGameState, value: int) -> None:
        self._sc[index] = value
        self._mask = None
        self._obs_seat = -1

    return property(get, set_)


def _bool_scalar(index: int) -> property:
    def get(self: CoreGameState) -> bool:
        return bool(self._sc[index])

    def set_(self: CoreGameState, value: bool) -> None:
        self._sc[index] = int(bool(value))
        self._mask = None
        self._obs_seat = -1

    return property(get, set_)


class CoreGameState(OneGame):
    """A base game in the compiled core (see the module docstring). Build with ``CoreBaseVariant.new_game``."""

    config: GameConfig
    batch: Batch
    round_decks: NDArray[np.int8]
    round_roles: NDArray[np.int8]
    round_goals: NDArray[np.int8]
    gold_deck: NDArray[np.int8]
    gold_left: NDArray[np.bool_]
    hands: NDArray[np.int8]
    roles: NDArray[np.int8]
    broken: NDArray[np.bool_]
    peeked: NDArray[np.bool_]
    cell_shape: NDArray[np.int8]
    cell_reach: NDArray[np.int8]
    goal_kind: NDArray[np.int8]
    goal_revealed: NDArray[np.bool_]
    last_round_roles: NDArray[np.int8]
    discarded: NDArray[np.int16]
    discards: NDArray[np.int16]
    gold_cards: NDArray[np.int16]
    gold_nuggets: NDArray[np.int32]
    last_rewards: NDArray[np.float32]

    round = _int_scalar(kb.SC_ROUND)
    current = _int_scalar(kb.SC_CURRENT)
    last_player = _int_scalar(kb.SC_LAST)
    leftover_role = _int_scalar(kb.SC_LEFTOVER)
    deck_pos = _int_scalar(kb.SC_DECK_POS)
    num_decisions = _int_scalar(kb.SC_DECISIONS)
    num_events = _int_scalar(kb.SC_NUM_EVENTS)
    gold_deck_size = _int_scalar(kb.SC_GOLD_DECK)
    game_over = _bool_scalar(kb.SC_OVER)
    round_just_ended = _bool_scalar(kb.SC_JUST_ENDED)

    def __init__(self, config: GameConfig, batch: Batch | None = None) -> None:
        self.config = config
        self.batch = batch if batch is not None else Batch(config, 1)
        self._bind()

    def _bind(self) -> None:
        f = self.batch.views_by_name.__getitem__  # the batch's (B, ...) views, built once
        for name in _ARRAYS:
            setattr(self, name, f(name)[0])
        for name in _BOOLS:
            setattr(self, name, f(name)[0].view(np.bool_))
        self._sc = f("sc")[0]
        self._S = self.batch._args[0]  # the kernels' handle on this game's arrays (a ViewsRef)
        self._events = f("events")[0]
        self._bind_buffers()
        # ``_obs_buf`` holds the observation of the seat to act, written by the same kernel call as each action
        # (seat -1: none).
        self._obs_seat = -1
        # The per-config tables and caches of the reference state, for code that reads them (board helpers).
        variant = self.config.variant
        self.geo = geometry(self.config)
        self.layout = variant.action_layout(self.config)
        self.obs_layout = variant.observation_layout(self.config)
        self._cache: dict[str, Any] = {}
        self.board_version = 0

    def _step_call(self) -> Callable[[], Any]:
        b = self.batch  # the action, the next mask and the next seat's observation (seat into ``_seat``)
        return bound(kb.apply_step1, self._S, b.cfg, b.rowcol, self._action, self._mask_buf, self._num_legal,
                     self._seat, self._obs_buf)  # fmt: skip

    # ---- reference-compatible reads ----------------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def deck_size(self) -> int:
        return int(self.round_decks.shape[1]) - self.deck_pos

    @property
    def events(self) -> NDArray[np.int16]:
        """The public event rows logged so far, ``(num_events, 6)`` (a view)."""
        return self._events[: self.num_events]

    @property
    def round_results(self) -> list[dict[str, Any]]:
        return round_results(self.batch, 0)

    @property
    def cell_open(self) -> NDArray[np.uint8]:
        shape = self.cell_shape.astype(np.int64)
        return np.where(shape >= 0, kb.S_OPEN[np.maximum(shape, 0)], 0).astype(np.uint8)

    def board_changed(self) -> None:
        """Forget the cached mask and observation (call after editing arrays directly)."""
        self._mask = None
        self._obs_seat = -1
        self._cache.clear()
        self.board_version += 1

    # ---- copies ---------------------------------------------------------------------------------------------------
    def to_reference(self) -> GameState:
        """The numpy reference engine's state of this game (an independent copy)."""
        return to_reference(self.batch, 0)

    def __repr__(self) -> str:
        return (f"CoreGameState(game={self.config.game!r}, players={self.num_players}, round={self.round}, "
                f"current={self.current}, decisions={self.num_decisions}, game_over={self.game_over})")  # fmt: skip


# ---- the variant functions ----------------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> CoreGameState:
    """Draw the whole game's set-up from ``rng`` as the reference does and start round 1 with seat 0."""
    state = CoreGameState(config)
    batch = state.batch

    def draw_in_numpy(f: Callable[[str], Any]) -> None:  # the reference's draws, for the fallback
        deck = np.repeat(np.arange(NUM_DECK_KINDS), deck_counts(config))
        roles = batch.cfg[batch.cfg[kb.H_ROLES] : batch.cfg[kb.H_ROLES] + config.num_players + 1]
        f("round_decks")[0] = np.stack([rng.permutation(deck) for _ in range(config.rounds)])
        f("round_roles")[0] = np.stack([rng.permutation(roles) for _ in range(config.rounds)])
        f("round_goals")[0] = np.stack([rng.permutation(np.array(GOAL_KINDS)) for _ in range(config.rounds)])
        f("gold_deck")[0] = rng.permutation(kb.GOLD_VALUES)

    setup_one(batch, rng, draw_in_numpy)
    batch.field("sc")[0, kb.SC_GAMES] = 1
    return state


def legal_action_mask(state: CoreGameState) -> NDArray[np.bool_]:
    """Bool mask (read-only) for the seat to act; cached until the state changes."""
    mask = state._mask
    return mask if mask is not None else state._run_masks()


def apply_action(state: CoreGameState, action: int, *, inplace: bool = False) -> CoreGameState:
    """The reference's ``apply_action`` on the core (same errors, raised before any change)."""
    if state._sc[kb.SC_OVER]:
        raise GameOverError("the game is over; start a new game")
    layout = state.layout
    a = layout.check(action)  # a plain int in range takes check_action_id's first test
    mask = state._mask if state._mask is not None else legal_action_mask(state)
    if not mask[a]:
        ref = state.to_reference()
        raise IllegalActionError(
            f"illegal action {a} ({layout.to_string(a)}) for seat {state.current}: {explain_illegal(ref, a)}"
        )
    s = state if inplace else state.clone()
    s._run_step(a)  # one kernel call: the action, the next mask and the next seat's observation
    s._obs_seat = int(s._seat[0])
    return s


def encode_observation(state: CoreGameState, seat: int) -> NDArray[np.float32]:
    """The observation of ``seat`` (a fresh array; the seat to act's is already computed by the last action)."""
    if seat != state._obs_seat:
        state._run_observe(seat)
        state._obs_seat = seat
    return state._obs_buf[0].copy()


def encode_state(state: CoreGameState) -> NDArray[np.float32]:
    """The reference's ``encode_state`` layout (public planes, goals, roles, hands, tools, draw pile, gold, peeks,
    round, seat to act; absolute seats) from the core's fields."""
    cfg = state.config
    p, hw = cfg.num_players, cfg.num_cells
    planes = encode_observation(state, 0)[: 24 * hw]  # the 24 public planes are the same for every seat
    goals = np.zeros((3, 3), dtype=np.float32)
    goals[np.arange(3), [GOAL_KINDS.index(int(k)) for k in state.goal_kind]] = 1
    roles = np.zeros((p + 1, 2), dtype=np.float32)
    roles[np.arange(p), state.roles] = 1
    roles[p, state.leftover_role] = 1
    pile = np.bincount(state.round_decks[state.round][state.deck_pos :], minlength=NUM_DECK_KINDS)
    rnd = np.zeros(3, dtype=np.float32)
    rnd[state.round] = 1
    act = np.zeros(p, dtype=np.float32)
    act[state.current] = 1
    return np.concatenate(
        [
            planes,
            goals.ravel(),
            roles.ravel(),
            state.hands.ravel(),
            state.broken.ravel(),
            pile,
            state.gold_nuggets,
            state.gold_cards,
            state.peeked.ravel(),
            rnd,
            act,
        ]
    ).astype(np.float32)


class CoreBaseVariant(BaseVariant):
    """The base game played by the compiled core (see the module docstring)."""

    state_type = CoreGameState  # type: ignore[assignment]

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> CoreGameState:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)
    encode_observation = staticmethod(encode_observation)  # type: ignore[assignment]

    def adopt(self, state: Any) -> Any:
        """A reference ``GameState`` (e.g. ``positions.make_state``) as the core's state of the same game."""
        if isinstance(state, GameState):
            core = CoreGameState(state.config)
            from_reference(state, core.batch, 0)
            core._bind()
            return core
        return state

    def returns(self, state: CoreGameState) -> NDArray[np.float64]:  # type: ignore[override]
        return state.gold_nuggets.astype(np.float64)

    def encode_state(self, state: CoreGameState) -> NDArray[np.float32]:  # type: ignore[override]
        return encode_state(state)

    def player_view(self, state: CoreGameState, seat: int) -> PlayerView:  # type: ignore[override]
        return PlayerView.from_observation(encode_observation(state, seat), state.config)

    def render_text(self, state: CoreGameState, viewer: Viewer = None) -> str:  # type: ignore[override]
        return render.render_text(state.to_reference(), viewer)

    def render_image(self, state: CoreGameState, viewer: Viewer = None) -> NDArray[np.uint8]:  # type: ignore[override]
        return image.render_image(state.to_reference(), viewer)

    def check_state(self, state: CoreGameState) -> None:  # type: ignore[override]
        if not isinstance(state, CoreGameState):
            raise StateError(f"expected a CoreGameState, got {type(state).__name__}")
        if state.batch.field("sc")[0, kb.SC_ERROR]:
            raise StateError("the core flagged an internal error in this game (event log overflow)")
        RECORDS.check_state(state.to_reference())  # the reference's invariants on the same game
