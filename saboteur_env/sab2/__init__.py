"""Saboteur 2 (RULES.md §2) - work in progress: card and role tables and the end-of-round scoring rules.

Not yet playable: ``GameConfig(game="sab2")`` is rejected until the engine (turns, multi-card choices, actions,
observation) lands. The pieces here are complete and tested on their own.
"""
