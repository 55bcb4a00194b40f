"""Move names and the reply parser.

Every action id of a configuration has one name in the one move notation, its ``action_to_string``
(``place T06 rot180 at (2,5)``, ``break pickaxe seat+1``, ``map goal 1``, ``discard MAP``; cells in frame
coordinates, as the boards label them; docs/text.md lists the names per game). The older spellings (the text
interface's ``play T06 at r2c5 rot180`` in storage coordinates, the old ``action_to_string``'s ``place T06 curve N-E
180 at (2,5)``; :mod:`saboteur_env.text.legacy`) are read as the same moves. A reply is matched against the legal
moves after normalisation (case, punctuation and spacing ignored; ``_``/``-`` read as spaces; ``(2, 5)`` = ``2,5`` =
``(2,5)``, ``(-1,0)`` keeps its sign; ``r2 c5`` = ``r2c5``, ``rot 180`` = ``rot180``, ``seat + 1`` = ``seat+1``), in
this order:

1. a JSON object ``{"move": NAME}`` (also ``"action"``/``"name"``; an integer there is an action id);
2. the exact name of a legal move;
3. a unique prefix of the legal names (whole words first, then characters);
4. free text that contains exactly one legal move name (a name inside a longer matching name counts once).

Anything else raises a :class:`MoveError` (a ``ValueError``): :class:`IllegalMoveError` (a real move that is not
legal now), :class:`AmbiguousMoveError` (several legal moves fit; lists them), :class:`UnknownMoveError` (no move
fits) or :class:`MalformedReplyError` (empty, not text, or JSON without a move).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env import api
from saboteur_env.common.config import GameConfig
from saboteur_env.text.games import game_format

__all__ = [
    "AmbiguousMoveError",
    "IllegalMoveError",
    "MalformedReplyError",
    "MoveError",
    "UnknownMoveError",
    "check_mask",
    "legal_moves",
    "move_id",
    "move_name",
    "move_names",
    "normalize",
    "parse_move",
]


class MoveError(ValueError):
    """A reply that does not name exactly one legal move; ``reply`` is what was given."""

    kind = "unknown"

    def __init__(self, message: str, reply: object = None, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reply = reply
        self.candidates = candidates


class UnknownMoveError(MoveError):
    kind = "unknown"


class AmbiguousMoveError(MoveError):
    kind = "ambiguous"


class IllegalMoveError(MoveError):
    kind = "illegal"


class MalformedReplyError(MoveError):
    kind = "malformed"


_DROP = re.compile(r"[^a-z0-9+]+")
# A frame cell "(r,c)" / "r, c" (signed), not part of a longer word or number: one token, so the minus sign survives
# the punctuation being dropped and (-1,2) never reads as (1,2).
_FRAME = re.compile(r"(?<![\w+.-])\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?(?![\w.])")
_PLUS = re.compile(r"\s*\+\s*")
_CELL = re.compile(r"\br(\d+) c(\d+)\b")
_ROT = re.compile(r"\brot (\d+)\b")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_OBJECT = re.compile(r"\{.*\}", re.S)


def _signed(number: str) -> str:
    return f"m{int(number[1:])}" if number.startswith("-") else str(int(number))


def normalize(text: str) -> str:
    """The matching key of a name or reply: lower case, words of ``[a-z0-9+]``, single spaces."""
    s = _FRAME.sub(lambda m: f" {_signed(m.group(1))}x{_signed(m.group(2))} ", text.lower())
    s = " ".join(_DROP.sub(" ", s).split())
    s = _PLUS.sub("+", s)
    s = _CELL.sub(r"r\1c\2", s)
    return _ROT.sub(r"rot\1", s)


def move_names(config: GameConfig) -> tuple[str, ...]:
    """The name of every action id of ``config`` (index = action id); with claims, the claim ids' names follow the
    game's (``saboteur_env.text.claims.claim_names``)."""
    if config.claims:
        from saboteur_env.text.claims import claim_names

        return config.cached("_text_claim_move_names",
                             lambda c: game_format(c.game_config).names + claim_names(c))  # fmt: skip
    return game_format(config).names


def _num_actions(config: GameConfig) -> int:
    return len(move_names(config)) if config.claims else api.num_actions(config)


def _spellings(config: GameConfig) -> list[tuple[str, ...]]:
    """Per action id: its name first, then its older spellings (claims have only their name)."""
    from saboteur_env.text.legacy import legacy_names

    names = move_names(config)
    old = legacy_names(config.game_config)
    return [(n, *old[a]) if a < len(old) else (n,) for a, n in enumerate(names)]


def _keys(config: GameConfig) -> dict[str, int]:
    """Normalised move name (or older spelling) -> action id."""

    def build(cfg: GameConfig) -> dict[str, int]:
        names = move_names(cfg)
        keys = {normalize(n): a for a, n in enumerate(names)}
        if len(keys) != len(names):
            raise ValueError(f"{cfg.game}: two move names normalise to the same key")
        for a, spellings in enumerate(_spellings(cfg)):
            for old in spellings[1:]:
                keys.setdefault(normalize(old), a)  # a name always wins over another move's old spelling
        return keys

    return config.cached("_text_move_keys", build)


def _key_lists(config: GameConfig) -> list[list[str]]:
    """The normalised keys that name each action id (its name's first)."""

    def build(cfg: GameConfig) -> list[list[str]]:
        out: list[list[str]] = [[] for _ in move_names(cfg)]
        for k, a in _keys(cfg).items():
            out[a].append(k)
        return out

    return config.cached("_text_move_key_lists", build)


def move_name(config: GameConfig, action: int) -> str:
    """The name of one action id (``ActionError`` out of range)."""
    if config.claims:
        from saboteur_env.common.errors import check_action_id

        return move_names(config)[check_action_id(action, _num_actions(config))]
    return move_names(config)[api.action_layout(config).check(action)]


def move_id(config: GameConfig, name: str) -> int:
    """The action id of an exact move name (after normalisation); ``UnknownMoveError`` otherwise."""
    a = _keys(config).get(normalize(name)) if isinstance(name, str) else None
    if a is None:
        raise UnknownMoveError(f"{name!r} is not a move name of {config.game}", name)
    return a


def check_mask(config: GameConfig, mask: object) -> NDArray[np.bool_]:
    """A mask as a bool array, checked against the action space (``ValueError`` naming both shapes)."""
    m = np.asarray(mask)
    n = _num_actions(config)
    if m.shape != (n,):
        raise ValueError(f"action mask has shape {m.shape}; expected ({n},) for {config.game}")
    return m.astype(bool)


def legal_moves(config: GameConfig, mask: object) -> list[str]:
    """Names of the legal moves of a mask, in action-id order."""
    names = move_names(config)
    return [names[a] for a in np.flatnonzero(check_mask(config, mask))]


def _extract(reply: object, hint: str) -> tuple[object, str | None]:
    """(the move part of a reply, a JSON error message if the reply looked like JSON but did not parse)."""
    if isinstance(reply, dict):
        obj: Any = reply
    else:
        if not isinstance(reply, str):
            raise MalformedReplyError(f"reply {reply!r} must be text or a JSON object; {hint}", reply)
        text = reply.strip()
        fenced = _FENCE.search(text)
        if fenced:
            text = fenced.group(1).strip()
        found = _OBJECT.search(text)
        if not found:
            unclosed = "the JSON in the reply does not parse (no closing brace)"
            return reply, (unclosed if text.startswith("{") else None)
        try:
            obj = json.loads(found.group(0))
        except json.JSONDecodeError as e:
            return reply, f"the JSON in the reply does not parse ({e.msg} at char {e.pos})"
        if not isinstance(obj, dict):
            return reply, None
    for key in ("move", "action", "name"):
        if key in obj:
            return obj[key], None
    raise MalformedReplyError(f"JSON reply {obj!r} has no 'move' key (use {{\"move\": NAME}}); {hint}", reply)


def _show(names: list[str], limit: int = 8) -> str:
    more = f" (and {len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(repr(n) for n in names[:limit]) + more


def parse_move(config: GameConfig, reply: object, mask: object) -> int:
    """The legal action id a reply names (see the module docstring for the matching rules)."""
    m = check_mask(config, mask)
    legal = np.flatnonzero(m)
    names = move_names(config)
    if legal.size == 0:
        raise IllegalMoveError("no move is legal in this position (the mask is all False)", reply)
    hint = f"valid: one of the {legal.size} legal moves, e.g. {_show([names[a] for a in legal[:3]], 3)}"
    move, json_error = _extract(reply, hint)
    if isinstance(move, (int, np.integer)) and not isinstance(move, bool):
        a = int(move)
        if 0 <= a < len(names) and m[a]:
            return a
        if 0 <= a < len(names):
            raise IllegalMoveError(f"action id {a} ({names[a]!r}) is not legal now; {hint}", reply)
        raise UnknownMoveError(f"action id {a} is out of range 0..{len(names) - 1}; {hint}", reply)
    if not isinstance(move, str):
        raise MalformedReplyError(f"move {move!r} must be a move name (text); {hint}", reply)
    key = normalize(move)
    if not key:
        raise MalformedReplyError(f"reply {reply!r} is empty; {hint}", reply)
    keys = _keys(config)
    if key in keys:
        a = keys[key]
        if m[a]:
            return a
        raise IllegalMoveError(f"move {names[a]!r} is not legal now; {hint}", reply)
    key_lists = _key_lists(config)
    legal_keys = {k: int(a) for a in legal for k in key_lists[a]}
    for cands in ([k for k in legal_keys if k.startswith(key + " ")], [k for k in legal_keys if k.startswith(key)]):
        hits = sorted({legal_keys[k] for k in cands})
        if len(hits) == 1:
            return hits[0]
        if hits:
            shown = [names[a] for a in hits]
            raise AmbiguousMoveError(f"{move!r} fits {len(hits)} legal moves: {_show(shown)}; name one exactly",
                                     reply, tuple(shown))  # fmt: skip
    padded = f" {key} "
    found = [k for k in legal_keys if f" {k} " in padded]
    found = [k for k in found if not any(k != other and f" {k} " in f" {other} " for other in found)]
    hits = sorted({legal_keys[k] for k in found})
    if len(hits) == 1:
        return hits[0]
    if hits:
        shown = [names[a] for a in hits]
        raise AmbiguousMoveError(f"the reply names {len(hits)} legal moves: {_show(shown)}; name one",
                                 reply, tuple(shown))  # fmt: skip
    illegal = [k for k in keys if f" {k} " in padded]
    illegal = [k for k in illegal if not any(k != o and f" {k} " in f" {o} " for o in illegal)]
    if illegal:
        shown = [names[a] for a in sorted({keys[k] for k in illegal})]
        raise IllegalMoveError(f"{_show(shown)} {'is' if len(shown) == 1 else 'are'} not legal now; {hint}", reply)
    if json_error:
        raise MalformedReplyError(f"{json_error}, and the text names no legal move; {hint}", reply)
    raise UnknownMoveError(f"{move!r} names no legal move; {hint}", reply)
