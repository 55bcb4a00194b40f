#!/usr/bin/env bash
# The cross-play matrix of docs/training.md (issue 14), base game at 5 players: three independently seeded PPO
# self-play runs and one league run (the learner once per game among `heuristic` agents in 70% of the games and
# among its own snapshots otherwise), each starting from the shipped imitation policy agents/policies/base-5p.npz,
# then every pair of them (and the start) on the same fresh deals.
#   bash experiments/crossplay.sh runs/crossplay
# About 40 minutes on the 2-core development machine. Each run resumes from its checkpoint if interrupted.
set -euo pipefail
OUT=${1:-runs/crossplay}
STEPS=${STEPS:-600000}
DEALS=${DEALS:-500}
START=agents/policies/base-5p.npz
mkdir -p "$OUT"
COMMON=(--game base --players 5 --init "$START" --hidden 128 --role-heads --lr 1e-4 --ent-coef 0.003
        --steps "$STEPS" --no-tensorboard --log-every 60 --resume)
for SEED in 1 2 3; do
    python -m experiments.train.selfplay "${COMMON[@]}" --num-envs 256 --rollout 32 --epochs 2 --seed "$SEED" \
        --out "$OUT/selfplay-$SEED"
done
python -m experiments.train.selfplay "${COMMON[@]}" --num-envs 128 --rollout 64 --epochs 4 --seed 7 --league 0.7 \
    --league-agents heuristic --snapshot-every 10 --pool-size 4 --eval-every 20 --eval-games 100 --out "$OUT/league"
python -m experiments.analysis.crossplay start="$START" sp1="$OUT/selfplay-1/policy.npz" sp2="$OUT/selfplay-2/policy.npz" \
    sp3="$OUT/selfplay-3/policy.npz" league="$OUT/league/policy.npz" --players 5 --deals "$DEALS" \
    --json "$OUT/matrix.json" | tee "$OUT/matrix.md"
