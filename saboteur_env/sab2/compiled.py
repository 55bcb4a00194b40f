"""One Saboteur 2 game on the compiled core (a batch of one): the state users play, and the variant that plays it.

:class:`CoreSab2State` keeps the reference ``Sab2State``'s field names and meanings, as views of the core's arrays
(writes through them, or assignments to them, change the game; call :meth:`CoreSab2State.board_changed` after
editing, as with the reference). Scalars (``round``, ``current``, ``phase``, ``deck_pos``, ...) are properties over
the core's ``sc`` row; the reference's Python objects (``events`` as a list of tuples, ``thieves``,
``round_summary``, ``round_results``, ``round_start_gold`` or None) are rebuilt from the core's rows on each read.
``to_reference()`` gives the numpy engine's ``Sab2State`` of the same game (fingerprints, error explanations,
pictures).

:class:`CoreSab2Variant` is Saboteur 2's :class:`~saboteur_env.common.config.Variant` on this state: set-up draws from
the caller's generator exactly as the reference does (the generator's words are read, advanced in the kernel and
written back), masks and observations come from the kernels, and illegal actions are refused before anything
changes, with the reference's explanation.
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
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2 import kernels as ks
from saboteur_env.sab2 import render
from saboteur_env.sab2.actions import action_layout
from saboteur_env.sab2.convert import _event, _summary, from_reference, round_results, to_reference
from saboteur_env.sab2.explain import explain_illegal
from saboteur_env.sab2.state import Phase, Sab2State
from saboteur_env.sab2.variant import RECORDS, Sab2Variant
from saboteur_env.sab2.view import Sab2View

# Reference field -> the dtype its view shows (None: the core's own dtype). The int8 0/1 flags are bool views and
# ``reach`` (arm bits 0..15) a uint8 view, as in the reference; the other integer fields keep the core's narrower
# dtypes (every value fits: card counts, kinds, seats, decisions, gold).
_ARRAYS: dict[str, Any] = {
    "round_decks": None, "round_roles": None, "round_goals": None, "hands": None, "roles": None,
    "broken": np.bool_, "peeked": np.bool_, "trapped": np.bool_, "theft": np.bool_, "hats_swapped": np.bool_,
    "inspected": None, "inspections": np.bool_, "cell_shape": None, "reach": np.uint8, "goal_kind": None,
    "goal_revealed": np.bool_, "discarded": None, "discards": None, "theft_time": None, "gold": None,
    "stolen_held": None, "last_rewards": None,
}  # fmt: skip


class _Array:
    """A field as a view of the core's arena; assigning to it writes into the view (the shape checked by
    numpy), so ``state.gold = [...]`` edits the game instead of detaching the attribute."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: CoreSab2State | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._views[self.name]

    def __set__(self, obj: CoreSab2State, value: Any) -> None:
        obj._views[self.name][...] = value
        obj._mask = None


def _int_scalar(index: int) -> property:
    def get(self: CoreSab2State) -> int:
        return int(self._sc[index])

    def set_(self: CoreSab2State, value: int) -> None:
        self._sc[index] = value
        self._mask = None

    return property(get, set_)


def _bool_scalar(index: int) -> property:
    def get(self: CoreSab2State) -> bool:
        return bool(self._sc[index])

    def set_(self: CoreSab2State, value: bool) -> None:
        self._sc[index] = int(bool(value))
        self._mask = None

    return property(get, set_)


class CoreSab2State(OneGame):
    """A Saboteur 2 game in the compiled core (see the module docstring). Build with ``CoreSab2Variant.new_game``."""

    config: GameConfig
    batch: Batch
    round_decks = _Array()
    round_roles = _Array()
    round_goals = _Array()
    hands = _Array()
    roles = _Array()
    broken = _Array()
    peeked = _Array()
    trapped = _Array()
    theft = _Array()
    hats_swapped = _Array()
    inspected = _Array()
    inspections = _Array()
    cell_shape = _Array()
    reach = _Array()
    goal_kind = _Array()
    goal_revealed = _Array()
    discarded = _Array()
    discards = _Array()
    theft_time = _Array()
    gold = _Array()
    stolen_held = _Array()
    last_rewards = _Array()

    round = _int_scalar(ks.SC_ROUND)
    current = _int_scalar(ks.SC_CURRENT)
    last_player = _int_scalar(ks.SC_LAST)
    finder = _int_scalar(ks.SC_FINDER)
    reserve_pos = _int_scalar(ks.SC_RESERVE_POS)
    pending = _int_scalar(ks.SC_PENDING)
    free_target = _int_scalar(ks.SC_FREE_TARGET)
    deck_pos = _int_scalar(ks.SC_DECK_POS)
    num_decisions = _int_scalar(ks.SC_DECISIONS)
    round_first_event = _int_scalar(ks.SC_ROUND_FIRST_EVENT)
    game_over = _bool_scalar(ks.SC_OVER)
    round_just_ended = _bool_scalar(ks.SC_JUST_ENDED)

    def __init__(self, config: GameConfig, batch: Batch | None = None) -> None:
        self.config = config
        self.batch = batch if batch is not None else Batch(config, 1)
        self._bind()

    def _bind(self) -> None:
        f = self.batch.views_by_name.__getitem__  # the batch's (B, ...) views, built once
        views: dict[str, NDArray[Any]] = {}
        for name, dtype in _ARRAYS.items():
            v = f(name)[0]
            views[name] = v if dtype is None else v.view(dtype)
        self._views = views
        self._sc = f("sc")[0]
        self._thieves = f("thieves")[0]
        self._rsg = f("round_start_gold")[0]
        self._events = f("events")[0]
        self._bind_buffers()
        self._cache: dict[str, Any] = {}
        self._event_list: list[tuple[Any, ...]] = []  # rows converted so far (the log only grows between edits)

    def _step_call(self) -> Callable[[], Any]:
        b = self.batch
        return bound(ks.apply_mask1, b._args[0], b.cfg, self._action, self._mask_buf, self._num_legal)

    # ---- reference-compatible reads ----------------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def deck_size(self) -> int:
        return int(self.round_decks.shape[1]) - self.deck_pos

    @property
    def num_events(self) -> int:
        return int(self._sc[ks.SC_NUM_EVENTS])

    @property
    def phase(self) -> Phase:
        return Phase(int(self._sc[ks.SC_PHASE]))

    @phase.setter
    def phase(self, value: int) -> None:
        self._sc[ks.SC_PHASE] = Phase(value)  # ValueError naming the value for a non-phase
        self._mask = None

    @property
    def events(self) -> list[tuple[Any, ...]]:
        """The public event rows so far as the reference's list of tuples (a copy: edits do not reach the game).
        Rows are converted once (callers index it once per new event); ``board_changed()`` forgets them."""
        done, n = self._event_list, self.num_events
        if len(done) > n:
            done.clear()
        if len(done) < n:
            done.extend(_event(row) for row in self._events[len(done) : n].tolist())
        return list(done)

    @property
    def event_rows(self) -> NDArray[np.int16]:
        """The logged events as the core's ``(num_events, 6)`` int16 rows (a view)."""
        return self._events[: self.num_events]

    @property
    def thieves(self) -> list[int]:
        """Theft phase: the thieves still to steal, in order (a copy)."""
        return [int(x) for x in self._thieves[int(self._sc[ks.SC_THIEF_POS]) : int(self._sc[ks.SC_NUM_THIEVES])]]

    @thieves.setter
    def thieves(self, value: list[int]) -> None:
        p = self.num_players
        seats = [int(x) for x in value]
        if len(seats) > p or any(not 0 <= x < p for x in seats):
            raise StateError(f"thieves={value!r} must be at most {p} seats in 0..{p - 1}")
        self._thieves[:] = -1
        self._thieves[: len(seats)] = seats
        self._sc[ks.SC_NUM_THIEVES], self._sc[ks.SC_THIEF_POS] = len(seats), 0
        self._mask = None

    @property
    def round_start_gold(self) -> NDArray[np.int32] | None:
        """Gold before the latest round's payouts (a view), None until the first round ends."""
        return self._rsg if self._sc[ks.SC_HAS_RSG] else None

    @property
    def round_summary(self) -> dict[str, Any]:
        """The latest round end's winners and payouts (the reference's dict, rebuilt; {} before the first)."""
        ns = int(self._sc[ks.SC_NUM_SUMMARY])
        if ns == 0:
            return {}
        return _summary([int(x) for x in self.batch.field("rr")[0, ns - 1]], self.num_players, ns - 1)

    @property
    def round_results(self) -> list[dict[str, Any]]:
        return round_results(self.batch, 0)

    def board_changed(self) -> None:
        """Forget the cached mask (call after editing arrays directly)."""
        self._mask = None
        self._cache.clear()
        self._event_list.clear()

    # ---- copies ---------------------------------------------------------------------------------------------------
    def to_reference(self) -> Sab2State:
        """The numpy reference engine's state of this game (an independent copy)."""
        return to_reference(self.batch, 0)

    def __repr__(self) -> str:
        return (f"CoreSab2State(players={self.num_players}, round={self.round}, current={self.current}, "
                f"phase={self.phase.name}, decisions={self.num_decisions}, game_over={self.game_over})")  # fmt: skip


# ---- the variant functions ----------------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> CoreSab2State:
    """Draw the whole game's set-up from ``rng`` as the reference does and start round 1 with seat 0."""
    state = CoreSab2State(config)
    batch = state.batch

    def draw_in_numpy(f: Callable[[str], Any]) -> None:  # the reference's draws, for the fallback
        deck = np.repeat(np.arange(sc.NUM_DECK_KINDS, dtype=np.int16), sc.DECK_COUNTS)
        f("round_decks")[0] = np.stack([rng.permutation(deck) for _ in range(config.rounds)])
        f("round_roles")[0] = np.stack([rng.permutation(sc.ROLE_DECK) for _ in range(config.rounds)])
        goals = np.array(sc.KIND_GOALS, dtype=np.int16)
        f("round_goals")[0] = np.stack([rng.permutation(goals) for _ in range(config.rounds)])

    setup_one(batch, rng, draw_in_numpy)
    return state


def legal_action_mask(state: CoreSab2State) -> NDArray[np.bool_]:
    """Bool mask (read-only) for the seat to act; cached until the state changes."""
    mask = state._mask
    return mask if mask is not None else state._run_masks()


def apply_action(state: CoreSab2State, action: int, *, inplace: bool = False) -> CoreSab2State:
    """The reference's ``apply_action`` on the core (same errors, raised before any change)."""
    if state.game_over:
        raise GameOverError("the game is over; start a new game")
    a = action_layout(state.config).check(action)
    if not legal_action_mask(state)[a]:
        raise IllegalActionError(explain_illegal(state.to_reference(), a))
    s = state if inplace else state.clone()
    s._run_step(a)  # the action and the next mask in one kernel call
    s._cache.clear()
    return s


def encode_observation(state: CoreSab2State, seat: int) -> NDArray[np.float32]:
    p = state.num_players
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < p:
        raise ValueError(f"seat={seat!r} is out of range; valid: 0..{p - 1}")
    state._run_observe(seat)
    return state._obs_buf[0].copy()


def encode_state(state: CoreSab2State) -> NDArray[np.float32]:
    """The reference's ``encode_state`` (seat 0's observation, every role, hand and goal) from the core's fields."""
    p = state.num_players
    extra = np.zeros(p * 6 + p * sc.NUM_DECK_KINDS + 3 * 3, dtype=np.float32)
    roles = extra[: p * 6].reshape(p, 6)
    roles[np.arange(p), state.roles] = 1
    extra[p * 6 : p * 6 + p * sc.NUM_DECK_KINDS] = state.hands.ravel()
    goals = extra[p * 6 + p * sc.NUM_DECK_KINDS :].reshape(3, 3)
    goals[np.arange(3), state.goal_kind.astype(np.int64) - sc.KIND_GOALS[0]] = 1
    return np.concatenate([encode_observation(state, 0), extra])


def _reference(state: CoreSab2State | Sab2State) -> Sab2State:
    return state.to_reference() if isinstance(state, CoreSab2State) else state  # pictures of either engine's state


class CoreSab2Variant(Sab2Variant):
    """Saboteur 2 played by the compiled core (see the module docstring)."""

    state_type = CoreSab2State  # type: ignore[assignment]

    def new_game(self, config: GameConfig, rng: np.random.Generator) -> CoreSab2State:
        return new_game(config, rng)

    legal_action_mask = staticmethod(legal_action_mask)
    apply_action = staticmethod(apply_action)
    encode_observation = staticmethod(encode_observation)  # type: ignore[assignment]

    def adopt(self, state: Any) -> Any:
        """A reference ``Sab2State`` (e.g. ``positions.make_sab2_state``) as the core's state of the same game."""
        if isinstance(state, Sab2State):
            core = CoreSab2State(state.config)
            from_reference(state, core.batch, 0)
            core._bind()
            return core
        return state

    def returns(self, state: CoreSab2State) -> NDArray[np.float64]:  # type: ignore[override]
        return state.gold.astype(np.float64)

    def encode_state(self, state: CoreSab2State) -> NDArray[np.float32]:  # type: ignore[override]
        return encode_state(state)

    def player_view(self, state: CoreSab2State, seat: int) -> Sab2View:  # type: ignore[override]
        return Sab2View.from_observation(encode_observation(state, seat), state.config, seat)

    def render_text(self, state: CoreSab2State | Sab2State, viewer: Viewer = None) -> str:
        return render.render_text(_reference(state), viewer)

    def render_image(self, state: CoreSab2State | Sab2State, viewer: Viewer = None) -> NDArray[np.uint8]:
        return render.render_image(_reference(state), viewer)

    def check_state(self, state: CoreSab2State) -> None:  # type: ignore[override]
        if not isinstance(state, CoreSab2State):
            raise StateError(f"expected a CoreSab2State, got {type(state).__name__}")
        if state.batch.field("sc")[0, ks.SC_ERROR]:
            raise StateError("the core flagged an internal error in this game (event log overflow)")
        RECORDS.check_state(state.to_reference())  # the reference's invariants on the same game
