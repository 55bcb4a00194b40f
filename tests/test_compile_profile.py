"""experiments.bench.compile_profile: numba's compile events attributed to functions (exclusive seconds)."""

from __future__ import annotations

import numba as nb
import pytest
from numba.core import event

from experiments.bench.compile_profile import _Exclusive, _Outermost, main


def test_nested_compiles_are_attributed_exclusively() -> None:
    @nb.njit  # not cached: compiles in this test
    def inner(x):  # type: ignore[no-untyped-def]
        return x + 1

    @nb.njit
    def outer(x):  # type: ignore[no-untyped-def]
        return inner(x) * 2

    functions, llvm, whole = _Exclusive(), _Outermost(), _Outermost()
    event.register("numba:compile", functions)
    event.register("numba:compile", whole)  # the outermost compile, inclusive: outer's with inner's inside
    event.register("numba:llvm_lock", llvm)
    try:
        assert outer(3) == 8
    finally:
        event.unregister("numba:compile", functions)
        event.unregister("numba:compile", whole)
        event.unregister("numba:llvm_lock", llvm)
    names = {k.rsplit(".", 1)[-1]: v for k, v in functions.seconds.items()}
    assert {"inner", "outer"} <= set(names)
    assert all(v >= 0 for v in functions.seconds.values())
    # Exclusive: inner's time is not counted in outer's again (an inclusive count would give outer the whole).
    assert names["outer"] < whole.seconds
    assert sum(functions.seconds.values()) <= whole.seconds * 1.001 + 1e-4
    assert functions._stack == [] and llvm._depth == 0
    assert 0 < llvm.seconds


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["base", "--top", "0"])
    assert "--top 0 must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["chess"])


def test_json_report_names_the_commit_and_the_functions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import saboteur_env.warmup as warmup

    def exercise(game: str) -> None:  # a stand-in for a game's first use: one small fresh compile
        @nb.njit
        def tiny(x):  # type: ignore[no-untyped-def]
            return x * 3

        assert tiny(2) == 6

    monkeypatch.setattr(warmup, "exercise", exercise)
    assert main(["duel", "--top", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "duel" and out["compiled_s"] > 0 and out["llvm_s"] >= 0
    assert any(name.endswith("tiny") for name, _ in out["top"])
    assert {"commit", "dirty", "numba", "package"} <= set(out)
    assert main(["duel", "--top", "1"]) == 0
    assert "s in compiles" in capsys.readouterr().out
