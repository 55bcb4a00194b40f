"""Calibration of public observers' P(saboteur) per population: the fixed-table baseline, tables fitted on the
population's games, and the policy-aware observer (``agents.base.policy_observer``), on the same held-out games.

    python -m experiments.analysis.policy_observer --games 200 --players 5 --samples 4   # Markdown tables on stdout

Per population (every seat plays it): games ``seed .. seed + games - 1`` of one round each, deals from
``default_rng(game seed)``. Even seeds fit the behaviour tables (``BehaviourCounts``, as T7 of
``experiments.tournament.report --calibration``), odd seeds are scored: every seat after every decision, against the
dealt
roles. Observers: ``fixed`` (``BayesModel`` with ``FIXED_TABLES``, epsilon 0.1), ``fitted`` (the fitted tables,
epsilon 0), ``policy`` (``PolicyObserver`` knowing the population's policy; ``--samples`` hands, ``--epsilon``).
ECE over 10 equal-width bins and Brier, with 95% percentile intervals from ``--boot`` resamples of whole held-out
games (fixed resampling seed); then the reliability diagram's points. ``--out DIR`` also writes them as CSV (and a
PNG per population with matplotlib). Agent and observer seeds are sealed (``experiments.tournament.rounds``): spawned
from a
secret (``--secret``, default drawn once per process from ``os.urandom`` and printed) and the game, never from the
public game seed, so neither the agents nor the policy observer could recover the deal from their seeds.
Deterministic for its arguments and ``--secret``.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from agents import make_agent
from agents.base.beliefs import FIXED_TABLES, BayesModel, BehaviourCounts, BehaviourTables
from agents.base.policy_observer import PolicyObserver, public_action, public_observation
from agents.base.tracker import LogTracker
from experiments.tournament.report.calibration import CAL_BINS, _bin_sums, _ece
from experiments.tournament.rounds import (
    SecretError,
    draw_secret,
    format_secret,
    game_secret,
    parse_secret,
    seat_agents,
    seat_seeds,
    session_secret,
)
from experiments.tournament.stats import bootstrap_ratio, resample_weights
from saboteur_env import EventType, GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.base.cards import KIND_GOAL_GOLD
from saboteur_env.common.geometry import geometry

POPULATIONS = ("random", "heuristic", "bayes")
OBSERVERS = ("fixed", "fitted", "policy")


def game_key(population: str, players: int, seed: int) -> tuple:
    """The key of game ``seed`` for its sealed seeds (``experiments.tournament.rounds.game_secret``)."""
    return ("policy_observer", population, players, seed)


def play(config: GameConfig, population: str, seed: int, observers: dict[str, BayesModel],
         counts: BehaviourCounts | None = None,
         agent_secret: int | None = None) -> tuple[dict[str, NDArray[np.float64]], list[int]]:  # fmt: skip
    """One game of ``population`` from deal seed ``seed``: every observer's P(saboteur) per seat after each
    decision ``{name: (decisions, N)}``, and the dealt roles. Observers see public information only (the policy
    observer the actor's public observation and the public part of its action; all of them the public events);
    ``counts`` (fitting) gets the true roles and gold slot. The seats' seeds are spawned from the game secret
    ``agent_secret`` (fresh when ``None``), never from ``seed``."""
    p = config.num_players
    state = new_game(config, np.random.default_rng(seed))
    agents = [make_agent(population, config) for _ in range(p)]
    seat_agents(agents, draw_secret() if agent_secret is None else agent_secret, seed)
    roles = [int(r) for r in state.roles]  # scoring truth (one round)
    gold = [int(k) for k in state.goal_kind].index(KIND_GOAL_GOLD)
    tracker = LogTracker(config)
    for m in observers.values():
        m.reset_round(None, None)
    traj: dict[str, list[NDArray[np.float64]]] = {name: [] for name in observers}
    while not state.game_over:
        s = int(state.current)
        obs = encode_observation(state, s)
        action = agents[s].act(obs, legal_action_mask(state).astype(np.int8))
        if counts is not None:
            counts.decision(s, roles)
        for m in observers.values():
            if isinstance(m, PolicyObserver):
                m.observe_decision(s, public_observation(obs, config), public_action(config, action))
        state = apply_action(state, action)
        for ev in tracker.update(state):
            if ev.type == EventType.ROUND_END:
                continue
            if counts is not None:
                counts.event(ev, roles, gold)
            for m in observers.values():
                m.observe(ev)
        for name, m in observers.items():
            traj[name].append(m.p_saboteur())
    return {name: np.array(t).reshape(-1, p) for name, t in traj.items()}, roles


def fit_tables(config: GameConfig, population: str, seeds: list[int], secret: int | None = None) -> BehaviourTables:
    secret = session_secret() if secret is None else secret
    counts = BehaviourCounts()
    for seed in seeds:
        play(config, population, seed, {}, counts, game_secret(secret, game_key(population, config.num_players, seed)))
        counts.games += 1
    return counts.fit(f"fitted:{population}")


def evaluate(population: str, games: int, players: int, samples: int, epsilon: float, seed: int,
             boot: int, secret: int | None = None) -> tuple[list[dict], list[dict]]:  # fmt: skip
    """Rows of the main table (per observer: ECE and Brier with intervals) and the reliability points. ``secret``:
    where the agents' and the policy observer's seeds come from (default: this process's session secret)."""
    secret = session_secret() if secret is None else secret
    config = GameConfig(num_players=players, rounds=1)
    seeds = list(range(seed, seed + games))
    tables = fit_tables(config, population, [g for g in seeds if g % 2 == 0], secret)
    goal_cells = geometry(config).goal_cells
    per_game: dict[str, list[NDArray[np.float64]]] = {name: [] for name in OBSERVERS}
    brier: dict[str, list[tuple[float, int]]] = {name: [] for name in OBSERVERS}
    held_out = [g for g in seeds if g % 2 == 1]
    for g in held_out:
        key = game_key(population, players, g)
        observer_seed = seat_seeds(1, (*key, "observer"), secret)[0]  # sealed like the seats' (it samples hands)
        observers: dict[str, BayesModel] = {
            "fixed": BayesModel(players, goal_cells, 0.1, FIXED_TABLES),
            "fitted": BayesModel(players, goal_cells, 0.0, tables),
            "policy": PolicyObserver(config, population, samples=samples, epsilon=epsilon, seed=observer_seed),
        }
        traj, roles = play(config, population, g, observers, agent_secret=game_secret(secret, key))
        for name, t in traj.items():
            pr, y = t.ravel(), np.tile(np.array(roles, dtype=float), t.shape[0])
            per_game[name].append(_bin_sums(pr, y))
            brier[name].append((float(((pr - y) ** 2).sum()), pr.size))
    rows, points = [], []
    for name in OBSERVERS:
        sums = np.array(per_game[name])  # (G, 3, bins)
        point = _ece(sums.sum(axis=0))
        flat = sums.reshape(len(sums), -1)
        est = []
        for w in resample_weights(len(sums), boot):
            pooled = (w @ flat).reshape(-1, 3, CAL_BINS)
            est.append(np.abs(pooled[:, 2] - pooled[:, 1]).sum(axis=1) / pooled[:, 0].sum(axis=1))
        lo, hi = np.quantile(np.concatenate(est), [0.025, 0.975]) if len(sums) > 1 else (np.nan, np.nan)
        sq, cnt = zip(*brier[name], strict=True)
        b = bootstrap_ratio(np.array(sq), np.array(cnt, dtype=float), boot)
        rows.append({"population": population, "observer": name, "test_games": len(sums),
                     "samples": int(sums[:, 0].sum()), "ece": point, "ece_lo": float(lo), "ece_hi": float(hi),
                     "brier": b[0], "brier_lo": b[1], "brier_hi": b[2]})  # fmt: skip
        total = sums.sum(axis=0)
        for k in range(CAL_BINS):
            if total[0, k]:
                points.append({"population": population, "observer": name, "bin": k,
                               "mean_prediction": round(float(total[1, k] / total[0, k]), 4),
                               "observed": round(float(total[2, k] / total[0, k]), 4),
                               "samples": int(total[0, k])})  # fmt: skip
    return rows, points


def markdown(rows: list[dict], points: list[dict]) -> str:
    out = ["| population | observer | held-out games | predictions | ECE [95% CI] | Brier [95% CI] |",
           "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        out.append(f"| {r['population']} | {r['observer']} | {r['test_games']} | {r['samples']} | "
                   f"{r['ece']:.3f} [{r['ece_lo']:.3f}, {r['ece_hi']:.3f}] | "
                   f"{r['brier']:.3f} [{r['brier_lo']:.3f}, {r['brier_hi']:.3f}] |")  # fmt: skip
    out += ["", "Reliability (observed frequency of saboteurs / predictions, per bin of P(saboteur)):", "",
            "| population | observer | " + " | ".join(f"{k / CAL_BINS:.1f}-{(k + 1) / CAL_BINS:.1f}"
                                                    for k in range(CAL_BINS)) + " |",
            "|---|---|" + "---|" * CAL_BINS]  # fmt: skip
    cells: dict[tuple[str, str], dict[int, str]] = {}
    for pt in points:
        cells.setdefault((pt["population"], pt["observer"]), {})[pt["bin"]] = f"{pt['observed']:.2f} / {pt['samples']}"
    for (pop, name), bins in cells.items():
        out.append(f"| {pop} | {name} | " + " | ".join(bins.get(k, "-") for k in range(CAL_BINS)) + " |")
    return "\n".join(out)


def write_outputs(out: Path, rows: list[dict], points: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("policy_observer.csv", rows), ("policy_observer_reliability.csv", points)):
        with open(out / name, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(data)
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for pop in sorted({pt["population"] for pt in points}):
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        for name in OBSERVERS:
            pts = sorted((pt for pt in points if pt["population"] == pop and pt["observer"] == name),
                         key=lambda pt: pt["bin"])  # fmt: skip
            ax.plot([pt["mean_prediction"] for pt in pts], [pt["observed"] for pt in pts], marker="o", label=name)
        ax.set_xlabel("P(saboteur)")
        ax.set_ylabel("observed saboteur frequency")
        ax.set_title(f"{pop} population (held-out games)", fontsize=9)
        ax.legend(fontsize=8)
        fig.savefig(out / f"reliability_policy_{pop}.png", dpi=100, bbox_inches="tight")
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per population (even seeds fit, odd score)")
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--samples", type=int, default=4, help="hands drawn per decision by the policy observer")
    parser.add_argument("--epsilon", type=float, default=0.05, help="trembling hand of the policy observer")
    parser.add_argument("--seed", type=int, default=0, help="first game seed")
    parser.add_argument("--boot", type=int, default=2000, help="bootstrap resamples of held-out games")
    parser.add_argument("--populations", default=",".join(POPULATIONS))
    parser.add_argument("--out", type=Path, default=None, help="also write CSV (and PNG) files here")
    parser.add_argument("--secret", default=None, help="hex secret the agents' and the observer's seeds come from "
                        "(default: drawn from os.urandom once per process, printed); never the game seeds")
    args = parser.parse_args(argv)
    try:
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
    except SecretError as err:
        parser.error(str(err))
    if args.games < 4:
        parser.error(f"--games={args.games} must be at least 4 (half fit the tables, half are scored)")
    if not 3 <= args.players <= 10:
        parser.error(f"--players={args.players} must be in 3..10")
    pops = [p for p in args.populations.split(",") if p]
    rows, points = [], []
    for pop in pops:
        t0 = time.time()
        r, pts = evaluate(pop, args.games, args.players, args.samples, args.epsilon, args.seed, args.boot, secret)
        rows += r
        points += pts
        print(f"{pop}: {time.time() - t0:.0f} s", file=sys.stderr)
    print(f"Policy-aware observer vs table observers, {args.players} players, games {args.seed}.."
          f"{args.seed + args.games - 1} per population (even seeds fit the tables, odd seeds scored), "
          f"samples={args.samples}, epsilon={args.epsilon}, boot={args.boot}, agent seeds from secret "
          f"{format_secret(secret)}\n")  # fmt: skip
    print(markdown(rows, points))
    if args.out is not None:
        write_outputs(args.out, rows, points)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
