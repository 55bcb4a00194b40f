"""Model files load without unpickling (agents.ppo): crafted files never run code, safe files round-trip exactly,
and files that are corrupt, native stable-baselines3 zips or made for another game are refused with clear messages.

One model is trained once for the module (a few hundred steps); everything else edits copies of its file.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # after the importorskip: torch comes with the train extra

from agents import make_agent
from agents.ppo import META, OPTIMIZER, POLICY, ModelFileError, PPOAgent, read_meta, save_model
from experiments.tournament.loop import play
from experiments.tournament.rounds import GameSpec
from experiments.train import sb3 as train_sb3
from saboteur_env import GameConfig, SingleSeatEnv

# torch's restricted unpickler notes the crafted payloads' pickle protocol before refusing them
pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")


class _Exec:
    """Unpickling this runs ``code``: the stand-in for whatever a hostile model file would do."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return exec, (self.code,)


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Exec(f"open({str(marker)!r}, 'w').write('code ran')"))


def _sb3_style_zip(path: Path, marker: Path) -> Path:
    """An archive laid out like ``MaskablePPO.save`` whose pickled entries write ``marker`` when loaded."""
    serialized = {":type:": "<class 'type'>", ":serialized:": base64.b64encode(_payload(marker)).decode()}
    data = {"policy_class": serialized, "observation_space": serialized, "action_space": serialized, "n_envs": 1}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", _payload(marker))
        archive.writestr("policy.optimizer.pth", _payload(marker))
        archive.writestr("pytorch_variables.pth", _payload(marker))
        archive.writestr("_stable_baselines3_version", "2.9.2")
    return path


def _rewrite(source: Path, target: Path, members: dict[str, bytes | None]) -> Path:
    """A copy of the archive ``source`` with some members replaced or added (``None`` drops one)."""
    replace = dict(members)
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for name in src.namelist():
            data = replace.pop(name, src.read(name))
            if data is not None:
                dst.writestr(name, data)
        for name, data in replace.items():
            if data is not None:
                dst.writestr(name, data)
    return target


def _meta(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(META))


def _observations(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` (observation, mask) pairs from random 4-player play."""
    cfg = GameConfig(num_players=4)
    env = SingleSeatEnv(lambda seat: make_agent("random", cfg), num_players=4)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    pairs = []
    while len(pairs) < n:
        mask = env.action_masks().astype(np.int8)
        pairs.append((obs, mask))
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    return pairs


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("ppo")
    model = train_sb3.train(4, "random", 256, seed=0, out=out, n_steps=256, batch_size=256)
    return model, out / "final.zip"


# ---- crafted files never run code ----


def test_model_files__the_crafted_payload_really_runs_code_under_plain_unpickling(tmp_path):
    # Guards the tests below: the marker's absence there means "not unpickled", not "a harmless payload".
    from stable_baselines3.common.save_util import load_from_zip_file

    marker = tmp_path / "ran"
    with contextlib.suppress(Exception):
        load_from_zip_file(_sb3_style_zip(tmp_path / "evil.zip", marker), device="cpu")
    assert marker.read_text() == "code ran"


def test_model_files__ppo_agent_refuses_a_crafted_sb3_zip_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    evil = _sb3_style_zip(tmp_path / "evil.zip", marker)
    with pytest.raises(ModelFileError, match=r"stable-baselines3 native zip.*pickled Python objects that run code"):
        make_agent(f"ppo:{evil}", GameConfig(num_players=4))
    with pytest.raises(ValueError, match=re.escape(str(evil))):  # what a tournament sees, naming the file
        play(GameSpec("base", 4, (f"ppo:{evil}", "random"), seed=0, beliefs=False))
    assert not marker.exists()


def test_model_files__init_refuses_a_crafted_sb3_zip_without_running_it(tmp_path, capsys):
    marker = tmp_path / "ran"
    evil = _sb3_style_zip(tmp_path / "evil.zip", marker)
    with pytest.raises(SystemExit) as exit_info:
        train_sb3.main(["--players", "4", "--init", str(evil), "--steps", "64", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "pickled Python objects that run code" in err and "--trust-model-file" in err
    with pytest.raises(ModelFileError, match="run code"):
        train_sb3.train(4, "random", 64, seed=0, out=None, init=evil)
    # --convert is the one door that unpickles, and only with the explicit flag
    with pytest.raises(SystemExit):
        train_sb3.main(["--players", "4", "--convert", str(evil), "--out", str(tmp_path / "out")])
    assert "runs any code it holds; add --trust-model-file" in capsys.readouterr().err
    assert not marker.exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("member", [POLICY, OPTIMIZER])
def test_model_files__pickled_code_inside_a_safe_file_is_refused_by_the_weights_only_loader(
    trained, tmp_path, capsys, member
):
    marker = tmp_path / "ran"
    evil = _rewrite(trained[1], tmp_path / "evil.zip", {member: _payload(marker)})
    with pytest.raises(SystemExit):
        train_sb3.main(["--players", "4", "--init", str(evil), "--steps", "64", "--out", str(tmp_path / "out")])
    assert f"{member} holds objects other than tensors; refused, as unpickling them could run code" in (
        capsys.readouterr().err
    )
    if member == POLICY:
        with pytest.raises(ModelFileError, match="objects other than tensors"):
            PPOAgent(evil, GameConfig(num_players=4))
    assert not marker.exists()


# ---- safe files round-trip ----


def test_model_files__a_trained_model_round_trips_with_the_same_actions(trained, tmp_path):
    model, path = trained
    assert set(zipfile.ZipFile(path).namelist()) == {META, POLICY, OPTIMIZER}
    meta = read_meta(path)
    assert meta.config == GameConfig(num_players=4) and meta.num_timesteps == model.num_timesteps >= 256
    assert meta.rules_version == GameConfig(num_players=4).rules_version
    assert meta.net_arch == {"pi": [64, 64], "vf": [64, 64]} and meta.activation == "tanh"
    agent = PPOAgent(path, GameConfig(num_players=4))
    pairs = _observations(120, seed=11)
    for obs, mask in pairs:
        expected, _ = model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        assert agent.act(obs, mask) == int(expected)
    assert PPOAgent(path, GameConfig(num_players=4)).policy is agent.policy  # loaded once per process
    sampler = PPOAgent(path, GameConfig(num_players=4), deterministic=False)
    runs = []
    for _ in range(2):
        sampler.reset(0, 4, seed=7)
        runs.append([sampler.act(obs, mask) for obs, mask in pairs[:40]])
    assert runs[0] == runs[1] and all(mask[a] for a, (_, mask) in zip(runs[0], pairs[:40], strict=True))


def test_model_files__init_restores_weights_optimizer_and_hyperparameters(trained):
    model, path = trained
    env = train_sb3.make_env(4, "random", seed=1)
    again = train_sb3.load_for_training(path, env, seed=1)
    assert again.num_timesteps == model.num_timesteps and (again.n_steps, again.batch_size) == (256, 256)
    for name, tensor in model.policy.state_dict().items():
        assert torch.equal(again.policy.state_dict()[name], tensor), name
    before, after = model.policy.optimizer.state_dict(), again.policy.optimizer.state_dict()
    for i, state in before["state"].items():
        assert torch.equal(after["state"][i]["exp_avg_sq"], state["exp_avg_sq"])
        assert torch.equal(after["state"][i]["step"], state["step"])


def test_model_files__convert_turns_a_trusted_native_zip_into_a_safe_file(trained, tmp_path, capsys):
    model, _ = trained
    native = tmp_path / "native.zip"
    model.save(native)
    with pytest.raises(ModelFileError, match=r"native zip.*--convert"):
        PPOAgent(native, GameConfig(num_players=4))
    assert train_sb3.main(["--players", "4", "--convert", str(native), "--trust-model-file",
                           "--out", str(tmp_path / "safe")]) == 0  # fmt: skip
    agent = PPOAgent(tmp_path / "safe" / "native.zip", GameConfig(num_players=4))
    for obs, mask in _observations(40, seed=5):
        assert agent.act(obs, mask) == int(model.predict(obs, action_masks=mask.astype(bool), deterministic=True)[0])


# ---- bad files are refused with clear messages ----


def test_model_files__corrupt_and_truncated_files_are_refused(trained, tmp_path):
    _, path = trained
    good = path.read_bytes()
    cases = {
        "truncated.zip": (good[: len(good) // 2], "corrupt or truncated zip archive"),
        "noise.zip": (bytes(range(256)) * 8, r"not a model file \(not a zip archive\)"),
        "empty.zip": (b"", r"not a model file \(not a zip archive\)"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ModelFileError, match=message) as info:
            PPOAgent(tmp_path / name, GameConfig(num_players=4))
        assert str(tmp_path / name) in str(info.value)
        assert str(pickle.loads(pickle.dumps(info.value))) == str(info.value)  # crosses process pools intact
    # a flipped byte inside the compressed weights: the zip's CRC catches it
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(POLICY)
    # The member's data follows its local header: 30 bytes, then the name and extra field of the lengths given there.
    local = good[info.header_offset : info.header_offset + 30]
    start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    damaged = bytearray(good)
    start += info.compress_size // 2
    damaged[start] ^= 0xFF
    (tmp_path / "flipped.zip").write_bytes(bytes(damaged))
    with pytest.raises(ModelFileError, match=r"policy.pt is corrupt"):
        PPOAgent(tmp_path / "flipped.zip", GameConfig(num_players=4))
    other = _rewrite(path, tmp_path / "other.zip", {META: None})
    with pytest.raises(ModelFileError, match="not a saboteur-env model file"):
        PPOAgent(other, GameConfig(num_players=4))
    with pytest.raises(ModelFileError, match=r"meta.json is not valid UTF-8 JSON"):
        PPOAgent(_rewrite(path, tmp_path / "json.zip", {META: b"{not json"}), GameConfig(num_players=4))
    with pytest.raises(ModelFileError, match="is a directory"):
        PPOAgent(tmp_path, GameConfig(num_players=4))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"format": "other"}, "has format 'other'"),
        ({"format_version": 99}, "this saboteur-env reads 1"),
        ({"policy": {"net_arch": {"pi": [10**9], "vf": [64]}, "activation": "tanh"}}, "widths <= 4096"),
        ({"policy": {"net_arch": {"pi": [64, 64], "vf": [64, 64]}, "activation": "os.system"}}, "not one of"),
        ({"policy": {"net_arch": {"pi": [32, 64], "vf": [64, 64]}, "activation": "tanh"}}, "has shape"),
        ({"observation_size": 7}, "says 7 observation values"),
        ({"hyperparameters": {"n_steps": "512"}}, "hyperparameters must have exactly the keys"),
    ],
)
def test_model_files__inconsistent_meta_is_refused_before_anything_is_built(trained, tmp_path, edit, message):
    _, path = trained
    meta = _meta(path) | edit
    bad = _rewrite(path, tmp_path / "bad.zip", {META: json.dumps(meta).encode()})
    with pytest.raises(ModelFileError, match=message):
        PPOAgent(bad, GameConfig(num_players=4))


def test_model_files__a_model_for_another_player_count_or_game_is_refused(trained, tmp_path, capsys):
    _, path = trained
    with pytest.raises(ModelFileError, match=r"trained for another game: num_players=4 \(here 5\)"):
        PPOAgent(path, GameConfig(num_players=5))
    with pytest.raises(SystemExit):
        train_sb3.main(["--players", "5", "--init", str(path), "--steps", "64", "--out", str(tmp_path / "out")])
    assert "num_players=4 (here 5)" in capsys.readouterr().err
    from sb3_contrib import MaskablePPO

    duel = GameConfig(game="duel")
    env = SingleSeatEnv(lambda seat: make_agent("random", duel), game="duel")
    duel_file = save_model(MaskablePPO("MlpPolicy", env, n_steps=64, device="cpu"), tmp_path / "duel.zip", duel)
    with pytest.raises(ModelFileError, match=r"another game: game='duel' \(here 'base'\), num_players=2 \(here 4\)"):
        PPOAgent(duel_file, GameConfig(num_players=4))
    with pytest.raises(ModelFileError, match=r"game='base' \(here 'duel'\)"):
        PPOAgent(path, duel)
    assert PPOAgent(duel_file, duel).act(*_duel_decision(env)) >= 0


def _duel_decision(env: SingleSeatEnv) -> tuple[np.ndarray, np.ndarray]:
    obs, _ = env.reset(seed=0)
    return obs, env.action_masks().astype(np.int8)


def test_model_files__weights_load_with_torch_weights_only(trained, tmp_path):
    # The weights members are plain torch archives of tensors: loadable with the restricted unpickler alone.
    _, path = trained
    with zipfile.ZipFile(path) as archive:
        state = torch.load(io.BytesIO(archive.read(POLICY)), weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in state.values())


def test_model_files__torch_before_2_6_is_refused_for_weights():
    from agents.ppo import require_safe_torch

    require_safe_torch("2.13.0+cpu")
    with pytest.raises(RuntimeError, match="CVE-2025-32434"):
        require_safe_torch("2.5.1")
