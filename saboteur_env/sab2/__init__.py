"""Saboteur 2 (docs/rules.md §2 with the §4.3 decisions), 2-12 players: ``GameConfig(game="sab2", num_players=N)``.

Modules: ``cards`` (the expansion's 24 path and 21 action cards on the shared card model, the 15 roles, oriented
shape tables), ``board`` (connectivity with ladder links and the door-avoiding team routes, on the shared arm
engine ``saboteur_env.common.arms``), ``actions`` (the layout, with the discard / stop / free / steal decision
sequences), ``state``, ``rules`` (set-up, the one legality predicate, transitions, round end), ``scoring``
(winners, payouts, theft order), ``observation``, ``render`` and ``positions`` (hand-built states).
"""
