"""The pure-numpy reference engines of the three games: the slow test oracle, not a backend.

Users play every game on the compiled core (``saboteur_env.core``; ``saboteur_env.new_game``, ``raw_env``,
``VectorEnv``). These modules are the original numpy implementations of the rules, kept because the core is
checked against them: equal masks, observations, rewards, round results and fingerprints after every decision of
thousands of random games and of every legal move of hand-built positions (``tests/test_core_*.py``).

============  ==============================  =====================================================================
module        reference variant               what it holds
============  ==============================  =====================================================================
``base``      ``REFERENCE`` (base game)       set-up draws, mask, transition, round end and scoring (rules §1)
``sab2``      ``REFERENCE`` (Saboteur 2)      the same with phases, doors, ladders and the theft phase (rules §2)
``duel``      ``REFERENCE`` (the Duel)        the same with per-player reach, securing and trolls (rules §3)
============  ==============================  =====================================================================

Internal: imported by ``tests/``, by ``saboteur_env/core/convert*.py`` (records for renders, error messages and
checks) and by the games' ``positions`` modules (hand-built positions); ``tests/test_architecture.py`` holds that
rule. Their API may change without notice.
"""
