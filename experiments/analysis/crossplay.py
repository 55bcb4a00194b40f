"""Cross-play matrix of learned policies (issue 14): ``python -m experiments.analysis.crossplay NAME=P.npz ...
--players 5``.

Cell ``(i, j)``: on ``--deals`` fresh deals, seat ``b mod N`` of deal ``b`` is played by policy ``i`` and every other
seat by policy ``j``; the number is that seat's final nuggets (score) per game, with a 95% bootstrap interval over
deals. Every cell plays the same deals, so cells are paired. The diagonal is self-play (a policy among copies of
itself); off the diagonal a policy meets partners and opponents it never trained with. The **self-play vs
cross-play gap** is the mean of the diagonal minus the mean of the off-diagonal cells, with a paired bootstrap
interval over deals: policies that co-adapted to their own conventions (who signals what, whom to trust) lose
more when their table changes.

All seats are numpy networks (``agents.learned.NumpyPolicy``), evaluated batched over the deals; actions are
sampled from each policy's distribution with one ``np.random.Generator`` seeded by ``--seed``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from agents.learned import NumpyPolicy
from experiments.tournament.stats import bootstrap_mean
from saboteur_env import GameConfig
from saboteur_env.vector import VectorEnv

EVAL_SEED = 3_000_000_000  # far from every training deal seed


def sample(policy: NumpyPolicy, obs: NDArray[np.float32], mask: NDArray[np.int8],
           rng: np.random.Generator) -> NDArray[np.int64]:  # fmt: skip
    """One action per row from the policy's masked softmax."""
    logits, _ = policy.forward(obs)
    z = np.where(mask.astype(bool), logits.astype(np.float64), -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random(len(p))[:, None]
    return np.minimum((p.cumsum(axis=1) < u).sum(axis=1), mask.shape[1] - 1).astype(np.int64)


def play_cells(config: GameConfig, policies: list[NumpyPolicy], cells: list[tuple[int, int]], deals: int, seed: int,
               rng: np.random.Generator) -> NDArray[np.float64]:  # fmt: skip
    """The watched seat's final score, ``(len(cells), deals)``: cell ``(i, j)`` seats policy ``i`` in seat
    ``b mod N`` of deal ``b`` and policy ``j`` everywhere else. All cells run in one vector env (deal ``b`` has the
    same seed in every cell), so each step evaluates every policy once on all the rows it plays."""
    n, c = config.num_players, len(cells)
    env = VectorEnv(c * deals, config=config)
    obs, info = env.reset(seed=[seed + b for b in range(deals)] * c)
    watched = np.tile(np.arange(deals) % n, c)
    seat_pol = np.repeat([i for i, _ in cells], deals)
    table_pol = np.repeat([j for _, j in cells], deals)
    done = np.zeros(c * deals, dtype=bool)
    score = np.zeros(c * deals)
    while not done.all():
        seats, mask = info["seat"], info["action_mask"]
        actions = np.zeros(c * deals, dtype=np.int64)
        who = np.where(seats == watched, seat_pol, table_pol)
        for k, pol in enumerate(policies):
            rows = np.flatnonzero((who == k) & ~done)
            if rows.size:
                actions[rows] = sample(pol, obs[rows], mask[rows], rng)
        idle = np.flatnonzero(done)  # finished deals idle on their next game
        actions[idle] = mask[idle].argmax(axis=1)
        obs, _, term, _, info = env.step(actions)
        ended = np.flatnonzero(term & ~done)
        score[ended] = info["final_returns"][ended, watched[ended]]
        done[ended] = True
    return score.reshape(c, deals)


def matrix(config: GameConfig, policies: dict[str, NumpyPolicy], deals: int, seed: int = EVAL_SEED) -> dict:
    """Every cell's summary and the self-play vs cross-play gap."""
    if not 1 <= deals <= 100_000:
        raise ValueError(f"deals={deals} is out of range; valid: 1..100000")
    if len(policies) < 2:
        raise ValueError(f"a cross-play matrix needs at least 2 policies (got {len(policies)})")
    for name, pol in policies.items():
        try:
            pol.check_config(config)
        except ValueError as e:
            raise ValueError(f"policy {name!r}: {e}") from e
        if pol.features:  # the batched play here feeds observations only
            raise ValueError(f"policy {name!r} reads belief features ({pol.features!r}): the cross-play matrix "
                             "plays self-play files without them; use experiments.tournament for this one")  # fmt: skip
    names = list(policies)
    rng = np.random.default_rng([seed, 0xC055])
    pairs = [(i, j) for i in range(len(names)) for j in range(len(names))]
    played = play_cells(config, [policies[k] for k in names], pairs, deals, seed, rng)
    scores = {(names[i], names[j]): played[k] for k, (i, j) in enumerate(pairs)}
    cells = {}
    for (a, b), sc in scores.items():
        mean, lo, hi = bootstrap_mean(sc)
        cells[f"{a}|{b}"] = {"seat": a, "table": b, "mean": mean, "lo": lo, "hi": hi}
    diag = np.mean([scores[(a, a)] for a in names], axis=0)
    off = np.mean([scores[(a, b)] for a in names for b in names if a != b], axis=0)
    gap, lo, hi = bootstrap_mean(diag - off)
    return {"names": names, "deals": deals, "seed": seed, "players": config.num_players, "cells": cells,
            "gap": {"mean": gap, "lo": lo, "hi": hi}}  # fmt: skip


def table(result: dict) -> str:
    """A markdown table: rows = the watched seat's policy, columns = the table's."""
    names = result["names"]
    lines = ["| seat \\ table | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for a in names:
        row = [f"{(c := result['cells'][f'{a}|{b}'])['mean']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]" for b in names]
        lines.append(f"| {a} | " + " | ".join(row) + " |")
    g = result["gap"]
    gap = f"{g['mean']:+.2f} [{g['lo']:+.2f}, {g['hi']:+.2f}]"
    lines.append(f"\nSelf-play minus cross-play (diagonal mean minus off-diagonal mean, paired over "
                 f"{result['deals']} deals): {gap} nuggets per game.")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.analysis.crossplay", description=__doc__.splitlines()[0])
    p.add_argument("policies", nargs="+", metavar="NAME=PATH", help="learned policies (.npz), at least two")
    p.add_argument("--game", default="base", help="base, sab2 or duel")
    p.add_argument("--players", type=int, default=None, help="seats per game (default: the game's default)")
    p.add_argument("--deals", type=int, default=1000, help="deals per cell (default 1000)")
    p.add_argument("--seed", type=int, default=EVAL_SEED, help=f"first deal's seed (default {EVAL_SEED})")
    p.add_argument("--json", default="", help="also write the result (every cell, the gap) to this file")
    ns = p.parse_args(argv)
    try:
        config = GameConfig(game=ns.game, num_players=ns.players)
        policies = {}
        for item in ns.policies:
            name, sep, path = item.partition("=")
            if not sep or not name or not path:
                raise ValueError(f"policy {item!r} must be NAME=PATH")
            if name in policies:
                raise ValueError(f"policy name {name!r} is given twice")
            policies[name] = NumpyPolicy(path)
        t0 = time.perf_counter()
        result = matrix(config, policies, ns.deals, ns.seed)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    result["files"] = {n: str(Path(x.partition("=")[2])) for n, x in zip(policies, ns.policies, strict=True)}
    print(table(result))
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
