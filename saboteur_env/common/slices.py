"""Named slices of a flat vector from an ordered mapping of shapes (the observation layouts of every game)."""

from __future__ import annotations

import numpy as np


def named_slices(shapes: dict[str, tuple[int, ...]]) -> tuple[dict[str, slice], int]:
    """Consecutive slices for ``shapes`` in order, and the total size."""
    out: dict[str, slice] = {}
    pos = 0
    for name, shape in shapes.items():
        size = int(np.prod(shape))
        out[name] = slice(pos, pos + size)
        pos += size
    return out, pos
