"""Writing tournament logs crash-safely (one fsync-ed gzip member per game, a lock per directory), merging and
repairing them."""

from __future__ import annotations

import fcntl
import json
import os
import time
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path

from experiments.tournament.logs.format import (
    LOG_NAME,
    LogBusyError,
    LogError,
    LogVersionError,
    LogWarning,
    _schema_problem,
    _version_text,
    describe,
    game_key,
    log_path,
    rounds_of,
    running_versions,
)
from experiments.tournament.logs.read import MAX_EXAMPLES, LogReader


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
                              "log: write to a new --out directory (experiments.tournament.report reads several logs) "
                              "or finish this run with the version that started it")  # fmt: skip
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
