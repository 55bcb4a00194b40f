"""The tournament log's record format: file name, errors, game keys, the schema of a round record (claims included)
and the provenance stamped on it."""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

LOG_NAME = "rounds.jsonl.gz"


DEFAULT_ROUNDS = 3  # records from before ``rounds`` was logged: every tournament played three rounds


MAX_RECORD = 16 << 20  # one round record's JSON line; a longer one (a crafted or foreign file) is a LogError


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
        insert = h.get("insert")
        return ("sab2", h["players"], h["agent"], insert) if insert else ("sab2", h["players"], h["agent"])
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
        n, agent, *insert = cell
        return f"sab2 N={n} {agent}" + "".join(f" +{x}" for x in insert) + f" seed {seed}"
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
    root = Path(__file__).resolve().parents[3]  # the repository root

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
