"""Benchmarks: engine and environment throughput (``run``; ``python -m experiments.bench``), A/B of two checkouts
(``ab``), numba's compile time and its profile (``compile_time``, ``compile_profile``)."""
