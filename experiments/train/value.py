"""The rollout value head (issue 35, item 2): ``python -m experiments.train.value --game base --players 5``.

The ``search`` agent values a candidate move by rollouts to the end of the round. A value head lets it stop a
rollout after ``depth`` decisions and add an estimate of what the searching seat earns in the rest of the round
(``saboteur_env.core.rollout``'s ``leaf``): most of a rollout's cost is its last, longest part.

What the head predicts: from a seat's own observation, the seat's **gold from now to the end of the round** (the
Duel: its gold minus the opponent's) when every seat plays the blueprint - exactly the quantity a rollout of the
search measures, so a cut rollout estimates the same thing as a full one.

1. **Collect**: blueprint self-play on :class:`saboteur_env.vector.VectorEnv` (``--envs`` games in lock-step, the
   blueprint's sampled moves at temperature 1, as in the search's rollouts); at every step each game is sampled
   with probability ``--keep``, for a seat drawn uniformly (not only the seat to act: the search asks the value
   of its own seat whoever is to act at the cut). Recorded: the blueprint trunk's features of that seat's
   observation, its role head and its remaining round gold (known once the round ends).
2. **Fit**: the value head only, on the frozen trunk (ridge regression per role head, closed form, no torch):
   ``v = h . w_r + b_r``. Held-out games (a tenth) report the error against the constant predictor and the old
   head (trained on discounted game returns by the imitation fit).
3. **Export**: a head file (``agents.value``: JSON, tied to the blueprint by its sha256) with what it predicts,
   the data sizes, the held-out errors and this command; by default into ``agents/policies/value/GAME-Np.json``,
   where ``search:BUDGET,depth=D`` finds it for the shipped blueprint.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.blueprint import NetworkBlueprint, load_network
from agents.files import write_atomic
from agents.learned import NumpyPolicy, shipped_path
from agents.value import FORMAT, FORMAT_VERSION, VALUE_TARGET, ValueHead, file_sha256, shipped_value_path
from saboteur_env import GameConfig
from saboteur_env.core.rollout import pick
from saboteur_env.vector import VectorEnv, legal_indices


@dataclass
class Options:
    game: str = "base"
    players: int | None = None
    blueprint: str = ""  # the network whose value head is fitted ("": the shipped one)
    samples: int = 200_000
    envs: int = 256
    keep: float = 0.25
    ridge: float = 1.0
    seed: int = 0
    out: str = ""  # the head file ("": the shipped place, agents/policies/value/GAME-Np.json)

    def check(self) -> None:
        for name, lo, hi in (("samples", 100, 10**8), ("envs", 1, 65_536), ("seed", 0, 2**31 - 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name}={v!r} is out of range; valid: integers {lo}..{hi}")
        if not 0.0 < self.keep <= 1.0:
            raise ValueError(f"keep={self.keep!r} is out of range; valid: (0, 1]")
        if not 0.0 <= self.ridge <= 1e6:
            raise ValueError(f"ridge={self.ridge!r} is out of range; valid: [0, 1e6]")

    def config(self) -> GameConfig:
        return GameConfig(game=self.game, num_players=self.players)  # type: ignore[arg-type]

    def out_path(self) -> Path:
        return Path(self.out) if self.out else shipped_value_path(self.config())

    def blueprint_path(self) -> Path:
        return Path(self.blueprint) if self.blueprint else shipped_path(self.config())


@dataclass
class ValueData:
    h: NDArray[np.float32]  # (n, hidden) trunk features of the sampled seat's observation
    head: NDArray[np.int64]  # (n,) its role head
    target: NDArray[np.float32]  # (n,) its gold from the sample to the round's end (Duel: minus the opponent's)
    game: NDArray[np.int64]  # (n,) a game id (held-out split by game)
    old: NDArray[np.float32]  # (n,) the file's value head before the fit


def collect(policy: NumpyPolicy, config: GameConfig, samples: int, seed: int, envs: int = 256,
            keep: float = 0.25) -> ValueData:  # fmt: skip
    """Blueprint self-play until ``samples`` samples of finished rounds are recorded (see the module docstring)."""
    bp = NetworkBlueprint(policy, config)
    rng = np.random.default_rng([seed, 0x7A1E])
    env = VectorEnv(envs, config=config)
    p = config.num_players
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    k = env.batch.k
    cum = np.zeros((envs, p))  # rewards per seat so far in each slot's game
    game_of = np.arange(envs, dtype=np.int64)
    next_game = envs
    pend: list[list[tuple[int, int, NDArray[np.float64]]]] = [[] for _ in range(envs)]  # (sample, seat, cum then)
    hs: list[NDArray[np.float32]] = []
    heads: list[NDArray[np.int64]] = []
    olds: list[NDArray[np.float32]] = []
    games: list[int] = []
    target: dict[int, float] = {}
    count = 0
    while len(target) < samples:
        take = np.flatnonzero(rng.random(envs) < keep)
        if take.size:
            seats = rng.integers(p, size=envs)
            o = env.observe(seats)[take]
            h, role = policy._hidden(o)
            _, old = policy.forward(o)
            hs.append(h.astype(np.float32))
            heads.append(role)
            olds.append(old.astype(np.float32))
            for j, b in enumerate(take.tolist()):
                pend[b].append((count + j, int(seats[b]), cum[b].copy()))
                games.append(int(game_of[b]))
            count += take.size
        rows, cols = legal_indices(info["action_mask"])
        acts = pick(rows, cols, bp.logits(obs, rows, cols), rng.random(envs), envs, 1.0)
        obs, rewards, done, _, info = env.step(acts)
        cum += rewards
        ended = done | (env.batch.field("sc")[:, k.SC_JUST_ENDED] != 0)
        for b in np.flatnonzero(ended).tolist():
            for i, s, c0 in pend[b]:
                gain = cum[b] - c0
                target[i] = float(gain[s] - gain[1 - s]) if config.game == "duel" else float(gain[s])
            pend[b] = []
            if done[b]:
                cum[b] = 0.0
                game_of[b] = next_game
                next_game += 1
    keep_rows = np.fromiter(sorted(target), dtype=np.int64)
    h_all = np.concatenate(hs)[keep_rows]
    return ValueData(h_all, np.concatenate(heads)[keep_rows], np.array([target[i] for i in keep_rows.tolist()],
                     dtype=np.float32), np.asarray(games, dtype=np.int64)[keep_rows],
                     np.concatenate(olds)[keep_rows])  # fmt: skip


def fit_heads(data: ValueData, num_heads: int, hidden: int, ridge: float,
              rows: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """Ridge regression per head on ``rows``: weights (num_heads, hidden) and biases (num_heads,). A head with no
    rows predicts the mean of all."""
    w = np.zeros((num_heads, hidden))
    bias = np.full(num_heads, float(data.target[rows].mean()) if rows.size else 0.0)
    for r in range(num_heads):
        sel = rows[data.head[rows] == r]
        if sel.size < 2:
            continue
        x = np.concatenate([data.h[sel].astype(np.float64), np.ones((sel.size, 1))], axis=1)
        reg = ridge * np.eye(hidden + 1)
        reg[-1, -1] = 0.0  # the bias is not shrunk
        sol = np.linalg.solve(x.T @ x + reg, x.T @ data.target[sel].astype(np.float64))
        w[r], bias[r] = sol[:-1], sol[-1]
    return w, bias


def errors(data: ValueData, w: NDArray[np.float64], bias: NDArray[np.float64], rows: NDArray[np.int64],
           train_rows: NDArray[np.int64]) -> dict[str, float]:  # fmt: skip
    """Mean squared errors on ``rows``: the fitted head, the constant (train mean) and the old head."""
    y = data.target[rows].astype(np.float64)
    pred = np.einsum("ij,ij->i", data.h[rows], w[data.head[rows]]) + bias[data.head[rows]]
    const = float(data.target[train_rows].mean())
    mse = float(((pred - y) ** 2).mean())
    mse_const = float(((const - y) ** 2).mean())
    return {"mse": round(mse, 4), "mse_constant": round(mse_const, 4),
            "mse_old_head": round(float(((data.old[rows] - y) ** 2).mean()), 4),
            "r2": round(1.0 - mse / mse_const, 4) if mse_const > 0 else 0.0}  # fmt: skip


def export(blueprint: Path, dst: Path, w: NDArray[np.float64], bias: NDArray[np.float64],
           record: dict[str, Any]) -> None:  # fmt: skip
    """The head file (``agents.value`` format) for ``blueprint``, written atomically."""
    data = {"format": FORMAT, "version": FORMAT_VERSION, "target": VALUE_TARGET,
            "blueprint": blueprint.name, "blueprint_sha256": file_sha256(blueprint),
            "heads": [{"w": [round(float(x), 6) for x in w[r]], "b": round(float(bias[r]), 6)}
                      for r in range(w.shape[0])], **record}  # fmt: skip
    dst.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(dst, lambda fh: fh.write((json.dumps(data, indent=1, sort_keys=True) + "\n").encode()))


def run(opt: Options, quiet: bool = False) -> dict[str, Any]:
    opt.check()
    config = opt.config()
    src = opt.blueprint_path()
    policy = load_network(src, config)
    if policy.features:
        raise ValueError(f"{src} reads belief features ({policy.features!r}); a rollout blueprint reads the "
                         "observation only")  # fmt: skip
    t0 = time.perf_counter()
    data = collect(policy, config, opt.samples, opt.seed, opt.envs, opt.keep)
    collect_s = time.perf_counter() - t0
    gen = np.random.default_rng([opt.seed, 0xF17])
    ids = np.unique(data.game)
    held = gen.choice(ids, size=max(1, ids.size // 10), replace=False)
    is_val = np.isin(data.game, held)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    hidden = data.h.shape[1]
    w, bias = fit_heads(data, policy.num_heads, hidden, opt.ridge, tr)
    held_out = errors(data, w, bias, va, tr)
    w, bias = fit_heads(data, policy.num_heads, hidden, opt.ridge, np.arange(data.target.size))  # all data, shipped
    record = {
        "samples": int(data.target.size),
        "games": int(ids.size),
        "held_out": held_out,
        "options": asdict(opt),
        "collect_s": round(collect_s, 1),
        "command": command_line(opt),
    }
    export(Path(src), opt.out_path(), w, bias, record)
    ValueHead(opt.out_path(), policy)  # the written file loads and belongs to the blueprint
    if not quiet:
        print(json.dumps(record, indent=2), file=sys.stderr)
    return record


def command_line(opt: Options) -> str:
    """The command that makes this head (recorded in the file)."""
    d = Options()
    args = [f"--{k} {v}" for k, v in asdict(opt).items() if v != getattr(d, k) and k not in ("out",)]
    return " ".join(["python -m experiments.train.value", *args])


def parse_args(argv: list[str] | None = None) -> Options:
    d = Options()
    p = argparse.ArgumentParser(prog="python -m experiments.train.value", description=__doc__.splitlines()[0])
    p.add_argument("--game", default=d.game, help="base, sab2 or duel")
    p.add_argument("--players", type=int, default=None, help="seats per game")
    helps = {"blueprint": "the network whose value head is fitted ('': the shipped one)",
             "samples": "samples of finished rounds", "envs": "games in lock-step",
             "keep": "probability per game and step of a sample", "ridge": "ridge penalty of the regression",
             "seed": "the run's seed", "out": "the head file ('': agents/policies/value/GAME-Np.json)"}  # fmt: skip
    for name, default in asdict(d).items():
        if name in ("game", "players"):
            continue
        p.add_argument("--" + name, type=type(default), default=default, help=f"{helps[name]} (default: {default})")
    return Options(**vars(p.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    try:
        run(parse_args(argv))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
