"""Shared helpers: hand-built positions and small random-play drivers."""

from __future__ import annotations

import numpy as np
import pytest
from toy_variant import LiteVariant

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game, variants
from saboteur_env.base.actions import Action, ActionType, action_layout
from saboteur_env.base.positions import kind_of, make_state

__all__ = ["BOARD_ROW2", "EMPTY_BOARD", "legal_moves", "make_state", "place", "random_states"]

variants.register(LiteVariant(), replace=True)  # the toy fourth game (tests/toy_variant.py): one registry line

EMPTY_BOARD = """
. . . . . . . . ?
. . . . . . . . .
S . . . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


BOARD_ROW2 = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


def place(state, card: str, row: int, col: int, rotation: int = 0) -> int:
    """Action id placing ``card`` (e.g. "T05") at frame cell (row, col)."""
    layout = action_layout(state.config)
    return layout.encode(Action(ActionType.PLACE, kind_of(card), row=row, col=col, rotation=rotation))


def legal_moves(state) -> set[str]:
    layout = action_layout(state.config)
    return {layout.to_string(int(a)) for a in np.flatnonzero(legal_action_mask(state))}


def random_states(num_players: int, seed: int, every: int = 7):
    """Yield states along one random game (every ``every`` decisions)."""
    rng = np.random.default_rng(seed)
    state = new_game(GameConfig(num_players=num_players), rng)
    k = 0
    while not state.game_over:
        if k % every == 0:
            yield state
        a = int(rng.choice(np.flatnonzero(legal_action_mask(state))))
        state = apply_action(state, a)
        k += 1



# Tests that skip because an optional extra is missing (pytest.importorskip) are listed in pytest's cache under
# EXTRAS_KEY, so that .ci/run can run exactly them again once the extras are installed (README's own test command
# runs with the `dev` extra only; docs/guide.md's "Tests" section says which extra adds which tests).
EXTRAS_KEY = "saboteur/skipped-for-extras"
_MISSING_EXTRA = ("could not import", "extra (pip install")  # importorskip's own reason, and this suite's reasons
_skipped_for_extras: list[str] = []


def _record(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and any(text in str(report.longrepr) for text in _MISSING_EXTRA):
        _skipped_for_extras.append(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record(report)  # a module-level importorskip skips the whole file


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record(report)  # an importorskip inside a test or fixture


def pytest_sessionfinish(session: pytest.Session) -> None:
    cache = getattr(session.config, "cache", None)  # None with -p no:cacheprovider
    if cache is not None:
        cache.set(EXTRAS_KEY, sorted(set(_skipped_for_extras)))


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    """A fresh local Ray cluster of two CPUs (address="local": never one that happens to run on this machine)."""
    ray = pytest.importorskip("ray", reason="--backend ray needs the ray extra (pip install -e '.[ray]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
