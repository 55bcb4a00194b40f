"""Saboteur 2 (docs/rules.md §2 with the §4.3 decisions), 2-12 players: ``GameConfig(game="sab2", num_players=N)``.

Modules: ``cards`` (the expansion's 24 path and 21 action cards on the shared card model, the 15 roles, oriented
shape tables), ``board`` (connectivity with ladder links and the door-avoiding team routes, on the shared arm
engine ``saboteur_env.common.arms``), ``actions`` (the layout, with the discard / stop / free / steal decision
sequences), ``state``, ``scoring`` (winners, payouts, theft order), ``explain``, ``observation``, ``view``,
``render``, ``positions`` (hand-built states), ``variant``; the compiled game: ``kernels``, ``compiled`` (the
state and variant users play), ``convert``; ``reference`` (internal: the numpy reference engine, the tests'
oracle).
"""
