"""Saboteur: The Duel (docs/rules.md §3): card tables, per-player reachability, rules, observation.

Modules: ``cards``, ``board``, ``actions``, ``state``, ``scoring``, ``explain``, ``observation``, ``view``,
``render``, ``positions`` (hand-built states), ``variant``; the compiled game: ``kernels``, ``compiled`` (the state
and variant users play), ``convert``; ``reference`` (internal: the numpy reference engine, the tests' oracle).
"""
