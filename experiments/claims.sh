#!/usr/bin/env bash
# The standard-tier runs behind docs/agent_ladder.md (claims C1-C5): 2,000 games per cell at 5 and 7 players,
# duplicate seeds across cells. About an hour on 2 cores. Resumable: re-run the same script after an interruption.
set -euo pipefail
OUT=${1:-runs/claims}
GAMES=${GAMES:-2000}
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" \
    --miners random greedy honest --saboteurs random
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" \
    --miners honest suspicious --saboteurs overt
python -m experiments.tournament --players 5 7 --games "$GAMES" --workers 2 --out "$OUT" \
    --miners suspicious --saboteurs covert
python -m experiments.report "$OUT"
