"""Move names and the reply parser.

Every action id of a configuration has one stable short name (``play T05 at r2c5 rot0``, ``break pickaxe seat+1``,
``map goal 1``, ``discard MAP``; docs/text.md lists them per game). A reply is matched against the legal moves after
normalisation (case, punctuation and spacing ignored; ``_``/``-`` read as spaces; ``r2 c5`` = ``r2c5``, ``rot 180``
= ``rot180``, ``seat + 1`` = ``seat+1``), in this order:

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
_PLUS = re.compile(r"\s*\+\s*")
_CELL = re.compile(r"\br(\d+) c(\d+)\b")
_ROT = re.compile(r"\brot (\d+)\b")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_OBJECT = re.compile(r"\{.*\}", re.S)


def normalize(text: str) -> str:
    """The matching key of a name or reply: lower case, words of ``[a-z0-9+]``, single spaces."""
    s = " ".join(_DROP.sub(" ", text.lower()).split())
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


def _keys(config: GameConfig) -> dict[str, int]:
    """Normalised move name -> action id."""

    def build(cfg: GameConfig) -> dict[str, int]:
        keys = {normalize(n): a for a, n in enumerate(move_names(cfg))}
        if len(keys) != len(move_names(cfg)):
            raise ValueError(f"{cfg.game}: two move names normalise to the same key")
        return keys

    return config.cached("_text_move_keys", build)


def _key_list(config: GameConfig) -> list[str]:
    """Normalised move name per action id."""
    return config.cached("_text_move_key_list", lambda cfg: list(_keys(cfg)))


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
    key_list = _key_list(config)
    legal_keys = {key_list[a]: int(a) for a in legal}
    for cands in ([k for k in legal_keys if k.startswith(key + " ")], [k for k in legal_keys if k.startswith(key)]):
        if len(cands) == 1:
            return legal_keys[cands[0]]
        if cands:
            shown = [names[legal_keys[k]] for k in cands]
            raise AmbiguousMoveError(f"{move!r} fits {len(cands)} legal moves: {_show(shown)}; name one exactly",
                                     reply, tuple(shown))  # fmt: skip
    padded = f" {key} "
    found = [k for k in legal_keys if f" {k} " in padded]
    found = [k for k in found if not any(k != other and f" {k} " in f" {other} " for other in found)]
    if len(found) == 1:
        return legal_keys[found[0]]
    if found:
        shown = [names[legal_keys[k]] for k in found]
        raise AmbiguousMoveError(f"the reply names {len(found)} legal moves: {_show(shown)}; name one",
                                 reply, tuple(shown))  # fmt: skip
    illegal = [k for k in keys if f" {k} " in padded]
    illegal = [k for k in illegal if not any(k != o and f" {k} " in f" {o} " for o in illegal)]
    if illegal:
        shown = [names[keys[k]] for k in illegal]
        raise IllegalMoveError(f"{_show(shown)} {'is' if len(shown) == 1 else 'are'} not legal now; {hint}", reply)
    if json_error:
        raise MalformedReplyError(f"{json_error}, and the text names no legal move; {hint}", reply)
    raise UnknownMoveError(f"{move!r} names no legal move; {hint}", reply)
