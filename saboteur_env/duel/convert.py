"""Conversion between one slot of a Duel :class:`~saboteur_env.core.batch.Batch` and a numpy-engine ``DuelState``
(the reference): hand-built positions into the core, core games out for rendering, fingerprints and the
equivalence tests. Both directions are complete: ``to_reference`` rebuilds the reference's Python objects (the
score piles, the event list, ``round_results``) with the reference's exact types and dtypes, so fingerprints match.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch
from saboteur_env.duel import kernels as kd
from saboteur_env.duel import reference as rules  # the record builder of the reference engine
from saboteur_env.duel.state import DuelState

_COPIED = (
    "card_out", "goal_out", "hands", "broken", "discards", "cell_shape", "cell_counter", "cell_key", "goal_card",
    "goal_revealed", "peeked", "reach", "last_rewards",
)  # fmt: skip
_SCALARS = (
    (kd.SC_ROUND, "round"), (kd.SC_STARTER, "starter"), (kd.SC_CURRENT, "current"),
    (kd.SC_COUNTERS, "counters_left"), (kd.SC_KEYS, "keys_left"), (kd.SC_DECK_POS, "deck_pos"),
    (kd.SC_DECISIONS, "num_decisions"), (kd.SC_OVER, "game_over"), (kd.SC_JUST_ENDED, "round_just_ended"),
    (kd.SC_FIRST_EVENT, "round_first_event"), (kd.SC_FIRST_DECISION, "round_first_decision"),
)  # fmt: skip
_BOOLS = ("game_over", "round_just_ended")


def _check_duel(batch: Batch, b: int) -> None:
    if batch.k is not kd:
        raise StateError(f"the batch plays game={batch.config.game!r}; this converter is the Duel's")
    if not 0 <= b < batch.batch:
        raise StateError(f"slot {b} is out of range; valid: 0..{batch.batch - 1}")


def _check_permutations(name: str, ranks: np.ndarray, n: int) -> None:
    for r, row in enumerate(np.asarray(ranks)):
        if sorted(int(x) for x in row) != list(range(n)):
            raise StateError(f"{name}[{r}] is not a permutation of 0..{n - 1} (the core orders piles by rank)")


def from_reference(state: DuelState, batch: Batch, b: int) -> None:
    """Write the reference ``state`` into slot ``b`` of ``batch`` (same config; the slot's generator is kept)."""
    _check_duel(batch, b)
    if state.config != batch.config:
        raise StateError(f"state config {state.config} differs from the batch's {batch.config}")
    _check_permutations("card_rank", state.card_rank, 52)
    _check_permutations("goal_rank", state.goal_rank, 18)
    if len(state.deck) > 52:
        raise StateError(f"the draw pile holds {len(state.deck)} cards; valid: 0..52")
    for seat in (0, 1):
        if len(state.score[seat]) > kd.SCORE_CAP:
            raise StateError(f"score pile {seat} holds {len(state.score[seat])} cards; valid: 0..{kd.SCORE_CAP}")
    cap = kd.event_capacity(state.config)
    if len(state.events) > cap:
        raise StateError(f"the state has {len(state.events)} events; valid: 0..{cap}")
    f = batch.field
    f("card_rank")[b] = state.card_rank
    f("goal_rank")[b] = state.goal_rank
    for name in _COPIED:
        f(name)[b] = getattr(state, name)
    deck = f("deck")[b]
    deck[:] = 0
    deck[: len(state.deck)] = state.deck
    piles = f("score_vals")[b]
    piles[:] = 0
    for seat in (0, 1):
        piles[seat, : len(state.score[seat])] = state.score[seat]
    f("mask_list")[b, 0] = 0  # a lock-step mask row of this slot is rewritten in full next time
    ev = f("events")[b]
    ev[:] = -1
    if state.events:
        ev[: len(state.events)] = np.array(state.events, dtype=np.int64)
    sc = f("sc")[b]
    games = int(sc[kd.SC_GAMES])
    sc[:] = 0
    sc[kd.SC_GAMES] = max(games, 1)
    for index, name in _SCALARS:
        sc[index] = int(getattr(state, name))
    sc[kd.SC_DECK_LEN] = len(state.deck)
    sc[kd.SC_NUM_EVENTS] = len(state.events)
    sc[kd.SC_SCORE_LEN] = len(state.score[0])
    sc[kd.SC_SCORE_LEN + 1] = len(state.score[1])
    sc[kd.SC_NUM_RR] = len(state.round_results)
    rr = f("rr")[b]
    rr[:] = 0
    for r, res in enumerate(state.round_results):
        rr[r] = (kd.REASONS.index(res["reason"]), *res["gained"], *res["nuggets"], res["decisions"])


def round_results(batch: Batch, b: int) -> list[dict[str, Any]]:
    """The reference's ``round_results`` list of slot ``b``."""
    _check_duel(batch, b)
    rr = batch.field("rr")[b]
    out: list[dict[str, Any]] = []
    for r in range(int(batch.field("sc")[b, kd.SC_NUM_RR])):
        row = [int(x) for x in rr[r]]
        out.append({
            "round": r,
            "reason": kd.REASONS[row[0]],
            "gained": row[1:3],
            "nuggets": row[3:5],
            "decisions": row[5],
        })  # fmt: skip
    return out


def to_reference(batch: Batch, b: int) -> DuelState:
    """Slot ``b`` as a reference ``DuelState`` (an independent copy with the reference's types)."""
    _check_duel(batch, b)
    f = batch.field
    sc = f("sc")[b]
    state = rules._blank_state(batch.config, f("card_rank")[b].astype(np.int16), f("goal_rank")[b].astype(np.int16))
    for name in _COPIED:
        setattr(state, name, f(name)[b].astype(getattr(state, name).dtype))
    state.last_rewards = f("last_rewards")[b].astype(np.float64)
    for index, name in _SCALARS:
        value = int(sc[index])
        setattr(state, name, bool(value) if name in _BOOLS else value)
    state.deck = f("deck")[b, : int(sc[kd.SC_DECK_LEN])].astype(np.int16)
    piles = f("score_vals")[b]
    state.score = [[int(x) for x in piles[s, : int(sc[kd.SC_SCORE_LEN + s])]] for s in (0, 1)]
    n = int(sc[kd.SC_NUM_EVENTS])
    state.events = [tuple(int(x) for x in row) for row in f("events")[b, :n]]  # type: ignore[misc]
    state.round_results = round_results(batch, b)
    state._cache = {}
    return state
