"""Claims in the text interface (``GameConfig(claims=True)``, ``saboteur_env.claims``): move names of the claim ids,
the claims block of an observation as JSON (lossless: ``claims_block`` inverts ``describe_claims`` bit for bit) and
its text lines. Everything here is read from the observation's claims block, which holds public claims only (never
their truth labels)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.claims import ACCUSE, CLEAR, DONE, GOAL, SUSPECT, layout
from saboteur_env.common.config import GameConfig
from saboteur_env.text.codec import DescriptionError

__all__ = ["claim_names", "claims_block", "describe_claims", "render_claims"]

SEAT_WORDS = {ACCUSE: "accuse", CLEAR: "clear", SUSPECT: "suspect"}


def claim_names(config: GameConfig) -> tuple[str, ...]:
    """Names of the claim ids, in id order: ``claim goal 0 gold``, ``claim goal 0 stone``, ``accuse seat+1``,
    ``clear seat+1``, ``suspect seat+1``, ``done claiming``."""
    lay = layout(config)
    out = []
    for a in range(lay.game_actions, lay.num_actions):
        c = lay.decode(a)
        if c.kind == DONE:
            out.append("done claiming")
        elif c.kind == GOAL:
            out.append(f"claim goal {c.target} {'gold' if c.value else 'stone'}")
        else:
            out.append(f"{SEAT_WORDS[c.kind]} seat+{c.target}")
    return tuple(out)


def _offset(i: int) -> str:
    return "you" if i == 0 else f"seat+{i}"


def _read_offset(value: Any, n: int, where: str) -> int:
    if value == "you":
        return 0
    if isinstance(value, str) and value.startswith("seat+") and value[5:].isdigit() and 1 <= int(value[5:]) < n:
        return int(value[5:])
    raise DescriptionError(f"{where}: {value!r} must be 'you' or 'seat+1'..'seat+{n - 1}'")


def _bit(v: float, where: str) -> bool:
    if v not in (0.0, 1.0):
        raise DescriptionError(f"{where}: {v!r} is not 0 or 1")
    return bool(v)


def describe_claims(config: GameConfig, block: NDArray[np.float32]) -> dict[str, Any]:
    """The JSON of a claims block (seat offsets from the viewer, newest claims first)."""
    lay = layout(config)
    n, g = lay.num_players, lay.num_goals
    if block.shape != (lay.size,):
        raise DescriptionError(f"claims block has shape {block.shape}; expected ({lay.size},)")
    parts = lay.split(block)
    st = parts["status"]
    pending = round(float(st[0]))
    if pending != st[0] or not 0 <= pending <= lay.k:
        raise DescriptionError(f"claims status: {st[0]!r} is not a claim count 0..{lay.k}")
    out: dict[str, Any] = {"per_turn": lay.k, "made_this_turn": pending,
                           "my_report_window": _bit(st[1], "claims status"),
                           "report_window_open": _bit(st[2], "claims status")}  # fmt: skip
    goals = []
    for s in range(n):
        for goal in range(g):
            gold, stone = (_bit(x, "claims goals") for x in parts["goals"][s, goal])
            if gold and stone:
                raise DescriptionError(f"claims goals: seat offset {s} goal {goal} is both gold and stone")
            if gold or stone:
                goals.append({"by": _offset(s), "goal": goal, "says": "gold" if gold else "stone"})
    out["latest_goal_claims"] = goals
    if lay.roles:
        seats = []
        for s in range(n):
            for t in range(n):
                hot = [k for k, x in zip((ACCUSE, CLEAR, SUSPECT), parts["seats"][s, t], strict=True)
                       if _bit(x, "claims seats")]  # fmt: skip
                if len(hot) > 1:
                    raise DescriptionError(f"claims seats: offset {s} about {t} holds {len(hot)} claims")
                if hot:
                    seats.append({"by": _offset(s), "about": _offset(t), "says": SEAT_WORDS[hot[0]]})
        out["latest_seat_claims"] = seats
    recent = []
    for i, row in enumerate(parts["history"]):
        if not _bit(row[0], f"claims history {i}"):
            if row.any():
                raise DescriptionError(f"claims history {i}: an empty row with values")
            continue
        sp = np.flatnonzero(row[1:1 + n])
        kd = np.flatnonzero(row[1 + n:5 + n])
        gl = np.flatnonzero(row[5 + n:5 + n + g])
        tg = np.flatnonzero(row[5 + n + g:5 + 2 * n + g])
        if sp.size != 1 or kd.size != 1 or int(kd[0]) not in (GOAL, ACCUSE, CLEAR, SUSPECT):
            raise DescriptionError(f"claims history {i}: speaker and kind must be one-hot")
        kind = int(kd[0])
        value, this_round = _bit(row[-2], f"claims history {i}"), _bit(row[-1], f"claims history {i}")
        entry: dict[str, Any] = {"by": _offset(int(sp[0]))}
        if kind == GOAL:
            if gl.size != 1 or tg.size:
                raise DescriptionError(f"claims history {i}: a goal claim names one goal and no seat")
            entry.update(claim="goal", goal=int(gl[0]), says="gold" if value else "stone")
        else:
            if tg.size != 1 or gl.size or not value:
                raise DescriptionError(f"claims history {i}: a seat claim names one seat and no goal")
            entry.update(claim=SEAT_WORDS[kind], about=_offset(int(tg[0])))
        entry["this_round"] = this_round
        recent.append(entry)
    out["recent"] = recent
    return out


def claims_block(config: GameConfig, d: Any) -> NDArray[np.float32]:
    """The claims block a ``describe_claims`` JSON was made from (bit-exact); ``DescriptionError`` otherwise."""
    lay = layout(config)
    n, g = lay.num_players, lay.num_goals
    if not isinstance(d, dict):
        raise DescriptionError(f"claims: {d!r} must be a JSON object")
    for key in ("made_this_turn", "my_report_window", "report_window_open", "latest_goal_claims", "recent"):
        if key not in d:
            raise DescriptionError(f"claims: key {key!r} is missing")
    out = np.zeros(lay.size, dtype=np.float32)
    parts = lay.split(out)
    made = d["made_this_turn"]
    if isinstance(made, bool) or not isinstance(made, int) or not 0 <= made <= lay.k:
        raise DescriptionError(f"claims made_this_turn: {made!r} out of range; valid: 0..{lay.k}")
    for key in ("my_report_window", "report_window_open"):
        if not isinstance(d[key], bool):
            raise DescriptionError(f"claims {key}: {d[key]!r} must be true or false")
    parts["status"][:] = (made, d["my_report_window"], d["report_window_open"])
    for e in d["latest_goal_claims"]:
        goal = e.get("goal")
        if not isinstance(goal, int) or isinstance(goal, bool) or not 0 <= goal < g or e.get("says") not in (
                "gold", "stone"):
            raise DescriptionError(f"claims latest_goal_claims: {e!r} needs goal 0..{g - 1} and says gold/stone")
        parts["goals"][_read_offset(e.get("by"), n, "claims by"), goal, 0 if e["says"] == "gold" else 1] = 1
    if lay.roles:
        words = {w: k for k, w in SEAT_WORDS.items()}
        for e in d.get("latest_seat_claims", []):
            if e.get("says") not in words:
                raise DescriptionError(f"claims latest_seat_claims: {e!r} says one of {sorted(words)}")
            parts["seats"][_read_offset(e.get("by"), n, "claims by"), _read_offset(e.get("about"), n, "about"),
                           words[e["says"]] - ACCUSE] = 1  # fmt: skip
    if len(d["recent"]) > lay.history:
        raise DescriptionError(f"claims recent: {len(d['recent'])} claims; at most {lay.history}")
    hist = parts["history"]
    for i, e in enumerate(d["recent"]):
        row = hist[i]
        row[0] = 1
        row[1 + _read_offset(e.get("by"), n, "claims by")] = 1
        if e.get("claim") == "goal":
            goal = e.get("goal")
            if not isinstance(goal, int) or isinstance(goal, bool) or not 0 <= goal < g or e.get("says") not in (
                    "gold", "stone"):
                raise DescriptionError(f"claims recent {i}: {e!r} needs goal 0..{g - 1} and says gold/stone")
            row[1 + n + GOAL] = 1
            row[5 + n + goal] = 1
            row[-2] = e["says"] == "gold"
        elif lay.roles and e.get("claim") in SEAT_WORDS.values():
            kind = {w: k for k, w in SEAT_WORDS.items()}[e["claim"]]
            row[1 + n + kind] = 1
            row[5 + n + g + _read_offset(e.get("about"), n, "claims about")] = 1
            row[-2] = 1
        else:
            raise DescriptionError(f"claims recent {i}: claim {e.get('claim')!r} is not a claim kind of this game")
        if not isinstance(e.get("this_round"), bool):
            raise DescriptionError(f"claims recent {i}: this_round must be true or false")
        row[-1] = e["this_round"]
    return out


def render_claims(d: dict[str, Any]) -> list[str]:
    """Text lines of a claims JSON."""
    lines = [f"Claims (free public statements, at most {d['per_turn']} before each of your moves and {d['per_turn']}"
             " right after you use a map or an inspection; they may be lies). Claims you made this turn: "
             f"{d['made_this_turn']}."]  # fmt: skip
    if d["my_report_window"]:
        lines.append("You just used a map or an inspection: you may claim now, or reply 'done claiming'.")
    elif d["report_window_open"]:
        lines.append("Another player is making claims after a map or an inspection.")
    goal = [f"{e['by']}: goal {e['goal']} is {e['says']}" for e in d["latest_goal_claims"]]
    lines.append("Latest goal claims this round: " + ("; ".join(goal) if goal else "none") + ".")
    if "latest_seat_claims" in d:
        seat = [_seat_claim(e["by"], e["says"], e["about"]) for e in d["latest_seat_claims"]]
        lines.append("Latest claims about players this round: " + ("; ".join(seat) if seat else "none") + ".")
    lines.append(f"Recent claims (newest first, {len(d['recent'])}):")
    for e in d["recent"]:
        when = "" if e["this_round"] else " (an earlier round)"
        if e["claim"] == "goal":
            lines.append(f"  {e['by']}: goal {e['goal']} is {e['says']}{when}")
        else:
            lines.append(f"  {_seat_claim(e['by'], e['claim'], e['about'])}{when}")
    return lines


def _seat_claim(by: str, word: str, about: str) -> str:
    if word == "suspect":
        return f"{by}: suspects {about}"
    verb = "are" if about == "you" else "is"
    return f"{by}: {about} {verb} {'not ' if word == 'clear' else ''}a saboteur"
