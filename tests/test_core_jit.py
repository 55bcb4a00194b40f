"""The core's numba decorators (saboteur_env.core.jit): one helper specialisation per argument kind, entry points
that run correctly, and the games' helpers compiled once each on a cold cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba as nb
import numpy as np
import pytest
from numba.core import types

from saboteur_env.core import jit
from saboteur_env.core.jit import helper, kernel

ROOT = Path(__file__).resolve().parents[1]


@helper
def _scaled_sum(a, k, flag):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * k
    return s if flag else -s


@nb.njit  # not cached: every run compiles it, and with it the helper
def _calls(a, x32, x8):
    # literal int, int32, int8 and literal / computed bools: all one specialisation of the helper
    return _scaled_sum(a, 3, True) + _scaled_sum(a, x32, False) + _scaled_sum(a, x8, x32 > 0)


@kernel
def _kernel_calls(a, x32):
    return _scaled_sum(a, x32, True) - _scaled_sum(a, 1, False)


def test_helper_one_specialisation_per_kind() -> None:
    a = np.arange(5, dtype=np.int64)
    assert _calls(a, np.int32(4), np.int8(2)) == 3 * 10 - 4 * 10 + 2 * 10
    assert _calls(a, np.int32(-1), np.int8(2)) == 30 + 10 - 20  # x32 <= 0: the third call negates
    assert len(_scaled_sum.signatures) == 1
    assert list(_scaled_sum.signatures[0])[1:] == [types.int64, types.boolean]


def test_kernel_runs_helpers() -> None:
    a = np.arange(5, dtype=np.int64)
    assert _kernel_calls(a, np.int32(3)) == 30 + 10
    assert _kernel_calls(a, np.int64(-2)) == -20 + 10


@kernel
def _fill(out, x):
    for i in range(out.shape[0]):
        out[i] = x + i


def test_bound_calls_the_specialisation_of_its_arguments_on_the_same_arrays() -> None:
    out = np.zeros(3, dtype=np.int64)
    call = jit.bound(_fill, out, 5)
    assert (_fill.signatures[-1][0], _fill.signatures[-1][1]) == (types.int64[::1], types.int64)
    assert out.tolist() == [0, 0, 0]  # binding compiles; it does not run the kernel
    call()
    assert out.tolist() == [5, 6, 7]
    out[:] = 0
    call()  # the same array object, its new contents
    assert out.tolist() == [5, 6, 7]
    assert _fill.signatures.count(_fill.signatures[-1]) == 1


def test_bound_finds_an_entry_point_once_per_kernel_and_argument_types() -> None:
    a, b = np.zeros(3, dtype=np.int64), np.zeros(5, dtype=np.int64)
    first, second = jit.bound(_fill, a, 1), jit.bound(_fill, b, 2)
    assert first.func is second.func  # the same specialisation, from the process-wide table
    assert second.args[0] is b
    second()
    assert b.tolist() == [2, 3, 4, 5, 6] and a.tolist() == [0, 0, 0]
    other = np.zeros(4, dtype=np.int32)  # another type: another specialisation
    third = jit.bound(_fill, other, 3)
    assert third.func is not first.func
    third()
    assert other.tolist() == [3, 4, 5, 6]
    ro = np.zeros(2, dtype=np.int64)
    ro.flags.writeable = False  # numba types a read-only array apart: so does the key
    assert jit._type_key(_fill, ro) != jit._type_key(_fill, a)
    assert jit._type_key(_fill, 2**63) != jit._type_key(_fill, 5)  # beyond int64: typed by numba itself


def test_core_states_bind_their_own_arrays() -> None:
    import saboteur_env as se

    for config in ({}, {"game": "sab2", "num_players": 5}, {"game": "duel"}):
        env = se.raw_env(**config)
        env.reset(seed=3)
        game = env.game
        obs, *_ = env.last()
        env.step(se.sample_legal(obs["action_mask"], np.random.default_rng(0)))
        calls = {k: v for k, v in vars(game).items() if k.startswith("_call_") and v is not None}
        assert calls, config
        again = game.clone()  # a copy binds its own arrays, to the same entry points
        variant = env.variant
        mask = variant.legal_action_mask(again)
        variant.apply_action(again, int(np.flatnonzero(mask)[0]), inplace=True)
        for k, v in calls.items():
            mine = getattr(again, k)
            if mine is None:
                continue
            assert mine.func is v.func, (config, k)
            tables = {id(again.batch.cfg), id(again.batch.rowcol)}  # shared by copies (read-only)
            ours = {id(x) for x in mine.args if isinstance(x, np.ndarray)} - tables
            assert ours and not ours & {id(x) for x in v.args if isinstance(x, np.ndarray)}, (config, k)
            assert mine.args[0] is not v.args[0]  # the clone's own ViewsRef
        assert again.fingerprint() != game.fingerprint()
        obs2, *_ = env.last()
        env.step(se.sample_legal(obs2["action_mask"], np.random.default_rng(0)))
        assert all(getattr(game, k) is v for k, v in calls.items())


def test_helpers_are_not_emitted_and_kernels_are() -> None:
    """A helper stays optimised IR (no machine code of its own, see jit's docstring); the kernel that links it
    emits it and runs it."""
    a = np.arange(4, dtype=np.int64)
    assert _kernel_calls(a, np.int32(2)) == 12 + 6
    (cres,) = _scaled_sum.overloads.values()
    assert isinstance(cres.library, jit._UnemittedLibrary)
    emitted = cres.library._codegen._engine._ee._modules  # the modules handed to the JIT engine
    assert cres.library._finalized and cres.library._final_module not in emitted
    assert not any(isinstance(k.library, jit._UnemittedLibrary) for k in _kernel_calls.overloads.values())


def test_kind_keeps_unsigned_and_wide_types() -> None:
    assert jit._kind(types.uint64) == types.uint64  # the generator words stay unsigned
    assert jit._kind(types.uint8) == types.uint8
    assert jit._kind(types.int16) == types.int64
    assert jit._kind(types.IntegerLiteral(7)) == types.int64
    assert jit._kind(types.float32) == types.float32


_COLD = """
import json
from saboteur_env.base import kernels as kb
from saboteur_env.core import jit
from saboteur_env.vector import LegalSampler, VectorEnv
sampler = LegalSampler(0)
for obs in ("float", "compact"):
    venv = VectorEnv(3, num_players=4, obs_format=obs)
    venv.reset(seed=1)
    for _ in range(20):
        venv.step(venv.sample_actions(sampler))
print(json.dumps({f.py_func.__name__: len(f.signatures) for f in vars(kb).values()
                  if isinstance(f, jit._HelperDispatcher) and f.signatures}))
"""


@pytest.mark.slow
def test_base_compiles_each_helper_once(tmp_path: Path) -> None:
    """On a cold cache, every base helper that ran was compiled for one signature, whatever literals and integer
    widths its call sites pass (about 15 s: a cold compile of the base game)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", _COLD], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    counts = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(counts) >= {"_apply_range", "_mask_range", "_log", "_setup", "_end_round", "_obs_float_range"}
    assert all(n == 1 for n in counts.values()), counts


def test_fast_flags_hash_and_compare_by_the_options_set() -> None:
    """The core compiles with ``jit._Flags`` (a cheap hash for numba's overload caches): equal options give equal
    flags and hashes, a different option value differs, an unhashable option value (FastMathOptions) still hashes,
    and flags of numba's own class never compare equal (a cache miss, never a wrong hit)."""
    from numba.core.compiler import Flags

    a, b = jit._Flags(), jit._Flags()
    a.nrt = b.nrt = True
    a.fastmath = b.fastmath = {"nnan"}
    assert a == b and hash(a) == hash(b)
    b.boundscheck = True
    assert a != b
    plain = Flags()
    plain.nrt = True
    plain.fastmath = {"nnan"}
    assert a != plain and plain != a
    c, d = jit._Flags(), jit._Flags()  # equal fast-math sets built in different orders hash alike
    c.fastmath, d.fastmath = {"nnan", "ninf", "nsz", "arcp"}, {"arcp", "nsz", "ninf", "nnan"}
    assert c == d and hash(c) == hash(d)
    assert isinstance(a.copy(), jit._Flags) and a.copy() == a  # numba pushes a copy on its config stack


def test_core_dispatchers_compile_with_fast_flags() -> None:
    """Kernels and helpers use the flags compiler, and what they compile runs (``_kernel_calls`` above); a
    dispatcher built otherwise is left as it is."""
    from saboteur_env.base import kernels as base
    from saboteur_env.duel import kernels as duel
    from saboteur_env.sab2 import kernels as sab2

    for disp in (base.step, base._apply_range, sab2._batch, sab2._mask_range, duel._batch, duel._apply_range,
                 _kernel_calls, _scaled_sum):  # fmt: skip
        assert type(disp._compiler) is jit._FlagsCompiler
    other = nb.njit(lambda x: x + 1)
    other._compiler = object()
    assert jit._with_fast_flags(other)._compiler.__class__ is object
    plain = nb.njit(lambda x: x + 1)
    assert type(jit._with_fast_flags(plain)._compiler) is jit._FlagsCompiler
    assert plain(2) == 3


def test_overload_lookups_during_a_compile_see_fast_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the speed-up rests on: while a helper and a kernel compile, numba's overload caches are keyed by the
    ``_Flags`` numba pushed on its config stack (a copy of the dispatcher's), not by flags of numba's own class."""
    from numba.core import targetconfig
    from numba.core.typing import templates

    seen: list[type] = []
    original = templates._OverloadFunctionTemplate._get_impl

    def spy(self: object, args: object, kws: object) -> object:
        seen.append(type(targetconfig.ConfigStack.top_or_none()))
        return original(self, args, kws)

    monkeypatch.setattr(templates._OverloadFunctionTemplate, "_get_impl", spy)

    @helper
    def _fresh_helper(a, i):
        return a[i] + a[i - 1] if i > 0 else a[i]

    @nb.njit(pipeline_class=jit._KernelCompiler)
    def _fresh_kernel(a):
        s = 0
        for i in range(a.shape[0]):
            s += _fresh_helper(a, i)
        return s

    jit._with_fast_flags(_fresh_kernel)
    assert _fresh_kernel(np.arange(4, dtype=np.int64)) == 0 + 1 + 3 + 5
    assert seen and set(seen) == {jit._Flags}


_STAMPED = """
import sys
from saboteur_env.core import jit
if sys.argv[1] != "same":
    jit.package_stamp = lambda: "another version of the package"
sys.path.insert(0, sys.argv[2])
import stamped_kernel
assert stamped_kernel.plus_one(41) == 42
stats = stamped_kernel.plus_one.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def test_kernel_caches_are_stamped_with_the_whole_package(tmp_path: Path) -> None:
    """A kernel's cache entry records the digest of every source of the package (numba's own stamp covers only
    the kernel's file): a process that sees another digest compiles afresh instead of loading machine code built
    from other sources; the same digest loads it."""
    assert kb_step_stamp()[1] == jit.package_stamp()
    (tmp_path / "stamped_kernel.py").write_text(
        "from saboteur_env.core.jit import kernel\n\n\n@kernel\ndef plus_one(x):\n    return x + 1\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(mode: str) -> str:
        cmd = [sys.executable, "-c", _STAMPED, mode, str(tmp_path)]
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.split()

    assert run("same") == ["0", "1"]  # cold: compiled (a miss) and saved
    assert run("same") == ["1", "0"]  # loaded from the cache
    assert run("other") == ["0", "1"]  # another package digest: compiled afresh
    assert run("other") == ["1", "0"]


def kb_step_stamp() -> tuple[object, str]:
    from saboteur_env.base import kernels as kb

    return kb.step._cache._cache_file._source_stamp  # type: ignore[no-any-return]
