"""``experiments.bench``'s command line: validation and the records it prints (not its speed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from experiments import bench


def test_history_length_reaches_the_games_and_the_records(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configs: list[dict[str, Any]] = []
    real = bench.bench_vector

    def spy(*args: Any, **config: Any) -> Any:
        configs.append(config)
        return real(*args, **config)

    monkeypatch.setattr(bench, "bench_vector", spy)
    assert bench.main(["--target", "vector", "--players", "3", "--num-envs", "2", "--obs", "float", "--repeats", "1",
                       "--seconds", "0.01", "--games", "1", "--history-length", "0", "--json"]) == 0  # fmt: skip
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["target"] for r in records] == ["connect_four_v3 raw_env", "vector"]
    assert "history_length" not in records[0]  # the reference has no such option
    vector = records[1]
    assert vector["history_length"] == 0 and vector["num_envs"] == 2 and vector["decisions_per_s"] > 0
    assert configs == [{"history_length": 0}]
    assert bench.main(["--target", "vector", "--players", "3", "--num-envs", "2", "--obs", "float", "--repeats", "1",
                       "--seconds", "0.01", "--games", "1", "--json"]) == 0  # fmt: skip
    default = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1]
    assert "history_length" not in default and configs[1] == {}


@pytest.mark.parametrize("value", ["-1", "257"])
def test_history_length_out_of_range_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["--history-length", value])
    assert exc.value.code == 2
    assert f"--history-length {value} is out of range; valid: 0..256" in capsys.readouterr().err
