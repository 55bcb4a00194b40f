"""Errors shared by every game (all are ``ValueError`` subclasses, so bad input is never a deep traceback)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class ConfigError(ValueError):
    """A configuration value is out of range; the message names the field, the value and the valid range."""


class ActionError(ValueError):
    """An action id or action description is not part of the action space."""


class IllegalActionError(ValueError):
    """The action is in range but not legal in this state; the message names the move and the reason."""


class GameOverError(ValueError):
    """An action was applied to a finished game."""


class SeatError(ValueError):
    """A seat index is not a seat of this game."""


class StateError(ValueError):
    """A state breaks its game's invariants (e.g. a hand-built state with a negative card count)."""


# One coercion rule for every public entry point (config fields, action ids, seats): a Python int, a numpy integer
# scalar or a 0-d integer array is taken as ``int``; bool (an int subclass, almost always a mistake here), floats
# (never truncated), strings and anything else are refused with the value and the valid range named. Range checks
# run on the true value, so a uint64 beyond int64 is reported as itself, not as what a cast to int64 wraps it to.
def is_int(value: object) -> bool:
    """Whether ``value`` is an integer under the rule above (range aside)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def as_int(value: object, name: str, lo: int, hi: int, error: type[ValueError], sep: str = " ") -> int:
    """``value`` as an ``int`` in ``lo..hi`` under the rule above; ``error(...)`` naming ``name``, value and range."""
    if not is_int(value):
        raise error(f"{name}{sep}{value!r} must be an int in {lo}..{hi}")
    v = int(value)  # type: ignore[call-overload]  # is_int checked it
    if not lo <= v <= hi:
        raise error(f"{name}{sep}{v} is out of range; valid: {lo}..{hi}")
    return v


def as_int_array(values: object, name: str, count: int, lo: int, hi: int, error: type[ValueError]) -> NDArray[np.int64]:
    """``values`` (``count`` ids under the rule above: an integer array or a list of ints) as an int64 array."""
    given = np.asarray(values)
    if given.shape != (count,) or given.dtype.kind not in "iu":
        raise error(f"{name} must be {count} ints in {lo}..{hi} (got shape {given.shape}, dtype {given.dtype}; "
                    "bool, float and str are refused)")  # fmt: skip
    bad = np.flatnonzero((given < lo) | (given > hi))  # compared in the given dtype: no wrap-around
    if bad.size:
        g = int(bad[0])
        raise error(f"{name}[{g}] = {int(given[g])} is out of range; valid: {lo}..{hi}")
    return given.astype(np.int64)


def check_action_id(action: object, num_actions: int) -> int:
    """Validate an action id (an int, numpy integer or 0-d integer array in range) and return it as ``int``."""
    if type(action) is int and 0 <= action < num_actions:  # the common case, first (one check per decision)
        return action
    return as_int(action, "action", 0, num_actions - 1, ActionError)


def check_seat(seat: object, num_players: int) -> int:
    """Validate a seat index (an int or numpy integer in ``0..num_players-1``) and return it as ``int``."""
    if type(seat) is int and 0 <= seat < num_players:
        return seat
    return as_int(seat, "seat", 0, num_players - 1, SeatError)
