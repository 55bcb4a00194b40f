"""Saboteur: The Duel (docs/rules.md §3): card tables, per-player reachability, rules, observation."""
