"""Saboteur, the base game (docs/rules.md §1), 3-10 players: ``GameConfig(game="base")``.

Modules: ``cards`` (kinds, deck counts, oriented shape tables), ``state``, ``board`` (arm connectivity, the
placement table, goal reveals, public board planes), ``actions`` (the flat layout), ``scoring``, ``explain`` (why
an action is illegal), ``observation`` (the hidden-information gate and ``PlayerView``), ``render`` and ``image``,
``positions`` (hand-built states), ``variant`` (the game's facts as a ``Variant``); the compiled game:
``kernels`` (the rules as numba kernels), ``compiled`` (the one-game state and the variant users play, registered
in ``saboteur_env.variants``), ``convert`` (a core slot to and from a reference state); ``reference`` (internal:
the numpy reference engine, the tests' oracle).
"""
