"""Tournament logs: the one module that writes and reads ``DIR/rounds.jsonl.gz`` (every other module goes through it).

    python -m experiments.tournament.logs verify runs/x [--sample K] [--seed S] [--full]   # re-play logged games
    python -m experiments.tournament.logs merge runs/all runs/a runs/b                      # one log from several
    python -m experiments.tournament.logs repair runs/x                                     # keep every intact game

Format. The log is a sequence of gzip members, **one member per game**, each holding that game's round records as
JSON lines; the writer hands a member to the kernel in one ``write`` and ``fsync``-s it before the next game. Why
this format rather than a framed one with per-record checksums:

* A SIGKILL (pre-emption, the OOM killer, ``timeout -s KILL``) at any instant leaves every finished game intact
  and at most one torn member at the end: a prefix of a gzip member, which the reader recognises exactly (the file
  ends before the member's trailer), skips with a warning, and which resume cuts off before appending.
* Every game carries a checksum and a length: the gzip trailer (CRC-32, size), checked by zlib as the member is
  read, so a flipped byte anywhere is a :class:`LogError` naming the file and the record, never a wrong number.
* The file stays a plain gzip file: ``zcat`` / ``gzip -t`` / pandas read it, and intact logs merge by plain
  concatenation (``cat a/rounds.jsonl.gz b/rounds.jsonl.gz > c/rounds.jsonl.gz``). A framed format would detect torn
  tails as exactly, but needs its own tools for all of that.

Records. One JSON object per round: ``header`` (game, seed, round, ``rounds`` in the game, agents, hidden roles...,
``claims_per_turn`` in games with the claims rule, ``rules_version`` = ``GameConfig(...).rules_version`` and
``package_version`` = ``saboteur_env.__version__``), ``commit`` and ``dirty`` (the git commit of the checkout that
ran the tournament and whether its tree had changes, stamped by the process that writes the log; ``None`` outside a
git checkout)), ``events``, ``actions``, ``end``, in the base game ``beliefs``, in games with claims ``claims``
(each claim with its truth labels: :func:`claim_record`; ``actions`` stay the game's, so such games replay without
them; their agents are named ``claims:NAME``), and ``seeds`` (the game secret the agents' seeds come from; see
:mod:`experiments.tournament.rounds`). A record is keyed by (cell, seed, round), the cell being ``("base", N, miners,
saboteurs, insert)``, ``("duel", layout, blue, green)`` or ``("sab2", N, agent)``;
"record K" in messages is the K-th line of ``zcat FILE``.

Integrity. Readers yield whole games only (all rounds 0..rounds-1), each once: a repeated record (a log concatenated
with itself, two runs merged; the writer is deterministic, so copies are byte-identical) is dropped with one
summary warning, a repeat with *different* bytes is a ``LogError`` naming both records, and an incomplete game (a
round missing) is skipped with a warning; memory is a 16-byte digest per record read, not the records. The writer
refuses a game it already holds. Opening a log for writing (resume) checks that every record was written by this
package and rules version (:class:`LogVersionError` otherwise: one log never mixes versions), cuts a torn tail, and
rewrites the file without duplicates and incomplete games when it holds any (via a temporary file and an atomic
rename), so a resumed game is never logged twice. ``verify`` re-plays games from their seed and actions and
compares every logged event, header and round end (``--full`` re-runs the agents too and compares whole records).

Old logs (written before this crash-safe writer: one gzip member per run, no ``package_version``) are read
(report, replay, verify; the readable part of a torn member is recovered, with a warning, since such a member held
a whole run) but never appended to: resume refuses them with a message; run into a new ``--out`` directory.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
import warnings
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agents.files import FileRefusedError, open_regular

LOG_NAME = "rounds.jsonl.gz"
DEFAULT_ROUNDS = 3  # records from before ``rounds`` was logged: every tournament played three rounds
BLOCK = 1 << 20
# Decoded bytes held back until a member's checksum has been read. A game is well under 2 MiB; only old logs (one
# member per run) exceed this, and their records are released unverified rather than held in memory.
HOLD = 64 << 20
GZIP_MAGIC = b"\x1f\x8b\x08"
MAX_RECORD = 16 << 20  # one round record's JSON line; a longer one (a crafted or foreign file) is a LogError
MAX_LOG_BYTES = 1 << 36  # a log file read (64 GiB: millions of games; reading streams, so memory stays small)
MAX_EXAMPLES = 3

__all__ = [
    "LOG_NAME",
    "LogBusyError",
    "LogError",
    "LogReader",
    "LogVersionError",
    "LogWarning",
    "LogWriter",
    "cell_of",
    "claim_record",
    "describe",
    "encode_game",
    "game_key",
    "log_path",
    "main",
    "provenance",
    "read_games",
    "read_rounds",
    "stamp",
    "verify",
]


class LogError(ValueError):
    """A log that cannot be read as it is: names the file and, where it applies, the record (line of zcat)."""

    def __init__(self, path: str | Path, detail: str, record: int | None = None) -> None:
        self.path, self.detail, self.record = Path(path), detail, record
        super().__init__(f"{path}" + (f", record {record}" if record is not None else "") + f": {detail}")

    def __reduce__(self) -> tuple:
        return type(self), (self.path, self.detail, self.record)


class LogVersionError(LogError):
    """Appending would mix package or rules versions (or formats) in one log."""


class LogBusyError(LogError):
    """Another process holds the log directory's lock."""


class LogWarning(UserWarning):
    """Something a reader skipped (torn tail, duplicates, incomplete games) or a version note."""


def log_path(path: str | Path) -> Path:
    """The log file of a log directory (or the file itself)."""
    path = Path(path)
    return path / LOG_NAME if path.is_dir() else path


# ---- keys -----------------------------------------------------------------------------------------------------------
def cell_of(h: dict) -> tuple:
    """The cell a record's header belongs to (the games compared on the same seeds)."""
    game = h.get("game", "base")
    if game == "duel":
        return "duel", h["duel_layout"], h["agents"][0], h["agents"][1]
    if game == "sab2":
        return "sab2", h["players"], h["agent"]
    return "base", h["players"], h["miners"], h["saboteurs"], h.get("insert") or ""


def game_key(h: dict) -> tuple:
    return (*cell_of(h), h["seed"])


def describe(key: tuple) -> str:
    """A game key in words, e.g. ``base N=5 suspicious/covert seed 17``."""
    kind, *cell, seed = key
    if kind == "duel":
        layout, blue, green = cell
        return f"duel {layout} {blue}/{green} seed {seed}"
    if kind == "sab2":
        return f"sab2 N={cell[0]} {cell[1]} seed {seed}"
    n, miners, saboteurs, insert = cell
    return f"base N={n} {miners}/{saboteurs}" + (f" +{insert}" if insert else "") + f" seed {seed}"


def rounds_of(h: dict) -> int:
    return h.get("rounds", DEFAULT_ROUNDS)


_REQUIRED = {
    "base": (("players", int), ("miners", str), ("saboteurs", str)),
    "duel": (("agents", list), ("duel_layout", str)),
    "sab2": (("players", int), ("agent", str)),
}


CLAIM_KEYS = ("t", "speaker", "kind", "target", "value", "truth", "known", "lie")
CLAIM_KINDS = ("goal", "accuse", "clear", "suspect")


def claim_record(claim: dict, t: int) -> dict:
    """A claim of ``raw_env.claims_log()`` as a round record's ``claims`` entry: ``t`` (the game decision of the
    round it came before: claims are not in ``actions``, which stay the game's, so logs replay without them),
    speaker (absolute seat), kind, target (goal slot or absolute seat), value (goal claims: 1 gold, 0 stone) and
    the labels from the hidden state: ``truth`` (the content was true), ``known`` (the speaker had seen it) and
    ``lie`` (known and false)."""
    return {"t": t, **{k: claim[k] for k in CLAIM_KEYS[1:]}}


def _claims_problem(claims: object) -> str | None:
    if not isinstance(claims, list):
        return "'claims' is not a list"
    for i, c in enumerate(claims):
        if not isinstance(c, dict) or set(c) != set(CLAIM_KEYS):
            return f"claims[{i}] must have exactly the keys {', '.join(CLAIM_KEYS)}"
        if c["kind"] not in CLAIM_KINDS or not all(isinstance(c[k], bool) for k in ("truth", "known", "lie")):
            return f"claims[{i}]: kind {c['kind']!r} or a label is not valid (kinds: {', '.join(CLAIM_KINDS)})"
        if c["lie"] != (c["known"] and not c["truth"]):
            return f"claims[{i}]: lie must be known and not truth"
    return None


def _schema_problem(rec: object) -> str | None:
    if not isinstance(rec, dict):
        return "not a JSON object"
    for name, kind in (("header", dict), ("events", list), ("actions", list), ("end", dict)):
        if not isinstance(rec.get(name), kind):
            return f"no {name!r} {kind.__name__}"
    h = rec["header"]
    game = h.get("game", "base")
    if game not in _REQUIRED:
        return f"header.game {game!r} is not a logged game (base, duel, sab2)"
    for name, kind in (("seed", int), ("round", int), *_REQUIRED[game]):
        if not isinstance(h.get(name), kind) or isinstance(h.get(name), bool):
            return f"header.{name} is missing or not a {kind.__name__}"
    if game == "duel" and len(h["agents"]) != 2:
        return "header.agents must name two duel agents"
    rounds = rounds_of(h)
    if not isinstance(rounds, int) or not 0 <= h["round"] < rounds:
        return f"header.round {h['round']!r} is not a round of a {rounds!r}-round game"
    if "claims" in rec:
        return _claims_problem(rec["claims"])
    return None


def _digest(raw: bytes) -> bytes:
    """A record's identity for de-duplication: its exact bytes (the writer is deterministic, so copies of a record
    are byte-identical; hashing the line costs microseconds where re-encoding the record costs a parse)."""
    return hashlib.blake2b(raw.strip(), digest_size=16).digest()


# ---- versions -------------------------------------------------------------------------------------------------------
def running_versions(game: str) -> tuple[str, str]:
    """(rules version, package version) that this checkout writes for ``game``."""
    import saboteur_env
    from saboteur_env import GameConfig

    return GameConfig(game=game).rules_version, saboteur_env.__version__


@functools.cache
def _git_provenance() -> tuple[str | None, bool | None]:
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout  # fmt: skip

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain").strip())  # tracked changes or untracked, non-ignored files
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, dirty


def provenance() -> dict:
    """``{"commit": ..., "dirty": ...}`` of the checkout running this code (once per process; ``None`` values
    outside a git checkout). Untracked files that git does not ignore count as dirty: they can change results."""
    commit, dirty = _git_provenance()
    return {"commit": commit, "dirty": dirty}


def stamp(records: list[dict]) -> list[dict]:
    """Add :func:`provenance` to every header of a game that lacks it (the log writer's process does this)."""
    info = provenance()
    for r in records:
        for k, v in info.items():
            r["header"].setdefault(k, v)
    return records


_CONFLICT = ("two different records under one key (logs of other versions or with and without --no-beliefs merged, "
             "or an edited record); keep one of the logs")


def _version_text(rules: str | None, package: str | None) -> str:
    return f"saboteur-env {package or '(version not recorded: an old log)'}, rules {rules or 'not recorded'}"


# ---- reading --------------------------------------------------------------------------------------------------------
def _member_batches(f, offset: int) -> Generator[list[bytes], None, tuple[str, int, list[bytes], str]]:
    """Decode the gzip member at ``offset``: yields complete lines once its checksum has been read (or earlier, for
    members over HOLD bytes); returns (status, end, held lines, error): "ok" (end = the byte after the member),
    "torn" (the file ends inside it; held = its complete lines so far) or "bad" (zlib refuses it)."""
    f.seek(offset)
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip wrapper: zlib checks the trailer's CRC-32 and size
    held: list[bytes] = []
    size, partial, pos, step = 0, b"", offset, 1 << 14
    while True:
        # Small reads first: a game's member is a few KiB, and zlib copies whatever follows it (unused_data).
        data = f.read(step)
        step = min(2 * step, BLOCK)
        if not data:
            return "torn", pos, held, ""
        read_end = pos + len(data)
        while data:
            try:
                # At most BLOCK bytes out per call: a crafted member inflates ~1000x, so one small read could
                # otherwise decode gigabytes at once.
                out = d.decompress(data, BLOCK)
            except zlib.error as err:
                return "bad", offset, [], str(err)
            data = d.unconsumed_tail
            lines = (partial + out).split(b"\n")
            partial = lines.pop()
            if len(partial) > MAX_RECORD or any(len(x) > MAX_RECORD for x in lines):
                return "bad", offset, [], f"a record is longer than {MAX_RECORD} bytes (a round is well under 2 MiB)"
            held.extend(lines)
            size += len(out)
            if d.eof:
                if partial.strip():
                    return "bad", offset, [], "the member ends inside a record (no newline)"
                yield held
                return "ok", read_end - len(d.unused_data), [], ""
            if size > HOLD:
                yield held
                held, size = [], 0
        pos = read_end


def _find_magic(f, start: int) -> int | None:
    f.seek(start)
    base = start
    tail = b""
    while chunk := f.read(BLOCK):
        buf = tail + chunk
        i = buf.find(GZIP_MAGIC)
        if i >= 0:
            return base - len(tail) + i
        tail = buf[-2:]
        base += len(chunk)
    return None


def _zeros_to_end(f, start: int) -> bool:
    f.seek(start)
    while chunk := f.read(BLOCK):
        if chunk.strip(b"\0"):
            return False
    return True


@dataclass
class _Stats:
    records: int = 0
    games: int = 0
    duplicates: int = 0
    duplicate_example: tuple[int, int] | None = None
    incomplete: list[tuple[tuple, list[int], int, int]] = field(default_factory=list)
    torn: list[tuple[Path, int, int, int]] = field(default_factory=list)  # (file, offset, size, recovered records)
    damaged: list[tuple[Path, int, str]] = field(default_factory=list)  # repair mode: members skipped
    versions: dict[tuple[str, str | None, str | None], int] = field(default_factory=dict)


class LogReader:
    """Streams the games of one or more logs (several files read as if concatenated).

    ``games()`` yields each complete game once (its records in round order), in the order they complete; memory is
    one small digest per round read (plus the records of games not yet complete), not the records. After a full
    pass, ``stats`` holds what was skipped and the versions seen; the summary warnings (:class:`LogWarning`) are
    issued at the end of the pass.
    ``repair=True`` skips damaged members (for ``repair``) instead of raising; ``quiet=True`` issues no warnings.
    """

    def __init__(
        self, paths: str | Path | Sequence[str | Path], *, repair: bool = False, quiet: bool = False
    ) -> None:
        items = [paths] if isinstance(paths, str | Path) else list(paths)
        self.paths = [log_path(p) for p in items]
        self.repair = repair
        self.quiet = quiet
        self.stats = _Stats()
        self.valid_end: dict[Path, int] = {}

    # Frame level: (file, record number, record, digest).
    def records(self) -> Iterator[tuple[Path, int, dict]]:
        for path, line, rec, _ in self._records():
            yield path, line, rec

    def _records(self) -> Iterator[tuple[Path, int, dict, bytes]]:
        for path in self.paths:
            if not path.exists():
                raise LogError(path, "no such log file (a tournament writes DIR/rounds.jsonl.gz with --out DIR)")
            yield from self._file_records(path)

    def _file_records(self, path: Path) -> Iterator[tuple[Path, int, dict, bytes]]:
        line = 0
        try:
            # A regular file only: a FIFO would block the reader and /dev/zero would never end.
            opened = open_regular(path, MAX_LOG_BYTES)
        except FileRefusedError as err:
            raise LogError(path, f"{err.problem} (a log is DIR/rounds.jsonl.gz)") from None
        with opened as f:
            size = os.fstat(f.fileno()).st_size
            offset = member = 0
            self.valid_end[path] = 0
            while offset < size:
                f.seek(offset)
                head = f.read(3)
                if head != GZIP_MAGIC:
                    # A kill inside the first bytes of a member, or a crash before the file system wrote an append.
                    if (len(head) < 3 and GZIP_MAGIC.startswith(head)) or _zeros_to_end(f, offset):
                        self._torn(path, offset, size - offset, 0)
                        return
                    if self.repair:
                        offset = self._skip_damage(f, path, offset, "not a gzip member", size)
                        continue
                    raise LogError(path, f"byte {offset} is not the start of a gzip member (after record {line}); "
                                   f"{_repair_hint(path)}", line + 1)  # fmt: skip
                member += 1
                batches = _member_batches(f, offset)
                while True:
                    try:
                        batch = next(batches)
                    except StopIteration as stop:
                        status, end, held, error = stop.value
                        break
                    for raw in batch:
                        line += 1
                        if raw.strip():
                            yield path, line, self._parse(path, raw, line), _digest(raw)
                if status == "ok":
                    offset = self.valid_end[path] = end
                elif status == "torn":
                    salvaged = self._salvage(path, held, line)
                    self._torn(path, offset, size - offset, len(salvaged))
                    yield from salvaged
                    return
                elif self.repair:
                    offset = self._skip_damage(f, path, offset, error, size)
                else:
                    raise LogError(path, f"gzip member {member} at byte {offset} is damaged ({error}); the {line} "
                                   f"records before it are intact; {_repair_hint(path)}", line + 1)  # fmt: skip

    def _parse(self, path: Path, raw: bytes, line: int) -> dict:
        try:
            rec = json.loads(raw)
        except RecursionError:  # nesting deeper than the interpreter's stack: no record of ours does that
            raise LogError(path, "not a round record (JSON nested too deeply)", line) from None
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, an integer of over 4300 digits
            raise LogError(path, f"not valid JSON ({err})", line) from None
        problem = _schema_problem(rec)
        if problem:
            raise LogError(path, problem, line)
        self.stats.records += 1
        return rec

    def _salvage(self, path: Path, held: list[bytes], line: int) -> list[tuple[Path, int, dict, bytes]]:
        """Complete lines of a torn member, kept only for old logs (a member held a whole run there; in today's
        logs a torn member is one game that was never finished, and its records are dropped)."""
        out = []
        for raw in held:
            line += 1
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                return []
            if _schema_problem(rec) or "package_version" in rec["header"]:
                return []
            out.append((path, line, rec, _digest(raw)))
        self.stats.records += len(out)
        return out

    def _torn(self, path: Path, offset: int, size: int, recovered: int) -> None:
        self.stats.torn.append((path, offset, size, recovered))
        what = (f"recovered {recovered} records written before it (an old log: one member per run; not "
                "checksummed)" if recovered else "skipped it (a game cut off while being written)")  # fmt: skip
        self._warn(f"{path}: torn tail at byte {offset} ({size} bytes, e.g. the writer was killed); {what}; "
                   "resuming cuts it off and re-plays that game")  # fmt: skip

    def _skip_damage(self, f, path: Path, offset: int, error: str, size: int) -> int:
        self.stats.damaged.append((path, offset, error))
        nxt = _find_magic(f, offset + 1)
        return size if nxt is None else nxt

    # Game level.
    def numbered_games(self) -> Iterator[tuple[Path, int, list[dict]]]:
        """(file, record number of the game's first round, records) for each complete game, once."""
        st = self.stats
        pending: dict[tuple, dict[int, tuple[int, dict, bytes]]] = {}
        seen: dict[tuple, tuple[int, list[bytes]]] = {}
        for path, line, rec, digest in self._records():
            h = rec["header"]
            key, rnd = game_key(h), h["round"]
            versions = (h.get("game", "base"), h.get("rules_version"), h.get("package_version"))
            st.versions.setdefault(versions, line)
            if key in seen:
                first, digests = seen[key]
                if rnd >= len(digests) or digests[rnd] != digest:
                    raise LogError(path, f"{describe(key)} round {rnd} differs from the copy of this game logged at "
                                   f"record {first}: {_CONFLICT}", line)  # fmt: skip
                self._duplicate(line, first)
                continue
            slot = pending.setdefault(key, {})
            if rnd in slot:
                if slot[rnd][2] != digest:
                    raise LogError(path, f"{describe(key)} round {rnd} differs from the copy at record "
                                   f"{slot[rnd][0]}: {_CONFLICT}", line)  # fmt: skip
                self._duplicate(line, slot[rnd][0])
                continue
            slot[rnd] = (line, rec, digest)
            if len(slot) == rounds_of(h) and all(r in slot for r in range(len(slot))):
                del pending[key]
                ordered = [slot[r] for r in range(len(slot))]
                first = min(x[0] for x in ordered)
                seen[key] = (first, [x[2] for x in ordered])
                st.games += 1
                yield path, first, [x[1] for x in ordered]
        for key, slot in pending.items():
            total = rounds_of(next(iter(slot.values()))[1]["header"])
            st.incomplete.append((key, sorted(slot), total, min(x[0] for x in slot.values())))
        self._summary_warnings()

    def games(self) -> Iterator[list[dict]]:
        for _, _, records in self.numbered_games():
            yield records

    def _duplicate(self, line: int, first: int) -> None:
        self.stats.duplicates += 1
        if self.stats.duplicate_example is None:
            self.stats.duplicate_example = (line, first)

    def _summary_warnings(self) -> None:
        st, where = self.stats, ", ".join(map(str, self.paths))
        if st.duplicates:
            line, first = st.duplicate_example or (0, 0)
            self._warn(f"{where}: {st.duplicates} duplicate round records skipped (e.g. record {line} repeats "
                       f"record {first}: a log concatenated with itself or merged twice); every game counts once")
        if st.incomplete:
            key, rounds, total, line = st.incomplete[0]
            self._warn(f"{where}: {len(st.incomplete)} incomplete games skipped (e.g. {describe(key)} from record "
                       f"{line} has rounds {rounds} of 0..{total - 1}); resuming re-plays them")  # fmt: skip

    def _warn(self, message: str) -> None:
        if not self.quiet:
            warnings.warn(message, LogWarning, stacklevel=4)

    def version_problems(self) -> list[str]:
        """Versions seen that differ from what this checkout writes (call after a full pass)."""
        problems = []
        for (game, rules, package), line in sorted(self.stats.versions.items(), key=lambda x: x[1]):
            want_rules, want_package = running_versions(game)
            if (rules, package) != (want_rules, want_package):
                problems.append(f"{game} games of {_version_text(rules, package)} (first at record {line}) where "
                                f"this checkout writes {_version_text(want_rules, want_package)}")  # fmt: skip
        return problems

    def version_summary(self) -> str:
        seen = sorted({(rules or "?", package or "not recorded") for _, rules, package in self.stats.versions})
        return "; ".join(f"saboteur-env {p}, rules {r}" for r, p in seen)


def read_games(paths: str | Path | Sequence[str | Path]) -> Iterator[list[dict]]:
    """Each complete game of the log(s) once, as its list of round records (see :class:`LogReader`)."""
    return LogReader(paths).games()


def read_rounds(path: str | Path) -> Iterator[dict]:
    """Round records of a log file or directory: every complete game once, its rounds in order."""
    for records in read_games(path):
        yield from records


def _repair_hint(path: Path) -> str:
    return f"`python -m experiments.tournament.logs repair {path.parent}` keeps every intact game"


# ---- writing --------------------------------------------------------------------------------------------------------
def encode_game(records: list[dict]) -> bytes:
    """One game as one gzip member (deterministic bytes: no file name, mtime 0)."""
    lines = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)
    return zlib.compress(lines, level=6, wbits=16 + zlib.MAX_WBITS)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(directory: Path) -> int:
    """An exclusive lock on the log directory (released by the kernel however the holder dies)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LogBusyError(directory, "another process is writing this log (its lock is held); wait for it to finish "
                           "or use another --out directory") from None  # fmt: skip
    except OSError as err:  # a file system without locks (some network mounts): write unlocked, and say so
        warnings.warn(f"{directory}: cannot lock the log directory ({err}); do not run two writers on it",
                      LogWarning, stacklevel=3)  # fmt: skip
    return fd


def _game_problem(records: list[dict]) -> str | None:
    if not records:
        return "an empty game"
    for rec in records:
        problem = _schema_problem(rec)
        if problem:
            return problem
    h = records[0]["header"]
    key = game_key(h)
    if [game_key(r["header"]) for r in records] != [key] * len(records):
        return "records of different games as one game"
    if [r["header"]["round"] for r in records] != list(range(rounds_of(h))):
        return f"{describe(key)} with rounds {[r['header']['round'] for r in records]} (want 0..{rounds_of(h) - 1})"
    want = running_versions(h.get("game", "base"))
    got = (h.get("rules_version"), h.get("package_version"))
    if any((r["header"].get("rules_version"), r["header"].get("package_version")) != want for r in records):
        return f"{describe(key)} of {_version_text(*got)} into a log of {_version_text(*want)}"
    return None


class LogWriter:
    """Appends games to ``DIR/rounds.jsonl.gz``, one fsync-ed gzip member each (use as a context manager).

    Opening an existing log reads it once: refuses other package/rules versions and old logs
    (:class:`LogVersionError`), cuts a torn tail, and rewrites the file without duplicate records and incomplete
    games if it holds any. ``done`` is the set of game keys in the log (appended to as games are written); a second
    copy of a game is refused. ``fsync=False`` skips the fsync (survives SIGKILL, not a power cut).
    """

    def __init__(self, directory: str | Path, *, fsync: bool = True) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise LogError(self.directory, "is a file, not a log directory")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / LOG_NAME
        self.fsync = fsync
        self.done: set[tuple] = set()
        self.rewritten = False
        self._lock_fd = _lock(self.directory)
        try:
            if self.path.exists():
                self._prepare()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
            _fsync_dir(self.directory)
        except BaseException:
            os.close(self._lock_fd)
            raise

    def _prepare(self) -> None:
        reader = LogReader(self.path)
        for records in reader.games():
            self.done.add(game_key(records[0]["header"]))
        st = reader.stats
        problems = reader.version_problems()
        if problems:
            raise LogVersionError(self.path, "holds " + "; ".join(problems) + ". Appending would mix versions in one "
                              "log: write to a new --out directory (experiments.tournament.report reads several logs) or finish "
                              "this run with the version that started it")  # fmt: skip
        if st.duplicates or st.incomplete:
            self._rewrite()
            warnings.warn(f"{self.path}: rewritten without {st.duplicates} duplicate records and "
                          f"{len(st.incomplete)} incomplete games ({len(self.done)} games kept)", LogWarning,
                          stacklevel=3)  # fmt: skip
        elif st.torn:
            os.truncate(self.path, reader.valid_end[self.path])

    def _rewrite(self) -> None:
        """Keep each complete game once: written to a temporary file, fsync-ed, then renamed over the log (a crash
        at any point leaves the old log or the new one)."""
        tmp = self.path.with_name(LOG_NAME + ".rewrite")
        with open(tmp, "wb") as f:
            for records in LogReader(self.path, quiet=True).games():  # the first pass reported what it skips
                f.write(encode_game(records))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.directory)
        self.rewritten = True

    def write_game(self, records: list[dict]) -> None:
        """Append one complete game (its round records in order); durable when this returns."""
        problem = _game_problem(records)
        if problem:
            raise LogError(self.path, f"refusing to write {problem}")
        key = game_key(records[0]["header"])
        if key in self.done:
            raise LogError(self.path, f"refusing to write {describe(key)} twice (it is in the log already)")
        data = encode_game(records)
        try:
            _write_all(self._fd, data)
            if self.fsync:
                os.fsync(self._fd)
        except OSError:
            os.ftruncate(self._fd, self._size)  # no half-written member in the middle of the log (disk full)
            raise
        self._size += len(data)
        self.done.add(key)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            os.close(self._lock_fd)
            self._fd = -1

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- verify, merge, repair ------------------------------------------------------------------------------------------
def verify(
    paths: str | Path | Sequence[str | Path],
    sample: int | None = None,
    seed: int = 0,
    full: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[int, int, list[str]]:
    """Re-play the logged games (all, or a random ``sample`` of them) and compare them with the log.

    Returns (games in the log, games re-played, mismatch messages naming the file, record and first difference).
    ``full`` re-runs the agents from the seed as well and compares whole records (belief snapshots included).
    """
    from experiments.tournament.tasks import replay_records

    reader = LogReader(paths)
    chosen: Iterable[tuple[Path, int, list[dict]]]
    if sample is None:
        chosen = reader.numbered_games()
    else:  # reservoir sample: one pass, ``sample`` games in memory
        rng = random.Random(seed)
        kept: list[tuple[Path, int, list[dict]]] = []
        for i, item in enumerate(reader.numbered_games()):
            if len(kept) < sample:
                kept.append(item)
            elif (j := rng.randrange(i + 1)) < sample:
                kept[j] = item
        chosen = sorted(kept, key=lambda x: (str(x[0]), x[1]))
    problems, count = [], 0
    for path, line, records in chosen:
        count += 1
        try:
            replay_records(records, full=full)
        except AssertionError as err:
            problems.append(f"{path}, record {line}: {describe(game_key(records[0]['header']))}: {err}")
        if progress and count % 100 == 0:
            progress(f"{count} games re-played, {len(problems)} mismatches")
    return reader.stats.games, count, problems


def merge(out: str | Path, inputs: Sequence[str | Path]) -> tuple[int, int]:
    """Append the games of ``inputs`` to the log at ``out`` (created if needed); returns (added, already there).

    The inputs are read as one concatenated log (duplicates dropped, conflicting copies refused) and must be of this
    package's versions, as for resume.
    """
    added = skipped = 0
    with LogWriter(out) as writer:
        for path, line, records in LogReader(list(inputs)).numbered_games():
            problem = _game_problem(records)
            if problem:
                raise LogVersionError(path, f"cannot merge {problem}: merge writes this package's versions only "
                                  "(concatenate logs of other versions with cat instead)", line)  # fmt: skip
            if game_key(records[0]["header"]) in writer.done:
                skipped += 1
                continue
            writer.write_game(records)
            added += 1
    return added, skipped


def repair(directory: str | Path) -> str:
    """Rewrite a damaged log keeping every intact complete game once; the original is kept next to it
    (``rounds.jsonl.gz.damaged-<time>``). Returns a report."""
    directory = Path(directory)
    path = log_path(directory)
    lock = _lock(path.parent)
    try:
        reader = LogReader(path, repair=True)
        tmp = path.with_name(LOG_NAME + ".rewrite")
        with warnings.catch_warnings(record=True) as caught, open(tmp, "wb") as f:
            warnings.simplefilter("always", LogWarning)
            for records in reader.games():
                f.write(encode_game(records))
            f.flush()
            os.fsync(f.fileno())
        backup = path.with_name(f"{LOG_NAME}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
        os.link(path, backup)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        os.close(lock)
    st = reader.stats
    lines = [f"{path}: kept {st.games} complete games ({st.records} records read); original kept as {backup.name}"]
    lines += [f"  damaged member at byte {off} skipped ({err})" for _, off, err in st.damaged[:MAX_EXAMPLES]]
    if len(st.damaged) > MAX_EXAMPLES:
        lines.append(f"  ... {len(st.damaged) - MAX_EXAMPLES} more damaged members")
    lines += [f"  {w.message}" for w in caught]
    return "\n".join(lines)


def _mismatch_kind(message: str) -> str:
    """What differed, without the numbers: ``header.rules_version``, ``end.winner``, ``events[].kind``..."""
    detail = message.rsplit(": round ", 1)[-1]
    match = re.search(r"(header|events|end|record)[\w.\[\]]*(?=:)", detail)
    what = match.group(0) if match else re.sub(r"\d+", "N", detail.split(":", 1)[-1].strip())[:60]
    return re.sub(r"\[\d+\]", "[]", what)


@contextlib.contextmanager
def cli_warnings() -> Iterator[None]:
    """Show LogWarnings on stderr as ``warning: ...`` lines (once each) while a command runs."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, LogWarning):
            print(f"warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always", LogWarning)
        warnings.showwarning = show
        yield


def _existing_log(parser: argparse.ArgumentParser, value: Path) -> Path:
    path = log_path(value)
    if not path.is_file():
        parser.error(f"{value}: no log there (a tournament run with --out DIR writes DIR/{LOG_NAME})")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tournament.logs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("verify", help="re-play logged games and report every mismatch with the log")
    p.add_argument("log", type=Path, nargs="+", help="log directories (or rounds.jsonl.gz files)")
    p.add_argument("--sample", type=int, default=None, metavar="K", help="re-play K random games (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample")
    p.add_argument("--full", action="store_true", help="also re-run the agents and compare whole records")
    p.add_argument("--show", type=int, default=20, metavar="N", help="mismatches listed in full (default 20)")
    p = sub.add_parser("merge", help="append the games of several logs to one (duplicates once)")
    p.add_argument("out", type=Path, help="output log directory (created if needed)")
    p.add_argument("inputs", type=Path, nargs="+", help="input log directories or files")
    p = sub.add_parser("repair", help="keep every intact game of a damaged log (the original is kept aside)")
    p.add_argument("log", type=Path, help="log directory")
    args = parser.parse_args(argv)
    with cli_warnings():
        try:
            if args.command == "verify":
                if args.sample is not None and args.sample < 1:
                    parser.error("--sample must be at least 1")
                if args.show < 0:
                    parser.error("--show must be at least 0")
                paths = [_existing_log(parser, p) for p in args.log]
                total, played, problems = verify(paths, args.sample, args.seed, args.full,
                                                 progress=lambda s: print(s, file=sys.stderr))  # fmt: skip
                for line in problems[: args.show]:
                    print(f"MISMATCH {line}")
                if len(problems) > args.show:
                    print(f"... and {len(problems) - args.show} more mismatches (--show N lists more)")
                kinds: dict[str, int] = {}
                for line in problems:
                    kinds[_mismatch_kind(line)] = kinds.get(_mismatch_kind(line), 0) + 1
                for kind, n in sorted(kinds.items(), key=lambda x: -x[1]):
                    print(f"  {n} x {kind}")
                print(f"verified {played} of {total} games: {len(problems)} mismatches")
                return 1 if problems else 0
            if args.command == "merge":
                inputs = [_existing_log(parser, p) for p in args.inputs]
                if (args.out / LOG_NAME).resolve() in {p.resolve() for p in inputs}:
                    parser.error("the output must not be one of the inputs")
                if args.out.exists() and not args.out.is_dir():
                    parser.error(f"{args.out} is a file; give a log directory")
                added, skipped = merge(args.out, inputs)
                print(f"{log_path(args.out)}: {added} games added, {skipped} already there")
                return 0
            _existing_log(parser, args.log)
            print(repair(args.log))
            return 0
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    return 0  # pragma: no cover


if __name__ == "__main__":
    raise SystemExit(main())
