"""experiments.compile_profile: numba's compile events attributed to functions (exclusive seconds)."""

from __future__ import annotations

import numba as nb
import pytest
from numba.core import event

from experiments.compile_profile import _Exclusive, _Outermost, main


def test_nested_compiles_are_attributed_exclusively() -> None:
    @nb.njit  # not cached: compiles in this test
    def inner(x):  # type: ignore[no-untyped-def]
        return x + 1

    @nb.njit
    def outer(x):  # type: ignore[no-untyped-def]
        return inner(x) * 2

    functions, llvm = _Exclusive(), _Outermost()
    event.register("numba:compile", functions)
    event.register("numba:llvm_lock", llvm)
    try:
        assert outer(3) == 8
    finally:
        event.unregister("numba:compile", functions)
        event.unregister("numba:llvm_lock", llvm)
    names = {k.rsplit(".", 1)[-1]: v for k, v in functions.seconds.items()}
    assert {"inner", "outer"} <= set(names)
    assert all(v >= 0 for v in functions.seconds.values())
    assert functions._stack == [] and llvm._depth == 0
    assert 0 < llvm.seconds


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["base", "--top", "0"])
    assert "--top 0 must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["chess"])
