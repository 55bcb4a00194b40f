"""A batch of ``B`` games of one configuration in the compiled core: arenas, tables and the kernel calls.

:class:`Batch` knows no game: it asks the configuration's variant for its kernel module (the variant's ``core``
attribute names it, e.g. ``"saboteur_env.base.kernels"``) and calls the module's entry points (``setup``, ``masks``,
``observe``, ``observe_compact``, ``apply``, ``step``, ``sample``) on game ranges ``[b0, b1)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ConfigError, StateError
from saboteur_env.core import common as kcommon
from saboteur_env.core import rng as crng
from saboteur_env.core.jit import bound
from saboteur_env.core.layout import Layout


def kernels(config: GameConfig) -> ModuleType:
    """The kernel module of ``config``'s variant (``ConfigError`` when the variant has no compiled core)."""
    name = getattr(config.variant, "core", None)
    if not name:
        raise ConfigError(f"game={config.game!r} has no compiled core (its variant declares no 'core' module)")
    return importlib.import_module(name)


def padded(n: int) -> int:
    """``n`` rounded up to whole 8-byte words (mask rows are scanned word by word)."""
    return (n + 7) // 8 * 8


class Batch:
    """``B`` games of ``config`` stored as struct of arrays (see the kernel module's field table)."""

    def __init__(self, config: GameConfig, batch: int) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1:
            raise ConfigError(f"num_envs={batch!r} must be an int >= 1")
        self.config = config
        self.batch = int(batch)
        self.k = k = kernels(config)
        self.layout = Layout(k.fields(config), self.batch)
        self.arenas = self.layout.allocate()
        self.cfg = k.config_table(config, self.layout)
        self.rowcol = k.rowcol_table(config)
        self.num_actions = int(k.num_actions(config))
        self.obs_size = int(k.obs_size(config))
        self.compact_size = int(k.compact_size(config))
        self.views = tuple(self.field(f.name) for f in self.layout.fields)
        # The same views by name: a one-game state takes its row-0 views from them (a view costs about 1 us to
        # build, and a clone would build every one twice).
        self.views_by_name = {f.name: v for f, v in zip(self.layout.fields, self.views, strict=True)}
        self._args = self._kernel_args()
        self._mask_list = self.field("mask_list") if "mask_list" in self.layout.by_name else None

    def _kernel_args(self) -> tuple[Any, ...]:
        """What the kernels take before the config table: the module's own handle (``kernel_args``, e.g. one
        StructRef of the views) or the five arenas."""
        make = getattr(self.k, "kernel_args", None)
        if make is not None:
            return tuple(make(self))
        return tuple(self.arenas[a] for a in ("i8", "i16", "i32", "u64", "f32"))

    def copy(self) -> Batch:
        """An independent batch with the same games (tables shared, arenas copied)."""
        new = object.__new__(Batch)
        new.__dict__.update(self.__dict__)
        new.arenas = {k: v.copy() for k, v in self.arenas.items()}
        new.views = tuple(new.field(f.name) for f in new.layout.fields)
        new.views_by_name = {f.name: v for f, v in zip(new.layout.fields, new.views, strict=True)}
        new._args = new._kernel_args()
        new._mask_list = new.field("mask_list") if new._mask_list is not None else None
        return new

    # ---- rows: batches built from given games (search: determinizations x candidate moves) ------------------------
    @classmethod
    def from_states(cls, states: Sequence[Any]) -> Batch:
        """A batch whose row ``i`` is a copy of the one-game state ``states[i]`` (:class:`OneGame`: each holds a
        ``Batch`` of one of the same configuration). The lock-step's caches of the copied rows are forgotten (the
        kernel module's ``forget_lockstep``): the first ``step`` on the batch rewrites its output rows in full."""
        if not states:
            raise ConfigError("from_states needs at least one state")
        config = states[0].config
        for i, st in enumerate(states):
            one = getattr(st, "batch", None)
            if not isinstance(one, Batch) or one.batch != 1 or one.config != config:
                raise StateError(f"state {i} is not a one-game compiled state of the first state's config "
                                 f"({type(st).__name__}; config {getattr(st, 'config', None)})")  # fmt: skip
        new = cls(config, len(states))
        # The arenas of a batch of one hold each field once, at the field's offset: stack them (one copy per arena)
        # and cut the fields out of the stacked rows (one copy per field), not a copy per field and state.
        one_layout = states[0].batch.layout
        stacked = {a: np.stack([st.batch.arenas[a] for st in states]) for a in new.arenas}
        for f, start in zip(one_layout.fields, one_layout.offsets.tolist(), strict=True):
            dst = new.views_by_name[f.name].reshape(new.batch, f.size)
            dst[:] = stacked[f.arena][:, start : start + f.size]
        new.forget_lockstep()
        return new

    def take(self, rows: NDArray[np.integer] | Sequence[int]) -> Batch:
        """A new batch whose row ``i`` is a copy of this batch's row ``rows[i]`` (rows may repeat: one game per
        candidate move, the generator words copied too, so the copies draw the same numbers). The lock-step's
        caches are forgotten, as in :meth:`from_states`."""
        idx = np.asarray(rows, dtype=np.int64)
        if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= self.batch:
            raise ConfigError(f"rows must be a non-empty 1-D list of slots 0..{self.batch - 1}")
        new = Batch(self.config, int(idx.size))
        for name, v in self.views_by_name.items():
            new.views_by_name[name][:] = v[idx]
        new.forget_lockstep()
        return new

    def move_rows(self, rows: NDArray[np.int64], buffers: Sequence[NDArray[Any]] = ()) -> None:
        """Copy rows ``rows`` (increasing) to slots ``0..len(rows)-1`` in place, in every field and in ``buffers``
        (arrays with one row per slot, e.g. the lock-step's mask and observation rows, whose caches the moved
        games carry): a batch that keeps its live games first and steps only ``[0, len(rows))``."""
        for v in self.views:
            v[: rows.size] = v[rows]
        for buf in buffers:
            buf[: rows.size] = buf[rows]

    def forget_lockstep(self, b0: int = 0, b1: int | None = None) -> None:
        """Mark the lock-step's output rows of slots ``b0..b1`` unknown (kernel module's ``forget_lockstep``)."""
        forget = getattr(self.k, "forget_lockstep", None)
        if forget is not None:
            forget(self, b0, self.batch if b1 is None else b1)

    # ---- fields -------------------------------------------------------------------------------------------------
    def field(self, name: str) -> NDArray[Any]:
        """The ``(B, ...)`` view of one state field (writes change the games)."""
        return self.layout.view(self.arenas, name)

    def scalar(self, index: int) -> NDArray[np.int32]:
        """``(B,)`` view of one game scalar (``SC_*`` of the kernel module)."""
        return self.field("sc")[:, index]

    @property
    def bytes_per_game(self) -> int:
        return self.layout.bytes_per_game()

    # ---- kernels --------------------------------------------------------------------------------------------------
    def seed(self, seeds: NDArray[np.int64] | list[int]) -> None:
        """Seed slot ``b`` with ``np.random.default_rng(seeds[b])``'s PCG64 words."""
        self.field("rng")[:] = crng.seed_words(seeds)

    def setup(self, b0: int = 0, b1: int | None = None, draw: bool = True) -> None:
        self.k.setup(*self._args, self.cfg, b0, self.batch if b1 is None else b1, draw)

    def masks(self, out: NDArray[np.int8], num_legal: NDArray[np.int64], b0: int = 0, b1: int | None = None) -> None:
        if out.ndim != 2 or out.shape[1] % 8 or not out.flags.c_contiguous:
            raise ConfigError(f"mask rows must be C-contiguous and padded to whole 8-byte words (got {out.shape})")
        self.k.masks(*self._args, self.cfg, b0, self.batch if b1 is None else b1, out, num_legal)

    def observe(self, seats: NDArray[np.int64], out: NDArray[np.float32], b0: int = 0, b1: int | None = None) -> None:
        self.k.observe(*self._args, self.cfg, self.rowcol, b0, self.batch if b1 is None else b1, seats, out)

    def observe_compact(
        self, seats: NDArray[np.int64], out: NDArray[np.int16], b0: int = 0, b1: int | None = None
    ) -> None:
        self.k.observe_compact(*self._args, self.cfg, b0, self.batch if b1 is None else b1, seats, out)

    def apply(self, actions: NDArray[np.int64], b0: int = 0, b1: int | None = None) -> None:
        """Apply one action per slot. Unchecked: callers check against the mask first."""
        self.k.apply(*self._args, self.cfg, b0, self.batch if b1 is None else b1, actions)

    def _step_args(
        self, b0: int, b1: int, actions: NDArray[np.int64], out: dict[str, NDArray[Any]], obs_mode: int
    ) -> tuple[Any, tuple[Any, ...]]:
        """The game module's lock-step kernel (``LOCKSTEP``) and its arguments for ``step``."""
        kern, lead = self.k.LOCKSTEP
        return kern, (
            *self._args, self.cfg, self.rowcol, *lead, b0, b1, actions, out["mask"], out["num_legal"], obs_mode,
            out["obs_f"], out["obs_c"], out["rewards"], out["done"], out["seats"], out["final_returns"],
        )  # fmt: skip

    def step(self, b0: int, b1: int, actions: NDArray[np.int64], out: dict[str, NDArray[Any]], obs_mode: int) -> int:
        kern, args = self._step_args(b0, b1, actions, out, obs_mode)
        return int(kern(*args))

    def step_call(
        self, b0: int, b1: int, actions: NDArray[np.int64], out: dict[str, NDArray[Any]], obs_mode: int
    ) -> Callable[[], int]:
        """``step(b0, b1, actions, out, obs_mode)`` as a bound kernel call (``core.jit.bound``: numba's typing of
        its 16 arguments is paid once, not every step): the caller writes each step's actions into ``actions``
        before calling it. It holds this batch's arrays (a copy of the batch binds its own)."""
        kern, args = self._step_args(b0, b1, actions, out, obs_mode)
        return bound(kern, *args)

    def check(self, mask: NDArray[np.int8], actions: NDArray[np.int64]) -> int:
        """The first slot whose action is not legal in ``mask`` (or out of range), or -1."""
        return int(kcommon.check(mask, actions, self.num_actions, 0, self.batch))

    def sample(
        self, mask: NDArray[np.int8], num_legal: NDArray[np.int64], words: NDArray[np.uint64], out: NDArray[np.int64],
        b0: int = 0, b1: int | None = None, lockstep: bool = False,
    ) -> None:  # fmt: skip
        """A uniform legal action per slot (``common.sample``). ``lockstep``: ``mask`` is the lock-step's own mask
        buffer (``step``'s), whose legal actions the game keeps as sorted lists (its ``mask_list`` field), so
        ``common.sample_listed`` draws without reading the mask (the same actions)."""
        b1 = self.batch if b1 is None else b1
        if lockstep and self._mask_list is not None:
            kcommon.sample_listed(self._mask_list, mask, num_legal, words, b0, b1, out)
        else:
            kcommon.sample(mask, num_legal, words, b0, b1, out)


def setup_one(batch: Batch, rng: np.random.Generator, draw_in_numpy: Callable[[Callable[[str], Any]], None]) -> None:
    """Start slot 0's game from the caller's generator as the reference engine's ``new_game`` does: in the kernel
    from the generator's PCG64 words (written back, so ``rng`` continues exactly as after the reference's draws), or,
    for another bit generator or a numpy whose stream the port does not reproduce, with the same draws made in numpy
    by ``draw_in_numpy(batch.field)`` followed by the kernel's set-up without drawing."""
    if crng.self_check() and rng.bit_generator.state.get("bit_generator") == "PCG64":
        words = batch.field("rng")
        words[0] = crng.words_of(rng)
        batch.setup(draw=True)
        crng.set_words(rng, words[0])
    else:
        draw_in_numpy(batch.field)
        batch.setup(draw=False)


class OneGame:
    """Copies, pickling and fingerprints of a one-game state held by a ``Batch`` of one (the games' core states).

    Subclasses bind their field views in ``_bind`` and convert to the reference engine in ``to_reference``."""

    config: GameConfig
    batch: Batch
    _mask: NDArray[np.bool_] | None
    _mask_buf: NDArray[np.int8]
    _mask_row: NDArray[np.bool_]
    _num_legal: NDArray[np.int64]
    _action: NDArray[np.int64]
    _seat: NDArray[np.int64]
    _obs_buf: NDArray[np.float32]
    _call_masks: Callable[[], Any] | None
    _call_step: Callable[[], Any] | None
    _call_observe: Callable[[], Any] | None

    def _bind(self) -> None:
        raise NotImplementedError

    def _step_call(self) -> Callable[[], Any]:
        """The bound kernel call that applies ``_action[0]`` and writes the next mask into ``_mask_buf``."""
        raise NotImplementedError

    def _bind_buffers(self) -> None:
        """The one-game buffers the kernel calls write, and the calls themselves, bound at first use
        (``jit.bound``: no per-call dispatch). ``_bind`` calls this for every new or copied state."""
        batch = self.batch
        self._mask = None
        self._mask_buf = np.zeros((1, padded(batch.num_actions)), dtype=np.int8)
        # The buffer's legal row as bools, made once: a decision copies it out (one numpy call, not four).
        self._mask_row = self._mask_buf[0, : batch.num_actions].view(np.bool_)
        self._num_legal = np.zeros(1, dtype=np.int64)
        self._action = np.zeros(1, dtype=np.int64)
        self._seat = np.zeros(1, dtype=np.int64)
        self._obs_buf = np.zeros((1, batch.obs_size), dtype=np.float32)
        self._call_masks = self._call_step = self._call_observe = None

    def _keep_mask(self) -> NDArray[np.bool_]:
        """The buffer's mask as the state's cached read-only bool mask."""
        mask = self._mask_row.copy()
        mask.flags.writeable = False
        self._mask = mask
        return mask

    def _run_masks(self) -> NDArray[np.bool_]:
        """Compute the seat to act's mask (kernel ``masks``) and keep it."""
        call = self._call_masks
        if call is None:
            b = self.batch
            call = self._call_masks = bound(b.k.masks, b._args[0], b.cfg, 0, 1, self._mask_buf, self._num_legal)
        call()
        return self._keep_mask()

    def _run_step(self, action: int) -> NDArray[np.bool_]:
        """Apply ``action`` (legal, unchecked) and keep the next mask, in one kernel call (``_step_call``)."""
        self._action[0] = action
        call = self._call_step
        if call is None:
            call = self._call_step = self._step_call()
        call()
        return self._keep_mask()

    def _run_observe(self, seat: int) -> None:
        """Write ``seat``'s float observation into ``_obs_buf`` (kernel ``observe``)."""
        self._seat[0] = seat
        call = self._call_observe
        if call is None:
            b = self.batch
            call = self._call_observe = bound(b.k.observe, b._args[0], b.cfg, b.rowcol, 0, 1, self._seat,
                                              self._obs_buf)  # fmt: skip
        call()

    def to_reference(self) -> Any:
        """The numpy reference engine's state of this game (an independent copy)."""
        raise NotImplementedError

    def clone(self) -> Self:
        new = object.__new__(type(self))
        new.config = self.config
        new.batch = self.batch.copy()
        new._bind()
        return new

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "arenas": {k: v.copy() for k, v in self.batch.arenas.items()}}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.config = d["config"]
        self.batch = Batch(self.config, 1)
        arenas = d["arenas"]
        if set(arenas) != set(self.batch.arenas) or any(
            np.shape(v) != self.batch.arenas[k].shape for k, v in arenas.items()
        ):
            sizes = {k: np.shape(v) for k, v in arenas.items()}
            need = {k: v.shape for k, v in self.batch.arenas.items()}
            raise StateError(f"the pickled {self.config.game} state has arenas {sizes}; this version's state needs "
                             f"{need} (it was pickled by another saboteur-env version)")  # fmt: skip
        for k, v in arenas.items():
            self.batch.arenas[k][:] = v
        self._bind()

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self.clone()

    def fingerprint(self) -> str:
        """The reference state's fingerprint (golden replays and determinism tests compare these)."""
        return str(self.to_reference().fingerprint())
