"""The self-play policy (a masked actor-critic with optional role heads), its segment-wise softmax and sampling, and
its numpy export (``policy.npz``, read by ``agents.learned``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from agents.base.belief_features import feature_size
from agents.files import write_atomic
from agents.learned import FORMAT, FORMAT_VERSION, LAYOUT_FIELDS, NumpyPolicy, role_slice
from agents.universal import universal_layout
from saboteur_env import GameConfig, num_actions, observation_layout
from saboteur_env.claims import layout as claims_layout

MASKED = -1e9  # logit of an illegal action: exp() underflows to exactly 0, and 0 * MASKED stays finite


# ---- the network -----------------------------------------------------------------------------------------------
def _layer(n_in: int, n_out: int, std: float) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class Policy(nn.Module):
    """Shared tanh MLP trunk on the scaled observation; policy and value heads, one pair per role with role heads.

    The policy head is a linear layer stored as one embedding row per (role head, action): :meth:`legal` scores
    only the legal actions (about a dozen of the base game's 1,305), which is what makes learning fast on a CPU;
    :meth:`forward` computes all logits (export, tests). ``agents.learned.NumpyPolicy`` evaluates the exported
    weights with the same arithmetic."""

    def __init__(self, config: GameConfig, hidden: int = 64, role_heads: bool = False, embed: int = 0,
                 features: str = "", universal: bool = False) -> None:  # fmt: skip
        super().__init__()
        # Belief features (agents.base.belief_features) follow the observation; they are probabilities and fractions.
        self.features = features
        # universal: one network for every player count (or Duel geometry) of config's game (agents.universal)
        self.universal = config.game if universal else ""
        sl: slice | None
        if universal:
            # the universal observation, then the universal belief features (agents.universal), if any
            ul = universal_layout(config.game)
            high = np.concatenate([ul.high, np.ones(ul.feature_size(features), dtype=np.float32)])
            n_act, sl = ul.num_actions, ul.role_slice
        else:
            lay = observation_layout(config)
            high = np.concatenate([np.asarray(lay.high, dtype=np.float32),
                                   np.ones(feature_size(features, config), dtype=np.float32)])  # fmt: skip
            n_act, sl = int(num_actions(config)), role_slice(config)
        if config.claims:
            # The claims game (saboteur_env.claims): the claims block after the observation, the claim ids after
            # the game's actions; the role slice stays where it is (in the game part).
            if universal or features:
                raise ValueError("a claims network reads neither belief features nor the universal layout")
            cl = claims_layout(config)
            high, n_act = np.concatenate([high, cl.high]), cl.num_actions
        self.claims = config.claims_per_turn if config.claims else 0
        self.obs_size, self.num_actions = int(high.size), int(n_act)
        self.role_start: int = sl.start if sl is not None else 0
        self.role_stop: int = sl.stop if sl is not None else 0
        self.num_heads = (self.role_stop - self.role_start) if role_heads and sl is not None else 1
        self.hidden, self.embed = hidden, embed
        self.scale: torch.Tensor
        self.register_buffer("scale", torch.from_numpy(np.where(high > 0, 1.0 / np.maximum(high, 1e-12), 1.0)))
        self.fc0 = _layer(self.obs_size, hidden, math.sqrt(2))
        self.fc1 = _layer(hidden, hidden, math.sqrt(2))
        a, k = self.num_actions, self.num_heads
        # ``embed`` > 0: a linear bottleneck of that width between the trunk and the policy heads. The heads then
        # hold embed x A weights instead of hidden x A (the Duel's 5,701 actions dominate its file otherwise).
        self.pe = nn.Linear(hidden, embed) if embed else None
        self.pi_w = nn.Embedding(k * a, embed or hidden)  # row r * A + action: head r's weights of that logit
        self.pi_b = nn.Embedding(k * a, 1)
        with torch.no_grad():
            for r in range(k):  # CleanRL's small orthogonal policy init, per head
                nn.init.orthogonal_(self.pi_w.weight[r * a : (r + 1) * a], 0.01)
            self.pi_b.weight.zero_()
        self.v = _layer(hidden, k, 1.0)  # column r: head r's value

    def roles(self, obs: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        """The head of each observation: its role's index with role heads, else 0."""
        parts = [obs] if isinstance(obs, torch.Tensor) else list(obs)
        if self.num_heads == 1:
            return torch.zeros(sum(p.shape[0] for p in parts), dtype=torch.int64, device=parts[0].device)
        return torch.cat([p[:, self.role_start : self.role_stop] for p in parts]).argmax(dim=1)

    def _trunk(self, obs: torch.Tensor | Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The policy heads' input, each observation's head, and the values. ``obs`` may be a list of blocks of
        rows (the PPO update passes the rollout rows of a minibatch as views: no copy of the observations)."""
        # The scale folded into the first layer: one small product instead of one per observation entry.
        w0 = self.fc0.weight * self.scale
        if isinstance(obs, torch.Tensor):
            pre = nn.functional.linear(obs, w0, self.fc0.bias)
        else:
            pre = torch.cat([nn.functional.linear(p, w0, self.fc0.bias) for p in obs])
        h = tanh(pre)
        h = tanh(self.fc1(h))
        head = self.roles(obs)
        value = self.v(h).gather(1, head[:, None]).squeeze(1)
        return (h if self.pe is None else self.pe(h)), head, value

    def legal(self, obs: torch.Tensor | Sequence[torch.Tensor], rows: torch.Tensor,
              cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """Log-probabilities of the legal actions, flat: entry ``i`` is action ``cols[i]`` of observation
        ``rows[i]`` (``mask.nonzero()`` order, every row at least once); and the values. ``obs``: a tensor of
        rows, or a list of blocks of rows taken in order."""
        h, head, value = self._trunk(obs)
        key = cols + head[rows] * self.num_actions
        logits = (self.pi_w(key) * h[rows]).sum(dim=1) + self.pi_b(key).squeeze(1)
        return segment_log_softmax(logits, rows, h.shape[0]), value

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All raw logits (batch x actions) and the values."""
        h, head, value = self._trunk(obs)
        a = self.num_actions
        w, b = self.pi_w.weight.view(self.num_heads, a, -1), self.pi_b.weight.view(self.num_heads, a)
        logits = h.new_empty((h.shape[0], a))
        for r in range(self.num_heads):
            idx = (head == r).nonzero().squeeze(1)
            logits[idx] = h[idx] @ w[r].T + b[r]
        return logits, value


class _Tanh(torch.autograd.Function):
    """tanh as ``2 sigmoid(2x) - 1``: torch's CPU ``tanh`` costs ~5x its ``sigmoid`` per element here (measured at
    2048 x 64: 0.69 ms against 0.11). The same function; values differ from ``torch.tanh`` by < 1e-6 absolute."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(x * 2.0).mul_(2.0).sub_(1.0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return g - g * y * y


def tanh(x: torch.Tensor) -> torch.Tensor:
    """The trunk's activation: :class:`_Tanh` on the CPU, ``torch.tanh`` elsewhere (fast there)."""
    return _Tanh.apply(x) if x.device.type == "cpu" else torch.tanh(x)


def segment_log_softmax(logits: torch.Tensor, rows: torch.Tensor, m: int) -> torch.Tensor:
    """log_softmax within each segment ``rows == r`` of a flat vector (no padding to the longest row)."""
    dev = logits.device
    top = torch.full((m,), -math.inf, device=dev).scatter_reduce(0, rows, logits.detach(), "amax")  # shift: exact
    z = logits - top[rows]
    total = torch.zeros(m, dtype=z.dtype, device=dev).index_add(0, rows, z.exp())
    return z - total.log()[rows]


def taken_logp(logp_all: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, action: torch.Tensor,
               out: torch.Tensor) -> torch.Tensor:
    """``out`` (one entry per decision) with each decision's taken action's log-probability written in, from the
    flat legal entries (``rows``, ``cols``) of :meth:`Policy.legal`; a decision whose action is not among its
    entries keeps ``out``'s value."""
    hit = (cols == action[rows]).nonzero().squeeze(1)
    return out.index_put((rows[hit],), logp_all[hit])


def segment_sample(logp: torch.Tensor, rows: torch.Tensor, m: int, gen: torch.Generator) -> torch.Tensor:
    """One flat index per segment, drawn with the segment's probabilities (Gumbel-max; ties: the first)."""
    dev = logp.device  # the generator stays on the CPU (checkpoints): its draws move to the network's device
    g = logp - torch.log(-torch.log(torch.rand(logp.shape, generator=gen).clamp_(1e-12, 1.0))).to(dev)
    top = torch.full((m,), -math.inf, device=dev).scatter_reduce(0, rows, g, "amax")
    pos = torch.arange(logp.numel(), device=dev)
    hit = g == top[rows]
    out = torch.full((m,), logp.numel(), dtype=torch.int64, device=dev)
    return out.scatter_reduce(0, rows[hit], pos[hit], "amin").cpu()


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal actions (``mask`` nonzero) of full logits; illegal ones get ~MASKED."""
    return torch.log_softmax(torch.where(mask.bool(), logits, torch.full_like(logits, MASKED)), dim=1)


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: unreadable, truncated, not a checkpoint, or of other settings."""


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else "no detail"


def export_npz(model: Policy, config: GameConfig, path: str | Path, decisions: int = 0) -> Path:
    """Write the policy as numpy weights plus a JSON header (``agents.learned`` loads it without torch)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "config": {f: getattr(config, f) for f in LAYOUT_FIELDS},
        "rules_version": config.rules_version,
        "obs_size": model.obs_size,
        "num_actions": model.num_actions,
        "hidden": model.hidden,
        "embed": model.embed,
        "num_heads": model.num_heads,
        "role_slice": [model.role_start, model.role_stop],
        "activation": "tanh",
        "decisions": int(decisions),
    }
    if model.features:  # only then: the headers of files without features stay as they were
        meta["features"] = model.features
    if model.universal:  # likewise: one network for every player count of the game (agents.universal)
        meta["universal"] = model.universal
    if model.claims:  # likewise: the network plays the claims game (claims per turn)
        meta["claims"] = model.claims
    arrays: dict[str, NDArray[Any]] = {"meta": np.array(json.dumps(meta, sort_keys=True))}
    arrays["scale"] = model.scale.numpy().astype(np.float32)
    for i, layer in enumerate((model.fc0, model.fc1)):
        arrays[f"w{i}"] = layer.weight.detach().numpy().T.astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().numpy().astype(np.float32)
    if model.pe is not None:
        arrays["pe_w"] = model.pe.weight.detach().numpy().T.astype(np.float32)
        arrays["pe_b"] = model.pe.bias.detach().numpy().astype(np.float32)
    a = model.num_actions
    for r in range(model.num_heads):
        arrays[f"pi_w{r}"] = model.pi_w.weight[r * a : (r + 1) * a].detach().numpy().T.astype(np.float32)
        arrays[f"pi_b{r}"] = model.pi_b.weight[r * a : (r + 1) * a, 0].detach().numpy().astype(np.float32)
        arrays[f"v_w{r}"] = model.v.weight[r : r + 1].detach().numpy().T.astype(np.float32)
        arrays[f"v_b{r}"] = model.v.bias[r : r + 1].detach().numpy().astype(np.float32)
    # a killed export keeps the previous file
    write_atomic(path, lambda fh: np.savez_compressed(fh, **arrays))  # type: ignore[arg-type]
    return path


def load_npz(model: Policy, path: str | Path, config: GameConfig) -> None:
    """Copy a ``policy.npz`` (``agents.learned`` format, e.g. ``experiments.train.imitate``'s) into a :class:`Policy` of
    the same shape (``--init``), or of the same game where the file is universal (specialized to this count), has
    one head for the network's role heads, or lacks the claims rule (grown); any other difference of configuration
    or size is refused, naming it."""
    pol = NumpyPolicy(path)
    # A universal file (one network for every count of the game) starts a per-count network as its
    # specialization to this count (NumpyPolicy.for_config: the rows and columns of the count, the variant folded in).
    grow = bool(model.claims) and not pol.claims
    if pol.universal and not model.universal:
        pol = pol.for_config(config.game_config if grow else config)
    # A file with one head starts every role head of a --role-heads network with it (the roles then diverge).
    fan = pol.num_heads == 1 and model.num_heads > 1
    # A claims network may start from a file of the same game without claims (``grow``): the file's weights for the
    # game's observation and actions, zero weights on the claims block (it plays the file's moves until it learns
    # to listen) and the fresh small head rows of the claim ids.
    if not (pol.universal and pol.universal == model.universal):
        pol.check_config(config.game_config if grow else config)
    want = {"obs_size": model.obs_size, "num_actions": model.num_actions, "hidden": model.hidden,
            "embed": model.embed, "num_heads": model.num_heads,
            "role_slice": [model.role_start, model.role_stop], "features": model.features,
            "universal": model.universal}  # fmt: skip
    if grow:
        want |= {"obs_size": observation_layout(config).size, "num_actions": int(num_actions(config))}
    got = {k: pol.meta.get(k, {"embed": 0, "features": "", "universal": ""}.get(k)) for k in want}
    if fan:
        got["num_heads"] = model.num_heads
    if got != want:
        raise ValueError(f"{path} does not fit this network: file {got}, network {want}")
    w = pol.w
    a, fa, fo = model.num_actions, pol.num_actions, pol.obs_size  # the file's actions and inputs (fewer if grow)
    with torch.no_grad():
        model.fc0.weight.zero_()
        # the file's input scale (a specialized universal file's may differ from this count's) into the weights
        rescale = w["scale"][:fo].astype(np.float64) / model.scale[:fo].numpy().astype(np.float64)
        model.fc0.weight[:, :fo] = torch.from_numpy((w["w0"] * rescale[:, None]).T.astype(np.float32))
        model.fc0.bias.copy_(torch.from_numpy(w["b0"].copy()))
        model.fc1.weight.copy_(torch.from_numpy(w["w1"].T.copy()))
        model.fc1.bias.copy_(torch.from_numpy(w["b1"].copy()))
        if model.pe is not None:
            model.pe.weight.copy_(torch.from_numpy(w["pe_w"].T.copy()))
            model.pe.bias.copy_(torch.from_numpy(w["pe_b"].copy()))
        for r in range(model.num_heads):
            f = 0 if fan else r
            model.pi_w.weight[r * a : r * a + fa] = torch.from_numpy(w[f"pi_w{f}"].T.copy())
            model.pi_b.weight[r * a : r * a + fa, 0] = torch.from_numpy(w[f"pi_b{f}"].copy())
            model.v.weight[r] = torch.from_numpy(w[f"v_w{f}"][:, 0].copy())
            model.v.bias[r] = float(w[f"v_b{f}"][0])
