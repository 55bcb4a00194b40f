"""MaskablePPO end to end on the single-seat wrapper (needs the ``train`` extra, installed by CI).

Model files are the safe format of ``agents.ppo``; tests/test_model_files.py covers loading and refusing them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

from agents.ppo import read_meta
from experiments.tournament.loop import play
from experiments.tournament.rounds import GameSpec
from experiments.train.sb3 import main, train


def test_train__maskable_ppo_steps_saves_safe_checkpoints_and_loads_as_an_agent(tmp_path):
    model = train(4, "random", 256, seed=0, out=tmp_path, checkpoint_every=128, n_steps=256, batch_size=256)
    assert model.num_timesteps >= 256
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final.zip", "ppo_128_steps.zip", "ppo_256_steps.zip"]
    assert [read_meta(tmp_path / f"ppo_{n}_steps.zip").num_timesteps for n in (128, 256)] == [128, 256]
    meta = read_meta(tmp_path / "final.zip")
    assert meta.num_timesteps == model.num_timesteps and meta.training["opponents"] == "random"
    records = play(GameSpec("base", 4, (f"ppo:{tmp_path / 'final.zip'}", "random"), seed=3, beliefs=False))
    assert len(records) == 3 and all(r["end"]["decisions"] > 0 for r in records)


def test_train__continue_from_a_checkpoint_with_shaping(tmp_path):
    first = train(4, "random", 128, seed=0, out=tmp_path / "a", n_steps=128, batch_size=128)
    more = train(4, "random", 128, seed=1, out=tmp_path / "b", shaping=0.05, init=tmp_path / "a" / "final.zip")
    assert more.num_timesteps >= first.num_timesteps + 128 and (more.n_steps, more.batch_size) == (128, 128)
    meta = read_meta(tmp_path / "b" / "final.zip")
    assert meta.num_timesteps == more.num_timesteps and meta.training["init"] == str(tmp_path / "a" / "final.zip")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "2"], "--players 2 is out of range; valid: 3..10"),
        (["--steps", "0"], "--steps 0 must be >= 1"),
        (["--seed", "-1"], "--seed -1 is out of range"),
        (["--checkpoint-every", "-5"], "--checkpoint-every -5 must be >= 0"),
        (["--shaping", "nan"], "--shaping nan must be a finite number >= 0"),
        (["--opponents", "role_oracle"], "--opponents 'role_oracle' is not valid"),
        (["--opponents", "ppo:no/such/model.zip"], "no model at no/such/model.zip"),
        (["--init", "no/such/model.zip"], "--init no/such/model.zip does not exist"),
        (["--trust-model-file"], "--trust-model-file only applies to --convert"),
        (["--convert", "no/such/model.zip", "--trust-model-file"], "--convert no/such/model.zip does not exist"),
    ],
)
def test_train__cli_arguments_are_validated_before_training(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        main([*args, "--out", str(tmp_path / "out")])
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_train__out_must_be_a_directory(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "file")])
    assert "exists and is not a directory" in capsys.readouterr().err
