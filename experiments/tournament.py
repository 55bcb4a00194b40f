"""Self-play tournament between baseline agents; prints a results table.

Example::

    python -m experiments.tournament --players 4 6 --games 30
    python -m experiments.tournament --lineups scripted/random --games 200 --workers 2 --out runs/t.jsonl

A lineup ``M/S`` seats agent ``M`` for every gold-digger and ``S`` for every saboteur (each seat plays the policy of
the role it is dealt each round). Game ``g`` uses seed ``seed + g`` for every lineup (duplicate deals), so lineups
are compared on the same deals; results are identical for the same arguments, whatever ``--workers``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from agents import AGENTS, RoleDispatch, make_agent
from experiments.stats import wilson_interval
from saboteur_env import GameConfig, raw_env

DEFAULT_LINEUPS = ("random/random", "scripted/random", "random/scripted", "scripted/scripted")


def play_game(num_players: int, lineup: str, seed: int) -> dict:
    """One full game; returns its per-round records."""
    miners, saboteurs = lineup.split("/")
    env = raw_env(num_players=num_players)
    cfg: GameConfig = env.config
    agents = {a: RoleDispatch(cfg, make_agent(miners, cfg), make_agent(saboteurs, cfg)) for a in env.possible_agents}
    env.reset(seed=seed)
    seeds = np.random.SeedSequence(seed).spawn(num_players)
    for i, agent in enumerate(agents.values()):
        agent.reset(i, num_players, int(seeds[i].generate_state(1)[0]))
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agents[name].act(obs["observation"], obs["action_mask"]))
    rounds = []
    prev = 0
    for r in env.game.round_results:
        rounds.append(
            {
                "players": num_players,
                "lineup": lineup,
                "seed": seed,
                "round": r["round"],
                "winner": r["winner"],
                "decisions": r["decisions"] - prev,
                "roles": r["roles"],
                "nuggets": r["nuggets"],
            }
        )
        prev = r["decisions"]
    return {"rounds": rounds, "final": [int(x) for x in env.game.gold_nuggets]}


def _task(args: tuple[int, str, int]) -> dict:
    return play_game(*args)


def run(players: Iterable[int], lineups: Iterable[str], games: int, seed: int, workers: int) -> list[dict]:
    tasks = [(n, lineup, seed + g) for n in players for lineup in lineups for g in range(games)]
    results = []
    start = time.perf_counter()
    pool = multiprocessing.Pool(workers) if workers > 1 else None
    try:
        it = pool.imap(_task, tasks, chunksize=4) if pool else map(_task, tasks)
        for i, res in enumerate(it, 1):
            results.append(res)
            if sys.stderr.isatty() or i == len(tasks):
                rate = i / (time.perf_counter() - start)
                eta = (len(tasks) - i) / rate
                print(f"\r{i}/{len(tasks)} games  {rate:.1f} games/s  ETA {eta:.0f}s", end="", file=sys.stderr)
    finally:
        if pool:
            pool.close()
    print(file=sys.stderr)
    return results


def table(results: list[dict]) -> str:
    rows: dict[tuple[int, str], list[dict]] = {}
    for res in results:
        for r in res["rounds"]:
            rows.setdefault((r["players"], r["lineup"]), []).append(r)
    header = (
        f"{'N':>3} {'miners/saboteurs':<20} {'rounds':>6} {'digger wins':>11} {'95% CI':>15} "
        f"{'decisions/round':>15} {'nuggets/digger':>14} {'nuggets/saboteur':>16}"
    )
    lines = [header, "-" * len(header)]
    for (n, lineup), rs in sorted(rows.items()):
        wins = sum(r["winner"] == "gold-diggers" for r in rs)
        lo, hi = wilson_interval(wins, len(rs))
        dec = np.mean([r["decisions"] for r in rs])
        dig, sab = [], []
        for r in rs:
            for role, nug in zip(r["roles"], r["nuggets"], strict=True):
                (sab if role else dig).append(nug)
        lines.append(
            f"{n:>3} {lineup:<20} {len(rs):>6} {wins / len(rs):>10.1%} {f'[{lo:.1%}, {hi:.1%}]':>15} "
            f"{dec:>15.1f} {np.mean(dig) if dig else 0:>14.2f} {np.mean(sab) if sab else 0:>16.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[4, 6], help="player counts (3-10)")
    parser.add_argument("--lineups", nargs="+", default=list(DEFAULT_LINEUPS), help="MINERS/SABOTEURS agent names")
    parser.add_argument("--games", type=int, default=30, help="games per player count and lineup")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--out", type=Path, default=None, help="write one JSON record per round to this file")
    args = parser.parse_args(argv)
    for n in args.players:
        if not 3 <= n <= 10:
            parser.error(f"--players {n} is out of range; valid: 3..10")
    for lineup in args.lineups:
        parts = lineup.split("/")
        if len(parts) != 2 or any(p not in AGENTS for p in parts):
            parser.error(f"--lineups {lineup!r} must be MINERS/SABOTEURS with agents from {sorted(AGENTS)}")
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be at least 1")
    results = run(args.players, args.lineups, args.games, args.seed, args.workers)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w") as f:
            for res in results:
                for r in res["rounds"]:
                    f.write(json.dumps(r) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
