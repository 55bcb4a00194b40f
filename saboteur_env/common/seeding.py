"""Sealed agent seeds: the one scheme for every place that seats agents (tournaments, experiments, demo helpers,
``SingleSeatEnv``'s opponents, the web table's bots).

A deal comes from a *public* seed (in logs, tables and command lines). An agent's random generator must not: seeded
from a function of the public seed, an agent could re-derive its own seed for every candidate public seed, find the
one that matches, and rebuild every hand, role and goal before its first move. So agents' seeds come from a *secret*:
128 bits from ``os.urandom`` (:func:`draw_secret`, or :func:`session_secret` drawn once per process), or one given to
reproduce a run. Each game gets its own :func:`game_secret` (a one-way mix of the secret and the game's key, e.g.
``("tournament", seed)``), and the seats' seeds are spawned from the game secret alone (:func:`sealed_seeds`). The
public seed may be part of the key: without the secret the seeds carry no information about it.

:func:`seat_seeds` is the whole recipe in one call. A game secret may be revealed once its game is over (the
tournament logs it, so that a logged game re-plays exactly): it says nothing about other games' secrets.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os

import numpy as np

SECRET_BITS = 128


class SecretError(ValueError):
    """A secret that is not a 128-bit number (or its hex form); the message names the value and the valid range."""


def draw_secret() -> int:
    """A fresh secret: 128 bits from the operating system's entropy source."""
    return int.from_bytes(os.urandom(SECRET_BITS // 8), "big")


@functools.cache
def session_secret() -> int:
    """The secret of runs that are given none: drawn once per process (:func:`draw_secret`), so runs repeated in one
    process reproduce each other while a new process draws a new one."""
    return draw_secret()


def check_secret(secret: object, what: str = "secret") -> int:
    """``secret`` as an int if it is one in ``0..2**128-1``; :class:`SecretError` naming it otherwise."""
    if isinstance(secret, bool) or not isinstance(secret, int | np.integer) or not 0 <= int(secret) < 1 << SECRET_BITS:
        raise SecretError(f"{what}={secret!r} must be an int in 0..2**{SECRET_BITS}-1 (e.g. from draw_secret())")
    return int(secret)


def format_secret(secret: int) -> str:
    """The hex form of a secret (32 digits), as :func:`parse_secret` reads it."""
    return f"{check_secret(secret):0{SECRET_BITS // 4}x}"


def parse_secret(text: str) -> int:
    """A secret from its hex form (:func:`format_secret`; an optional ``0x``), as given to ``--secret``."""
    digits = text.lower().removeprefix("0x")
    if not digits or len(digits) > SECRET_BITS // 4 or any(c not in "0123456789abcdef" for c in digits):
        raise SecretError(f"secret {text!r} must be 1 to {SECRET_BITS // 4} hex digits (a {SECRET_BITS}-bit number)")
    return int(digits, 16)


def _key_words(key: tuple) -> list[int]:
    """A game key (strings and numbers) as 32-bit words for a SeedSequence."""
    digest = hashlib.blake2b(json.dumps(list(key)).encode(), digest_size=16).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, len(digest), 4)]


def game_secret(secret: int, key: tuple) -> int:
    """The secret of one game: SeedSequence([secret, digest of key]) (one-way in the secret). ``key`` holds strings
    and numbers (JSON) that name the game within the run."""
    secret = check_secret(secret)
    try:
        words = _key_words(key)
    except TypeError as err:
        raise SecretError(f"game key {key!r} must hold only strings and numbers: {err}") from None
    state = np.random.SeedSequence([secret, *words]).generate_state(SECRET_BITS // 32, np.uint32)
    return int.from_bytes(state.astype("<u4").tobytes(), "little")


def sealed_seeds(game_secret: int, n: int) -> list[int]:
    """The ``n`` seats' agent seeds of a game: spawned from its game secret alone (32-bit ints)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n={n!r} seats must be an int >= 0")
    root = np.random.SeedSequence(check_secret(game_secret, "game secret"))
    return [int(ss.generate_state(1)[0]) for ss in root.spawn(n)]


def seat_seeds(n: int, key: tuple, secret: int | None = None) -> list[int]:
    """The ``n`` seats' agent seeds of the game named ``key``: ``sealed_seeds(game_secret(secret, key), n)``;
    ``secret=None`` uses this process's :func:`session_secret` (never the public seed)."""
    return sealed_seeds(game_secret(session_secret() if secret is None else secret, key), n)


__all__ = [
    "SECRET_BITS",
    "SecretError",
    "check_secret",
    "draw_secret",
    "format_secret",
    "game_secret",
    "parse_secret",
    "sealed_seeds",
    "seat_seeds",
    "session_secret",
]
