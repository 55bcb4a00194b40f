"""The compiled rules core: numba kernels over batches of games stored as struct of arrays (issue 13).

``core.rng`` ports numpy's PCG64 and ``Generator.permutation`` so a seed deals the same game as the reference
engine; ``core.layout`` stores fields in per-dtype arenas; ``core.batch.Batch`` holds ``B`` games of one
configuration; each game with a core has a kernel module (``core.base``) named by its variant's ``core``
attribute. ``saboteur_env.vector.VectorEnv`` is the user-facing lock-step environment built on it.
"""
