"""Speed benchmark with random legal agents (not a test).

    python -m experiments.bench                      # engine, raw_env and env() at 4 and 10 players, with the
                                                     # connect_four_v3 raw env measured in the same run
    python -m experiments.bench --games 300 --repeats 3
    python -m experiments.bench --game duel --games 100      # Saboteur: The Duel (both layouts)
    python -m experiments.bench --game sab2 --players 6 12   # Saboteur 2
    python -m experiments.bench --target vector --players 4 --num-envs 1 64 1024 4096 --obs float compact
    python -m experiments.bench --target vector raw_env --players 4 --num-envs 4096 --json   # one JSON per line
    python -m experiments.bench --target vector --players 4 --history-length 16 0   # with and without history rows
    python -m experiments.bench --target vector fill --players 4 --num-envs 4096 --obs float   # vs. the row ceiling
    python -m experiments.bench --target vector learner puffer --players 4 --num-envs 1024 --obs float   # issue 38

Targets: ``engine`` (the rules functions), ``raw_env``, ``env`` (PettingZoo's wrapped env), ``vector``
(``saboteur_env.vector.VectorEnv``: lock-step batches of ``--num-envs`` games, the acting seat's observation in
each ``--obs`` format and the int8 mask produced every step, actions from the in-kernel ``LegalSampler``;
``--threads`` shards), ``fill`` (no game is played: ``--num-envs`` float observation rows of the game's size are
zero-filled by numpy in one thread, again and again, each row counted as a decision; an upper bound, set by memory
bandwidth at large B, on a one-thread lock-step that writes its whole float row every decision; ``--obs`` and
``--threads`` do not apply, and its games/s is 0), ``learner`` (``LearnerVectorEnv``: learner steps/s, random
opponents played inside in batch) and ``puffer`` (PufferLib's ``Serial`` and ``Multiprocessing`` over
``SaboteurPuffer``, B games in 2 environments; skipped, with a note, without the ``puffer`` extra): their
"decisions" are learner steps, see :mod:`experiments.bench.learner`. ``vector``, ``fill``, ``learner`` and
``puffer`` run for ``--seconds``; there ``--games``
only sizes the connect_four reference (``--games`` x 5 games; a game of the other targets has 3 rounds). A
B = 4096 Duel row can show 0.0 games/s at short ``--seconds``: no game finished in that time. ``--json``
prints one object per measured target (median decisions/s, the connect_four
reference of the same run and the ratio, plus the machine, versions, commit and load).

Every decision builds the observation and the mask (``env.last()``) and the agent samples uniformly from the mask
(``saboteur_env.sample_legal(mask, rng)``, for connect_four too). "Decisions" count non-``None`` actions; dead
steps at the end are excluded.
The ``engine`` line drives the rules directly (mask + observation + ``apply_action(inplace=True)``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

from experiments.bench.learner import PUFFER_BACKENDS, PUFFER_WORKERS, bench_learner, bench_puffer
from saboteur_env import (
    GameConfig,
    apply_action,
    encode_observation,
    env,
    legal_action_mask,
    new_game,
    raw_env,
    sample_legal,
    variants,
)
from saboteur_env.common.config import MAX_HISTORY

GAMES = ("base", "duel", "sab2")
AEC_TARGETS = ("engine", "raw_env", "env")  # a game at a time, timed over --games games
TARGETS = (*AEC_TARGETS, "vector", "fill", "learner", "puffer")
OBS_FORMATS = ("float", "compact", "none")


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
            e.step(sample_legal(obs["action_mask"], rng))
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
            apply_action(state, sample_legal(legal_action_mask(state), rng), inplace=True)
            decisions += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def bench_aec(target: str, num_players: int, games: int, seed: int, **config: Any) -> tuple[float, float]:
    """One of AEC_TARGETS over ``games`` games: decisions/s and games/s."""
    if target == "engine":
        return bench_engine(num_players, games, seed, **config)
    return bench_env(raw_env if target == "raw_env" else env, num_players, games, seed, **config)


def bench_vector(num_players: int, num_envs: int, obs: str, threads: int, seconds: float, seed: int,
                 **config: Any) -> tuple[float, float, dict[str, Any]]:
    """Lock-step ``VectorEnv`` steps with in-kernel uniform legal actions for at least ``seconds``; returns
    decisions/s, finished games/s and memory facts (state bytes per game, peak RSS)."""
    from saboteur_env.vector import LegalSampler, VectorEnv

    with VectorEnv(num_envs, num_players=num_players, obs_format=obs, num_threads=threads, copy=False,
                   **config) as venv:  # fmt: skip
        venv.reset(seed=seed)
        sampler = LegalSampler(seed)
        for _ in range(3):  # warm caches (and compile on first use)
            venv.step(venv.sample_actions(sampler))
        steps = games = 0
        start = time.perf_counter()
        while True:
            _, _, done, _, _ = venv.step(venv.sample_actions(sampler))
            games += int(done.sum())
            steps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds and steps >= 5:
                break
        memory = {"state_bytes_per_game": venv.batch.bytes_per_game,
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}  # fmt: skip
    return steps * num_envs / elapsed, games / elapsed, memory


def bench_fill(num_players: int, num_envs: int, seconds: float, **config: Any) -> tuple[float, float, dict[str, Any]]:
    """``num_envs`` float observation rows of the game (``config``) zero-filled for at least ``seconds``: rows/s
    (the ``fill`` target: the memory ceiling of writing one float row per decision), 0 games/s, the row's bytes."""
    from saboteur_env.vector import VectorEnv

    with VectorEnv(1, num_players=num_players, **config) as venv:
        size = venv.batch.obs_size
    rows = np.ones((num_envs, size), dtype=np.float32)  # touched: the pages exist before the clock starts
    fills = 0
    start = time.perf_counter()
    while True:
        rows.fill(0.0)
        fills += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and fills >= 5:
            break
    return fills * num_envs / elapsed, 0.0, {"num_envs": num_envs, "row_bytes": rows.itemsize * size}


def growth(game: str, num_players: int, games: int, seed: int, **config: Any) -> dict[str, Any]:
    """Resident memory while ``VectorEnv`` (64 slots) and ``raw_env`` play ``games`` games each: RSS after the first
    tenth and at the end (MiB, from /proc/self/statm). Nothing should grow with the number of games."""

    def rss() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    from saboteur_env.vector import LegalSampler, VectorEnv

    out: dict[str, Any] = {"target": "growth", "game": game, "players": num_players, "games": games}
    with VectorEnv(64, num_players=num_players, obs_format="float", copy=False, **config) as venv:
        venv.reset(seed=seed)
        sampler = LegalSampler(seed)
        done_games, marks = 0, []
        while done_games < games:
            _, _, done, _, _ = venv.step(venv.sample_actions(sampler))
            done_games += int(done.sum())
            if not marks and done_games >= games // 10:
                marks.append(rss())
        out["vector_rss_mib_first_tenth"], out["vector_rss_mib_end"] = round(marks[0], 1), round(rss(), 1)
    e = raw_env(num_players=num_players, **config)
    rng = np.random.default_rng(seed)
    for g in range(games):
        e.reset(seed=seed + g)
        for _ in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(sample_legal(obs["action_mask"], rng))
        if g + 1 == games // 10:
            out["raw_env_rss_mib_first_tenth"] = round(rss(), 1)
    out["raw_env_rss_mib_end"] = round(rss(), 1)
    return out


def bench_connect_four(games: int, seed: int) -> tuple[float, float]:
    """PettingZoo's ``connect_four_v3`` raw env played the same way (the reference the issues compare with)."""
    from pettingzoo.classic import connect_four_v3  # needs pygame (the dev extra)

    return bench_env(lambda num_players: connect_four_v3.raw_env(), 2, games, seed)


def plot_scaling(path: str, runs: dict[tuple[str, str], list[tuple[float, float]]],
                 extra: dict[tuple[str, str], dict[str, Any]], reference: float, game: str,
                 facts: dict[str, Any]) -> None:  # fmt: skip
    """decisions/s (median) of every vector line against B, log-log, with the connect_four reference."""
    from experiments._optional import require

    plt = require("matplotlib.pyplot", "eval", "experiments.bench --plot")
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    lines: dict[tuple[str, str, int, int], list[tuple[int, float]]] = {}
    for key, results in runs.items():
        e = extra.get(key, {})
        if "obs" in e:  # a vector row (fill rows have no observation format: not plotted)
            lines.setdefault((key[1], e["obs"], e["threads"], e.get("history_length", -1)), []).append(
                (e["num_envs"], float(np.median([r[0] for r in results])))
            )
    for (players, obs, threads, hist), points in sorted(lines.items()):
        points.sort()
        label = f"{game} {players}p, {obs}" + (f", {threads} threads" if threads > 1 else "")
        label += f", history {hist}" if hist >= 0 else ""
        ax.plot([b for b, _ in points], [d for _, d in points], marker="o", label=label)
    ax.axhline(reference, color="grey", linestyle="--", label="connect_four_v3 raw_env (same run)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("games in the batch (num_envs)")
    ax.set_ylabel("decisions per second")
    ax.set_title(f"VectorEnv, commit {facts.get('commit')}, load {facts.get('load_average', ['?'])[0]}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def machine_facts() -> dict[str, Any]:
    """Versions, commit and load recorded with every JSON result."""
    import numba

    import saboteur_env

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()  # fmt: skip
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                    text=True, check=True).stdout.strip())  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", False
    return {
        "package": getattr(saboteur_env, "__version__", "unknown"), "commit": commit, "dirty": dirty,
        "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
        "machine": platform.machine(), "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[4, 10], help="player counts (the duel: ignored)")
    parser.add_argument("--games", type=int, default=100,
                        help="engine/raw_env/env: games (of 3 rounds) per measurement; connect_four plays 5x as many "
                             "(vector and fill run for --seconds instead)")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3, help="repeat each measurement, report the median")
    parser.add_argument("--seed", type=int, default=0, help="a non-negative integer")
    parser.add_argument("--game", choices=GAMES, default="base", help="the game (default: base)")
    parser.add_argument("--target", choices=TARGETS, nargs="+", default=["engine", "raw_env", "env"])
    parser.add_argument("--num-envs", type=int, nargs="+", default=[4096], help="vector and fill: batch sizes B")
    parser.add_argument("--obs", choices=OBS_FORMATS, nargs="+", default=["float", "compact"],
                        help="vector: observation formats")  # fmt: skip
    parser.add_argument("--threads", type=int, nargs="+", default=[1], help="vector: shards stepped in threads")
    parser.add_argument("--seconds", type=float, default=2.0, help="vector and fill: seconds per measurement")
    parser.add_argument("--json", action="store_true", help="one JSON object per target instead of the table")
    parser.add_argument("--plot", metavar="PNG", help="vector: plot decisions/s against B (needs matplotlib)")
    parser.add_argument("--history-length", type=int, nargs="+", metavar="L",
                        help="the games' history_length values (default: the game's own), interleaved")  # fmt: skip
    parser.add_argument("--growth", type=int, metavar="GAMES",
                        help="only measure memory: RSS while VectorEnv and raw_env each play GAMES games")  # fmt: skip
    args = parser.parse_args(argv)
    check_counts(parser, args, "games", "repeats")
    for name in ("num_envs", "threads"):
        if min(getattr(args, name)) < 1:
            parser.error(f"--{name.replace('_', '-')} values must be at least 1")
    if args.seconds <= 0:
        parser.error(f"--seconds {args.seconds} must be > 0")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be >= 0")
    if "puffer" in args.target:
        if any(b % PUFFER_WORKERS for b in args.num_envs):
            parser.error(f"--target puffer splits --num-envs over {PUFFER_WORKERS} environments: give multiples "
                         f"of {PUFFER_WORKERS}, got {' '.join(map(str, args.num_envs))}")  # fmt: skip
        try:
            import pufferlib.vector  # noqa: F401
        except ImportError:
            print("--target puffer skipped: PufferLib is missing (the puffer extra, docs/integrations.md)",
                  file=sys.stderr)  # fmt: skip
            args.target = [t for t in args.target if t != "puffer"]
    if args.game != "duel":
        check_players(parser, args.game, args.players)
    for h in args.history_length or ():
        if not 0 <= h <= MAX_HISTORY:
            parser.error(f"--history-length {h} is out of range; valid: 0..{MAX_HISTORY}")
    # Each history length is a case of its own (rows named "... L=h"); None: the game's default, unnamed.
    histories: list[int | None] = list(args.history_length) if args.history_length else [None]
    if args.growth is not None:
        if args.growth < 10:
            parser.error(f"--growth {args.growth} must be at least 10 games")
        if len(histories) > 1:
            parser.error(f"--growth measures one history length; got --history-length {args.history_length}")
        history = {} if histories[0] is None else {"history_length": histories[0]}
        config = {"game": args.game, **history} if args.game != "base" else history
        players = 2 if args.game == "duel" else args.players[0]
        record = {**growth(args.game, players, args.growth, args.seed, **config), **history, **machine_facts()}
        print(json.dumps(record))
        return 0
    # The duel has two players and two layouts: its rows are labelled by layout instead of player count.
    if args.game == "duel":
        games = [(2, {"game": "duel", "duel_layout": layout}) for layout in ("seed_5x9", "official_5x10")]
    else:
        games = [(n, {"game": args.game} if args.game == "sab2" else {}) for n in args.players]
    cases = [(n, cfg if h is None else {**cfg, "history_length": h}, h) for n, cfg in games for h in histories]
    if not args.json:
        print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
              f"{args.games} games x {args.repeats} repeats, interleaved (median and best decisions/s, median "
              f"games/s; ratio = median / connect_four_v3 raw_env median of the same run)")  # fmt: skip
        print(f"{'target':<36} {'players':>13} {'decisions/s':>12} {'best':>10} {'games/s':>9} {'ratio':>7}")
    # One untimed game of the reference and of every AEC target first: a process's first game loads compiled
    # kernels (sample_legal's too, which connect_four uses), which would otherwise fall into the first repeat and,
    # with --repeats 1, make the reference several times slower and every ratio as much too high.
    bench_connect_four(1, args.seed)
    for n, config, _ in cases:
        for target in args.target:
            if target in AEC_TARGETS:
                bench_aec(target, n, 1, args.seed, **config)
    # Every measurement once per repeat, in the same order (A B C A B C ...), so that the load of a shared machine
    # falls on all of them alike; PettingZoo's connect_four_v3 raw env is the reference measured in the same run.
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    extra: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(args.repeats):
        runs.setdefault(("connect_four_v3 raw_env", "2"), []).append(bench_connect_four(args.games * 5, args.seed))
        for n, config, h in cases:
            label = config.get("duel_layout", f"{n}")
            suffix = "" if h is None else f" L={h}"
            for target in args.target:
                if target == "vector":
                    for b in args.num_envs:
                        for obs in args.obs:
                            for k in args.threads:
                                key = (f"vector B={b} {obs}" + (f" x{k} threads" if k > 1 else "") + suffix, label)
                                dps, gps, mem = bench_vector(n, b, obs, k, args.seconds, args.seed, **config)
                                runs.setdefault(key, []).append((dps, gps))
                                extra[key] = {"num_envs": b, "obs": obs, "threads": k, **mem}
                                if h is not None:
                                    extra[key]["history_length"] = h
                    continue
                if target == "learner":
                    for b in args.num_envs:
                        key = (f"learner B={b}" + suffix, label)
                        dps, gps, facts_ = bench_learner(n, b, args.seconds, args.seed, **config)
                        runs.setdefault(key, []).append((dps, gps))
                        extra[key] = {**facts_, **({} if h is None else {"history_length": h})}
                    continue
                if target == "puffer":
                    for b in args.num_envs:
                        for backend in PUFFER_BACKENDS:
                            key = (f"puffer {backend} B={b}" + suffix, label)
                            dps, gps, facts_ = bench_puffer(backend, n, b, args.seconds, args.seed, **config)
                            runs.setdefault(key, []).append((dps, gps))
                            extra[key] = {**facts_, **({} if h is None else {"history_length": h})}
                    continue
                if target == "fill":
                    for b in args.num_envs:
                        key = (f"fill B={b}" + suffix, label)
                        dps, gps, facts_ = bench_fill(n, b, args.seconds, **config)
                        runs.setdefault(key, []).append((dps, gps))
                        extra[key] = {**facts_, **({} if h is None else {"history_length": h})}
                    continue
                result = bench_aec(target, n, args.games, args.seed, **config)
                runs.setdefault((target + suffix, label), []).append(result)
                if h is not None:
                    extra[(target + suffix, label)] = {"history_length": h}
    reference = float(np.median([r[0] for r in runs[("connect_four_v3 raw_env", "2")]]))
    facts = machine_facts() if args.json or args.plot else {}
    if args.plot:
        plot_scaling(args.plot, runs, extra, reference, args.game, facts)
    for (name, label), results in runs.items():
        dps, gps = float(np.median([r[0] for r in results])), float(np.median([r[1] for r in results]))
        best = max(r[0] for r in results)
        if args.json:
            record = {"target": name if name.startswith("connect_four") else name.split()[0], "label": name,
                      "game": args.game, "players": label, "decisions_per_s": round(dps, 1),
                      "best_decisions_per_s": round(best, 1), "games_per_s": round(gps, 3),
                      "connect_four_raw_decisions_per_s": round(reference, 1), "ratio": round(dps / reference, 3),
                      "repeats": args.repeats, **extra.get((name, label), {}), **facts}  # fmt: skip
            print(json.dumps(record), flush=True)
        else:
            print(f"{name:<36} {label:>13} {dps:>12,.0f} {best:>10,.0f} {gps:>9.1f} {dps / reference:>7.2f}",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
