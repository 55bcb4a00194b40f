"""A self-play policy (``experiments.train.selfplay``) as an agent, evaluated in numpy:
``make_agent("learned:P.npz", cfg)``.

The file is a plain ``.npz`` (read with ``allow_pickle=False``, so loading runs no code): ``meta`` is a JSON string
(format, version, the config fields that fix what observation and action indices mean, sizes, the role slice,
head count), ``scale`` the observation scaling, ``w0 b0 w1 b1`` the tanh trunk (weights stored input-major),
``pi_w{r} pi_b{r} v_w{r} v_b{r}`` the policy and value heads of role group ``r`` (one group without role heads).
With ``embed`` > 0 in the header, ``pe_w pe_b`` map the trunk's output linearly to ``embed`` features, the input
of every policy head (a bottleneck: ``embed x A`` head weights instead of ``hidden x A``); the value heads read the
trunk's output. A header without ``embed`` has none.
With ``features`` in the header (``"bayes"``, base game), the network's input is the observation followed by the
seat's belief features (:mod:`agents.base.belief_features`), which the agent keeps up to date from its own observations:
``obs_size`` counts both. A header without ``features`` has none.
Weights may be stored as float16 (the shipped files: half the size) or float32; they are computed in float32.
A file trained for another configuration is refused with the difference named.
With ``claims`` in the header (K, the claims per turn; ``experiments.train.selfplay --claims``), the network plays
the claims game itself (``GameConfig(claims=True)``): its input is the observation followed by the claims block and
its actions are the game's followed by the claim ids (``saboteur_env.claims.ClaimLayout``). It plays only a claims
game of the same K; a header without ``claims`` plays only games without claims (the claims rule seats it inside a
``claims:NAME`` wrapper, which shows it the game part alone).

Version 2 files (header ``"net": "compact"``, ``experiments.train.selfplay --net compact``) hold the compact network:
``emb`` (one row per token id of :class:`agents.compact_reader.CompactReader`), ``wd b0`` the first layer's count
weights, ``w1 b1`` and the heads as above; the header records the reader's sizes and version, which must match the
reader of the game. The agent rebuilds the compact observation from the float one (the base game; Saboteur 2 and
the Duel files are evaluated by the trainer on compact observations, :meth:`NumpyPolicy.forward_packed`).

``make_agent("learned", cfg)`` plays the policy shipped for the config (:func:`shipped_agent`): the files of
``agents/policies/``, listed in its ``manifest.json`` (written by ``python -m experiments.train.ship``).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base.belief_features import BeliefFeatures, feature_size
from agents.compact_reader import CompactReader, compress_base, reader
from agents.files import FileRefusedError, open_regular
from saboteur_env import GameConfig, PlayerView, num_actions, observation_layout

FORMAT = "saboteur-env/learned-mlp"
FORMAT_VERSION = 1
COMPACT_VERSION = 2  # the compact network (header "net": "compact")
# Config fields that fix what observation and action indices mean: a policy plays only games that agree on them.
LAYOUT_FIELDS = ("game", "num_players", "margin", "history_length", "duel_layout")
MAX_WIDTH = 4096
MAX_FILE_BYTES = 256 << 20
MAX_META_BYTES = 1 << 20  # the JSON header's member (the shipped ones are under 2 KiB)
MAX_VALUES = 1 << 25  # weights in all (128 MiB as float32; the shipped files hold under 1M)
NPY_HEADER_MAX = 4096  # bytes before a member's data (numpy writes 128 for these arrays)
_BASE_ROLES = ("miner", "saboteur")
UNIVERSAL_GAMES = ("base", "sab2", "duel")  # agents.universal.GAMES (not imported here: it builds layouts)


class PolicyFileError(ValueError):
    """A ``.npz`` policy file that is malformed or trained for another configuration."""


class PolicyMismatchError(PolicyFileError):
    """A well-formed policy file trained for another configuration (game, players, margin, history, layout)."""


def role_names(config: GameConfig) -> tuple[str, ...]:
    """Names of the role one-hot entries of the observation (``("player",)`` where the game has no roles)."""
    if config.game == "sab2":
        from saboteur_env.sab2.cards import ROLE_NAMES

        return tuple(n.replace(" ", "_").replace("-", "_") for n in ROLE_NAMES)
    if role_slice(config) is None:
        return ("player",)
    return _BASE_ROLES


def role_slice(config: GameConfig) -> slice | None:
    """Where the acting seat's role one-hot sits in the observation, or None (the Duel)."""
    sl = observation_layout(config).slices.get("role")
    return sl if isinstance(sl, slice) else None


class NumpyPolicy:
    """The exported network: ``logits(obs)`` and ``value(obs)`` for a batch (or one) of float observations."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            with open_regular(self.path, MAX_FILE_BYTES) as fh:
                archive = _open_npz(fh, self.path)
                meta_raw = _read_npz_member(archive, self.path, "meta", MAX_META_BYTES)
                arrays: dict[str, Any] = {"meta": _parse_npy(meta_raw, self.path, "meta")}
                meta = self._meta(arrays)
                shapes = self._shapes(meta)
                # Every member's name and uncompressed size is checked against the header's shapes from the zip
                # directory before anything else is decompressed: a small crafted file cannot force a huge read.
                _check_directory(archive, self.path, shapes)
                for k, shape in shapes.items():
                    raw = _read_npz_member(archive, self.path, k, _npy_limit(shape))
                    arrays[k] = _parse_npy(raw, self.path, k)
        except FileRefusedError as e:
            raise PolicyFileError(f"policy file {e.path} {e.problem}") from None
        for k, shape in shapes.items():
            a = arrays[k]
            if a.shape != shape or a.dtype not in (np.float32, np.float16):
                raise PolicyFileError(f"{self.path}: entry {k!r} must be float32 of shape {shape} "
                                      f"(got {(a.shape, str(a.dtype))})")  # fmt: skip
            if not np.isfinite(a).all():
                raise PolicyFileError(f"{self.path}: entry {k!r} holds NaN or infinite values")
            arrays[k] = a.astype(np.float32)
            arrays[k].flags.writeable = False  # shared between agents (see _cached_policy)
        del arrays["meta"]
        self.w = arrays
        self._specialized: dict[tuple[Any, ...], NumpyPolicy] = {}

    def _meta(self, arrays: dict[str, Any]) -> dict[str, Any]:
        """The validated JSON header (``meta``); sets the sizes it declares."""
        raw = arrays["meta"]
        if raw.ndim != 0 or raw.dtype.kind != "U":
            raise PolicyFileError(f"{self.path} has no readable 'meta' entry (not a string: {raw.dtype}, {raw.shape})")
        try:
            meta = json.loads(str(raw))
        except (json.JSONDecodeError, RecursionError) as e:  # RecursionError: nesting deeper than json's stack
            raise PolicyFileError(f"{self.path} has no readable 'meta' entry ({type(e).__name__})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
            raise PolicyFileError(f"{self.path} is not a {FORMAT} file (format {got!r})")
        if meta.get("version") not in (FORMAT_VERSION, COMPACT_VERSION):
            raise PolicyFileError(f"{self.path} has format version {meta.get('version')!r}; supported: "
                                  f"{FORMAT_VERSION}, {COMPACT_VERSION}")  # fmt: skip
        self.net = "compact" if meta["version"] == COMPACT_VERSION else "mlp"
        if meta.get("net", "mlp") != self.net:
            raise PolicyFileError(f"{self.path}: net={meta.get('net')!r} does not fit format version "
                                  f"{meta['version']} (1: 'mlp', 2: 'compact')")  # fmt: skip
        self.meta: dict[str, Any] = meta
        try:
            self.obs_size, self.num_actions = int(meta["obs_size"]), int(meta["num_actions"])
            self.num_heads, hidden = int(meta["num_heads"]), int(meta["hidden"])
            self.embed = meta.get("embed", 0)
            if isinstance(self.embed, bool) or not isinstance(self.embed, int):
                raise ValueError(f"embed={self.embed!r} is not an integer")
            self.role_start, self.role_stop = (int(x) for x in meta["role_slice"])
            self.features = meta.get("features", "")
            if not isinstance(self.features, str):
                raise ValueError(f"features={self.features!r} is not a string")
            self.universal = meta.get("universal", "")
            if self.universal not in ("", *UNIVERSAL_GAMES):
                raise ValueError(f"universal={self.universal!r} is not one of {UNIVERSAL_GAMES}")
            self.claims = meta.get("claims", 0)  # claims per turn the network talks with (0: no claims)
            if isinstance(self.claims, bool) or not isinstance(self.claims, int) or not 0 <= self.claims <= 8:
                raise ValueError(f"claims={self.claims!r} is out of range; valid: 0 (none) or 1..8")
        except (KeyError, TypeError, ValueError) as e:
            raise PolicyFileError(f"{self.path}: header entry missing or malformed ({e!r})") from e
        if not 1 <= hidden <= MAX_WIDTH or not 1 <= self.num_heads <= 16 or not 0 <= self.embed <= hidden:
            raise PolicyFileError(f"{self.path}: hidden={hidden} / embed={self.embed} / num_heads={self.num_heads} "
                                  "out of range (1..4096 / 0..hidden / 1..16)")
        if self.universal and self.net != "mlp":
            raise PolicyFileError(f"{self.path}: a universal network is an mlp (net={self.net!r})")
        if self.claims and (self.net != "mlp" or self.features or self.universal):
            raise PolicyFileError(f"{self.path}: a claims network is a per-count mlp without belief features "
                                  f"(net={self.net!r}, features={self.features!r}, universal={self.universal!r})")
        if self.net == "compact":
            try:
                self.reader_sizes = {k: meta[k] for k in ("reader_version", "num_tokens", "num_places", "num_dense",
                                                          "num_roles")}  # fmt: skip
            except KeyError as e:
                raise PolicyFileError(f"{self.path}: header entry missing ({e!r})") from e
            bad = {k: v for k, v in self.reader_sizes.items()
                   if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 1 << 20}  # fmt: skip
            if bad or self.embed or self.features:
                raise PolicyFileError(f"{self.path}: compact header out of range ({bad or 'embed/features'}; valid: "
                                      "integers 0..1048576, no embed, no features)")  # fmt: skip
        if not (1 <= self.obs_size <= 1 << 20 and 1 <= self.num_actions <= 1 << 20):
            sizes = f"obs_size={self.obs_size} / num_actions={self.num_actions}"
            raise PolicyFileError(f"{self.path}: {sizes} out of range")
        return meta

    def _shapes(self, meta: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        """Every weight entry's name and shape, from the header; refuses a header that declares too many values."""
        hidden = int(meta["hidden"])
        shapes = {"scale": (self.obs_size,), "w0": (self.obs_size, hidden), "b0": (hidden,), "w1": (hidden, hidden),
                  "b1": (hidden,)}  # fmt: skip
        if self.net == "compact":
            rs = self.reader_sizes
            shapes = {"emb": (rs["num_tokens"], hidden), "wd": (rs["num_dense"], hidden), "b0": (hidden,),
                      "w1": (hidden, hidden), "b1": (hidden,)}  # fmt: skip
        if self.embed:
            shapes.update({"pe_w": (hidden, self.embed), "pe_b": (self.embed,)})
        for r in range(self.num_heads):
            shapes.update({f"pi_w{r}": (self.embed or hidden, self.num_actions), f"pi_b{r}": (self.num_actions,),
                           f"v_w{r}": (hidden, 1), f"v_b{r}": (1,)})  # fmt: skip
        total = sum(math.prod(shape) for shape in shapes.values())
        if total > MAX_VALUES:
            raise PolicyFileError(f"{self.path}: the header declares {total} weights; at most {MAX_VALUES} are read "
                                  f"(obs_size={self.obs_size}, hidden={hidden}, num_actions={self.num_actions})")
        return shapes

    def for_config(self, config: GameConfig) -> NumpyPolicy:
        """The network that plays ``config``: this one, or for a universal file (header ``universal``: one network
        for every player count of a game, :mod:`agents.universal`) its specialization to ``config``'s count or
        geometry: the first layer's rows and the heads' columns gathered once, the variant one-hot folded into the
        first bias, so a move costs what it costs with a per-count file. A ``PolicyMismatchError`` names the
        variants the file plays where ``config`` is not one of them."""
        if not self.universal:
            return self
        from agents.universal import universal_layout

        key = tuple(getattr(config, f) for f in LAYOUT_FIELDS)
        if key in self._specialized:
            return self._specialized[key]
        lay = universal_layout(self.universal)
        try:
            m = lay.variant(config)
        except ValueError as e:
            raise PolicyMismatchError(f"policy {self.path}: {e}") from None
        try:
            extra = lay.feature_size(self.features)
            # the variant's observation entries, then its belief features (after the universal observation)
            index = np.concatenate([m.obs_index, lay.obs_size + lay.feature_index(config, self.features)])
        except ValueError as e:
            raise PolicyFileError(f"{self.path}: {e}") from e
        if (self.obs_size, self.num_actions) != (lay.obs_size + extra, lay.num_actions):
            raise PolicyMismatchError(f"policy {self.path} expects {self.obs_size} observations / {self.num_actions} "
                                      f"actions; the universal {self.universal!r} layout has {lay.obs_size + extra} / "
                                      f"{lay.num_actions}")  # fmt: skip
        rs = role_slice(config)
        start, stop = (rs.start, rs.stop) if rs is not None else (0, 0)
        mapped = (int(m.obs_index[start]), int(m.obs_index[stop - 1]) + 1) if rs is not None else (0, 0)
        if rs is not None and (self.role_start, self.role_stop) != mapped:
            raise PolicyMismatchError(f"policy {self.path}: its role slice does not line up with {config}")
        sub = object.__new__(NumpyPolicy)
        sub.__dict__.update(self.__dict__)
        w, scale = self.w, self.w["scale"]
        sw = dict(w)
        sw["scale"] = scale[index]
        sw["w0"] = np.ascontiguousarray(w["w0"][index])
        sw["b0"] = w["b0"] + scale[m.flag] * w["w0"][m.flag]
        for r in range(self.num_heads):
            sw[f"pi_w{r}"] = np.ascontiguousarray(w[f"pi_w{r}"][:, m.action_index])
            sw[f"pi_b{r}"] = w[f"pi_b{r}"][m.action_index]
        for a in sw.values():
            a.flags.writeable = False
        sub.w = sw
        sub.obs_size, sub.num_actions = int(index.size), int(m.action_index.size)
        sub.role_start, sub.role_stop = start, stop
        sub.universal = ""
        sub._specialized = {}
        sub.meta = dict(self.meta, config={f: getattr(config, f) for f in LAYOUT_FIELDS}, obs_size=sub.obs_size,
                        num_actions=sub.num_actions, role_slice=[start, stop], universal="",
                        specialized_from=self.universal)  # fmt: skip
        self._specialized[key] = sub
        return sub

    def check_config(self, config: GameConfig) -> None:
        """Refuse a game whose observation or action indices mean something else than in training."""
        game_claims = config.claims_per_turn if config.claims else 0
        if self.claims != game_claims:
            said = {0: "without claims"}.get(self.claims, f"with claims ({self.claims} per turn)")
            here = {0: "without claims"}.get(game_claims, f"with claims ({game_claims} per turn)")
            hint = " (seat it as claims:learned:PATH, which shows it the game part)" if not self.claims else ""
            raise PolicyMismatchError(f"policy {self.path} was trained {said}; this game is played {here}{hint}")
        if self.universal:
            self.for_config(config)  # the count or geometry is one of the file's (PolicyMismatchError otherwise)
            return
        saved = self.meta.get("config", {})
        diff = {f: (saved.get(f), getattr(config, f)) for f in LAYOUT_FIELDS if saved.get(f) != getattr(config, f)}
        if diff:
            text = ", ".join(f"{f}={a!r} (this game: {b!r})" for f, (a, b) in diff.items())
            raise PolicyMismatchError(f"policy {self.path} was trained for {text}")
        try:
            extra = feature_size(self.features, config)
        except ValueError as e:
            raise PolicyFileError(f"{self.path}: {e}") from e
        size, n = observation_layout(config).size + extra, num_actions(config)
        if self.claims:
            from saboteur_env.claims import layout as claims_layout

            cl = claims_layout(config)
            size, n = size + cl.size, cl.num_actions
        if self.net == "compact":
            want = reader(config).header()
            if want != self.reader_sizes:
                raise PolicyMismatchError(f"policy {self.path} reads compact observations as {self.reader_sizes}; "
                                          f"this game's reader: {want}")  # fmt: skip
            size = reader(config).width
        if (size, n) != (self.obs_size, self.num_actions):
            raise PolicyMismatchError(f"policy {self.path} expects {self.obs_size} observations / {self.num_actions} "
                                  f"actions; this game has {size} / {n}")  # fmt: skip

    def _hidden(self, obs: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """The trunk's output and each observation's head."""
        x = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if self.net == "compact":
            return self._hidden_packed(self.config_reader().pack(compress_base(x, self.config_reader().config)))
        if x.shape[1] != self.obs_size:
            raise ValueError(f"observation has {x.shape[1]} entries; this policy takes {self.obs_size}")
        h = np.tanh((x * self.w["scale"]) @ self.w["w0"] + self.w["b0"])
        h = np.tanh(h @ self.w["w1"] + self.w["b1"])
        if self.num_heads == 1:
            role = np.zeros(x.shape[0], dtype=np.int64)
        else:
            role = x[:, self.role_start : self.role_stop].argmax(axis=1)
        return h, role

    def config_reader(self) -> CompactReader:
        """The compact reader of the file's game (a compact net read from a float observation: the base game)."""
        cfg = self.meta["config"]
        if cfg.get("game") != "base":
            raise PolicyFileError(f"{self.path}: a compact network of game {cfg.get('game')!r} reads compact "
                                  "observations only (forward_packed); from float observations: the base game")
        return reader(GameConfig(**cfg))

    def _hidden_packed(self, x: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        d, k = int(self.reader_sizes["num_dense"]), int(self.reader_sizes["num_places"])
        if x.ndim != 2 or x.shape[1] != d + k + 1:
            raise ValueError(f"packed input has shape {x.shape}; this policy takes (batch, {d + k + 1})")
        idx = x[:, d : d + k].astype(np.int64)
        emb = np.concatenate([self.w["emb"], np.zeros((1, self.w["emb"].shape[1]), dtype=np.float32)])
        first = emb[np.where(idx < 0, emb.shape[0] - 1, idx)].sum(axis=1)  # row R: the zero row of "no token"
        h = np.tanh(first + x[:, :d] @ self.w["wd"] + self.w["b0"])
        h = np.tanh(h @ self.w["w1"] + self.w["b1"])
        role = x[:, -1].astype(np.int64) if self.num_heads > 1 else np.zeros(x.shape[0], dtype=np.int64)
        return h, role

    def forward_packed(self, packed: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """A compact network's logits and values of :meth:`CompactReader.pack` rows (any game)."""
        return self._heads(*self._hidden_packed(np.atleast_2d(np.asarray(packed, dtype=np.float32))))

    def forward(self, obs: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Raw logits (batch x actions) and values (batch) of a batch of observations."""
        return self._heads(*self._hidden(obs))

    def _heads(self, h: NDArray[np.float32], role: NDArray[np.int64]) -> tuple[NDArray[np.float32], NDArray[Any]]:
        e = h if not self.embed else h @ self.w["pe_w"] + self.w["pe_b"]
        logits = np.empty((h.shape[0], self.num_actions), dtype=np.float32)
        value = np.empty(h.shape[0], dtype=np.float32)
        for r in range(self.num_heads):
            idx = np.flatnonzero(role == r)
            if idx.size:
                logits[idx] = e[idx] @ self.w[f"pi_w{r}"] + self.w[f"pi_b{r}"]
                value[idx] = (h[idx] @ self.w[f"v_w{r}"] + self.w[f"v_b{r}"])[:, 0]
        return logits, value


def _npy_limit(shape: tuple[int, ...]) -> int:
    """The most bytes a member holding ``shape`` float32 (or float16) values may take uncompressed."""
    return NPY_HEADER_MAX + 4 * math.prod(shape)


def _open_npz(fh: Any, path: Path) -> zipfile.ZipFile:
    if fh.read(6) == b"\x93NUMPY":
        raise PolicyFileError(f"{path} is not a .npz policy file (a single array, not an .npz archive)")
    fh.seek(0)
    try:
        return zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise PolicyFileError(f"{path} is not a .npz policy file ({type(e).__name__}: {e})") from None


def _check_directory(archive: zipfile.ZipFile, path: Path, shapes: dict[str, tuple[int, ...]]) -> None:
    """Member names and declared uncompressed sizes against the header's shapes (the zip directory only)."""
    names = [info.filename for info in archive.infolist()]
    expected = {f"{k}.npy" for k in shapes} | {"meta.npy"}
    if len(names) != len(set(names)):
        raise PolicyFileError(f"{path}: the archive names an entry twice")
    missing, extra = sorted(expected - set(names)), sorted(set(names) - expected)
    if missing or extra:
        raise PolicyFileError(f"{path}: the entries do not match its header (missing {missing[:4]}, "
                              f"unexpected {extra[:4]})")  # fmt: skip
    for k, shape in shapes.items():
        size, limit = archive.getinfo(f"{k}.npy").file_size, _npy_limit(shape)
        if size > limit:
            raise PolicyFileError(f"{path}: entry {k!r} declares {size} bytes uncompressed; its shape {shape} needs "
                                  f"at most {limit}")  # fmt: skip


def _read_npz_member(archive: zipfile.ZipFile, path: Path, key: str, limit: int) -> bytes:
    try:
        info = archive.getinfo(f"{key}.npy")
    except KeyError:
        raise PolicyFileError(f"{path} has no readable {key!r} entry") from None
    if info.file_size > limit:
        raise PolicyFileError(f"{path}: entry {key!r} declares {info.file_size} bytes uncompressed; at most {limit}")
    try:
        # zipfile stops at the declared size and checks the CRC: a member cannot yield more than was checked.
        return archive.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as e:
        raise PolicyFileError(f"{path}: entry {key!r} is corrupt or truncated ({type(e).__name__}: {e})") from None


def _parse_npy(raw: bytes, path: Path, key: str) -> NDArray[Any]:
    """A ``.npy`` member's array, its header checked against the bytes it holds before anything is allocated (a
    header may declare any shape; ``np.load`` allocates that much before reading)."""
    f = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=NPY_HEADER_MAX)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=NPY_HEADER_MAX)
        else:
            raise ValueError(f"npy format version {version} is not read")
        if dtype.hasobject:
            raise ValueError("it holds Python objects (refused: reading them could run code)")
        count = math.prod(shape)
        if len(raw) - f.tell() != count * dtype.itemsize:
            raise ValueError(f"its header declares {shape} {dtype} ({count * dtype.itemsize} bytes) but it holds "
                             f"{len(raw) - f.tell()} bytes of data")  # fmt: skip
        return np.frombuffer(raw, dtype, count, offset=f.tell()).reshape(shape, order="F" if fortran else "C")
    except (ValueError, TypeError, EOFError, SyntaxError) as e:
        problem = f"entry {key!r} is not a valid .npy array ({e})"
        raise PolicyFileError(f"{path} is not a .npz policy file: {problem}") from None


class LearnedAgent:
    """Samples the policy's distribution over the legal actions (``greedy=True``: its most likely legal action)."""

    def __init__(self, path: str | Path, config: GameConfig, greedy: bool = False) -> None:
        self.config = config
        self.policy = load_policy(path, config)
        self.greedy = greedy
        self.name = f"learned:{Path(path).name}"
        self.talks = bool(self.policy.claims)  # chooses claims itself (agents.claims.NativeTalker)
        self.rng = np.random.default_rng()
        self.beliefs: BeliefFeatures | None = None
        if self.policy.features:
            self.beliefs = BeliefFeatures(config, self.policy.features)
            self.beliefs.reset(0)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        if num_players != self.config.num_players:
            raise ValueError(f"num_players={num_players} but this policy plays {self.config.num_players}")
        self.rng = np.random.default_rng(seed)
        if self.beliefs is not None:
            self.beliefs.reset(seat)

    def follow(self, observation: NDArray[np.float32]) -> None:
        """See a decision of the seat without choosing its move (a role-dispatching composite's idle policy): the
        belief features, if any, stay those of a follower of every decision."""
        if self.beliefs is not None:
            self.beliefs.update(PlayerView.from_observation(observation, self.config))

    def network_input(self, observation: NDArray[np.float32]) -> NDArray[np.float32]:
        """The observation, followed by the belief features after it when the file has them (which follows the
        game: call once per decision of the seat, in order)."""
        if self.beliefs is None:
            return observation
        self.follow(observation)
        assert self.beliefs.last is not None
        return np.concatenate([np.asarray(observation, dtype=np.float32).ravel(), self.beliefs.last])

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        mask = np.asarray(action_mask).astype(bool)
        if mask.shape != (self.policy.num_actions,):
            raise ValueError(f"action_mask has shape {mask.shape}; expected ({self.policy.num_actions},)")
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        logits, _ = self.policy.forward(self.network_input(observation))
        z = logits[0, legal].astype(np.float64)
        if self.greedy:
            return int(legal[int(np.argmax(z))])
        p = np.exp(z - z.max())
        return int(legal[self.rng.choice(legal.size, p=p / p.sum())])


# ---- the shipped policies (agents/policies/) ----------------------------------------------------------------------
POLICY_DIR = Path(__file__).resolve().parent / "policies"
MANIFEST_NAME = "manifest.json"
_CACHE: dict[tuple[str, int, int], NumpyPolicy] = {}


class NoShippedPolicyError(ValueError):
    """No policy is shipped for the requested configuration."""


def _cached_policy(path: Path) -> NumpyPolicy:
    """One parsed policy per file (a tournament makes an agent per seat and game; the weights are read-only)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        _CACHE[key] = NumpyPolicy(path)
    return _CACHE[key]


def load_policy(path: str | Path, config: GameConfig) -> NumpyPolicy:
    """The network of ``path`` that plays ``config`` (a universal file specialized to it), checked against it
    (PolicyFileError / PolicyMismatchError: ValueErrors naming the file and what differs)."""
    p = Path(path)
    policy = (_cached_policy(p) if p.is_file() else NumpyPolicy(p)).for_config(config)
    policy.check_config(config)
    return policy


def shipped_manifest(policy_dir: Path | None = None) -> dict[str, Any]:
    """``policies`` of ``manifest.json`` (default folder: :data:`POLICY_DIR`): name -> record (file, game,
    players, training, evaluation)."""
    path = (policy_dir or POLICY_DIR) / MANIFEST_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise PolicyFileError(f"{path} is not a readable manifest ({e})") from e
    policies = data.get("policies") if isinstance(data, dict) else None
    if not isinstance(policies, dict):
        raise PolicyFileError(f"{path} has no 'policies' mapping")
    for name, rec in policies.items():
        ok = isinstance(rec, dict) and isinstance(rec.get("game"), str) and _counts(rec.get("players")) is not None
        if not ok or not isinstance(rec.get("file"), str) or Path(rec["file"]).name != rec["file"]:
            raise PolicyFileError(f"{path}: entry {name!r} needs 'game' (str), 'players' (an int, or the list of "
                                  "counts of a universal file) and 'file' (a name)")  # fmt: skip
    return policies


def _counts(players: Any) -> list[int] | None:
    """A record's player counts (an int: one count; a list: a universal file's), or None if malformed."""
    if isinstance(players, int) and not isinstance(players, bool):
        return [players]
    if isinstance(players, list) and players and all(isinstance(n, int) and not isinstance(n, bool) for n in players):
        return players
    return None


def shipped_configs(policy_dir: Path | None = None) -> list[tuple[str, int]]:
    """The (game, players) pairs a policy is shipped for, sorted (once each)."""
    recs = shipped_manifest(policy_dir).values()
    return sorted({(str(r["game"]), n) for r in recs for n in _counts(r["players"]) or []})


def shipped_paths(config: GameConfig, policy_dir: Path | None = None) -> list[Path]:
    """Every shipped file that plays ``config``'s game and player count, preferred first: a file of that count
    (trained at the default layout: a Duel of the other geometry leaves it out where a universal file exists), then
    a universal file of the game."""
    recs = [r for r in shipped_manifest(policy_dir).values()
            if r.get("game") == config.game and config.num_players in (_counts(r.get("players")) or [])]  # fmt: skip
    default = GameConfig(game=config.game, num_players=config.num_players)
    out = []
    for rec in sorted(recs, key=lambda r: isinstance(r.get("players"), list)):
        if not isinstance(rec.get("players"), list) and config.duel_layout != default.duel_layout and recs[1:]:
            continue  # the per-count Duel file plays its default geometry; a universal file plays both
        out.append((policy_dir or POLICY_DIR) / str(rec["file"]))
    return out


def shipped_path(config: GameConfig, policy_dir: Path | None = None) -> Path:
    """The preferred shipped file for ``config`` (:func:`shipped_paths`); NoShippedPolicyError listing the shipped
    pairs."""
    for path in shipped_paths(config, policy_dir):
        return path
    pairs = ", ".join(f"{g}:{n}" for g, n in shipped_configs(policy_dir)) or "none"
    # "at N players", not "num_players=N": the web CLI rewrites "players=" in errors into its option name
    raise NoShippedPolicyError(f"no learned policy is shipped for game {config.game!r} at {config.num_players} "
                               f"players; shipped (game:players): {pairs}")  # fmt: skip


TALKER_DIR = Path(__file__).resolve().parent / "talkers"


def shipped_talker_path(config: GameConfig, talker_dir: Path | None = None) -> Path:
    """The network shipped for ``config``'s game and player count under the claims rule (``agents/talkers/
    GAME-Np.npz``: trained with claims, one claim per turn; docs/claims.md "Learned talkers"); NoShippedPolicyError
    naming the shipped ones."""
    d = TALKER_DIR if talker_dir is None else talker_dir
    path = d / f"{config.game}-{config.num_players}p.npz"
    if config.claims and config.claims_per_turn == 1 and path.is_file():
        return path
    shipped = ", ".join(sorted(p.stem for p in d.glob("*.npz"))) or "none"
    raise NoShippedPolicyError(f"no talker is shipped for game {config.game!r} at {config.num_players} players "
                               f"with claims_per_turn={config.claims_per_turn if config.claims else 0}; shipped "
                               f"(one claim per turn): {shipped}")  # fmt: skip


def shipped_agent(config: GameConfig, greedy: bool = False) -> LearnedAgent:
    """``make_agent("learned", config)``: the shipped policy for the config as an agent; under the claims rule the
    shipped talker (:func:`shipped_talker_path`), which talks by itself.

    NoShippedPolicyError (a ValueError) where none is shipped for its game and player count, or the shipped one was
    trained for another layout (e.g. the other Duel geometry, another margin)."""
    if config.claims:
        agent = LearnedAgent(shipped_talker_path(config), config, greedy=greedy)
        agent.name = "learned"
        return agent
    path = shipped_path(config)
    try:
        agent = LearnedAgent(path, config, greedy=greedy)
        agent.name = "learned"
        return agent
    except PolicyMismatchError as e:
        pairs = ", ".join(f"{g}:{n}" for g, n in shipped_configs())
        raise NoShippedPolicyError(f"no learned policy is shipped for this configuration ({e}); shipped "
                                   f"(game:players, default layout): {pairs}") from e  # fmt: skip
