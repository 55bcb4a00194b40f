"""The bluffing benchmark's leaderboard: rows (one per agent and protocol, each carrying the protocol's version) as
JSON and as Markdown tables with 95% intervals (docs/bluff.md).

``rows`` come from :func:`experiments.bluff.metrics.agent_metrics`; :func:`board` adds the protocol's facts (pool,
deals, honesty file, the secret's SHA-256 and the public observer's calibration on the pool's games).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from agents.files import write_atomic
from experiments.bluff.protocol import VERSION, Protocol
from experiments.tournament.rounds import ORACLE_NOTE, format_secret

REGENERATE = "python -m experiments.bluff --leaderboard --secret HEX"
MAX_FILE_BYTES = 16 * 2**20  # the committed leaderboard is ~60 kB


def secret_digest(secret: int) -> str:
    """The SHA-256 of a secret's hex form: a row names its deals without revealing them."""
    return hashlib.sha256(format_secret(secret).encode()).hexdigest()


def row(p: Protocol, agent: str, seated_as: str, oracle: bool, metrics: dict[str, Any], secret: int
        ) -> dict[str, Any]:  # fmt: skip
    return {"version": VERSION, "protocol": p.id, "agent": agent, "seated_as": seated_as, "oracle": oracle,
            "secret_sha256": secret_digest(secret), **metrics}  # fmt: skip


def board(p: Protocol, rows: list[dict[str, Any]], calibration: dict[str, Any], secret: int) -> dict[str, Any]:
    return {"version": VERSION, "protocol": p.id, "game": p.game, "players": p.players,
            "pool": [list(m) for m in p.pool], "deals": p.deals, "honesty": p.honesty.name,
            "honesty_sha256": p.honesty_digest(),
            "secret_sha256": secret_digest(secret), "calibration": calibration, "rows": rows}  # fmt: skip


def _clean(x: Any) -> Any:
    """NaN -> None (JSON has no NaN); tuples -> lists; floats rounded for a stable, diffable file."""
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, 5)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x


def clean(x: Any) -> Any:
    """``x`` as the leaderboard file stores it (read back): what a stored value compares equal to."""
    return json.loads(json.dumps(_clean(x)))


def write_json(boards: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_clean({"version": VERSION, "regenerate": REGENERATE, "boards": boards}), indent=1) + "\n"
    write_atomic(path, lambda fh: fh.write(text.encode()))  # an update rewrites the committed file: never torn


def read_json(path: Path) -> list[dict[str, Any]]:
    """The boards of a leaderboard file written by :func:`write_json` (ValueError naming the file otherwise)."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"{path.stat().st_size:,} bytes; a leaderboard file is read up to {MAX_FILE_BYTES:,}")
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a leaderboard file ({type(err).__name__}: {err})") from None
    boards = data.get("boards") if isinstance(data, dict) else None
    ok = isinstance(boards, list) and all(
        isinstance(b, dict) and isinstance(b.get("protocol"), str) and isinstance(b.get("rows"), list)
        and all(isinstance(r, dict) and isinstance(r.get("agent"), str) for r in b["rows"]) for b in boards
    )  # fmt: skip
    if not ok:
        raise ValueError(f"{path}: not a leaderboard file (want {{'boards': [{{'protocol': str, 'rows': [{{'agent': "
                         "str, ...}, ...]}, ...]}, as write_json writes)")  # fmt: skip
    if data.get("version") != VERSION:
        raise ValueError(f"{path} is of protocol version {data.get('version')!r}; this code's is {VERSION!r}: "
                         f"regenerate the whole leaderboard ({REGENERATE})")  # fmt: skip
    assert isinstance(boards, list)
    names = [b["protocol"] for b in boards]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: a protocol has two boards ({names})")
    return boards


def check_update(stored: list[dict[str, Any]], p: Protocol, secret: int, deals: int) -> dict[str, Any]:
    """The stored board that rows of ``p`` measured with ``secret`` on ``deals`` deals may join: the same protocol
    version, honesty file, deals and secret (the rows of one board are paired on the same deals), else ValueError
    naming what differs."""
    found = [b for b in stored if b.get("protocol") == p.id]
    if not found:
        raise ValueError(f"the stored leaderboard has no board {p.id}; regenerate the whole leaderboard ({REGENERATE})")
    b = found[0]
    want = {"secret_sha256": secret_digest(secret), "deals": deals, "honesty_sha256": p.honesty_digest()}
    diff = {k: (b.get(k), v) for k, v in want.items() if b.get(k) != v}
    if diff:
        raise ValueError(f"rows measured here would not pair with the stored board {p.id} (stored, here): {diff}; "
                         f"use the board's secret and deals, or regenerate the whole leaderboard ({REGENERATE})")
    return b


def merge(stored: list[dict[str, Any]], new: dict[str, Any], order: tuple[str, ...]) -> list[dict[str, Any]]:
    """``stored`` with ``new``'s rows in its board of the same protocol (an agent's row replaced, a new agent's
    added), the rows in ``order`` (the leaderboard's agents; others after them)."""
    out = []
    for b in stored:
        if b.get("protocol") != new["protocol"]:
            out.append(b)
            continue
        rows = {r["agent"]: r for r in b["rows"]} | {r["agent"]: r for r in new["rows"]}
        rank = {a: i for i, a in enumerate(order)}
        merged = dict(b)  # its calibration: the pool's, checked equal to the new run's (cli.benchmark)
        merged["rows"] = sorted(rows.values(), key=lambda r: rank.get(r["agent"], len(order)))
        out.append(merged)
    return out


def _pct(t: Any, points: bool = False) -> str:
    """``t`` = (value, low, high) as a percentage (``points``: a signed difference in points)."""
    if t is None or t[0] is None or (isinstance(t[0], float) and math.isnan(t[0])):
        return "-"
    f = (lambda x: f"{100 * x:+.1f}") if points else (lambda x: f"{100 * x:.1f}%")
    if t[1] is None or (isinstance(t[1], float) and math.isnan(t[1])):
        return f(t[0])
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def _num(t: Any, digits: int = 2) -> str:
    if t is None or t[0] is None or (isinstance(t[0], float) and math.isnan(t[0])):
        return "-"
    if t[1] is None or (isinstance(t[1], float) and math.isnan(t[1])):
        return f"{t[0]:.{digits}f}"
    return f"{t[0]:.{digits}f} [{t[1]:.{digits}f}, {t[2]:.{digits}f}]"


def markdown(boards: list[dict[str, Any]]) -> str:
    lines = [f"# Bluffing benchmark leaderboard ({VERSION})", "",
             f"Generated by `{REGENERATE}` (docs/bluff.md explains every column). 95% percentile bootstrap intervals "
             "over deals; with these deal counts they are wide. Points (pt) are differences of rates.", ""]  # fmt: skip
    for b in boards:
        pool = "; ".join(" / ".join(m) for m in b["pool"])
        fewer = ", the first of them where a row names fewer" if any(
            r.get("deals", b["deals"]) != b["deals"] for r in b["rows"]) else ""  # fmt: skip
        lines += [f"## {b['protocol']}: {b['game']}, {b['players']} players", "",
                  f"Pool (one member per deal in turn): {pool}. Deals per agent: {b['deals']}{fewer} (each played in "
                  f"the arms play, deaf, mute, plus the pool's own). Honesty model of the pool: `{b['honesty']}` "
                  f"(SHA-256 {str(b['honesty_sha256'])[:12]}). Deals drawn from a secret with SHA-256 "
                  f"{b['secret_sha256'][:12]}.", ""]  # fmt: skip
        cal = {k: v for k, v in (b.get("calibration") or {}).items() if v["items"]}  # the Duel has no roles
        if cal:
            parts = [f"{k} {_num(v['ece'], 3)} ({v['items']} seat-rounds)" for k, v in cal.items()]
            lines += ["Public claims observer on the pool's games, ECE of its end-of-round P(saboteur): "
                      + "; ".join(parts) + ".", ""]
        rows = b["rows"]
        star = {r["agent"]: "*" if r.get("oracle") else "" for r in rows}
        lines += ["### Overall", "", "| agent | version | win rate | as gold-digger | as saboteur | rating vs pool "
                  "(pt) | value of talk (pt) | claims per round |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in rows:
            dig, sab = r.get("digger", {}), r.get("saboteur", {})
            fewer = f" ({r['deals']} deals)" if r.get("deals", b["deals"]) != b["deals"] else ""
            lines.append(f"| `{r['agent']}`{star[r['agent']]}{fewer} | {r['version']} | {_pct(r['win_rate'])} | "
                         f"{_pct(dig.get('win_rate'))} | {_pct(sab.get('win_rate'))} | {_pct(r['rating'], True)} | "
                         f"{_pct(r['talk_value'], True)} | {_num(r['claims_per_round'])} |")  # fmt: skip
        if any("saboteur" in r for r in rows):
            lines += ["", "### As saboteur", "", "| agent | version | rounds | lie rate (lies / known claims) | "
                      "lie lap | lies early | shift on the liar: opponents (pt) | public (pt) | shift on the target: "
                      "opponents / public (pt) | rounds undetected |", "|---|---|---|---|---|---|---|---|---|---|"]
            for r in rows:
                s = r["saboteur"]
                sh = s["lie_shift"]
                target = f"{_pct(sh['target_opponents']['mean'], True)} / {_pct(sh['target_public']['mean'], True)}"
                lines.append(f"| `{r['agent']}` | {r['version']} | {s['rounds']} | {_pct(s['lie_rate'])} "
                             f"({s['lies']} / {s['known_claims']}) | {_num(s['lie_lap'], 1)} | "
                             f"{_pct(s['lies_early'])} | {_pct(sh['opponents']['mean'], True)} | "
                             f"{_pct(sh['public']['mean'], True)} | {target} | {_pct(s['undetected'])} |")
            lines += ["", "### As gold-digger", "", "| agent | version | rounds | detection AUC (from) | value of "
                      "listening (pt) |", "|---|---|---|---|---|"]  # fmt: skip
            for r in rows:
                d = r["digger"]
                lines.append(f"| `{r['agent']}` | {r['version']} | {d['rounds']} | {_num(d['detection_auc'], 3)} "
                             f"({d['detection_from']}) | {_pct(d['listening'], True)} |")
        else:
            lines += ["", "| agent | version | lie rate (lies / known claims) | value of listening (pt) |",
                      "|---|---|---|---|"]
            for r in rows:
                lines.append(f"| `{r['agent']}` | {r['version']} | {_pct(r['lie_rate_any'])} ({r['lies']}) | "
                             f"{_pct(r['listening_value'], True)} |")
        if any(r.get("oracle") for r in rows):
            lines += ["", ORACLE_NOTE]
        lines.append("")
    return "\n".join(lines)


def write_markdown(boards: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = markdown(json.loads(json.dumps(_clean(boards))))
    write_atomic(path, lambda fh: fh.write(text.encode()))


__all__ = ["REGENERATE", "board", "check_update", "clean", "markdown", "merge", "read_json", "row", "secret_digest",
           "write_json", "write_markdown"]
