"""Experiments: tournament runner, benchmark, golden-replay generator (no game logic here)."""
