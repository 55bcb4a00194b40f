#!/usr/bin/env bash
# The runs behind docs/agent_ladder.md (the claims table): GAMES per cell (default 2,000; the docs' tables used
# GAMES=1000: 74 minutes of tournament and 16 of report on a loaded 2-core machine) at 5 and 7 players,
# duplicate deals (game g of every cell uses seed g). At 2,000: about 70 minutes of tournament on 2 cores, then ~40 minutes of
# report (game-level bootstrap intervals, ratings re-run 50 times, T7 calibration re-plays). Resumable.
#
# Agent seeds are sealed (experiments/tournament/rounds.py): set SECRET=<hex> to reproduce a previous run's agent randomness
# exactly; unset, each tournament run draws its own secret and prints it at the end. Either way every logged game
# carries its own game secret, so `python -m experiments.tournament.logs verify "$OUT" --full` re-plays any game exactly.
# Run from a clean checkout (git status empty): the report marks games written from a dirty tree (table P0).
set -euo pipefail
OUT=${1:-runs/claims}
GAMES=${GAMES:-2000}
EXTRA=()
if [[ -n "${SECRET:-}" ]]; then EXTRA=(--secret "$SECRET"); fi
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" "${EXTRA[@]}" \
    --miners random greedy honest --saboteurs random
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" "${EXTRA[@]}" \
    --miners honest suspicious --saboteurs overt
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" "${EXTRA[@]}" \
    --miners suspicious --saboteurs covert
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" "${EXTRA[@]}" \
    --miners planner --saboteurs covert blocker   # the stronger agents (issue 15): claims C6, C7
python -m experiments.tournament.report "$OUT" --calibration   # T7 re-plays every base game once more
