"""Struct-of-arrays state storage for the compiled core: fields of one dtype share one 1-D buffer (an *arena*).

A field is ``Field(name, arena, shape)``; a batch of ``B`` games stores it as a C-contiguous ``(B, *shape)`` block
of its arena, so game ``b`` is row ``[b]`` of every field and a kernel call passes five buffers instead of dozens
of arrays (numba charges per array argument). ``Layout.offsets`` is the start of every field in its arena, in the
order the game's kernels read them (the ``views`` function of each game module slices them the same way).

======  ==========  =================================================================
arena   dtype       used for
======  ==========  =================================================================
``i8``  ``int8``    small integers and booleans (0/1): cards, shapes, roles, flags
``i16`` ``int16``   counts and event rows
``i32`` ``int32``   scalars of a game (``SC_*`` indices), nuggets, round results
``u64`` ``uint64``  generator words (:mod:`saboteur_env.core.rng`)
``f32`` ``float32`` rewards of the last action
======  ==========  =================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

ARENAS = ("i8", "i16", "i32", "u64", "f32")
DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "u64": np.uint64, "f32": np.float32}


@dataclass(frozen=True)
class Field:
    name: str
    arena: str
    shape: tuple[int, ...]
    size: int = field(init=False, compare=False)  # elements per game

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", math.prod(self.shape))


class Layout:
    """Offsets of each field in its arena for a batch of ``batch`` games."""

    def __init__(self, fields: tuple[Field, ...], batch: int) -> None:
        self.fields = fields
        self.batch = batch
        self.by_name = {f.name: f for f in fields}
        ends = dict.fromkeys(ARENAS, 0)
        offsets = []
        for f in fields:
            offsets.append(ends[f.arena])
            ends[f.arena] += batch * f.size
        self.offsets = np.array(offsets, dtype=np.int64)
        self.sizes = ends
        # name -> (arena, start, stop, (B, *shape)): views are built for every new state, so no search per view
        self._spans = {f.name: (f.arena, o, o + batch * f.size, (batch, *f.shape))
                       for f, o in zip(fields, offsets, strict=True)}  # fmt: skip

    def allocate(self) -> dict[str, NDArray]:
        """Zeroed arenas (at least one element each, so numba always sees a real buffer)."""
        return {a: np.zeros(max(1, self.sizes[a]), dtype=DTYPES[a]) for a in ARENAS}

    def view(self, arenas: dict[str, NDArray], name: str) -> NDArray:
        """The ``(B, *shape)`` view of one field (writes go to the state)."""
        arena, start, stop, shape = self._spans[name]
        return arenas[arena][start:stop].reshape(shape)

    def bytes_per_game(self) -> int:
        return sum(f.size * np.dtype(DTYPES[f.arena]).itemsize for f in self.fields)
