"""Conversion between one slot of a base-game :class:`~saboteur_env.core.batch.Batch` and a numpy-engine
``GameState`` (the reference): hand-built positions into the core, core games out for rendering, fingerprints and
the equivalence tests. Both directions are complete: ``to_reference`` rebuilds the reference's derived fields
(open edges, observation planes, seat table, history ring, the ``round_results`` list).
"""

from __future__ import annotations

import numpy as np

from saboteur_env.base import board, observation
from saboteur_env.base import kernels as kb
from saboteur_env.base import reference as rules  # the record builder of the reference engine
from saboteur_env.base.cards import SHAPE_OPEN
from saboteur_env.base.state import GameState
from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch

_COPIED = (
    "round_decks", "round_roles", "round_goals", "gold_deck", "gold_left", "hands", "roles", "broken", "peeked",
    "cell_shape", "cell_reach", "goal_kind", "goal_revealed", "last_round_roles", "discarded", "discards",
    "gold_cards", "gold_nuggets", "last_rewards",
)  # fmt: skip
_SCALARS = (
    (kb.SC_ROUND, "round"), (kb.SC_CURRENT, "current"), (kb.SC_LAST, "last_player"),
    (kb.SC_LEFTOVER, "leftover_role"), (kb.SC_DECK_POS, "deck_pos"), (kb.SC_DECISIONS, "num_decisions"),
    (kb.SC_OVER, "game_over"), (kb.SC_JUST_ENDED, "round_just_ended"), (kb.SC_NUM_EVENTS, "num_events"),
    (kb.SC_GOLD_DECK, "gold_deck_size"),
)  # fmt: skip


def _check_base(batch: Batch, b: int) -> None:
    if batch.k is not kb:
        raise StateError(f"the batch plays game={batch.config.game!r}; this converter is the base game's")
    if not 0 <= b < batch.batch:
        raise StateError(f"slot {b} is out of range; valid: 0..{batch.batch - 1}")


def from_reference(state: GameState, batch: Batch, b: int) -> None:
    """Write the reference ``state`` into slot ``b`` of ``batch`` (same config; the slot's generator is kept)."""
    _check_base(batch, b)
    if state.config != batch.config:
        raise StateError(f"state config {state.config} differs from the batch's {batch.config}")
    for name in _COPIED:
        batch.field(name)[b] = getattr(state, name)
    ev = batch.field("events")[b]
    ev[:] = -1
    ev[: state.num_events] = state.events[: state.num_events]
    hw = batch.config.num_cells  # another board: a lock-step row of this slot is rewritten in full next time
    batch.field("obs_cells")[b, hw] = 0
    batch.field("mask_list")[b, 0] = 0
    sc = batch.field("sc")[b]
    games = int(sc[kb.SC_GAMES])
    sc[:] = 0
    sc[kb.SC_GAMES] = max(games, 1)
    for index, name in _SCALARS:
        sc[index] = int(getattr(state, name))
    sc[kb.SC_NUM_RR] = len(state.round_results)
    rr = batch.field("rr")[b]
    rr[:] = 0
    p = state.config.num_players
    for r, res in enumerate(state.round_results):
        rr[r, :4] = (res["winner"] == "saboteurs", res["finder"], res["last_player"], res["decisions"])
        rr[r, 4 : 4 + p] = res["roles"]
        rr[r, 4 + p : 4 + 2 * p] = res["gold_cards"]
        rr[r, 4 + 2 * p :] = res["nuggets"]


def round_results(batch: Batch, b: int) -> list[dict[str, object]]:
    """The reference's ``round_results`` list of slot ``b``."""
    _check_base(batch, b)
    p = batch.config.num_players
    rr = batch.field("rr")[b]
    out: list[dict[str, object]] = []
    for r in range(int(batch.field("sc")[b, kb.SC_NUM_RR])):
        row = [int(x) for x in rr[r]]
        out.append(
            {
                "round": r,
                "winner": "saboteurs" if row[0] else "gold-diggers",
                "finder": row[1],
                "last_player": row[2],
                "roles": row[4 : 4 + p],
                "gold_cards": row[4 + p : 4 + 2 * p],
                "nuggets": row[4 + 2 * p :],
                "decisions": row[3],
            }
        )
    return out


def to_reference(batch: Batch, b: int) -> GameState:
    """Slot ``b`` as a reference ``GameState`` (an independent copy, derived fields rebuilt)."""
    _check_base(batch, b)
    cfg = batch.config
    f = batch.field
    state = rules._blank_state(
        cfg,
        f("round_decks")[b].astype(np.int16),
        f("round_roles")[b].copy(),
        f("round_goals")[b].astype(np.int16),
        f("gold_deck")[b].copy(),
    )
    for name in _COPIED:
        target = getattr(state, name)
        target[...] = f(name)[b].astype(target.dtype)
    sc = f("sc")[b]
    for index, name in _SCALARS:
        value = int(sc[index])
        setattr(state, name, bool(value) if name in ("game_over", "round_just_ended") else value)
    n = int(sc[kb.SC_NUM_EVENTS])
    state.events[:] = -1
    state.events[:n] = f("events")[b, :n]
    state.round_results = round_results(batch, b)
    shape = state.cell_shape
    state.cell_open[:] = np.where(shape >= 0, SHAPE_OPEN[np.maximum(shape, 0)], 0)
    state._cache.clear()
    state.board_changed()
    board.refresh_planes(state)
    observation.refresh_seat_table(state)
    observation.rebuild_history(state)
    return state
