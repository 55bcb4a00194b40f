"""Saboteur, the base game (docs/rules.md §1), 3-10 players: ``GameConfig(game="base")``.

Modules: ``cards`` (kinds, deck counts, oriented shape tables), ``state``, ``board`` (arm connectivity, the
placement table, goal reveals, public board planes), ``actions`` (the flat layout), ``rules`` (set-up, the one
legality predicate, transitions, round end and gold), ``observation`` (the hidden-information gate and
``PlayerView``), ``render`` and ``image``, ``positions`` (hand-built states) and ``variant`` (the registry entry).
"""
