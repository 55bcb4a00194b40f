#!/usr/bin/env bash
# A/B throughput of the self-play trainer at two revisions (not a test): each revision in its own clean worktree,
# the `--bench` runs of docs/selfplay.md (100,000 decisions, 256 games) interleaved A B A B, REPEATS times; prints
# one line per run (revision, then the trainer's own summary line). Take medians per revision and configuration.
#   bash experiments/selfplay_ab.sh OLD NEW            # e.g. e42bccb fd074b6
# REPEATS (default 3) can be set in the environment. Uses the active Python environment.
set -euo pipefail
OLD=$1
NEW=$2
REPEATS=${REPEATS:-3}
ROOT=$(git rev-parse --show-toplevel)
TMP=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$TMP/A" >/dev/null 2>&1 || true;
      git -C "$ROOT" worktree remove --force "$TMP/B" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
git -C "$ROOT" worktree add -q --detach "$TMP/A" "$OLD"
git -C "$ROOT" worktree add -q --detach "$TMP/B" "$NEW"
run() {  # revision-dir game players(or -) epochs
    local players=()
    [ "$3" != "-" ] && players=(--players "$3")
    (cd "$TMP/$1" && python -m experiments.train.selfplay --game "$2" "${players[@]}" --num-envs 256 --steps 100000 \
        --epochs "$4" --out "$TMP/out$1" --bench --no-tensorboard 2>/dev/null | grep 'rate=' | sed "s/^/$1 /")
}
for W in A B; do run "$W" base 5 1 >/dev/null; done  # compile each worktree's kernels first (numba's cache)
for _ in $(seq "$REPEATS"); do
    for CFG in "base 5 2" "base 5 1" "sab2 - 2" "duel - 2"; do
        # shellcheck disable=SC2086
        for W in A B; do run "$W" $CFG; done
    done
done
echo "A=$(git -C "$ROOT" rev-parse --short "$OLD") B=$(git -C "$ROOT" rev-parse --short "$NEW") load: $(cut -d' ' -f1-3 /proc/loadavg)"
