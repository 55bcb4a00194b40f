"""The game-independent machinery of the compiled rules core: numba over batches of games stored as struct of
arrays (issue 13). It knows no game (``tests/test_architecture.py``).

``core.rng`` ports numpy's PCG64 and ``Generator.permutation`` so a seed deals the same game as the reference
engine; ``core.layout`` stores fields in per-dtype arenas; ``core.batch.Batch`` holds ``B`` games of one
configuration; ``core.common`` has the game-independent kernels (action check, uniform legal sampler);
``core.jit`` the numba decorators; ``core.rollout`` plays batches built from given games (``Batch.from_states``,
``take``) to the end of their round with a batched policy (the ``search`` agent's simulations);
``saboteur_env.vector.VectorEnv`` is the user-facing lock-step environment built on it.

Each game with a core keeps its kernel module in its own package (``saboteur_env.base.kernels``), named by its
variant's ``core`` attribute, beside its one-game state and variant (``<game>.compiled``) and its converter to and
from the reference engine (``<game>.convert``). The kernel module's contract, which ``Batch`` and ``VectorEnv``
rely on (and nothing else):

* data: ``fields(config) -> tuple[Field, ...]`` (one field ``sc`` of int32 scalars and one ``rng`` of
  ``(6,)`` uint64 generator words among them), ``config_table(config, layout) -> int64 array``,
  ``rowcol_table(config) -> float32 array`` (any float table the observation writer needs),
  ``num_actions(config)``, ``obs_size(config)`` (the reference's float layout), ``compact_size(config)``,
  ``expand_compact(compact, config) -> float observations`` (lossless), and the scalar indices ``SC_CURRENT``,
  ``SC_OVER``, ``SC_JUST_ENDED`` (the last action ended a round), ``SC_GAMES`` (games started in the slot), and
  optionally ``forget_lockstep(batch, b0, b1)``, which marks the lock-step's cached output rows of those slots
  unknown (``Batch.from_states`` / ``take`` call it for the games they copy in);
* kernels, all ``@core.jit.kernel`` (a cached ``numba.njit``; what they call is ``@core.jit.helper``), over the
  slots ``b0 <= b < b1`` of the arenas ``(i8, i16, i32, u64, f32)`` (or of what the module's optional
  ``kernel_args(batch)`` returns instead, e.g. ``base.kernels``' one StructRef of the field views) and the config
  table ``cfg``:
  ``setup(..., cfg, b0, b1, draw)``, ``masks(..., cfg, b0, b1, out_int8, num_legal)``,
  ``observe(..., cfg, ftable, b0, b1, seats, out_f32)``, ``observe_compact(..., cfg, b0, b1, seats, out_i16)``,
  ``apply(..., cfg, b0, b1, actions)`` and the fused lock-step ``step(..., cfg, ftable, b0, b1, actions, mask,
  num_legal, obs_mode, obs_f, obs_c, rewards, done, seats, final_returns) -> int`` (see ``base.kernels.step``).

Mask rows are int8 and padded to whole 8-byte words (``core.batch.padded``) for the sampler.
"""
