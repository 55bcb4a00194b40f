"""Tournaments: play (``run``), logs, rounds, statistics, ratings, reports and replays.

``python -m experiments.tournament`` runs one (README's main job; :mod:`experiments.tournament.cli`).
"""
