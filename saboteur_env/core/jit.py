"""The two numba decorators of the compiled core: ``kernel`` for entry points, ``helper`` for everything else.

First-use compile time is the core's main cost after speed (issue 13: <= 30 s for all three games, cold). Two
things in numba's defaults cost time without buying anything for functions that only other kernels call:

* **A specialisation per literal value and integer width.** Numba types a call ``f(S, cfg, 0, 1, ...)`` with
  ``Literal[int](0)``, ``f(..., sc[SC_LAST])`` with ``int32``, ``f(..., True)`` with ``Literal[bool](True)``, and
  compiles (types, lowers and optimises) ``f`` once per distinct combination: the base game's event logger
  compiled 8 times, Saboteur 2's 19. A ``helper`` is compiled for its arguments' *kinds*: literals lose their
  value, signed integers narrower than 64 bits become ``int64`` (what the rules code computes in anyway), so every
  call site shares one specialisation and numba converts the arguments at the call.
* **Python and C wrappers.** Every ``njit`` function gets a CPython wrapper (argument unboxing, return boxing) and a
  C wrapper, lowered and optimised by LLVM, although a helper is never called from Python.
* **Re-optimising linked code in every entry point.** Numba links each callee's (already optimised) module into
  its caller's and runs LLVM's whole module pipeline over the result again. An entry point (``setup``, ``masks``,
  ``step``, ...) is a thin loop over big helpers, so its module pass re-optimised the rules code it calls once per
  entry point: a third of the cold compile. A ``kernel`` is optimised function by function only (its own code;
  the helpers it links keep the optimisation of their own libraries, inlining of small helpers included). The
  price is a plain call from the entry point into each helper, a few per batch.

* **Caching helpers.** Saving a function to numba's cache emits machine code for it and everything it links: each
  helper layer emitted the rules code below it again. Helpers are not cached: a process whose entry points load
  from the cache never compiles a helper, and a cold process compiles each helper once, in memory.
* **Emitting helpers at all.** numba turns every compiled function into machine code at once (so that Python could
  call it), and a helper's module holds every helper it links: the rules code was emitted once per helper layer
  before the kernels emitted it again into their own objects. A helper is compiled to optimised IR only (its
  library is finalised without being added to the JIT engine); the kernels that link it emit it. Machine code
  generation for helpers was about a sixth of the base game's cold compile (CPU time on the 2-core dev machine).

* **Hashing the compile flags.** Typing a call to ``getitem``, ``setitem`` or ``bool`` asks each of numba's
  ``@overload`` templates for it (strings, tuples, lists, dicts, ...) before the array's own typing answers; each
  template looks its implementation up in a cache keyed by the compile flags. numba's flags hash by their option
  names only (every key collides) and compare by reading all of their options' values (22 in numba 0.68) through
  properties. The base game made 34,000 such lookups, a quarter of its cold compile. The core's functions compile
  with :class:`_Flags`, which hash and compare the options that are set (a dict of a few entries); equal flags
  still hit the same cache entries.

All of this is local to the core's own functions: nothing here changes numba's global configuration or another
library's functions. If a numba version lacks the hook used for the first point (``get_call_template``), helpers
still compile correctly, only with more specialisations.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
from numba.core import dispatcher as _dispatcher
from numba.core import types
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler, Flags
from numba.core.registry import CPUDispatcher

# numba's (private) function compiler; a numba without it compiles the core with its own flags (only slower).
_FunctionCompiler: Any = getattr(_dispatcher, "_FunctionCompiler", None)

_HELPER_OPTIONS = {"nopython": True, "nogil": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True,
                   "boundscheck": None, "error_model": "numpy"}  # fmt: skip


_NARROW_SIGNED = (types.int8, types.int16, types.int32)


def _kind(t: Any) -> Any:
    """The type a helper is compiled for, given a call site's argument type."""
    t = types.unliteral(t)
    if t in _NARROW_SIGNED:
        return types.int64
    return t


class _Flags(Flags):
    """numba's compile flags, hashed and compared by the options that are set (see the module docstring): the
    inherited ``__hash__``/``__eq__`` read all of the options' values, defaults included, through properties."""

    __slots__ = ()

    def _key(self) -> tuple[tuple[str, Any], ...]:
        # FastMathOptions compare by their set of flags but define no hash: the frozen set stands in (a repr of a
        # set is not canonical); any other unhashable value by its repr.
        def canon(v: Any) -> Any:
            if type(v).__hash__ is not None:
                return v
            flags = getattr(v, "flags", None)
            return frozenset(flags) if isinstance(flags, set | frozenset) else repr(v)

        return tuple(sorted((k, canon(v)) for k, v in self._values.items()))

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        # Flags of another class never compare equal: at worst a cache lookup misses (and compiles), as for any
        # other distinct flags; equal _Flags hash equally.
        return isinstance(other, _Flags) and self._values == other._values


class _FlagsCompiler(_FunctionCompiler or object):  # type: ignore[misc]  # numba's class is untyped
    """numba's function compiler, compiling with :class:`_Flags`."""

    def _customize_flags(self, flags: Any) -> Any:
        return _Flags(super()._customize_flags(flags))


def _with_fast_flags(disp: Any) -> Any:
    """Make ``disp`` (a new dispatcher, nothing compiled yet) compile with :class:`_Flags` (a numba whose
    dispatcher is built otherwise keeps its own compiler: the functions compile the same, only slower)."""
    old: Any = getattr(disp, "_compiler", None)
    if _FunctionCompiler is None or type(old) is not _FunctionCompiler or not hasattr(old, "_customize_flags"):
        return disp
    try:
        new = _FlagsCompiler(old.py_func, old.targetdescr, old.targetoptions, old.locals, old.pipeline_class)
    except (AttributeError, TypeError):  # a compiler built from other arguments than numba 0.60-0.68's
        return disp
    disp._compiler = new
    return disp


class _HelperDispatcher(CPUDispatcher):
    """A dispatcher that compiles one specialisation per argument kind (see the module docstring)."""

    def get_call_template(self, args: Any, kws: Any) -> Any:
        return super().get_call_template(tuple(_kind(a) for a in args), {k: _kind(v) for k, v in kws.items()})


class _LinkedLibrary(JITCodeLibrary):
    """An entry point's code library: its own functions get the function passes, the linked modules stay as their
    libraries optimised them (no second module pipeline over all of them)."""

    def _optimize_final_module(self) -> None:
        pass


class _UnemittedLibrary(JITCodeLibrary):
    """A helper's code library: optimised and kept as IR for the kernels that link it, never emitted as machine
    code (nothing calls a helper's own copy; every kernel emits the helpers it links into its own object)."""

    def _finalize_final_module(self) -> None:
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    @property
    def codegen(self) -> Any:
        return _NoEnvCodegen(self._codegen)


class _NoEnvCodegen:
    """The codegen as an unemitted helper's compilation sees it: there is no emitted environment variable to set
    (``set_env``); a kernel's own environment is set when the kernel is emitted or loaded from the cache."""

    def __init__(self, codegen: Any) -> None:
        self._codegen = codegen

    def set_env(self, env_name: str, env: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._codegen, name)


class _HelperCompiler(Compiler):
    """numba's standard pipeline, compiling into an :class:`_UnemittedLibrary`."""

    def compile_extra(self, func: Any) -> Any:
        if self.state.library is None:
            self.state.library = _UnemittedLibrary(self.state.targetctx.codegen(), func.__qualname__)
        return super().compile_extra(func)


class _KernelCompiler(Compiler):
    """numba's standard pipeline, compiling into a :class:`_LinkedLibrary`."""

    def compile_extra(self, func: Any) -> Any:
        if self.state.library is None:
            self.state.library = _LinkedLibrary(self.state.targetctx.codegen(), func.__qualname__)
            self.state.library.enable_object_caching()  # as numba's lowering does for its own libraries (caching)
        return super().compile_extra(func)


@functools.cache
def package_stamp() -> str:
    """A digest of every Python source of the installed ``saboteur_env`` package (computed once per process)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cached(disp: Any) -> Any:
    """Make a cached dispatcher's cache entries depend on the whole package's sources, not only on its own file.

    numba's cache index is stamped with the modification time and size of the function's own file only, but a
    kernel links code and constant tables from other modules (helpers, ``core.rng``, ``core.common``, the card
    tables): after a change to one of those alone (a ``git checkout``, an edited file), numba would load the old
    machine code. With the package's digest in the stamp, any change to the package compiles the kernels afresh."""
    cache_file = getattr(getattr(disp, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, package_stamp())
    return disp


def kernel(fn: Callable[..., Any]) -> Any:
    """An entry point called from Python: ``numba.njit(cache=True, nogil=True)``, optimised without re-optimising
    the helpers it links (see the module docstring), cached under the package's digest (:func:`cached`)."""
    disp = nb.njit(cache=True, nogil=True, error_model="numpy", pipeline_class=_KernelCompiler)(fn)
    return cached(_with_fast_flags(disp))


_ENTRY_POINTS: dict[tuple[Any, ...], Any] = {}
_INT64 = (-(1 << 63), 1 << 63)


def _type_key(disp: Any, a: Any) -> Any:
    """A cheap key that determines the numba type of argument ``a`` (what ``typeof`` would compute, slowly)."""
    if isinstance(a, np.ndarray):
        f = a.flags
        return (a.dtype.str, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    if type(a) is int and _INT64[0] <= a < _INT64[1]:
        return int
    if type(a) is bool:
        return bool
    t = getattr(a, "_numba_type_", None)  # a StructRef proxy (``ViewsRef``) carries its type
    return t if t is not None else disp.typeof_pyval(a)


def bound(disp: Any, *args: Any) -> Callable[[], Any]:
    """A call of kernel ``disp`` on exactly ``args``, without numba's per-call dispatch: the kernel is compiled (or
    loaded from the cache) for ``args``' types, and the call goes straight to that specialisation's machine code.

    The dispatcher types every argument of every call before it finds the specialisation; for a ``ViewsRef`` that
    is a Python-level ``typeof`` (about 1.2 us of a B = 1 call that does 1-3 us of work). A B = 1 state calls the
    same kernels on the same arrays every decision, so it binds each call once (the arrays' contents change, the
    objects and their types do not). The entry point is found once per kernel and argument types (a process-wide
    table keyed by cheap type keys): binding a fresh state, e.g. a clone in a tree search, costs a few
    microseconds, not numba's typing and compile lookup (about 100 us). Only for arguments whose types never
    change: the bound call does not check them again."""
    if getattr(nb.config, "DISABLE_JIT", False) or not hasattr(disp, "typeof_pyval"):
        return functools.partial(disp, *args)
    key = (disp, *(_type_key(disp, a) for a in args))
    entry = _ENTRY_POINTS.get(key)
    if entry is None:
        entry = _ENTRY_POINTS[key] = disp.compile(tuple(disp.typeof_pyval(a) for a in args))
    return functools.partial(entry, *args)


def helper(fn: Callable[..., Any]) -> Any:
    """A function only kernels call: no Python or C wrapper, one specialisation per argument kind, not cached."""
    return _helper(fn, {})


def inline_helper(fn: Callable[..., Any]) -> Any:
    """A small helper that numba inlines into its callers' IR (``inline="always"``): a call passing arrays costs a
    reference count increment and decrement per array (atomic operations, a few per call) that a loop over the
    slots would pay per slot."""
    return _helper(fn, {"inline": "always"})


def _helper(fn: Callable[..., Any], extra: dict[str, Any]) -> Any:
    if getattr(nb.config, "DISABLE_JIT", False):  # NUMBA_DISABLE_JIT=1 (debugging): plain Python, as njit does
        return fn
    options = {**_HELPER_OPTIONS, **extra}
    if not hasattr(CPUDispatcher, "get_call_template"):  # a numba without the hook: plain wrapper-less njit
        njit: Any = nb.njit  # numba's stubs do not list the wrapper options
        return njit(**{k: v for k, v in options.items() if k != "nopython"})(fn)
    disp = _HelperDispatcher(py_func=fn, locals={}, targetoptions=options, pipeline_class=_HelperCompiler)
    return _with_fast_flags(disp)
