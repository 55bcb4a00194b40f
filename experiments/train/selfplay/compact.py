"""The compact network (``--net compact``): reads the vector env's compact observation through
:class:`agents.compact_reader.CompactReader` (token ids and scaled counts) instead of a dense layer over the float
observation.

First layer: ``sum of the tokens' embedding rows + counts @ Wd + b`` (one row per token that is there, ~55 of the
~150-210 places), then the float net's tanh trunk and heads. Its cost per decision grows with the tokens present,
not with the float observation's ~2,600-3,400 entries. On the CPU the gather-sum and its gradient (a scatter-add
into the table) and the legal-action logits are small numba loops: torch's CPU ``embedding_bag`` / ``Embedding``
backward sorts the indices and took longer than the dense layer it replaces (docs/selfplay.md). On CUDA the same
functions run as torch ops (``embedding_bag``, gathers).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from agents.compact_reader import compress_base, reader
from agents.files import write_atomic
from agents.learned import COMPACT_VERSION, FORMAT, LAYOUT_FIELDS, NumpyPolicy
from experiments.train.selfplay.policy import Policy, export_npz, load_npz, segment_log_softmax, tanh
from saboteur_env import GameConfig, num_actions, observation_layout

# Float inputs one token stands for, on average (base 5p: ~200 nonzero floats, ~53 tokens per decision).
TOKEN_INPUTS = 4


# ---- numba kernels (CPU) ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _bag_fwd(w: Any, idx: Any, out: Any) -> None:  # pragma: no cover - compiled
    h = w.shape[1]
    for b in range(idx.shape[0]):
        for j in range(h):
            out[b, j] = 0.0
        for k in range(idx.shape[1]):
            r = idx[b, k]
            if r >= 0:
                for j in range(h):
                    out[b, j] += w[r, j]


@numba.njit(cache=True, nogil=True)
def _bag_bwd(g: Any, idx: Any, gw: Any) -> None:  # pragma: no cover - compiled
    h = gw.shape[1]
    for b in range(idx.shape[0]):
        for k in range(idx.shape[1]):
            r = idx[b, k]
            if r >= 0:
                for j in range(h):
                    gw[r, j] += g[b, j]


# reassoc: the dot product's sum may be reordered, so it vectorizes (3x faster here; the same sum up to rounding)
@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot_fwd(w: Any, bias: Any, x: Any, key: Any, rows: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(key.shape[0]):
        r, s = key[i], rows[i]
        acc = np.float32(0.0)
        for j in range(w.shape[1]):
            acc += w[r, j] * x[s, j]
        out[i] = acc + bias[r]


@numba.njit(cache=True, nogil=True)
def _dot_bwd(g: Any, w: Any, x: Any, key: Any, rows: Any, gw: Any, gb: Any, gx: Any) -> None:  # pragma: no cover
    for i in range(key.shape[0]):
        r, s, gi = key[i], rows[i], g[i]
        gb[r] += gi
        for j in range(w.shape[1]):
            gw[r, j] += gi * x[s, j]
            gx[s, j] += gi * w[r, j]


def _np(t: torch.Tensor) -> NDArray[Any]:
    return t.detach().contiguous().numpy()


class _Bag(torch.autograd.Function):
    """``out[b] = sum of w[idx[b, k]]`` over ``idx >= 0``."""

    @staticmethod
    def forward(ctx: Any, w: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        out = torch.empty((idx.shape[0], w.shape[1]), dtype=w.dtype)
        _bag_fwd(_np(w), _np(idx), out.numpy())
        ctx.save_for_backward(idx)
        ctx.rows = w.shape[0]
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None]:
        (idx,) = ctx.saved_tensors
        gw = torch.zeros((ctx.rows, g.shape[1]), dtype=g.dtype)
        _bag_bwd(_np(g), _np(idx), gw.numpy())
        return gw, None


class _Dot(torch.autograd.Function):
    """``out[i] = w[key[i]] . x[rows[i]] + bias[key[i]]``: the logits of the legal entries."""

    @staticmethod
    def forward(ctx: Any, w: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, key: torch.Tensor,
                rows: torch.Tensor) -> torch.Tensor:  # fmt: skip
        out = torch.empty(key.shape[0], dtype=w.dtype)
        _dot_fwd(_np(w), _np(bias), _np(x), _np(key), _np(rows), out.numpy())
        ctx.save_for_backward(w, x, key, rows)
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[Any, ...]:
        w, x, key, rows = ctx.saved_tensors
        gw, gb, gx = torch.zeros_like(w), torch.zeros(w.shape[0], dtype=w.dtype), torch.zeros_like(x)
        _dot_bwd(_np(g), _np(w), _np(x), _np(key), _np(rows), gw.numpy(), gb.numpy(), gx.numpy())
        return gw, gb, gx, None, None


def token_sum(w: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Sum of the embedding rows ``idx`` (batch x places, -1: none) of ``w``."""
    if w.device.type == "cpu":
        return _Bag.apply(w, idx)
    pad = w.new_zeros((1, w.shape[1]))  # row R: the padding row (no gradient reaches w through it)
    return nn.functional.embedding_bag(torch.where(idx < 0, w.shape[0], idx), torch.cat([w, pad]), mode="sum")


def legal_logits(w: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, key: torch.Tensor,
                 rows: torch.Tensor) -> torch.Tensor:  # fmt: skip
    if w.device.type == "cpu":
        return _Dot.apply(w, bias, x, key, rows)
    return (w[key] * x[rows]).sum(dim=1) + bias[key]


# ---- the network --------------------------------------------------------------------------------------------------
class CompactPolicy(nn.Module):
    """Token embeddings and counts -> tanh trunk -> policy heads over the legal actions and value heads (one per
    role with role heads). The input is :meth:`CompactReader.pack`'s row (counts, token ids, head index); the same
    interface as :class:`experiments.train.selfplay.policy.Policy` (``legal``, ``forward``, ``roles``)."""

    net = "compact"

    def __init__(self, config: GameConfig, hidden: int = 64, role_heads: bool = False) -> None:
        super().__init__()
        self.reader = reader(config)
        rd = self.reader
        self.obs_size, self.num_actions = rd.width, int(num_actions(config))
        self.num_heads = rd.num_roles if role_heads else 1
        self.hidden, self.embed, self.features = hidden, 0, ""
        self.role_start = self.role_stop = 0
        self.emb = nn.Parameter(torch.empty(rd.num_tokens, hidden))
        # Start where the float net starts on the same facts. Its first layer, orthogonal(sqrt 2) over N inputs
        # (N > hidden: orthonormal rows), has entries of variance 2/N; a token stands for the float inputs of its
        # place (base 5p: ~200 nonzero floats over ~53 tokens, ~4 per token), so its row is the sum of ~4 such
        # columns: variance 8/N. Then the first layer's pre-activations have the float net's spread (base 5p: std
        # ~0.36 in both on played observations, no unit saturated). The earlier N(0, 2/64) gave std 1.44 and a
        # fifth of the tanh units saturated at the start.
        n = int(observation_layout(config).size)
        nn.init.normal_(self.emb, 0.0, math.sqrt(TOKEN_INPUTS * 2.0 / n))
        self.dense = nn.Linear(rd.num_dense, hidden)
        nn.init.normal_(self.dense.weight, 0.0, math.sqrt(2.0 / n))  # the counts are float inputs of the same layer
        nn.init.zeros_(self.dense.bias)
        self.fc1 = nn.Linear(hidden, hidden)
        nn.init.orthogonal_(self.fc1.weight, math.sqrt(2))
        nn.init.zeros_(self.fc1.bias)
        a, k = self.num_actions, self.num_heads
        self.pi_w = nn.Parameter(torch.empty(k * a, hidden))  # row r * A + action
        self.pi_b = nn.Parameter(torch.zeros(k * a))
        with torch.no_grad():
            for r in range(k):
                nn.init.orthogonal_(self.pi_w[r * a : (r + 1) * a], 0.01)
        self.v = nn.Linear(hidden, k)
        nn.init.orthogonal_(self.v.weight, 1.0)
        nn.init.zeros_(self.v.bias)

    @staticmethod
    def _cat(obs: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        return obs if isinstance(obs, torch.Tensor) else torch.cat(list(obs))

    def roles(self, obs: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        x = self._cat(obs)
        if self.num_heads == 1:
            return torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
        return x[:, -1].to(torch.int64)

    def _trunk(self, obs: torch.Tensor | Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self._cat(obs).to(self.emb.device)
        d, k = self.reader.num_dense, self.reader.num_places
        idx = x[:, d : d + k].to(torch.int32)
        h = tanh(token_sum(self.emb, idx) + self.dense(x[:, :d]))
        h = tanh(self.fc1(h))
        head = self.roles(x)
        value = self.v(h).gather(1, head[:, None]).squeeze(1)
        return h, head, value

    def legal(self, obs: torch.Tensor | Sequence[torch.Tensor], rows: torch.Tensor,
              cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """Log-probabilities of the legal entries (``rows``, ``cols``: ``mask.nonzero()`` order) and the values."""
        h, head, value = self._trunk(obs)
        rows = rows.to(h.device)
        key = cols.to(h.device) + head[rows] * self.num_actions
        logits = legal_logits(self.pi_w, self.pi_b, h, key, rows)
        return segment_log_softmax(logits, rows, h.shape[0]), value

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All raw logits (batch x actions) and the values."""
        h, head, value = self._trunk(obs)
        w, b = self.pi_w.view(self.num_heads, self.num_actions, -1), self.pi_b.view(self.num_heads, -1)
        return torch.einsum("bh,bah->ba", h, w[head]) + b[head], value

    def arrays(self) -> dict[str, NDArray[np.float32]]:
        """The weights as ``agents.learned`` stores a compact file's entries."""
        a = self.num_actions

        def f(t: torch.Tensor) -> NDArray[np.float32]:
            return t.detach().cpu().numpy().astype(np.float32)

        out = {"emb": f(self.emb), "wd": f(self.dense.weight.T), "b0": f(self.dense.bias), "w1": f(self.fc1.weight.T),
               "b1": f(self.fc1.bias)}  # fmt: skip
        for r in range(self.num_heads):
            out[f"pi_w{r}"] = f(self.pi_w[r * a : (r + 1) * a].T)
            out[f"pi_b{r}"] = f(self.pi_b[r * a : (r + 1) * a])
            out[f"v_w{r}"] = f(self.v.weight[r : r + 1].T)
            out[f"v_b{r}"] = f(self.v.bias[r : r + 1])
        return out

    def load_arrays(self, w: dict[str, NDArray[np.float32]]) -> None:
        a = self.num_actions

        def t(x: NDArray[np.float32]) -> torch.Tensor:
            return torch.from_numpy(np.array(x, dtype=np.float32))  # a copy: the file's arrays are read-only

        with torch.no_grad():
            self.emb.copy_(t(w["emb"]))
            self.dense.weight.copy_(t(w["wd"].T))
            self.dense.bias.copy_(t(w["b0"]))
            self.fc1.weight.copy_(t(w["w1"].T))
            self.fc1.bias.copy_(t(w["b1"]))
            for r in range(self.num_heads):
                self.pi_w[r * a : (r + 1) * a] = t(w[f"pi_w{r}"].T)
                self.pi_b[r * a : (r + 1) * a] = t(w[f"pi_b{r}"])
                self.v.weight[r] = t(w[f"v_w{r}"][:, 0])
                self.v.bias[r] = float(w[f"v_b{r}"][0])


# ---- files --------------------------------------------------------------------------------------------------------
def export_compact(model: CompactPolicy, config: GameConfig, path: str | Path, decisions: int = 0) -> Path:
    """Write a compact network as ``agents.learned`` format version 2 (header ``"net": "compact"``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "version": COMPACT_VERSION, "net": "compact",
            "config": {f: getattr(config, f) for f in LAYOUT_FIELDS}, "rules_version": config.rules_version,
            "obs_size": model.obs_size, "num_actions": model.num_actions, "hidden": model.hidden, "embed": 0,
            "num_heads": model.num_heads, "role_slice": [0, 0], "activation": "tanh", "decisions": int(decisions),
            **model.reader.header()}  # fmt: skip
    arrays: dict[str, Any] = {"meta": np.array(json.dumps(meta, sort_keys=True)), **model.arrays()}
    write_atomic(path, lambda fh: np.savez_compressed(fh, **arrays))  # a killed export keeps the previous file
    return path


def export(model: nn.Module, config: GameConfig, path: str | Path, decisions: int = 0) -> Path:
    """Either network's ``policy.npz``."""
    if isinstance(model, CompactPolicy):
        return export_compact(model, config, path, decisions)
    assert isinstance(model, Policy)
    return export_npz(model, config, path, decisions)


def load_init(model: nn.Module, path: str | Path, config: GameConfig) -> None:
    """``--init``: a file of the same network, game and shape."""
    if not isinstance(model, CompactPolicy):
        assert isinstance(model, Policy)
        return load_npz(model, path, config)
    pol = NumpyPolicy(path)
    pol.check_config(config)
    if pol.net != "compact" or (pol.num_heads, pol.meta["hidden"]) != (model.num_heads, model.hidden):
        raise ValueError(
            f"{path} does not fit this network: file net={pol.net} heads={pol.num_heads} hidden="
            f"{pol.meta['hidden']}, network compact heads={model.num_heads} hidden={model.hidden}"
        )
    model.load_arrays(pol.w)
    return None


class FloatInput:
    """A base game compact network that reads float observations (the ladder check's env): each batch is
    compressed (``agents.compact_reader.compress_base``) and packed first."""

    def __init__(self, model: CompactPolicy, config: GameConfig) -> None:
        self.model, self.config = model, config

    def parameters(self) -> Any:
        return self.model.parameters()

    def legal(self, obs: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = self.model.reader.pack(compress_base(obs.cpu().numpy(), self.config))
        return self.model.legal(torch.from_numpy(packed).to(obs.device), rows, cols)
