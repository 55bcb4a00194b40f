"""Rollout value heads: the blueprint trunk's estimate of a seat's gold in the rest of the round.

``agents.search`` can stop a rollout after ``depth`` decisions and add, for the searching seat, what its value head
predicts from the seat's own observation in that position (``saboteur_env.core.rollout``'s ``leaf``). The head is
linear on the blueprint network's trunk (the same 2 tanh layers the policy reads), one per role head, fitted by
``experiments.train.value`` to the **round's gold from that position on** (the Duel: the seat's gold minus the
opponent's) under blueprint play: the quantity a full rollout measures.

A head file is JSON (``format: saboteur-env/value-head``): the blueprint it belongs to (its sha256: a head is only
valid on the trunk it was fitted on), per role head a weight vector and a bias, what it predicts, its held-out
errors and the command that made it. Shipped heads sit in ``agents/policies/value/GAME-Np.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.files import FileRefusedError, open_regular
from agents.learned import NumpyPolicy
from saboteur_env import GameConfig

VALUE_TARGET = "round_gold"
FORMAT = "saboteur-env/value-head"
FORMAT_VERSION = 1
MAX_BYTES = 4 << 20
VALUE_DIR = Path(__file__).resolve().parent / "policies" / "value"


class ValueHeadError(ValueError):
    """A value head file that cannot be read or does not belong to the blueprint."""


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ValueHead:
    """A fitted head (see the module docstring); :meth:`estimate` runs the blueprint's trunk and the head."""

    def __init__(self, path: str | Path, blueprint: NumpyPolicy) -> None:
        self.path = Path(path)
        try:
            with open_regular(self.path, MAX_BYTES) as fh:
                raw = fh.read(MAX_BYTES + 1)
        except FileRefusedError as e:
            raise ValueHeadError(f"value head file {e.path} {e.problem}") from None
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as e:
            raise ValueHeadError(f"{self.path} is not a JSON value head ({type(e).__name__})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
            raise ValueHeadError(f"{self.path} is not a {FORMAT} file of version {FORMAT_VERSION}")
        if data.get("target") != VALUE_TARGET:
            raise ValueHeadError(f"{self.path} predicts {data.get('target')!r}; the search needs {VALUE_TARGET!r}")
        want = file_sha256(blueprint.path)
        if data.get("blueprint_sha256") != want:
            raise ValueHeadError(f"{self.path} was fitted on another blueprint (sha256 {data.get('blueprint_sha256')!r}"
                                 f"); {blueprint.path} has {want}")  # fmt: skip
        heads = data.get("heads")
        hidden = int(blueprint.meta["hidden"])
        if not isinstance(heads, list) or len(heads) != blueprint.num_heads:
            raise ValueHeadError(f"{self.path} needs {blueprint.num_heads} heads (one per role head of the blueprint)")
        w, b = [], []
        for i, h in enumerate(heads):
            ok = isinstance(h, dict) and isinstance(h.get("w"), list) and len(h["w"]) == hidden
            vals = [*h["w"], h.get("b")] if ok else []
            if not ok or not all(isinstance(x, int | float) and math.isfinite(x) for x in vals):
                raise ValueHeadError(f"{self.path}: head {i} needs 'w' ({hidden} finite numbers) and a finite 'b'")
            w.append(h["w"])
            b.append(h["b"])
        self.w = np.asarray(w, dtype=np.float32)
        self.b = np.asarray(b, dtype=np.float32)
        self.blueprint = blueprint
        self.record: dict[str, Any] = data

    def estimate(self, obs: NDArray[np.float32]) -> NDArray[np.float32]:
        """The predicted gold to the round's end of the seat whose observations ``obs`` are (one per row)."""
        h, head = self.blueprint._hidden(obs)
        return np.einsum("ij,ij->i", h, self.w[head]) + self.b[head]


def shipped_value_path(config: GameConfig) -> Path:
    return VALUE_DIR / f"{config.game}-{config.num_players}p.json"


def value_head_for(blueprint: NumpyPolicy, config: GameConfig, path: str | Path | None = None) -> ValueHead:
    """The head in ``path``, else the one shipped for ``config`` (ValueHeadError naming why neither fits)."""
    if blueprint.features:
        raise ValueHeadError(f"{blueprint.path} reads belief features; a value head needs an observation-only trunk")
    if path is None:
        path = shipped_value_path(config)
        if not path.is_file():
            raise ValueHeadError(f"no value head is shipped for game {config.game!r} at {config.num_players} players "
                                 "(experiments.train.value fits one; pass value=PATH)")  # fmt: skip
    return ValueHead(path, blueprint)
