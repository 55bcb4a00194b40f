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
saboteurs, insert)``, ``("duel", layout, blue, green)`` or ``("sab2", N, agent[, insert])``;
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

import contextlib
import json
import os
import sys
import warnings
import zlib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agents.files import FileRefusedError, open_regular
from experiments.tournament.logs.format import (
    _CONFLICT,
    MAX_RECORD,
    LogError,
    LogWarning,
    _digest,
    _schema_problem,
    _version_text,
    describe,
    game_key,
    log_path,
    rounds_of,
    running_versions,
)

BLOCK = 1 << 20
# Decoded bytes held back until a member's checksum has been read. A game is well under 2 MiB; only old logs (one
# member per run) exceed this, and their records are released unverified rather than held in memory.
HOLD = 64 << 20
GZIP_MAGIC = b"\x1f\x8b\x08"
MAX_LOG_BYTES = 1 << 36  # a log file read (64 GiB: millions of games; reading streams, so memory stays small)
MAX_EXAMPLES = 3


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


