"""Errors shared by every game's rules (all are ``ValueError`` subclasses)."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """The action is in range but not legal in this state; the message names the move and the reason."""


class GameOverError(ValueError):
    """An action was applied to a finished game."""
