"""The re-ask policy for text agents: how often to ask again after a bad reply, and what to play then.

:func:`choose` asks for a reply, parses it, and on a :class:`~saboteur_env.text.moves.MoveError` (or a failed
request) asks again with the error as feedback, up to ``max_tries`` replies per decision. After that it plays the
policy's ``fallback``: ``"first"`` (the legal move with the smallest action id: deterministic), ``"random"`` (uniform
over the legal moves, from the caller's generator) or ``"raise"`` (:class:`RetriesExhaustedError`). Every failure is
counted in :class:`FailureStats` by kind, apart from the game result, so that a weak score from unparsable replies
is not mistaken for weak play.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from saboteur_env.common.config import GameConfig
from saboteur_env.text.moves import MoveError, check_mask, legal_moves, parse_move

__all__ = ["FAILURE_KINDS", "FALLBACKS", "FailureStats", "RequestError", "RetriesExhaustedError", "RetryPolicy",
           "choose"]  # fmt: skip

FALLBACKS = ("first", "random", "raise")
FAILURE_KINDS = ("unknown", "ambiguous", "illegal", "malformed", "timeout", "transport")


class RequestError(Exception):
    """Raised by an ``ask`` function when no reply came (``kind``: ``"timeout"`` or ``"transport"``)."""

    def __init__(self, message: str, kind: str = "transport") -> None:
        super().__init__(message)
        if kind not in ("timeout", "transport"):
            raise ValueError(f"kind={kind!r} must be 'timeout' or 'transport'")
        self.kind = kind


class RetriesExhaustedError(ValueError):
    """``fallback="raise"``: ``max_tries`` replies in a row named no legal move."""


@dataclass(frozen=True)
class RetryPolicy:
    """``max_tries`` replies per decision (1-20), then ``fallback`` (``"first"``, ``"random"`` or ``"raise"``)."""

    max_tries: int = 3
    fallback: str = "first"

    def __post_init__(self) -> None:
        if isinstance(self.max_tries, bool) or not isinstance(self.max_tries, int) or not 1 <= self.max_tries <= 20:
            raise ValueError(f"max_tries={self.max_tries!r} must be an int in 1..20")
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback={self.fallback!r} must be one of {', '.join(FALLBACKS)}")

    def feedback(self, error: Exception) -> str:
        """The message sent back with the next request after a bad reply."""
        return f"Your reply was not accepted: {error} Reply again with exactly one legal move name."


@dataclass
class FailureStats:
    """Counts over decisions: replies that failed (by kind), fallbacks played, decisions won on the first reply."""

    decisions: int = 0
    first_try: int = 0
    replies: int = 0
    fallbacks: int = 0
    failures: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAILURE_KINDS, 0))

    @property
    def total_failures(self) -> int:
        return sum(self.failures.values())

    def as_dict(self) -> dict:
        return {**asdict(self), "total_failures": self.total_failures}


def choose(config: GameConfig, mask: object, ask: Callable[[str | None], object], policy: RetryPolicy,
           stats: FailureStats, rng: np.random.Generator | None = None,
           log: Callable[[dict], None] | None = None) -> int:  # fmt: skip
    """One decision: ``ask(feedback)`` returns a reply (``feedback`` is None on the first try, else the last error).

    ``ask`` may raise :class:`RequestError` (counted as ``timeout``/``transport``); ``log`` receives one record per
    try (``{"try", "reply", "ok", "error", "kind"}``) and one for a fallback.
    """
    m = check_mask(config, mask)
    legal = np.flatnonzero(m)
    if legal.size == 0:
        raise ValueError("choose() needs a mask with at least one legal action")
    stats.decisions += 1
    feedback: str | None = None
    for t in range(policy.max_tries):
        try:
            reply = ask(feedback)
        except RequestError as e:
            stats.failures[e.kind] += 1
            feedback = None  # nothing was said: ask the same question again
            if log:
                log({"try": t, "reply": None, "ok": False, "error": str(e), "kind": e.kind})
            continue
        stats.replies += 1
        try:
            action = parse_move(config, reply, m)
        except MoveError as e:
            stats.failures[e.kind] += 1
            feedback = policy.feedback(e)
            if log:
                log({"try": t, "reply": reply, "ok": False, "error": str(e), "kind": e.kind})
            continue
        if t == 0:
            stats.first_try += 1
        if log:
            log({"try": t, "reply": reply, "ok": True, "action": action})
        return action
    if policy.fallback == "raise":
        raise RetriesExhaustedError(f"{policy.max_tries} replies in a row named no legal move (legal: "
                               f"{', '.join(legal_moves(config, m)[:5])}, ...)")  # fmt: skip
    stats.fallbacks += 1
    if policy.fallback == "random":
        action = int(legal[(rng or np.random.default_rng()).integers(legal.size)])
    else:
        action = int(legal[0])
    if log:
        log({"fallback": policy.fallback, "action": action})
    return action
