"""One network per game for every player count: ``python -m experiments.train.universal --game base``.

Behaviour cloning of ``expert`` (as :mod:`experiments.train.imitate`) over every variant of a game at once - the
base game's 3-10 players, Saboteur 2's 2-12, the Duel's two geometries - into one network that reads the universal
layout of :mod:`agents.universal` (each variant's observation lined up inside the largest one, a one-hot of the
variant, actions by name). ``make_agent("learned:OUT/policy.npz", config)`` plays it at any of those variants.

1. **Collect** per variant into ``OUT/<variant>/data.npz`` (:func:`experiments.train.imitate.load_or_collect`: a
   file collected with the same options is reused, so an interrupted run resumes at the first variant not yet
   written; each variant has its own seed, ``--seed`` + its player count, or + 0 / 1 for the Duel geometries).
2. **Map** every variant's decisions into the universal layout (observation entries scattered, the variant's one-hot
   added, legal actions and the teacher's action renamed to universal ids), joined in variant order.
3. **Fit** one network (:func:`experiments.train.imitate.fit`, the held-out tenth drawn over all games), export at
   ``--temperature``, and report the held-out agreement per variant in ``OUT/meta.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from agents.universal import universal_layout, variant_configs, variant_name
from experiments.train.imitate import Options, _batch_loss, fit, load_or_collect, sharpen
from experiments.train.imitate_data import Data, concat, with_features
from saboteur_env import GameConfig


@dataclass
class UniversalOptions:
    """Command-line options (see ``--help``)."""

    game: str = "base"
    variants: str = ""  # comma-separated subset of the game's variants ("": all)
    decisions: int = 100_000  # teacher decisions collected per variant
    teacher: str = "expert"
    partners: str = "heuristic,expert"
    hidden: int = 128
    embed: int = 0
    role_heads: bool = True
    epochs: int = 15
    batch: int = 1024
    lr: float = 1e-3
    temperature: float = 0.3
    seed: int = 1600
    workers: int = 2
    num_envs: int = 32  # games per collecting worker, stepped in lock-step
    threads: int = 1
    out: str = "runs/universal/base"
    features: str = ""  # belief features read besides the observation ("bayes": base game; "" = none)

    def configs(self) -> list[GameConfig]:
        every = variant_configs(self.game)
        if not self.variants:
            return every
        by_name = {variant_name(c): c for c in every}
        chosen = [v.strip() for v in self.variants.split(",") if v.strip()]
        bad = [v for v in chosen if v not in by_name]
        if bad or not chosen:
            raise ValueError(f"variants {self.variants!r}: {bad or 'none'} not among {', '.join(by_name)}")
        return [by_name[v] for v in by_name if v in chosen]

    def variant_options(self, config: GameConfig) -> Options:
        """The imitation options of one variant (its collection and, for the fit, the shared ones)."""
        offset = (0 if config.duel_layout == "official_5x10" else 1) if config.game == "duel" else config.num_players
        return Options(game=config.game, players=config.num_players, duel_layout=str(config.duel_layout),
                       teacher=self.teacher, partners=self.partners, decisions=self.decisions, workers=self.workers,
                       num_envs=self.num_envs,
                       hidden=self.hidden, embed=self.embed, role_heads=self.role_heads, epochs=self.epochs,
                       batch=self.batch, lr=self.lr, temperature=self.temperature, seed=self.seed + offset,
                       threads=self.threads, out=str(Path(self.out) / variant_name(config)))  # fmt: skip

    def check(self) -> None:
        for name in ("decisions", "hidden", "epochs", "batch", "workers", "num_envs", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}={v!r} must be a positive integer")
        if self.seed < 0:
            raise ValueError(f"seed={self.seed} must be >= 0")
        universal_layout(self.game).feature_size(self.features)  # an unknown set, or one of another game, fails
        for c in self.configs():
            self.variant_options(c).check()


def to_universal(data: Data, config: GameConfig, features: str = "") -> Data:
    """``config``'s decisions in the universal layout of its game (module docstring, step 2); with ``features`` the
    rows' belief features (``data.feat``) lined up in the universal feature block."""
    lay = universal_layout(config.game)
    feat = None
    if features:
        if data.feat is None:
            raise ValueError(f"features={features!r} but the data carry no belief features (with_features adds them)")
        feat = np.zeros((len(data), lay.feature_size(features)), dtype=np.float32)
        feat[:, lay.feature_index(config, features)] = data.feat
    m = lay.variant(config)
    counts = np.diff(data.obs_ptr)
    # every row's entries, then its variant flag: row i's block grows by one
    obs_ptr = np.concatenate([[0], np.cumsum(counts + 1)]).astype(np.int64)
    idx = np.empty(int(obs_ptr[-1]), dtype=np.int32)
    val = np.empty(int(obs_ptr[-1]), dtype=np.float32)
    flag_pos = obs_ptr[1:] - 1
    keep = np.ones(idx.size, dtype=bool)
    keep[flag_pos] = False
    idx[keep] = m.obs_index[data.obs_idx]
    val[keep] = data.obs_val
    idx[flag_pos], val[flag_pos] = m.flag, 1.0
    # final returns per seat, padded to the largest variant's seats with zeros (every variant's games in one array)
    finals = np.zeros((data.finals.shape[0], lay.frame_config.num_players), dtype=np.float32)
    finals[:, : data.finals.shape[1]] = data.finals
    return Data(obs_ptr=obs_ptr, obs_idx=idx, obs_val=val, legal_ptr=data.legal_ptr.copy(),
                legal=m.action_index[data.legal].astype(np.int32), action=m.action_index[data.action],
                ret=data.ret, game=data.game, seat=data.seat, finals=finals, obs_size=lay.obs_size,
                feat=feat, soft=data.soft)  # fmt: skip


def _agreement(model: Any, data: Data, rows: NDArray[np.int64]) -> float:
    if rows.size == 0:
        return float("nan")
    total = 0.0
    with torch.no_grad():
        for chunk in np.array_split(rows, max(1, math.ceil(rows.size / 4096))):
            total += float(_batch_loss(model, data, chunk, 0.0)[3]) * chunk.size
    return total / rows.size


def run(opt: UniversalOptions, quiet: bool = False) -> dict[str, Any]:
    """Collect (or reuse) every variant's data, fit one network, export ``OUT/policy.npz``; returns ``meta.json``."""
    from experiments.train.selfplay.policy import export_npz

    opt.check()
    torch.set_num_threads(opt.threads)
    out = Path(opt.out)
    out.mkdir(parents=True, exist_ok=True)
    done = _finished(opt)
    if done is not None:  # the same options' fit is finished: reused (the data and the fit are deterministic)
        if not quiet:
            print(f"{out / 'policy.npz'}: fitted before with the same options (meta.json); reused", file=sys.stderr)
        return done
    t0 = time.perf_counter()
    parts, spans, collected = [], [], {}
    for c in opt.configs():
        vopt = opt.variant_options(c)
        if not quiet:
            print(f"variant {variant_name(c)}: {opt.decisions:,} decisions in {vopt.out}", file=sys.stderr, flush=True)
        data, collect_s, reused = load_or_collect(vopt, quiet)
        collected[variant_name(c)] = {"decisions": len(data), "games": len(data.finals), "reused": reused,
                                      "collect_s": None if math.isnan(collect_s) else round(collect_s, 1)}  # fmt: skip
        if opt.features:  # each seat's features replayed from its recorded decisions (imitate_data.with_features)
            data = with_features(data, c, opt.features, opt.workers)
        parts.append(to_universal(data, c, opt.features))
    start = 0
    for c, p in zip(opt.configs(), parts, strict=True):
        spans.append((variant_name(c), start, start + len(p)))
        start += len(p)
    data = concat(parts)
    t1 = time.perf_counter()
    frame = variant_configs(opt.game)[0]
    fit_opt = replace(opt.variant_options(frame), universal=True, seed=opt.seed, features=opt.features)
    model, last = fit(fit_opt, data, out / "fit.csv", quiet)
    t2 = time.perf_counter()
    # held-out agreement per variant (the fit's held-out games: the same draw as inside fit)
    gen = np.random.default_rng([opt.seed, 0xF17])
    games = np.unique(data.game)
    held = gen.choice(games, size=max(1, games.size // 10), replace=False) if games.size > 1 else games[:0]
    is_val = np.isin(data.game, held)
    model.eval()
    per_variant = {name: round(_agreement(model, data, np.flatnonzero(is_val[a:b]) + a), 4) for name, a, b in spans}
    sharpen(model, opt.temperature)
    export_npz(model, frame, out / "policy.npz", len(data))
    meta = {"options": asdict(opt), "decisions": len(data), "variants": collected,
            "policy_sha256": hashlib.sha256((out / "policy.npz").read_bytes()).hexdigest(),
            "held_out_agreement": per_variant, "final": last, "collect_and_load_s": round(t1 - t0, 1),
            "fit_s": round(t2 - t1, 1)}  # fmt: skip
    (out / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


def _finished(opt: UniversalOptions) -> dict[str, Any] | None:
    """``OUT/meta.json`` if it records these options and ``OUT/policy.npz`` is the file it wrote, else None."""
    out = Path(opt.out)
    try:
        meta = json.loads((out / "meta.json").read_text())
        same = meta.get("options") == asdict(opt)
        ok = same and hashlib.sha256((out / "policy.npz").read_bytes()).hexdigest() == meta.get("policy_sha256")
    except (OSError, ValueError, AttributeError):
        return None
    return meta if ok else None


def parse_args(argv: list[str] | None = None) -> UniversalOptions:
    d = UniversalOptions()
    p = argparse.ArgumentParser(prog="python -m experiments.train.universal", description=__doc__.splitlines()[0])
    p.add_argument("--game", default=d.game, choices=("base", "sab2", "duel"))
    p.add_argument("--variants", default=d.variants, help="comma-separated player counts or Duel geometries "
                   "(default: all of the game's)")  # fmt: skip
    for name, kind, text in (("decisions", int, "teacher decisions per variant"), ("teacher", str, "scripted agent"),
                             ("partners", str, "agents of the other seats, one drawn per game"),
                             ("hidden", int, "width of the two tanh layers"),
                             ("embed", int, "bottleneck before the policy heads (0: none)"),
                             ("epochs", int, "passes over the data"), ("batch", int, "minibatch rows"),
                             ("lr", float, "Adam learning rate"), ("temperature", float, "exported temperature"),
                             ("seed", int, "seed (a variant collects with seed + its player count)"),
                             ("workers", int, "collecting processes"),
                             ("num_envs", int, "games per collecting worker"), ("threads", int, "torch threads"),
                             ("out", str, "output folder"),
                             ("features", str, "belief features read besides the observation: bayes (base game) "
                              "or '' for none")):  # fmt: skip
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=getattr(d, name),
                       help=f"{text} (default: {getattr(d, name)})")  # fmt: skip
    p.add_argument("--no-role-heads", dest="role_heads", action="store_false", help="one head for every role")
    return UniversalOptions(**vars(p.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    try:
        opt = parse_args(argv)
        opt.check()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    meta = run(opt)
    print(json.dumps({k: meta[k] for k in ("decisions", "held_out_agreement", "fit_s")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
