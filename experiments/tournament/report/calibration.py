"""Belief calibration (T7): observers re-run over logged games, reliability bins and their plot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from experiments._optional import require
from experiments.tournament.logs.read import LogReader
from experiments.tournament.report.metrics import (
    _ci,
    _group,
    _save,
    cell_key,
)
from experiments.tournament.rounds import replay_env
from experiments.tournament.stats import (
    BOOT,
    NAN,
    bootstrap_ratio,
    resample_weights,
)

# ---- calibration (re-plays games: opt-in) -----------------------------------------------------------------------
CAL_BINS = 10


def train_game(seed: int) -> bool:
    """The held-out split of the calibration: behaviour tables are fitted on even seeds and scored on odd ones."""
    return seed % 2 == 0


def replay_decisions(records: list[dict]) -> Iterator[tuple[dict, list[tuple[int, list]]]]:
    """Re-play a logged base game from its seed and actions; per round: (header, [(actor, public events of the
    decision)...]) - the events with board distances that the observers see (round ends left out)."""
    from agents.base.tracker import LogTracker
    from saboteur_env import EventType

    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    game = env.unwrapped.game
    tracker = LogTracker(env.config)
    for rec in records:
        decisions = []
        for action in rec["actions"]:
            actor = env.possible_agents.index(env.agent_selection)
            env.step(action)
            decisions.append((actor, [ev for ev in tracker.update(game) if ev.type != EventType.ROUND_END]))
        yield rec["header"], decisions


def observer_trajectory(records: list[dict], tables=None, epsilon: float = 0.1) -> list[tuple[np.ndarray, list]]:
    """Per round: ((decisions, N) P(saboteur) of a public :class:`~agents.base.beliefs.BayesModel` after each decision
    with ``tables`` (the fixed baseline when ``None``), the dealt roles)."""
    from agents.base.beliefs import FIXED_TABLES, BayesModel
    from saboteur_env import GameConfig
    from saboteur_env.common.geometry import geometry

    n = records[0]["header"]["players"]
    model = BayesModel(n, geometry(GameConfig(num_players=n)).goal_cells, epsilon, tables or FIXED_TABLES)
    out = []
    for h, decisions in replay_decisions(records):
        model.reset_round(None, None)
        traj = []
        for _, events in decisions:
            for ev in events:
                model.observe(ev)
            traj.append(model.p_saboteur())
        out.append((np.array(traj).reshape(-1, n), h["roles"]))
    return out


def policy_trajectory(records: list[dict], samples: int = 4, epsilon: float = 0.05) -> list[tuple[np.ndarray, list]]:
    """Like :func:`observer_trajectory` for the policy-aware observer
    (:class:`agents.base.policy_observer.PolicyObserver`) that knows the cell's policies (miners, saboteurs): it
    scores each decision from the actor's public observation before the move, re-played from the seed.
    Raises ``PolicyModelError`` for policies it cannot model."""
    from agents.base.policy_observer import PolicyObserver, public_action, public_observation
    from agents.base.tracker import LogTracker
    from saboteur_env import EventType

    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    cfg, game = env.config, env.unwrapped.game
    model = PolicyObserver(cfg, (h["miners"], h["saboteurs"]), samples=samples, epsilon=epsilon, seed=h["seed"])
    tracker = LogTracker(cfg)
    out = []
    for rec in records:
        model.reset_round(None, None)
        traj = []
        for action in rec["actions"]:
            agent = env.agent_selection
            obs = env.observe(agent)["observation"]
            model.observe_decision(env.possible_agents.index(agent), public_observation(obs, cfg),
                                   public_action(cfg, action))  # fmt: skip
            env.step(action)
            for ev in tracker.update(game):
                if ev.type != EventType.ROUND_END:
                    model.observe(ev)
            traj.append(model.p_saboteur())
        out.append((np.array(traj).reshape(-1, h["players"]), rec["header"]["roles"]))
    return out


def _bin_sums(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(3, CAL_BINS): count, sum of predictions, sum of outcomes per equal-width bin of the prediction."""
    b = np.minimum((p * CAL_BINS).astype(int), CAL_BINS - 1)
    return np.stack([np.bincount(b, minlength=CAL_BINS), np.bincount(b, p, CAL_BINS), np.bincount(b, y, CAL_BINS)])


def _ece(sums: np.ndarray) -> float:
    """Expected calibration error of pooled bin sums (3, bins): sum over bins of |observed - predicted| weighted by
    the bin's share of the samples."""
    count, p, y = sums
    return float(np.abs(y - p).sum() / count.sum()) if count.sum() else NAN


def table_calibration(logs: list[Path], boot: int = BOOT, policy_samples: int = 0) -> tuple[list[dict], list[dict]]:
    """T7: per cell (population), the reference Bayesian observer with the fixed behaviour tables (baseline) and
    with tables fitted on that cell's training games (even seeds), both scored on its held-out games (odd seeds):
    ECE over 10 equal-width bins and Brier, every seat after every decision, with 95% bootstrap intervals over
    held-out games. Also the reliability diagram's points (per bin: mean prediction, observed frequency, count).
    ``policy_samples`` > 0 adds the policy-aware observer (model ``policy``, that many hands per decision) in the
    cells without an inserted seat whose policies it can model (about 2-3 s per held-out 5-player game)."""
    from agents.base.beliefs import BehaviourCounts
    from agents.base.policy_observer import PolicyModelError

    counts: dict[tuple, BehaviourCounts] = defaultdict(BehaviourCounts)
    for records in LogReader(logs, quiet=True).games():
        h = records[0]["header"]
        if h.get("game", "base") != "base" or not train_game(h["seed"]):
            continue
        c = counts[cell_key(records[0])]
        c.games += 1
        for header, decisions in replay_decisions(records):
            for actor, events in decisions:
                c.decision(actor, header["roles"])
                for ev in events:
                    c.event(ev, header["roles"], header["gold_goal"])
    fitted = {key: c.fit(f"fitted:{'/'.join(map(str, key))}") for key, c in counts.items()}
    no_policy: set[tuple] = set()
    per_game: dict[tuple, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    brier_sums: dict[tuple, dict[str, list[tuple[float, int]]]] = defaultdict(lambda: defaultdict(list))
    for records in LogReader(logs, quiet=True).games():
        h = records[0]["header"]
        key = cell_key(records[0])
        if h.get("game", "base") != "base" or train_game(h["seed"]) or key not in fitted:
            continue
        tables = fitted[key]
        models: list[tuple[str, Callable[[list[dict]], list]]] = [
            ("fixed", lambda r: observer_trajectory(r, None, 0.1)),
            ("fitted", lambda r, t=tables: observer_trajectory(r, t, 0.0)),
        ]
        if policy_samples and not h.get("insert") and key not in no_policy:
            models.append(("policy", lambda r: policy_trajectory(r, policy_samples)))
        for name, trajectory in models:
            ps, ys = [], []
            try:
                trajectories = trajectory(records)
            except PolicyModelError:  # e.g. a population with memory the observer cannot shadow
                no_policy.add(key)
                continue
            for traj, roles in trajectories:
                ps.append(traj.ravel())
                ys.append(np.tile(np.array(roles, dtype=float), traj.shape[0]))
            p, y = np.concatenate(ps), np.concatenate(ys)
            per_game[key][name].append(_bin_sums(p, y))
            brier_sums[key][name].append((float(((p - y) ** 2).sum()), p.size))
    rows, points = [], []
    for key in sorted(per_game):
        for name in ("fixed", "fitted", "policy"):
            if name not in per_game[key] or (name == "policy" and key in no_policy):
                continue
            games = np.array(per_game[key][name])  # (G, 3, bins)
            point = _ece(games.sum(axis=0))
            lo = hi = NAN
            if len(games) > 1:
                flat = games.reshape(len(games), -1)
                est = []
                for w in resample_weights(len(games), boot):
                    pooled = (w @ flat).reshape(-1, 3, CAL_BINS)
                    est.append(np.abs(pooled[:, 2] - pooled[:, 1]).sum(axis=1) / pooled[:, 0].sum(axis=1))
                lo, hi = (float(x) for x in np.quantile(np.concatenate(est), [0.025, 0.975]))
            sq, cnt = zip(*brier_sums[key][name], strict=True)
            rows.append({"players": key[0], "miners": key[1], "saboteurs": key[2], "model": name,
                         "train_games": counts[key].games, "test_games": len(games),
                         "samples": int(games[:, 0].sum()), **_ci("ece", (point, lo, hi)),
                         **_ci("brier", bootstrap_ratio(np.array(sq), np.array(cnt, dtype=float), boot))})  # fmt: skip
            total = games.sum(axis=0)
            for b in range(CAL_BINS):
                if total[0, b]:
                    points.append({"players": key[0], "miners": key[1], "saboteurs": key[2], "model": name,
                                   "bin": b, "mean_prediction": round(float(total[1, b] / total[0, b]), 4),
                                   "observed": round(float(total[2, b] / total[0, b]), 4),
                                   "samples": int(total[0, b])})  # fmt: skip
    return rows, points


def reliability_plot(out: Path, points: list[dict]) -> list[str]:
    matplotlib = require("matplotlib", "eval", "experiments.tournament.report (plots; --no-plots skips them)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for (n, m, sab), rows in sorted(_group(points, ("players", "miners", "saboteurs")).items()):
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        for name, model_rows in sorted(_group(rows, ("model",)).items()):
            model_rows.sort(key=lambda r: r["bin"])
            ax.plot([r["mean_prediction"] for r in model_rows], [r["observed"] for r in model_rows], marker="o",
                    label=name[0])  # fmt: skip
        ax.set_title(f"{m} vs {sab}, {n}p (held-out games)", fontsize=9)
        name = f"reliability_{n}p_{m}_{sab}.png".replace(" ", "").replace("+", "plus-")
        written.append(_save(fig, ax, out / name, "predicted P(saboteur)", "observed frequency", (0, 1)))
    return written
