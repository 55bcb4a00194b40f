"""Speed benchmark with random legal agents (not a test).

    python -m experiments.bench                      # engine, raw_env and env() at 4 and 10 players, with the
                                                     # connect_four_v3 raw env measured in the same run
    python -m experiments.bench --games 300 --repeats 3
    python -m experiments.bench --game duel --games 100      # Saboteur: The Duel (both layouts)
    python -m experiments.bench --game sab2 --players 6 12   # Saboteur 2

Every decision builds the observation and the mask (``env.last()``) and the agent samples uniformly from the mask
(``legal[rng.integers(len(legal))]``). "Decisions" count non-``None`` actions; dead steps at the end are excluded.
The ``engine`` line drives the rules directly (mask + observation + ``apply_action(inplace=True)``).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from saboteur_env import (
    GameConfig,
    apply_action,
    encode_observation,
    env,
    legal_action_mask,
    new_game,
    raw_env,
    variants,
)

GAMES = ("base", "duel", "sab2")


def check_counts(parser: argparse.ArgumentParser, args: argparse.Namespace, *names: str) -> None:
    """``parser.error`` unless every ``--name`` is a positive count."""
    for name in names:
        value = getattr(args, name.replace("-", "_"))
        if value < 1:
            parser.error(f"--{name} must be at least 1, got {value}")


def check_players(parser: argparse.ArgumentParser, game: str, players: list[int]) -> None:
    """``parser.error`` unless every player count is in the game's range."""
    variant = variants.get(game)
    bad = [n for n in players if not variant.min_players <= n <= variant.max_players]
    if bad:
        parser.error(f"--players {' '.join(map(str, bad))} out of range for --game {game}; "
                     f"valid: {variant.min_players}..{variant.max_players}")  # fmt: skip


def bench_env(make, num_players: int, games: int, seed: int, **config) -> tuple[float, float]:
    e = make(num_players=num_players, **config)
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        e.reset(seed=seed + g)
        for _ in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(legal.size)]))
            decisions += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def bench_engine(num_players: int, games: int, seed: int, **config) -> tuple[float, float]:
    cfg = GameConfig(num_players=num_players, **config)
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for _ in range(games):
        state = new_game(cfg, rng)
        while not state.game_over:
            encode_observation(state, state.current)
            legal = np.flatnonzero(legal_action_mask(state))
            apply_action(state, int(legal[rng.integers(legal.size)]), inplace=True)
            decisions += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def bench_connect_four(games: int, seed: int) -> tuple[float, float]:
    """PettingZoo's ``connect_four_v3`` raw env played the same way (the reference the issues compare with)."""
    from pettingzoo.classic import connect_four_v3  # needs pygame (the dev extra)

    return bench_env(lambda num_players: connect_four_v3.raw_env(), 2, games, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[4, 10], help="player counts (the duel: ignored)")
    parser.add_argument("--games", type=int, default=100, help="games (of 3 rounds) per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="repeat each measurement, report the median")
    parser.add_argument("--seed", type=int, default=0, help="a non-negative integer")
    parser.add_argument("--game", choices=GAMES, default="base")
    args = parser.parse_args(argv)
    check_counts(parser, args, "games", "repeats")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be >= 0")
    if args.game != "duel":
        check_players(parser, args.game, args.players)
    # The duel has two players and two layouts: its rows are labelled by layout instead of player count.
    if args.game == "duel":
        cases = [(2, {"game": "duel", "duel_layout": layout}) for layout in ("seed_5x9", "official_5x10")]
    else:
        cases = [(n, {"game": args.game} if args.game == "sab2" else {}) for n in args.players]
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{args.games} games x {args.repeats} repeats, interleaved (median and best decisions/s, median games/s; "
          f"ratio = median / connect_four_v3 raw_env median of the same run)")
    print(f"{'target':<16} {'players':>13} {'decisions/s':>12} {'best':>9} {'games/s':>9} {'ratio':>7}")
    targets = {"engine": None, "raw_env": raw_env, "env()": env}
    # Every measurement once per repeat, in the same order (A B C A B C ...), so that the load of a shared machine
    # falls on all of them alike; PettingZoo's connect_four_v3 raw env is the reference measured in the same run.
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        runs.setdefault(("connect_four_v3", "raw_env"), []).append(bench_connect_four(args.games * 5, args.seed))
        for n, config in cases:
            label = config.get("duel_layout", f"{n}")
            for name, make in targets.items():
                result = (bench_engine(n, args.games, args.seed, **config) if make is None
                          else bench_env(make, n, args.games, args.seed, **config))  # fmt: skip
                runs.setdefault((name, label), []).append(result)
    reference = float(np.median([r[0] for r in runs[("connect_four_v3", "raw_env")]]))
    for (name, label), results in runs.items():
        dps, gps = np.median([r[0] for r in results]), np.median([r[1] for r in results])
        best = max(r[0] for r in results)
        print(f"{name:<16} {label:>13} {dps:>12,.0f} {best:>9,.0f} {gps:>9.1f} {dps / reference:>7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
