"""Errors shared by every game (all are ``ValueError`` subclasses, so bad input is never a deep traceback)."""

from __future__ import annotations

import numpy as np


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


def check_action_id(action: object, num_actions: int) -> int:
    """Validate an action id (an int, numpy integer or 0-d integer array in range) and return it as ``int``."""
    if type(action) is int and 0 <= action < num_actions:  # the common case, first (one check per decision)
        return action
    if isinstance(action, np.ndarray) and action.ndim == 0 and np.issubdtype(action.dtype, np.integer):
        action = action.item()
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ActionError(f"action {action!r} must be an int in 0..{num_actions - 1}")
    a = int(action)
    if not 0 <= a < num_actions:
        raise ActionError(f"action {a} is out of range; valid: 0..{num_actions - 1}")
    return a


def check_seat(seat: object, num_players: int) -> int:
    """Validate a seat index (an int or numpy integer in ``0..num_players-1``) and return it as ``int``."""
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)):
        raise SeatError(f"seat {seat!r} must be an int in 0..{num_players - 1}")
    s = int(seat)
    if not 0 <= s < num_players:
        raise SeatError(f"seat {s} is out of range; valid: 0..{num_players - 1}")
    return s
