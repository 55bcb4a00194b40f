"""The imitation data set: collected decisions in compressed sparse rows, their belief features, and the data files
(``data.npz``)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import zipfile
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base.belief_features import feature_size, features_of_sequence
from agents.files import open_regular
from saboteur_env import GameConfig, num_actions, observation_layout

DATA_VERSION = 1


_FIELDS = ("obs_ptr", "obs_idx", "obs_val", "legal_ptr", "legal", "action", "ret", "game", "seat", "finals")


# ---- collection ---------------------------------------------------------------------------------------------------
@dataclass
class Data:
    """Teacher decisions, row ``i``: observation entries ``obs_idx/obs_val[obs_ptr[i]:obs_ptr[i+1]]`` (float
    observation of size ``obs_size``), legal actions ``legal[legal_ptr[i]:legal_ptr[i+1]]``, the ``action`` taken,
    the seat's discounted ``ret`` from here on, the ``seat`` and the ``game`` it belongs to; ``finals[g]`` are game
    ``g``'s final returns (every seat)."""

    obs_ptr: NDArray[np.int64]
    obs_idx: NDArray[np.int32]
    obs_val: NDArray[np.float32]
    legal_ptr: NDArray[np.int64]
    legal: NDArray[np.int32]
    action: NDArray[np.int64]
    ret: NDArray[np.float32]
    game: NDArray[np.int64]
    seat: NDArray[np.int64]
    finals: NDArray[np.float32]
    obs_size: int
    feat: NDArray[np.float32] | None = None  # belief features per row (with_features), read after the observation
    # The teacher's choice distribution over each row's legal actions (aligned with ``legal``; rows sum to 1), where
    # the teacher has one (the search's per-move values, ``soft_temperature``); None: a point mass at ``action``.
    soft: NDArray[np.float32] | None = None

    def __len__(self) -> int:
        return int(self.action.size)

    def arrays(self) -> dict[str, NDArray[Any]]:
        soft = {} if self.soft is None else {"soft": self.soft}
        return {k: getattr(self, k) for k in _FIELDS} | {"obs_size": np.array(self.obs_size)} | soft

    @classmethod
    def from_arrays(cls, a: dict[str, NDArray[Any]]) -> Data:
        soft = np.asarray(a["soft"], dtype=np.float32) if "soft" in a else None
        if soft is not None and soft.shape != np.shape(a["legal"]):
            raise ValueError(f"soft targets of shape {soft.shape} do not line up with the {np.size(a['legal'])} "
                             "legal entries (one probability per legal entry)")  # fmt: skip
        return cls(**{k: a[k] for k in _FIELDS}, obs_size=int(a["obs_size"]), soft=soft)

    def point_mass(self) -> NDArray[np.float32]:
        """``soft`` as it reads without a teacher distribution: 1 at each row's ``action``, 0 elsewhere."""
        row = np.repeat(np.arange(len(self)), np.diff(self.legal_ptr))
        return (self.legal == self.action[row]).astype(np.float32)

    def targets(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The target probability of every legal action of ``rows`` (``legal_pairs`` order)."""
        pos, _ = _spans(self.legal_ptr, rows)
        if self.soft is not None:
            return self.soft[pos]
        which, acts = self.legal_pairs(rows)
        return (acts == self.action[rows][which]).astype(np.float32)

    @classmethod
    def from_npz(cls, z: Any) -> Data:
        """The data of an open ``data.npz`` (its ``key`` and ``collect_s`` header entries left out)."""
        return cls.from_arrays({k: z[k] for k in z.files if k not in ("key", "collect_s")})

    def dense(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The float observations of ``rows``."""
        extra = 0 if self.feat is None else self.feat.shape[1]
        out = np.zeros((rows.size, self.obs_size + extra), dtype=np.float32)
        pos, counts = _spans(self.obs_ptr, rows)
        which = np.repeat(np.arange(rows.size), counts)
        out[which, self.obs_idx[pos]] = self.obs_val[pos]
        if self.feat is not None:
            out[:, self.obs_size :] = self.feat[rows]
        return out

    def legal_pairs(self, rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(row in batch, action)`` of every legal action of ``rows`` (row-major, like ``mask.nonzero()``)."""
        pos, counts = _spans(self.legal_ptr, rows)
        which = np.repeat(np.arange(rows.size), counts)
        return which, self.legal[pos].astype(np.int64)


def concat(parts: list[Data]) -> Data:
    """Join data of several workers (game ids stay distinct: each worker's ids are offset)."""
    obs_ptr, legal_ptr, games = [np.zeros(1, dtype=np.int64)], [np.zeros(1, dtype=np.int64)], []
    o = lg = g = 0
    for p in parts:
        obs_ptr.append(p.obs_ptr[1:] + o)
        legal_ptr.append(p.legal_ptr[1:] + lg)
        games.append(p.game + g)
        o, lg = o + int(p.obs_ptr[-1]), lg + int(p.legal_ptr[-1])
        g += len(p.finals)
    cat = {k: np.concatenate([getattr(p, k) for p in parts]) for k in _FIELDS}
    cat.update(obs_ptr=np.concatenate(obs_ptr), legal_ptr=np.concatenate(legal_ptr), game=np.concatenate(games))
    feats = [p.feat for p in parts if p.feat is not None]
    if feats and (len(feats) != len(parts) or len({f.shape[1] for f in feats}) != 1):
        raise ValueError("parts to join must all carry belief features of one size, or none")
    feat = np.concatenate(feats) if feats else None
    # a part without a teacher distribution joins one that has it as its point masses
    soft = None
    if any(p.soft is not None for p in parts):
        soft = np.concatenate([p.point_mass() if p.soft is None else p.soft for p in parts])
    return Data(**cat, obs_size=parts[0].obs_size, feat=feat, soft=soft)


# ---- belief features ----------------------------------------------------------------------------------------------
_FEATURE_JOB: tuple[Data, GameConfig, str] | None = None  # what forked feature workers read (not pickled per job)


def _features_of(data: Data, config: GameConfig, name: str,
                 groups: list[NDArray[np.int64]]) -> list[NDArray[np.float32]]:  # fmt: skip
    return [features_of_sequence(config, int(data.seat[g[0]]), data.dense(g), name) for g in groups]


def _features_worker(groups: list[NDArray[np.int64]]) -> list[NDArray[np.float32]]:
    assert _FEATURE_JOB is not None
    return _features_of(*_FEATURE_JOB, groups)


def with_features(data: Data, config: GameConfig, name: str, workers: int = 1) -> Data:
    """``data`` with its belief features (``agents.base.belief_features``): each seat's recorded decisions of a game are
    replayed in order through the seat's follower, exactly as the learned agent follows its own observations. Every
    decision of a teacher seat is recorded (collect), so each sequence is complete."""
    global _FEATURE_JOB
    if not name:
        return data
    order = np.lexsort((np.arange(len(data)), data.seat, data.game))  # by game, seat, then time
    key = data.game[order] * (config.num_players + 1) + data.seat[order]
    groups = np.split(order, np.flatnonzero(np.diff(key)) + 1) if len(data) else []
    feat = np.zeros((len(data), feature_size(name, config)), dtype=np.float32)
    if workers <= 1 or len(groups) < 2 * workers:
        parts = [_features_of(data, config, name, groups)]
        chunks = [groups]
    else:
        chunks = [groups[i::workers] for i in range(workers)]
        _FEATURE_JOB = (data, config, name)
        try:  # fork: the workers share the data instead of receiving a copy each
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                parts = list(pool.map(_features_worker, chunks))
        finally:
            _FEATURE_JOB = None
    for chunk, part in zip(chunks, parts, strict=True):
        for g, f in zip(chunk, part, strict=True):
            feat[g] = f
    return dataclasses.replace(data, feat=feat)


# ---- the command --------------------------------------------------------------------------------------------------
MAX_DATA_BYTES = 8 << 30  # an --extra data file (compressed observations of millions of decisions)


class DataFileError(ValueError):
    """An ``--extra`` file that is not imitation data of this game and player count."""


def load_data(path: str | Path, config: GameConfig) -> Data:
    """An earlier collection's ``data.npz`` (``--extra``), checked to be data of ``config``'s game and players."""
    bad = (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error)
    try:
        # A regular file only (a FIFO would block np.load, /dev/zero never end); FileRefusedError is a ValueError.
        with open_regular(path, MAX_DATA_BYTES) as fh:
            loaded = np.load(fh, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an .npz archive")
            with loaded as z:
                key = json.loads(str(z["key"]))
                data = Data.from_npz(z)
    except bad as e:
        raise DataFileError(f"{path} is not an imitation data file ({type(e).__name__}: {e})") from e
    got = (key.get("game"), key.get("num_players")) if isinstance(key, dict) else None
    if got != (config.game, config.num_players):
        raise DataFileError(f"{path} holds data of (game, players) {got}; this run is "
                            f"{(config.game, config.num_players)}")  # fmt: skip
    size, n = observation_layout(config).size, num_actions(config)
    if data.obs_size != size:
        raise DataFileError(f"{path} holds observations of {data.obs_size} entries; this game has {size}")
    if len(data) and (data.legal.max(initial=0) >= n or data.action.max() >= n or data.obs_idx.max(initial=0) >= size):
        raise DataFileError(f"{path} holds action or observation indices out of range (actions 0..{n - 1})")
    return data


def _spans(ptr: NDArray[np.int64], rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Positions of the entries of ``rows`` in a CSR array with row pointers ``ptr`` (row after row), and counts."""
    starts, counts = ptr[rows], ptr[rows + 1] - ptr[rows]
    return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum())), counts
