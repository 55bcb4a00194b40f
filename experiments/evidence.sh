#!/usr/bin/env bash
# The evidence of docs/training.md "Learned agents against the ladder" (issue 14): insertion tournaments of the
# shipped `learned` policies on fresh deals (seeds from 5,000,000,000 on: every training deal seed is below 2^31),
# GAMES paired games per cell (default 1,000), agent seeds sealed by a fixed secret so the run reproduces.
#   bash experiments/evidence.sh runs/evidence
# GAMES, SEED, SECRET and PLAYERS can be set in the environment (defaults below).
# About 90 minutes on the 2-core development machine (the scripted agents are the cost). Resumable: re-running
# skips the games already logged. Run from a clean checkout (the logs record the commit and the dirty flag).
set -euo pipefail
OUT=${1:-runs/evidence}
GAMES=${GAMES:-1000}
SEED=${SEED:-5000000000}  # another base (e.g. 6000000000) plays other fresh deals
SECRET=${SECRET:-14e71de9ce00000000000000000000e1}
PLAYERS=${PLAYERS:-4 5 7 10}
mkdir -p "$OUT"
# Base: the learned seat against the role-dispatching `heuristic` and against `bayes`, each in its own table.
for TABLE in heuristic bayes; do
    # shellcheck disable=SC2086
    python -m experiments.tournament --miners "$TABLE" --saboteurs "$TABLE" --insert "$TABLE" learned \
        --players $PLAYERS --games "$GAMES" --seed "$SEED" --no-beliefs --workers 2 --secret "$SECRET" \
        --out "$OUT/base-$TABLE" | tee "$OUT/base-$TABLE.txt"
done
python -m experiments.train.behaviour "$OUT/base-heuristic" "$OUT/base-bayes" | tee "$OUT/behaviour.txt"
# Saboteur 2 (5 players, the shipped count): one learned seat in a `heuristic` table, paired with `heuristic` there.
python -m experiments.tournament.sab2 --base heuristic --insert learned --players 5 --games "$GAMES" --seed "$SEED" \
    --secret 14 | tee "$OUT/sab2.json"
# The Duel (seed_5x9, the shipped layout): learned against greedy, both colours on the same deals.
python -m experiments.tournament --game duel --agents learned greedy --games "$GAMES" --seed "$SEED" --no-beliefs \
    --workers 2 --secret "$SECRET" --out "$OUT/duel" | tee "$OUT/duel.txt"
# T6: learned saboteurs (gold-diggers `heuristic`) under the reference observer, next to `covert` ones.
python -m experiments.tournament --miners heuristic --saboteurs covert learned --players 5 --games 200 \
    --seed "$SEED" --workers 2 --secret "$SECRET" --out "$OUT/deception" | tee "$OUT/deception.txt"
python -m experiments.tournament.report "$OUT/deception" --out "$OUT/deception-report" --no-plots
