#!/usr/bin/env bash
# The evidence of docs/agents.md (issue 35): the top of the ladder - `search` (the shipped default, 128 rollouts per
# move) and the shipped network `learned` - inserted into one seat of an `expert` table, paired with `expert` in the
# same seat on the same fresh deals, in every cell the issue names; then the whole ladder's ratings at 5 players.
#   bash experiments/evidence35.sh runs/ev35               # every cell (many hours on 2 cores)
#   CELLS="base:4 duel:official_5x10" bash experiments/evidence35.sh runs/ev35   # some cells
#   SEARCH=search:128,beliefs=1 CELLS="base:7" bash experiments/evidence35.sh runs/ev35   # another search spec
# Deal ranges (fresh: above every seed a training run, tuning probe or earlier table used): base N players from
# 8,0NN,000,000, Saboteur 2 N players from 8,2NN,000,000, the Duel's official layout from 8,040,000,000, its seed
# layout from 8,049,000,000, the 5-player ladder from 8,105,000,000. Agent seeds come from SECRET. Search cells
# play SEARCH_GAMES deals (500), network cells NET_GAMES (1,000); a network cell shares the first SEARCH_GAMES
# `expert` games of its search cell (the same log: the same deals and seeds, played once). Resumable: re-running
# skips every game already logged. Run from a clean checkout (the logs record the commit and the dirty flag).
set -euo pipefail
OUT=${1:-runs/ev35}
SECRET=${SECRET:-5a1e0c35e71de7ce5ea5c4bd0b5e35aa}
SEARCH_GAMES=${SEARCH_GAMES:-500}
NET_GAMES=${NET_GAMES:-1000}
# The search agent of the base and Saboteur 2 cells (another spec is inserted beside the default in the same log:
# the same deals, paired with both `expert` and the default).
SEARCH=${SEARCH:-search}
WORKERS=${WORKERS:-1}
CELLS=${CELLS:-base:4 base:5 base:7 base:10 sab2:4 sab2:6 sab2:8 duel:official_5x10 duel:seed_5x9 ladder:5}
T="python -m experiments.tournament"
mkdir -p "$OUT"
for CELL in $CELLS; do
    GAME=${CELL%%:*}
    ARG=${CELL#*:}
    case $GAME in
    base)
        SEED=80$(printf %02d "$ARG")000000
        for SPEC in "$SEARCH $SEARCH_GAMES" "learned $NET_GAMES"; do
            read -r AGENT GAMES <<<"$SPEC"
            $T --insert expert "$AGENT" --miners expert --saboteurs expert --players "$ARG" --games "$GAMES" \
                --workers "$WORKERS" --seed "$SEED" --no-beliefs --out "$OUT/base-$ARG" --secret "$SECRET" \
                | tee "$OUT/base-$ARG-${AGENT//[:,=]/_}.txt"
        done
        ;;
    sab2)
        SEED=82$(printf %02d "$ARG")000000
        for SPEC in "$SEARCH $SEARCH_GAMES" "learned $NET_GAMES"; do
            read -r AGENT GAMES <<<"$SPEC"
            $T --game sab2 --agents expert --insert expert "$AGENT" --players "$ARG" --games "$GAMES" \
                --workers "$WORKERS" --seed "$SEED" --no-beliefs --out "$OUT/sab2-$ARG" --secret "$SECRET" \
                | tee "$OUT/sab2-$ARG-${AGENT//[:,=]/_}.txt"
        done
        ;;
    duel)
        if [ "$ARG" = official_5x10 ]; then SEED=8040000000; else SEED=8049000000; fi
        # both colours of every deal: a search cell's games are 2 x SEARCH_GAMES
        $T --game duel --duel-layout "$ARG" --agents search expert --games "$SEARCH_GAMES" --workers "$WORKERS" \
            --seed "$SEED" --no-beliefs --out "$OUT/duel-$ARG-search" --secret "$SECRET" \
            | tee "$OUT/duel-$ARG-search.txt"
        $T --game duel --duel-layout "$ARG" --agents learned expert --games "$NET_GAMES" --workers "$WORKERS" \
            --seed "$SEED" --no-beliefs --out "$OUT/duel-$ARG-learned" --secret "$SECRET" \
            | tee "$OUT/duel-$ARG-learned.txt"
        ;;
    ladder)
        # every rung inserted into the same seat of an expert table on the same deals; ratings by the report
        $T --insert expert random greedy heuristic bayes planner blocker ismcts:20 learned search \
            --miners expert --saboteurs expert --players "$ARG" --games 200 --workers "$WORKERS" \
            --seed 8105000000 --no-beliefs --out "$OUT/ladder-$ARG" --secret "$SECRET" | tee "$OUT/ladder-$ARG.txt"
        python -m experiments.tournament.report "$OUT/ladder-$ARG" --out "$OUT/ladder-$ARG/report" --no-plots
        ;;
    *)
        echo "unknown cell $CELL (valid: base:N sab2:N duel:LAYOUT ladder:N)" >&2
        exit 2
        ;;
    esac
done
