"""The compact network: its reader (token ids and counts of the compact observation), the torch model against its
numpy inference, the numba ops against torch's, the policy file (version 2) and a short training run."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.compact_reader import compress_base, reader
from agents.learned import NumpyPolicy, PolicyFileError, PolicyMismatchError, role_slice
from saboteur_env import GameConfig
from saboteur_env.vector import LegalSampler, VectorEnv, expand_compact

CONFIGS = [GameConfig(num_players=5), GameConfig(num_players=3), GameConfig(game="sab2", num_players=6),
           GameConfig(game="duel")]  # fmt: skip


def _played(config: GameConfig, steps: int = 120, envs: int = 16) -> np.ndarray:
    """Compact observations of random legal play (every step's acting seats)."""
    env = VectorEnv(envs, config=config, obs_format="compact")
    obs, _ = env.reset(seed=3)
    sampler, out = LegalSampler(5), []
    for _ in range(steps):
        out.append(obs.copy())
        obs, *_ = env.step(sampler.sample(env))
    return np.concatenate(out)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.game}{c.num_players}")
def test_reader_layout(config: GameConfig) -> None:
    rd = reader(config)
    c = _played(config)
    tok = rd.tokens(c)
    assert tok.shape == (c.shape[0], rd.num_places)
    assert tok.min() >= -1 and tok.max() < rd.num_tokens
    # each place's ids stay in its own vocabulary: no two places share a token id
    for k in range(rd.num_places):
        t = tok[:, k][tok[:, k] >= 0]
        hi = rd.offset[k + 1] if k + 1 < rd.num_places else rd.num_tokens
        assert ((t >= rd.offset[k]) & (t < hi)).all()
    # no value of play is clipped into another (mx bounds the raw sub-field)
    v1 = c[:, rd.c1].astype(np.int64)
    assert not ((((v1 >> rd.sh1) & rd.m1) > rd.mx1) & (v1 >= 0)).any()
    counts = rd.counts(c)
    assert counts.shape == (c.shape[0], rd.num_dense) and 0 <= counts.min() and counts.max() <= 1.0
    packed = rd.pack(c)
    assert packed.shape == (c.shape[0], rd.width)
    np.testing.assert_array_equal(packed[:, rd.num_dense : -1], tok)
    np.testing.assert_array_equal(packed[:, : rd.num_dense], counts)
    np.testing.assert_array_equal(packed[:, -1], rd.heads(c))
    sl = role_slice(config)
    if sl is not None:  # the head index is the float observation's role one-hot
        np.testing.assert_array_equal(rd.heads(c), expand_compact(c, config)[:, sl].argmax(axis=1))


@pytest.mark.parametrize("players", [3, 5, 10])
def test_compress_base_inverts_expand(players: int) -> None:
    config = GameConfig(num_players=players)
    c = _played(config)
    f = expand_compact(c, config)
    back = compress_base(f, config)
    np.testing.assert_array_equal(expand_compact(back, config), f)
    # the one ambiguity of the float layout (an event at cell 0 or none) is no token either way
    np.testing.assert_array_equal(reader(config).tokens(back), reader(config).tokens(c))


torch = pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
from experiments.train.selfplay.compact import CompactPolicy, export, legal_logits, load_init, token_sum  # noqa: E402
from experiments.train.selfplay.policy import masked_log_probs  # noqa: E402
from saboteur_env.vector import legal_indices  # noqa: E402


def test_numba_ops_match_torch() -> None:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(50, 8, generator=g, requires_grad=True)
    idx = torch.randint(-1, 50, (30, 7), generator=g, dtype=torch.int32)
    out = token_sum(w, idx)
    ref = (torch.cat([w, torch.zeros(1, 8)])[torch.where(idx < 0, 50, idx).long()]).sum(dim=1)
    torch.testing.assert_close(out, ref)
    up = torch.randn(30, 8, generator=g)
    (gw,) = torch.autograd.grad((out * up).sum(), w)
    (gw_ref,) = torch.autograd.grad((ref * up).sum(), w)
    torch.testing.assert_close(gw, gw_ref)
    b = torch.randn(50, generator=g, requires_grad=True)
    x = torch.randn(30, 8, generator=g, requires_grad=True)
    key, rows = torch.randint(0, 50, (90,), generator=g), torch.randint(0, 30, (90,), generator=g)
    y = legal_logits(w, b, x, key, rows)
    y_ref = (w[key] * x[rows]).sum(dim=1) + b[key]
    torch.testing.assert_close(y, y_ref)
    up = torch.randn(90, generator=g)
    for a, r in zip(torch.autograd.grad((y * up).sum(), (w, b, x)), torch.autograd.grad((y_ref * up).sum(), (w, b, x)),
                    strict=True):  # fmt: skip
        torch.testing.assert_close(a, r)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.game}{c.num_players}")
def test_torch_equals_numpy(config: GameConfig, tmp_path: Path) -> None:
    torch.manual_seed(1)
    model = CompactPolicy(config, hidden=16, role_heads=True)
    with torch.no_grad():  # the initial heads are near 0: spread them so the comparison means something
        model.pi_w.normal_(0, 0.5)
        model.pi_b.normal_(0, 0.5)
    c = _played(config, steps=40, envs=8)
    packed = reader(config).pack(c)
    logits, value = model(torch.from_numpy(packed))
    path = export(model, config, tmp_path / "p.npz", decisions=7)
    pol = NumpyPolicy(path)
    assert pol.net == "compact" and pol.meta["version"] == 2 and pol.meta["decisions"] == 7
    pol.check_config(config)
    nl, nv = pol.forward_packed(packed)
    np.testing.assert_allclose(nl, logits.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(nv, value.detach().numpy(), rtol=1e-4, atol=1e-4)
    # legal(): the masked softmax of the full logits over the legal entries
    mask = (np.random.default_rng(0).random((packed.shape[0], model.num_actions)) < 0.01).astype(np.int8)
    mask[:, 0] = 1
    rows, cols = map(torch.from_numpy, legal_indices(mask))
    logp, v2 = model.legal(torch.from_numpy(packed), rows, cols)
    full = masked_log_probs(logits, torch.from_numpy(mask))
    torch.testing.assert_close(logp, full[rows, cols], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(v2, value)
    # --init reads it back bit for bit
    other = CompactPolicy(config, hidden=16, role_heads=True)
    load_init(other, path, config)
    for a, b in zip(model.parameters(), other.parameters(), strict=True):
        torch.testing.assert_close(a, b)


def test_learned_agent_reads_float_observations(tmp_path: Path) -> None:
    config = GameConfig(num_players=5)
    torch.manual_seed(2)
    model = CompactPolicy(config, hidden=16, role_heads=True)
    path = export(model, config, tmp_path / "p.npz")
    agent = make_agent(f"learned:{path}", config)
    env = VectorEnv(4, config=config, obs_format="compact")
    c, info = env.reset(seed=4)
    f = expand_compact(c, config)
    got, _ = agent.policy.forward(f)
    want, _ = agent.policy.forward_packed(reader(config).pack(c))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    a = agent.act(f[0], info["action_mask"][0])
    assert info["action_mask"][0][a] == 1
    with pytest.raises(PolicyMismatchError, match="num_players=5"):
        make_agent(f"learned:{path}", GameConfig(num_players=4))


def _rewrite(path: Path, out: Path, **changes: object) -> Path:
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with np.load(path, allow_pickle=False) as d:
        meta = json.loads(str(d["meta"]))
    meta.update(changes)
    arrays = {k[:-4]: np.load(__import__("io").BytesIO(v)) for k, v in members.items() if k != "meta.npy"}
    np.savez(out, meta=np.array(json.dumps(meta)), **arrays)
    return out


def test_bad_compact_files(tmp_path: Path) -> None:
    config = GameConfig(num_players=5)
    path = export(CompactPolicy(config, hidden=8), config, tmp_path / "p.npz")
    assert reader(config).num_tokens == 13658  # a header declaring one more token than the archive holds:
    with pytest.raises(PolicyFileError, match="net='mlp' does not fit format version 2"):
        NumpyPolicy(_rewrite(path, tmp_path / "a.npz", net="mlp"))
    with pytest.raises(PolicyFileError, match="num_tokens"):
        NumpyPolicy(_rewrite(path, tmp_path / "b.npz", num_tokens=-1))
    with pytest.raises(PolicyFileError, match=r"entry 'emb' must be float32 of shape \(13659, 8\)"):
        NumpyPolicy(_rewrite(path, tmp_path / "c.npz", num_tokens=reader(config).num_tokens + 1))
    with pytest.raises(PolicyMismatchError, match="reads compact observations"):
        pol = NumpyPolicy(_rewrite(path, tmp_path / "d.npz", reader_version=99))
        pol.check_config(config)
    with pytest.raises(ValueError, match=r"packed input has shape \(2, 3\)"):
        NumpyPolicy(path).forward_packed(np.zeros((2, 3), dtype=np.float32))


def test_args_refuse_bad_net_options() -> None:
    from experiments.train.selfplay.args import Args

    with pytest.raises(ValueError, match="net='conv' is unknown; valid: 'mlp', 'compact'"):
        Args(net="conv").check()
    with pytest.raises(ValueError, match="takes no --features"):
        Args(net="compact", features="bayes").check()
    with pytest.raises(ValueError, match="device='tpu' is not available"):
        Args(device="tpu").check()


@pytest.mark.parametrize("game", ["base", "duel"])
def test_compact_training_runs_and_resumes(game: str, tmp_path: Path) -> None:
    from experiments.train.selfplay.args import Args
    from experiments.train.selfplay.trainer import Trainer

    args = Args(game=game, num_envs=8, rollout=6, steps=10_000, hidden=16, role_heads=True, net="compact",
                out=str(tmp_path), tensorboard=False, checkpoint_every=1)  # fmt: skip
    t = Trainer(args)
    t.train(max_iterations=2, quiet=True)
    assert t.decisions == 2 * 6 * 8
    pol = NumpyPolicy(tmp_path / "policy.npz")
    assert pol.net == "compact"
    resumed = Trainer(Args(**{**args.__dict__, "resume": True}))
    resumed.train(max_iterations=3, quiet=True)
    assert resumed.iteration == 3
    from experiments.train.selfplay.policy import CheckpointError

    with pytest.raises(CheckpointError, match="net"):
        Trainer(Args(**{**args.__dict__, "resume": True, "net": "mlp"})).train(max_iterations=4, quiet=True)
