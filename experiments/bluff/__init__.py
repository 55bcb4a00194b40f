"""The bluffing benchmark (issue 36; docs/bluff.md): a fixed, versioned protocol per game and player count
(``protocol``), an agent's arms played on its sealed deals through the one tournament loop (``run``), the numbers
(``metrics``), the leaderboard (``leaderboard``) and the fit of the pool's honesty model (``honesty``).

    python -m experiments.bluff claims:heuristic                  # benchmark one agent (base game, 5 players)
    python -m experiments.bluff --leaderboard                     # regenerate docs/bluff/leaderboard.{md,json}
"""
