"""Copying, pickling and fingerprinting shared by the expansion games' state classes (Duel, Saboteur 2)."""

from __future__ import annotations

import copy
import hashlib
from typing import TYPE_CHECKING, Any, Self

import numpy as np

if TYPE_CHECKING:
    from saboteur_env.common.config import GameConfig


class ArrayState:
    """Mixin for dataclass states made of numpy arrays, scalars and small lists/dicts, with a ``_cache`` dict of
    derived values (dropped on copy and pickle)."""

    config: GameConfig
    _cache: dict[str, Any]

    def board_changed(self) -> None:
        self._cache = {}

    def clone(self) -> Self:
        """An independent copy (arrays copied, lists and dicts deep-copied, the cache dropped)."""
        out = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(out, name, value.copy())
            elif isinstance(value, (list, dict)) and name != "_cache":
                setattr(out, name, copy.deepcopy(value))
        out._cache = {}
        return out

    def __getstate__(self) -> dict[str, Any]:
        d = dict(vars(self))
        d["_cache"] = {}
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)

    def fingerprint(self) -> str:
        """Hash of every field (arrays by bytes) for determinism tests."""
        h = hashlib.sha256()
        for name in sorted(vars(self)):
            if name in ("_cache", "config"):
                continue
            value = getattr(self, name)
            h.update(name.encode())
            h.update(value.tobytes() if isinstance(value, np.ndarray) else repr(value).encode())
        h.update(repr(self.config).encode())
        return h.hexdigest()
