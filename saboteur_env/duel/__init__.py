"""Saboteur: The Duel (RULES.md §3): card tables, per-player reachability, rules, observation."""
