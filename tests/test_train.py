"""MaskablePPO end to end on the single-seat wrapper (needs the ``train`` extra, installed by CI)."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

from experiments.tournament import play_game
from experiments.train_sb3 import train


def test_train__maskable_ppo_steps_and_loads_as_an_agent(tmp_path):
    model = train(4, "random", 256, seed=0, out=tmp_path, n_steps=128, batch_size=64)
    assert model.num_timesteps >= 256 and (tmp_path / "final.zip").exists()
    records = play_game(4, f"ppo:{tmp_path / 'final.zip'}", "random", seed=3, beliefs=False)
    assert len(records) == 3 and all(r["end"]["decisions"] > 0 for r in records)


def test_train__continue_from_a_checkpoint_with_shaping(tmp_path):
    first = train(4, "random", 128, seed=0, out=tmp_path / "a", n_steps=64, batch_size=32)
    more = train(4, "random", 128, seed=1, out=tmp_path / "b", shaping=0.05, init=tmp_path / "a" / "final.zip")
    assert more.num_timesteps >= first.num_timesteps + 128 and (tmp_path / "b" / "final.zip").exists()
