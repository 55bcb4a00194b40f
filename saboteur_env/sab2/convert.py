"""Conversion between one slot of a Saboteur 2 :class:`~saboteur_env.core.batch.Batch` and a numpy-engine
``Sab2State`` (the reference): hand-built positions into the core, core games out for rendering, fingerprints and
the equivalence tests. Both directions are complete: ``to_reference`` rebuilds the reference's Python objects
(the event list, the thieves list, ``round_summary``, ``round_results``, ``round_start_gold = None``, the
``Phase`` enum) with the reference's dtypes, so fingerprints agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from saboteur_env.common.cards import Tool
from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch
from saboteur_env.sab2 import kernels as ks
from saboteur_env.sab2.state import Phase, Sab2State

# Reference field -> its dtype (the core's fields of the same name are narrower).
_ARRAYS = {
    "round_decks": np.int16, "round_roles": np.int8, "round_goals": np.int16, "hands": np.int16,
    "roles": np.int8, "broken": np.bool_, "peeked": np.bool_, "trapped": np.bool_, "theft": np.bool_,
    "hats_swapped": np.bool_, "inspected": np.int8, "inspections": np.bool_, "cell_shape": np.int16,
    "reach": np.uint8, "goal_kind": np.int16, "goal_revealed": np.bool_, "discarded": np.int16,
    "discards": np.int16, "theft_time": np.int32, "gold": np.int32, "stolen_held": np.int32,
    "last_rewards": np.float64,
}  # fmt: skip
_SCALARS = (
    (ks.SC_ROUND, "round"), (ks.SC_CURRENT, "current"), (ks.SC_LAST, "last_player"), (ks.SC_FINDER, "finder"),
    (ks.SC_RESERVE_POS, "reserve_pos"), (ks.SC_PHASE, "phase"), (ks.SC_PENDING, "pending"),
    (ks.SC_FREE_TARGET, "free_target"), (ks.SC_DECK_POS, "deck_pos"), (ks.SC_DECISIONS, "num_decisions"),
    (ks.SC_OVER, "game_over"), (ks.SC_JUST_ENDED, "round_just_ended"),
    (ks.SC_ROUND_FIRST_EVENT, "round_first_event"),
)  # fmt: skip
_BOOLS = ("game_over", "round_just_ended")


def _check(batch: Batch, b: int) -> None:
    if batch.k is not ks:
        raise StateError(f"the batch plays game={batch.config.game!r}; this converter is Saboteur 2's")
    if not 0 <= b < batch.batch:
        raise StateError(f"slot {b} is out of range; valid: 0..{batch.batch - 1}")


def _summary(row: list[int], p: int, r: int) -> dict[str, Any]:
    """The reference's ``round_summary`` dict from one ``rr`` row (key order as ``rules._end_round``)."""
    reached = bool(row[0])
    return {
        "round": r, "gold_reached": reached, "finder": row[1] if reached else None,
        "open_blue": bool(row[2]), "open_green": bool(row[3]), "roles": row[4 : 4 + p],
        "trapped": [bool(x) for x in row[4 + p : 4 + 2 * p]], "winners": row[4 + 2 * p : 4 + 3 * p],
        "payouts": row[4 + 3 * p : 4 + 4 * p],
    }  # fmt: skip


def _write_rr(rr: np.ndarray, p: int, res: dict[str, Any]) -> None:
    rr[:4] = (res["gold_reached"], -1 if res["finder"] is None else res["finder"], res["open_blue"], res["open_green"])
    rr[4 : 4 + p] = res["roles"]
    rr[4 + p : 4 + 2 * p] = res["trapped"]
    rr[4 + 2 * p : 4 + 3 * p] = res["winners"]
    rr[4 + 3 * p : 4 + 4 * p] = res["payouts"]
    rr[4 + 4 * p : 4 + 5 * p] = res.get("gold", [0] * p)
    rr[4 + 5 * p :] = res.get("gained", [0] * p)


def from_reference(state: Sab2State, batch: Batch, b: int) -> None:
    """Write the reference ``state`` into slot ``b`` of ``batch`` (same config; the slot's generator is kept)."""
    _check(batch, b)
    if state.config != batch.config:
        raise StateError(f"state config {state.config} differs from the batch's {batch.config}")
    p = state.config.num_players
    cap = batch.field("events").shape[1]
    if len(state.events) > cap:
        raise StateError(f"state has {len(state.events)} events; the core holds at most {cap}")
    for name in _ARRAYS:
        batch.field(name)[b] = getattr(state, name)
    ev = batch.field("events")[b]
    ev[:] = -1
    if state.events:
        ev[: len(state.events)] = np.array(state.events, dtype=np.int16)
    hw = batch.config.num_cells  # a new log: a lock-step row of this slot is rewritten in full next time
    batch.field("obs_cells")[b, hw : hw + 2] = 0
    batch.field("mask_list")[b, 0] = 0
    sc = batch.field("sc")[b]
    games = int(sc[ks.SC_GAMES])
    sc[:] = 0
    sc[ks.SC_GAMES] = max(games, 1)
    for index, name in _SCALARS:
        sc[index] = int(getattr(state, name))
    sc[ks.SC_NUM_EVENTS] = len(state.events)
    thieves = batch.field("thieves")[b]
    thieves[:] = -1
    thieves[: len(state.thieves)] = state.thieves
    sc[ks.SC_NUM_THIEVES], sc[ks.SC_THIEF_POS] = len(state.thieves), 0
    rsg = batch.field("round_start_gold")[b]
    rsg[:] = 0 if state.round_start_gold is None else state.round_start_gold
    sc[ks.SC_HAS_RSG] = state.round_start_gold is not None
    rr = batch.field("rr")[b]
    rr[:] = 0
    for r, res in enumerate(state.round_results):
        _write_rr(rr[r], p, res)
    sc[ks.SC_NUM_RR] = len(state.round_results)
    last = batch.field("last_roles")[b]
    last[:] = -1
    if state.round_summary:
        r = int(state.round_summary["round"])
        if r >= len(state.round_results):  # the theft phase: the summary is not a round result yet
            _write_rr(rr[r], p, state.round_summary)
        sc[ks.SC_NUM_SUMMARY] = r + 1
        last[:] = state.round_summary["roles"]


def round_results(batch: Batch, b: int) -> list[dict[str, Any]]:
    """The reference's ``round_results`` list of slot ``b``."""
    _check(batch, b)
    p = batch.config.num_players
    rr = batch.field("rr")[b]
    out = []
    for r in range(int(batch.field("sc")[b, ks.SC_NUM_RR])):
        row = [int(x) for x in rr[r]]
        out.append(dict(_summary(row, p, r), gold=row[4 + 4 * p : 4 + 5 * p], gained=row[4 + 5 * p :]))
    return out


def _event(row: list[int]) -> tuple[Any, ...]:
    """One reference event tuple: a double repair logs its tool as the ``Tool`` enum (``DOUBLE_REPAIR_TOOLS``)."""
    if row[0] == ks.EV_REPAIR and row[2] >= ks.K_BROKEN + 6:
        return (*row[:5], Tool(row[5]))
    return tuple(row)


def to_reference(batch: Batch, b: int) -> Sab2State:
    """Slot ``b`` as a reference ``Sab2State`` (an independent copy with the reference's objects and dtypes)."""
    _check(batch, b)
    cfg = batch.config
    p = cfg.num_players
    f = batch.field
    sc = f("sc")[b]
    arrays = {name: f(name)[b].astype(dtype) for name, dtype in _ARRAYS.items()}
    scalars: dict[str, Any] = {}
    for index, name in _SCALARS:
        value = int(sc[index])
        scalars[name] = bool(value) if name in _BOOLS else value
    scalars["phase"] = Phase(scalars["phase"])
    n = int(sc[ks.SC_NUM_EVENTS])
    events = [_event(row) for row in f("events")[b, :n].tolist()]
    thieves = [int(x) for x in f("thieves")[b, int(sc[ks.SC_THIEF_POS]) : int(sc[ks.SC_NUM_THIEVES])]]
    ns = int(sc[ks.SC_NUM_SUMMARY])
    summary = _summary([int(x) for x in f("rr")[b, ns - 1]], p, ns - 1) if ns > 0 else {}
    rsg = f("round_start_gold")[b].astype(np.int32) if sc[ks.SC_HAS_RSG] else None
    return Sab2State(
        config=cfg, **arrays, **scalars, thieves=thieves, round_summary=summary, round_start_gold=rsg,
        round_results=round_results(batch, b), events=events,
    )  # fmt: skip
