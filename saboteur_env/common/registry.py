"""Storage of the variant registry (the shared ground's half; ``saboteur_env.variants`` registers the games).

Kept apart from ``saboteur_env.variants`` so that ``GameConfig`` can look a variant up without importing any game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saboteur_env.common.errors import ConfigError

if TYPE_CHECKING:
    from saboteur_env.variant import Variant

_VARIANTS: dict[str, Variant] = {}


def names() -> tuple[str, ...]:
    """Registered variant names, in registration order."""
    return tuple(_VARIANTS)


def lookup(name: str) -> Variant:
    try:
        return _VARIANTS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"game={name!r} is not supported; valid: {', '.join(map(repr, _VARIANTS))}") from None


def add(variant: Variant) -> None:
    _VARIANTS[variant.name] = variant


def remove(name: str) -> None:
    del _VARIANTS[name]
