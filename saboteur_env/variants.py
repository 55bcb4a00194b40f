"""The variant registry: ``"base"``, ``"sab2"``, ``"duel"``, and any variant a user registers.

>>> from saboteur_env import variants
>>> variants.names()
('base', 'sab2', 'duel')
>>> variants.get("duel").title
'Saboteur: The Duel'

``register(variant)`` adds a user's own game (an object satisfying :class:`saboteur_env.common.config.Variant`); after
that ``GameConfig(game=variant.name)``, the engine API, the PettingZoo environment and every tool that takes a
config play it. ``variant_of(config_or_state)`` is the lookup the engine API uses.
"""

from __future__ import annotations

from typing import Any

from saboteur_env.base.compiled import CoreBaseVariant
from saboteur_env.common.config import Variant, add_variant, lookup_variant, registered_names, remove_variant
from saboteur_env.common.errors import ConfigError
from saboteur_env.duel.compiled import CoreDuelVariant
from saboteur_env.sab2.compiled import CoreSab2Variant

# The games' variant classes, to subclass for a game on the same rules with other data (e.g. another deck: override
# ``deck_counts``; tests/toy_variant.py). They play on the compiled core.
BaseGame = CoreBaseVariant
Sab2Game = CoreSab2Variant
DuelGame = CoreDuelVariant

BASE = CoreBaseVariant()  # the base game on the compiled core (the numpy engine stays the test oracle)
DUEL = CoreDuelVariant()  # the Duel on the compiled core (likewise)
SAB2 = CoreSab2Variant()  # Saboteur 2 on the compiled core (likewise)

__all__ = ["BaseGame", "DuelGame", "Sab2Game", "get", "names", "register", "rules_versions", "variant_of"]

_REQUIRED = [name for name in dir(Variant) if not name.startswith("_")]


def register(variant: Variant, *, replace: bool = False) -> Variant:
    """Add ``variant`` to the registry under ``variant.name`` (``replace=True`` to redefine a name)."""
    missing = sorted({name for name in _REQUIRED if not hasattr(variant, name)})
    if missing:
        raise ConfigError(f"{variant!r} is not a Variant: it lacks {', '.join(missing)}")
    if not isinstance(variant.name, str) or not variant.name:
        raise ConfigError(f"variant name {variant.name!r} must be a non-empty str")
    if variant.name in registered_names() and not replace:
        raise ConfigError(f"a variant named {variant.name!r} is already registered (pass replace=True)")
    add_variant(variant)
    return variant


def unregister(name: str) -> None:
    """Remove a user variant (the three games cannot be removed)."""
    if name in ("base", "sab2", "duel"):
        raise ConfigError(f"the built-in variant {name!r} cannot be unregistered")
    lookup_variant(name)
    remove_variant(name)


def get(name: str) -> Variant:
    """The variant registered under ``name`` (``ConfigError`` listing the valid names otherwise)."""
    return lookup_variant(name)


def names() -> tuple[str, ...]:
    return registered_names()


def variant_of(obj: Any) -> Variant:
    """The variant of a :class:`GameConfig` or of a game state (anything with a ``config``)."""
    config = getattr(obj, "config", obj)
    try:
        return config.variant
    except AttributeError:
        raise TypeError(f"expected a GameConfig or a game state, got {type(obj).__name__}") from None


def rules_versions() -> dict[str, str]:
    """Rules version per registered variant (tournament logs and golden files record them)."""
    return {name: lookup_variant(name).rules_version for name in registered_names()}


for _variant in (BASE, SAB2, DUEL):
    register(_variant)
