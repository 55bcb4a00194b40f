"""A small, invertible mapping between flat observation segments and JSON values.

Each game describes its observation layout as a tree of these specs (``saboteur_env.text.games``); ``encode``
turns a float32 segment into JSON (names instead of one-hot positions, counts instead of floats) and ``decode``
writes a JSON value back into a zeroed segment. The pair is exact: ``decode(encode(x)) == x`` bit for bit for
every observation the engine produces, which is what makes the JSON description lossless (tested over random
games). Anything the engine would never produce (a one-hot with two entries, a fraction where a count belongs)
raises :class:`DescriptionError` instead of being silently rounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_NAMES, EDGE_PAIRS

Json = Any
Vec = NDArray[np.float32]


class DescriptionError(ValueError):
    """A description (JSON) or an observation segment does not fit the game's format; names the key and value."""


def _int(value: Json, where: str, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise DescriptionError(f"{where}: {value!r} must be an integer")
    if value < low or (high is not None and value > high):
        raise DescriptionError(f"{where}: {value!r} out of range; valid: {low}..{high if high is not None else ''}")
    return int(value)


def _count(v: float, where: str) -> int:
    n = round(float(v))
    if n != v:
        raise DescriptionError(f"{where}: {v!r} is not a whole count")
    return n


class Spec:
    """One segment of ``size`` floats."""

    size: int = 1

    def encode(self, v: Vec, where: str) -> Json:
        raise NotImplementedError

    def decode(self, value: Json, out: Vec, where: str) -> None:
        raise NotImplementedError


class Int(Spec):
    """A whole non-negative count stored as a float."""

    def encode(self, v: Vec, where: str) -> Json:
        return _count(v[0], where)

    def decode(self, value: Json, out: Vec, where: str) -> None:
        out[0] = _int(value, where)


class Bool(Spec):
    def encode(self, v: Vec, where: str) -> Json:
        if v[0] not in (0.0, 1.0):
            raise DescriptionError(f"{where}: {v[0]!r} is not 0 or 1")
        return bool(v[0])

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, bool):
            raise DescriptionError(f"{where}: {value!r} must be true or false")
        out[0] = float(value)


class Choice(Spec):
    """One float 0/1 read as one of two names (the Duel's colour)."""

    def __init__(self, names: tuple[str, str]) -> None:
        self.names = names

    def encode(self, v: Vec, where: str) -> Json:
        if v[0] not in (0.0, 1.0):
            raise DescriptionError(f"{where}: {v[0]!r} is not 0 or 1")
        return self.names[int(v[0])]

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if value not in self.names:
            raise DescriptionError(f"{where}: {value!r} must be one of {list(self.names)}")
        out[0] = float(self.names.index(value))


class Scaled(Spec):
    """A whole number ``n`` stored as ``n / scale`` (event arguments, the Duel's nuggets)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def encode(self, v: Vec, where: str) -> Json:
        n = round(float(v[0]) * self.scale)
        if np.float32(n / self.scale) != v[0]:
            raise DescriptionError(f"{where}: {v[0]!r} is not a multiple of 1/{self.scale}")
        return n

    def decode(self, value: Json, out: Vec, where: str) -> None:
        out[0] = np.float32(_int(value, where) / self.scale)


class OneHot(Spec):
    """A one-hot block read as one name, or None when all zero."""

    def __init__(self, names: Sequence[Json]) -> None:
        self.names = list(names)
        self.size = len(self.names)

    def encode(self, v: Vec, where: str) -> Json:
        hot = np.flatnonzero(v)
        if hot.size == 0:
            return None
        if hot.size > 1 or v[hot[0]] != 1.0:
            raise DescriptionError(f"{where}: {v.tolist()} is not one-hot")
        return self.names[int(hot[0])]

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if value is None:
            return
        if value not in self.names or isinstance(value, bool):
            raise DescriptionError(f"{where}: {value!r} must be null or one of {self.names}")
        out[self.names.index(value)] = 1.0


class Flags(Spec):
    """A block of 0/1 flags read as the list of names that are set."""

    def __init__(self, names: Sequence[Json]) -> None:
        self.names = list(names)
        self.size = len(self.names)

    def encode(self, v: Vec, where: str) -> Json:
        if not np.isin(v, (0.0, 1.0)).all():
            raise DescriptionError(f"{where}: {v.tolist()} are not all 0 or 1")
        return [self.names[i] for i in np.flatnonzero(v)]

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, list):
            raise DescriptionError(f"{where}: {value!r} must be a list of {self.names}")
        for x in value:
            if x not in self.names or isinstance(x, bool):
                raise DescriptionError(f"{where}: {x!r} must be one of {self.names}")
            out[self.names.index(x)] = 1.0


class Counts(Spec):
    """Counts per name, read as ``{name: count}`` for the non-zero ones."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.size = len(self.names)

    def encode(self, v: Vec, where: str) -> Json:
        return {self.names[i]: _count(v[i], f"{where}.{self.names[i]}") for i in np.flatnonzero(v)}

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, dict):
            raise DescriptionError(f"{where}: {value!r} must be an object {{card: count}}")
        for name, n in value.items():
            if name not in self.names:
                raise DescriptionError(f"{where}: unknown card {name!r}; valid: {', '.join(self.names)}")
            out[self.names.index(name)] = _int(n, f"{where}.{name}")


class Struct(Spec):
    """Consecutive fields as a JSON object (keys in order)."""

    def __init__(self, fields: Sequence[tuple[str, Spec]]) -> None:
        self.fields = list(fields)
        self.size = sum(s.size for _, s in self.fields)

    def encode(self, v: Vec, where: str) -> Json:
        out, pos = {}, 0
        for key, spec in self.fields:
            out[key] = spec.encode(v[pos : pos + spec.size], f"{where}.{key}")
            pos += spec.size
        return out

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, dict):
            raise DescriptionError(f"{where}: {value!r} must be an object with keys {[k for k, _ in self.fields]}")
        pos = 0
        for key, spec in self.fields:
            if key not in value:
                raise DescriptionError(f"{where}: key {key!r} is missing")
            spec.decode(value[key], out[pos : pos + spec.size], f"{where}.{key}")
            pos += spec.size


class Rows(Spec):
    """``n`` equal rows as a list; with ``label`` each row object also carries its index (ignored when read)."""

    def __init__(self, n: int, row: Spec, label: str | None = None) -> None:
        self.n, self.row, self.label = n, row, label
        self.size = n * row.size

    def encode(self, v: Vec, where: str) -> Json:
        out = []
        for i in range(self.n):
            item = self.row.encode(v[i * self.row.size : (i + 1) * self.row.size], f"{where}[{i}]")
            out.append({self.label: i, **item} if self.label else item)
        return out

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, list) or len(value) != self.n:
            raise DescriptionError(f"{where}: {value!r} must be a list of {self.n} entries")
        for i, item in enumerate(value):
            self.row.decode(item, out[i * self.row.size : (i + 1) * self.row.size], f"{where}[{i}]")


class Pairs(Spec):
    """An ``n x n`` 0/1 matrix read as the list of ``[i, j]`` pairs that are set."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.size = n * n

    def encode(self, v: Vec, where: str) -> Json:
        if not np.isin(v, (0.0, 1.0)).all():
            raise DescriptionError(f"{where}: entries are not all 0 or 1")
        return [list(divmod(int(i), self.n)) for i in np.flatnonzero(v)]

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, list):
            raise DescriptionError(f"{where}: {value!r} must be a list of [i, j] pairs")
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2:
                raise DescriptionError(f"{where}: {pair!r} must be a pair [i, j]")
            i, j = (_int(x, where, 0, self.n - 1) for x in pair)
            out[i * self.n + j] = 1.0


_CELL = re.compile(r"^\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$")  # frame coordinates "(r,c)", the move notation's
_OLD_CELL = re.compile(r"^r(\d+)c(\d+)$")  # the older "r<row>c<col>" in storage coordinates (frame + margin)


def cell_name(r: int, c: int, margin: int = 0) -> str:
    """The name of storage cell ``(r, c)``: its frame coordinates ``(r - margin,c - margin)``, as moves name it."""
    return f"({r - margin},{c - margin})"


def parse_cell(value: Json, rows: int, cols: int, where: str, margin: int = 0) -> tuple[int, int]:
    """The storage ``(row, col)`` of a cell name: ``(r,c)`` in frame coordinates, or the older ``r<row>c<col>``."""
    lo, hi_r, hi_c = -margin, rows - 1 - margin, cols - 1 - margin
    valid = f"({lo},{lo})..({hi_r},{hi_c})"
    m = _CELL.match(value.strip()) if isinstance(value, str) else None
    if m is not None:
        r, c = int(m.group(1)) + margin, int(m.group(2)) + margin
    else:
        m = _OLD_CELL.match(value) if isinstance(value, str) else None
        if m is None:
            raise DescriptionError(f"{where}: {value!r} must be a cell '(row,col)', e.g. '(2,3)'; valid: {valid}")
        r, c = int(m.group(1)), int(m.group(2))
    if not (0 <= r < rows and 0 <= c < cols):
        raise DescriptionError(f"{where}: {value!r} is off the board; valid: {valid}")
    return r, c


class Cell(Spec):
    """An event's (row, col) pair, stored scaled to 0..1; None when both are zero (no cell, or the top-left one)."""

    size = 2

    def __init__(self, rows: int, cols: int, margin: int = 0) -> None:
        self.rows, self.cols, self.margin = rows, cols, margin
        self.dr, self.dc = max(1, rows - 1), max(1, cols - 1)

    def encode(self, v: Vec, where: str) -> Json:
        if v[0] == 0 and v[1] == 0:
            return None
        r, c = round(float(v[0]) * self.dr), round(float(v[1]) * self.dc)
        if np.float32(r / self.dr) != v[0] or np.float32(c / self.dc) != v[1]:
            raise DescriptionError(f"{where}: {v.tolist()} is not a cell")
        return cell_name(r, c, self.margin)

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if value is None:
            return
        r, c = parse_cell(value, self.rows, self.cols, where, self.margin)
        out[0], out[1] = np.float32(r / self.dr), np.float32(c / self.dc)


class History(Spec):
    """The last ``length`` public events: rows whose first float (valid) is 1, aligned to the end (newest last).

    ``row`` describes a row after its valid flag; ``cell_types`` are event types that always have a cell, so an
    event there at the top-left cell (stored as zeros) still shows its cell.
    """

    def __init__(self, length: int, row: Struct, cell_types: frozenset[str], margin: int = 0) -> None:
        self.length, self.row, self.cell_types = length, row, cell_types
        self.zero_cell = cell_name(0, 0, margin)
        self.row_size = 1 + row.size
        self.size = length * self.row_size

    def encode(self, v: Vec, where: str) -> Json:
        rows = v.reshape(self.length, self.row_size)
        k = int((rows[:, 0] != 0).sum())
        if rows[: self.length - k].any() or (rows[self.length - k :, 0] != 1).any():
            raise DescriptionError(f"{where}: history rows are not valid rows aligned to the end")
        out = []
        for i in range(self.length - k, self.length):
            event = self.row.encode(rows[i, 1:], f"{where}[{i}]")
            if event.get("at") is None and event.get("type") in self.cell_types:
                event["at"] = self.zero_cell
            out.append(event)
        return out

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, list) or len(value) > self.length:
            raise DescriptionError(f"{where}: {value!r} must be a list of at most {self.length} events")
        rows = out.reshape(self.length, self.row_size)
        first = self.length - len(value)
        for i, event in enumerate(value):
            row = rows[first + i]
            row[0] = 1.0
            if isinstance(event, dict) and event.get("at") in (self.zero_cell, "r0c0"):
                event = {**event, "at": None}  # the top-left cell is stored as zeros
            self.row.decode(event, row[1:], f"{where}[{i}]")


# ---- the board ------------------------------------------------------------------------------------------------------
def arms(bits: int) -> str:
    """Arm letters of a 4-bit mask (N=1, E=2, S=4, W=8), e.g. ``"NES"``."""
    return "".join(ch for e, ch in enumerate(EDGE_NAMES) if (bits >> e) & 1)


def pairs(bits: int) -> list[str]:
    """Joined arm pairs of a 6-bit mask over ``EDGE_PAIRS``, e.g. ``["NS", "EW"]``."""
    return [EDGE_NAMES[a] + EDGE_NAMES[b] for i, (a, b) in enumerate(EDGE_PAIRS) if (bits >> i) & 1]


PAIR_NAMES = tuple(EDGE_NAMES[a] + EDGE_NAMES[b] for a, b in EDGE_PAIRS)
_ARMS = [arms(b) for b in range(16)]
_PAIRS = [tuple(pairs(b)) for b in range(64)]


class Board(Spec):
    """``(planes, rows, cols)`` board planes as a list of the cells that differ from an empty one.

    ``groups`` walks the planes in order: ``("arms", key)`` takes 4 planes (N, E, S, W) shown as a letter string,
    ``("pairs", key)`` 6 planes shown as joined arm pairs, ``("scaled", key, s)`` one plane holding ``n / s``,
    ``("flag", name)`` one 0/1 plane listed under ``"is"``. ``blank`` is the set of flags of an empty cell (cells
    equal to it are left out). ``label`` names the card a cell shows (an annotation; ignored when read). Cells are
    named in frame coordinates (``margin`` rows and columns are stored before the frame's first).
    """

    def __init__(self, rows: int, cols: int, groups: Sequence[tuple[Any, ...]], blank: frozenset[str],
                 label: Callable[[dict[str, Json], Any], str | None] | None = None,
                 margin: int = 0) -> None:  # fmt: skip
        self.rows, self.cols, self.groups, self.blank, self.label = rows, cols, list(groups), blank, label
        self.margin = margin
        widths = {"arms": 4, "pairs": 6, "scaled": 1, "flag": 1}
        self.num_planes = sum(widths[g[0]] for g in self.groups)
        self.size = self.num_planes * rows * cols

    def encode(self, v: Vec, where: str, context: Any = None) -> Json:
        """``context`` goes to ``label`` (the Duel's colour: which doors and ladders are "yours")."""
        hw = self.rows * self.cols
        planes = v.reshape(self.num_planes, hw)
        # Per group, one value per cell (bits for arm / pair groups), computed for the whole board at once.
        columns: list[tuple[tuple[Any, ...], list[int]]] = []
        pos = 0
        for g in self.groups:
            width = {"arms": 4, "pairs": 6}.get(g[0], 1)
            part = planes[pos : pos + width]
            if g[0] == "scaled":
                n = np.rint(part[0] * g[2])
                if ((n / g[2]).astype(np.float32) != part[0]).any():
                    raise DescriptionError(f"{where}.{g[1]}: values are not multiples of 1/{g[2]}")
                columns.append((g, n.astype(np.int64).tolist()))
            else:
                if not np.isin(part, (0.0, 1.0)).all():
                    raise DescriptionError(f"{where}.{g[1]}: values are not all 0 or 1")
                weights = 1 << np.arange(width)
                columns.append((g, (weights @ part.astype(np.int64)).tolist()))
            pos += width
        blank = [int(g[0] == "flag" and g[1] in self.blank) for g, _ in columns]
        cells = []
        for cell in range(hw):
            values = [col[cell] for _, col in columns]
            if values == blank:
                continue
            feats: dict[str, Json] = {}
            flags = []
            for (g, _), x in zip(columns, values, strict=True):
                if not x:
                    continue
                if g[0] == "arms":
                    feats[g[1]] = _ARMS[x]
                elif g[0] == "pairs":
                    feats[g[1]] = list(_PAIRS[x])
                elif g[0] == "scaled":
                    feats[g[1]] = x
                else:
                    flags.append(g[1])
            if flags:
                feats["is"] = flags
            item: dict[str, Json] = {"at": cell_name(*divmod(cell, self.cols), self.margin)}
            if self.label is not None:
                name = self.label(feats, context)
                if name:
                    item["card"] = name
            item.update(feats)
            cells.append(item)
        out: dict[str, Json] = {"rows": self.rows, "cols": self.cols}
        if self.margin:  # the top-left cell is (-margin,-margin): a reader needs it to draw the grid
            out["margin"] = self.margin
        out["cells"] = cells
        return out

    def decode(self, value: Json, out: Vec, where: str) -> None:
        if not isinstance(value, dict) or not isinstance(value.get("cells"), list):
            raise DescriptionError(f"{where}: must be an object with a 'cells' list")
        planes = out.reshape(self.num_planes, self.rows * self.cols)
        listed: dict[int, dict[str, Json]] = {}
        for item in value["cells"]:
            if not isinstance(item, dict):
                raise DescriptionError(f"{where}.cells: {item!r} must be an object")
            r, c = parse_cell(item.get("at"), self.rows, self.cols, f"{where}.cells", self.margin)
            listed[r * self.cols + c] = item
        blank = {"is": sorted(self.blank)}
        for cell in range(self.rows * self.cols):
            name = cell_name(*divmod(cell, self.cols), self.margin)
            self._write(listed.get(cell, blank), planes[:, cell], f"{where}.{name}")

    def _write(self, item: dict[str, Json], column: Vec, where: str) -> None:
        flags = item.get("is", [])
        if not isinstance(flags, list):
            raise DescriptionError(f"{where}.is: {flags!r} must be a list")
        known = {g[1] for g in self.groups if g[0] == "flag"}
        for f in flags:
            if f not in known:
                raise DescriptionError(f"{where}.is: {f!r} must be one of {sorted(known)}")
        pos = 0
        for g in self.groups:
            kind = g[0]
            value = item.get(g[1])
            if kind == "arms":
                if value is not None:
                    if not isinstance(value, str) or any(ch not in EDGE_NAMES for ch in value):
                        raise DescriptionError(f"{where}.{g[1]}: {value!r} must be arm letters from 'NESW'")
                    for ch in value:
                        column[pos + EDGE_NAMES.index(ch)] = 1.0
                pos += 4
            elif kind == "pairs":
                if value is not None:
                    if not isinstance(value, list) or any(p not in PAIR_NAMES for p in value):
                        raise DescriptionError(f"{where}.{g[1]}: {value!r} must be a list of {list(PAIR_NAMES)}")
                    for p in value:
                        column[pos + PAIR_NAMES.index(p)] = 1.0
                pos += 6
            elif kind == "scaled":
                if value is not None:
                    Scaled(g[2]).decode(value, column[pos : pos + 1], f"{where}.{g[1]}")
                pos += 1
            else:
                column[pos] = float(g[1] in flags)
                pos += 1
