"""Expert iteration (issue 35, item 3): ``python -m experiments.train.exit --game base --players 5 --iterations 2``.

The ``search`` agent (``agents.search``: sampled determinizations, batched rollouts of a blueprint network) plays
better than its blueprint; expert iteration (Anthony et al. 2017, AlphaZero's loop without the tree) trains the
network on the search's choices and then searches on the new network:

    iteration i:  blueprint_{i-1}  --search plays every seat-->  decisions (observation, legal moves, the search's
                  choice, the seat's return)  --fit, starting from blueprint_{i-1}-->  blueprint_i

* **Iteration 0** is the network shipped for the configuration (``agents/policies/``), or ``--start FILE`` (a network
  of the same game trained elsewhere, e.g. a wider clone), copied into ``OUT/it0``.
* **Collect** (``OUT/it<i>/chunk<j>.npz``): games of ``search:BUDGET,blueprint=blueprint_{i-1}`` in every seat, through
  :func:`experiments.train.imitate.collect_all` with the search as the teacher (its choice is the label, every
  decision of every seat is recorded, the value target is the seat's discounted return as in the imitation
  fit). In chunks of ``--chunk`` decisions, each on its own seed stream and written atomically: an interrupted run
  loses at most the chunk in flight, and re-running the same command resumes.
* **Fit** (``OUT/it<i>/policy.npz``, ``fit.csv``, ``meta.json``): cross-entropy toward the search's choice (a point
  mass), or with ``--soft-temperature T`` toward softmax(its per-move mean values / T) over the candidate moves it
  valued (recorded with every decision; the choice alone labels its forced moves), plus the value
  error, fine-tuning blueprint_{i-1} (``imitate --init``) on the decisions of iterations ``1..i`` (aggregated, as
  DAgger does: earlier searches stay valid labels of the states they saw).
* **Measure** each iteration against ``expert`` with the paired tournaments the command prints (the network
  itself, ``learned:OUT/it<i>/policy.npz``, and the search on it, ``search:BUDGET,blueprint=OUT/it<i>/policy.npz``).

Every output records the commit and the options; a finished stage is skipped on a rerun only if its recorded
options equal the current ones (otherwise the command stops and names the difference, instead of mixing runs).
Data and checkpoints stay under ``OUT`` (outside git); a shipped result is copied into ``agents/policies/`` by
``experiments.train.ship``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from agents.files import write_atomic
from agents.learned import NumpyPolicy, shipped_path
from experiments.train.imitate import Options as ImitateOptions
from experiments.train.imitate import collect_all, fit
from experiments.train.imitate_data import Data, concat, with_features
from experiments.workers import check_backend, ordered_results
from saboteur_env import GameConfig
from saboteur_env.duel.variant import DUEL_LAYOUT_NAMES

EXIT_VERSION = 1


@dataclass
class Options:
    """Command-line options (see ``--help``)."""

    game: str = "base"
    players: int | None = None
    duel_layout: str = "seed_5x9"  # the Duel's geometry (other games: ignored)
    iterations: int = 2  # iterations to reach (a rerun with more continues from the last finished one)
    decisions: int = 24_000  # search decisions collected per iteration
    chunk: int = 1_500  # decisions per chunk file (the most an interruption loses)
    budget: int = 128  # rollouts per searched move (search:BUDGET)
    num_envs: int = 4  # games in lock-step per chunk (the search, not the engine, is the cost)
    workers: int = 1  # chunks collected at once: local processes (backend local) or Ray actors (backend ray)
    backend: str = "local"
    address: str | None = None  # a Ray cluster (backend ray; None: a local one of ``workers`` CPUs)
    epochs: int = 4
    lr: float = 3e-4
    batch: int = 512
    vf_coef: float = 0.5
    temperature: float = 0.3  # every iteration's network is exported at this temperature, as the shipped ones are
    seed: int = 0
    out: str = "runs/exit"
    start: str = ""  # iteration 0's network ('': the shipped one)
    soft_temperature: float = 0.0  # > 0: the policy target is softmax(search values / T) over the candidates
    with_runs: str = ""  # other runs' OUT folders (comma-separated): their collected decisions join every fit

    def check(self) -> None:
        for name, lo, hi in (("iterations", 1, 100), ("decisions", 1, 10**8), ("chunk", 1, 10**7),
                             ("budget", 1, 100_000), ("num_envs", 1, 4096), ("epochs", 1, 1000),
                             ("batch", 1, 10**6), ("seed", 0, 2**31 - 1)):  # fmt: skip
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name}={v!r} is out of range; valid: integers {lo}..{hi}")
        if not 0.0 < self.lr <= 1.0:
            raise ValueError(f"lr={self.lr!r} is out of range; valid: (0, 1]")
        if not 0.0 <= self.soft_temperature <= 100.0:
            raise ValueError(f"soft_temperature={self.soft_temperature!r} is out of range; valid: 0 (the search's "
                             "choice only) or (0, 100] nuggets")  # fmt: skip
        if not 0.0 < self.temperature <= 10.0:
            raise ValueError(f"temperature={self.temperature!r} is out of range; valid: (0, 10]")
        if not self.vf_coef >= 0:
            raise ValueError(f"vf_coef={self.vf_coef!r} must be >= 0")
        if self.duel_layout not in DUEL_LAYOUT_NAMES:
            raise ValueError(f"duel_layout={self.duel_layout!r} is not a Duel layout; valid: {list(DUEL_LAYOUT_NAMES)}")
        check_backend(self.backend, self.workers, self.address)
        start = self.start_path()
        NumpyPolicy(start).check_config(self.config())
        for cfg, _ in self.other_runs():
            if cfg != self.config() and not NumpyPolicy(start).meta.get("universal"):
                raise ValueError(f"with_runs={self.with_runs!r} holds decisions of {cfg.game} {cfg.num_players}p "
                                 f"{cfg.duel_layout if cfg.game == 'duel' else ''}, another variant than this run's; "
                                 "valid: runs of this variant, or a universal start network (it fits them all)")

    def other_runs(self) -> list[tuple[GameConfig, list[Path]]]:
        """``--with-runs``: each folder's variant and the chunk files of its complete iterations (an iteration
        still collecting is left out; it joins a later fit, whose key then differs)."""
        runs: list[tuple[GameConfig, list[Path]]] = []
        for name in filter(None, (x.strip() for x in self.with_runs.split(","))):
            folder = Path(name)
            its = {int(p.parent.name[2:]): p for p in folder.glob("it*/key.json") if p.parent.name[2:].isdigit()}
            keys = [its[i] for i in sorted(its)]
            if not keys:
                raise ValueError(f"with_runs: {name!r} holds no expert-iteration run (no it<i>/key.json); valid: "
                                 "another run's --out folder")  # fmt: skip
            if folder.resolve() == Path(self.out).resolve():
                raise ValueError(f"with_runs: {name!r} is this run's own --out")
            chunks: list[Path] = []
            cfg = None
            for key_path in keys:
                try:
                    key = json.loads(key_path.read_text())
                    game, decisions, chunk = key["game"], int(key["decisions"]), int(key["chunk"])
                except (OSError, ValueError, KeyError, TypeError) as e:
                    raise ValueError(f"with_runs: {key_path} is not an expert-iteration key ({e!r})") from None
                if game != self.game:
                    raise ValueError(f"with_runs: {name!r} is a run of game {game!r}; this run's is {self.game!r}")
                other = Options(game=game, players=key.get("players"), duel_layout=key.get("duel_layout", "seed_5x9"),
                                decisions=decisions, chunk=chunk)  # fmt: skip
                cfg = other.config()
                files = [key_path.parent / chunk_name(j) for j in range(other.chunks())]
                if all(f.exists() for f in files):
                    chunks += files
            if cfg is not None:
                runs.append((cfg, chunks))
        return runs

    def start_path(self) -> Path:
        """Iteration 0's source: ``--start`` (checked: a readable policy of this game) or the shipped network."""
        if not self.start:
            return shipped_path(self.config())  # NoShippedPolicyError (a ValueError) names the shipped configurations
        path = Path(self.start)
        if not path.is_file():
            raise ValueError(f"start={self.start!r} is not a file; valid: a policy.npz of this game, or '' (shipped)")
        return path

    def fit_key(self, i: int) -> dict[str, Any]:
        """What fixes iteration ``i``'s network: its data's key, and with ``--with-runs`` which chunk files of the
        other runs joined the fit (the collection's key leaves them out: the same chunks serve either fit)."""
        key = self.stage_key(i)
        if self.with_runs:
            key |= {"with_runs": [str(p) for _, files in self.other_runs() for p in files]}
        return key

    def config(self) -> GameConfig:
        if self.game == "duel":
            return GameConfig(game="duel", num_players=self.players, duel_layout=self.duel_layout)  # type: ignore[arg-type]
        return GameConfig(game=self.game, num_players=self.players)  # type: ignore[arg-type]

    def chunks(self) -> int:
        return -(-self.decisions // self.chunk)

    def stage_key(self, i: int) -> dict[str, Any]:
        """What fixes iteration ``i``'s data and network (a rerun must match it to reuse them). Not the backend nor
        the worker count: a chunk's data are fixed by its index, whoever collects it."""
        keys = ("game", "players", "decisions", "chunk", "budget", "num_envs", "epochs", "lr", "batch", "vf_coef",
                "temperature", "seed")  # fmt: skip
        key = {k: getattr(self, k) for k in keys} | {"iteration": i, "exit_version": EXIT_VERSION}
        if self.game == "duel" and self.duel_layout != "seed_5x9":  # only then: earlier runs' keys stay valid
            key |= {"duel_layout": self.duel_layout}
        if self.soft_temperature > 0:  # only then: earlier runs' keys stay valid
            key |= {"soft_temperature": self.soft_temperature}
        return key


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _atomic_json(path: Path, obj: dict[str, Any]) -> None:
    write_atomic(path, lambda fh: fh.write((json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()))


class ExitRun:
    """The stages of one ``OUT`` folder; every method is idempotent (a finished stage is read back)."""

    def __init__(self, opt: Options, quiet: bool = False) -> None:
        opt.check()
        self.opt, self.quiet = opt, quiet
        self.config = opt.config()
        self.out = Path(opt.out)
        self.collected_here = 0  # chunks this object collected (not read back from an earlier run)

    def log(self, msg: str) -> None:
        if not self.quiet:
            print(msg, file=sys.stderr, flush=True)

    def dir(self, i: int) -> Path:
        return self.out / f"it{i}"

    def blueprint(self, i: int) -> Path:
        """Iteration ``i``'s network (0: a copy of the shipped one, so the run does not change with a new ship, or of
        ``--start``; with ``--start`` an existing copy must be its bytes: it0 is what fixes the run, not the key)."""
        path = self.dir(i) / "policy.npz"
        if i == 0 and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            src = self.opt.start_path().read_bytes()
            write_atomic(path, lambda fh: fh.write(src))
        elif i == 0 and self.opt.start and path.read_bytes() != Path(self.opt.start).read_bytes():
            raise ValueError(f"{path} is not a copy of start={self.opt.start!r}; use another --out or that start")
        return path

    def _check_key(self, i: int) -> None:
        key_path = self.dir(i) / "key.json"
        key = self.opt.stage_key(i)
        if key_path.exists():
            old = json.loads(key_path.read_text())
            if old.get("workers") == 1:  # recorded before chunks ran on several workers: one worker's are today's
                del old["workers"]
            if old != key:
                diff = {k: (old.get(k), key.get(k)) for k in sorted(set(old) | set(key)) if old.get(k) != key.get(k)}
                raise ValueError(f"{self.dir(i)} was made with other options (recorded, now): {diff}; use another "
                                 "--out or the recorded options")  # fmt: skip
        else:
            key_path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_json(key_path, key)

    def imitate_options(self, i: int, seed: int, decisions: int) -> ImitateOptions:
        pol = NumpyPolicy(self.blueprint(i - 1))
        o = self.opt
        teacher = f"search:{o.budget},blueprint={self.blueprint(i - 1)}"
        return ImitateOptions(game=o.game, players=self.config.num_players, duel_layout=o.duel_layout,
                              teacher=teacher, partners="",
                              teacher_share=1.0, decisions=decisions, num_envs=o.num_envs, workers=1,
                              hidden=int(pol.meta["hidden"]),
                              embed=int(pol.meta.get("embed", 0)), role_heads=pol.num_heads > 1, epochs=o.epochs,
                              batch=o.batch, lr=o.lr, vf_coef=o.vf_coef, seed=seed, out=str(self.dir(i)),
                              features=str(pol.features or ""), init=str(self.blueprint(i - 1)),
                              temperature=o.temperature, init_temperature=o.temperature,
                              soft_temperature=o.soft_temperature)  # fmt: skip

    def collect(self, i: int) -> Data:
        """Iteration ``i``'s decisions, chunk by chunk (existing chunks are read back; the missing ones are collected
        by ``--workers`` processes or Ray actors, each chunk on the seed stream of its index, and written here, by
        the driver, in chunk order, each atomically once complete)."""
        self._check_key(i)
        parts: dict[int, Data] = {}
        todo: list[int] = []
        for j in range(self.opt.chunks()):
            path = self.chunk_path(i, j)
            if path.exists():
                parts[j] = _read_chunk(path)
            else:
                todo.append(j)
        if todo:
            blueprint = self.blueprint(i - 1).read_bytes()  # sent to the workers (a cluster's may not see OUT)
            jobs = [{"options": asdict(self.imitate_options(i, self.chunk_seed(i, j), self.chunk_size(j))),
                     "budget": self.opt.budget, "blueprint": blueprint} for j in todo]  # fmt: skip
            results = ordered_results(ChunkCollector, "collect", jobs, self.opt.backend, self.opt.workers,
                                      self.opt.address, what="chunk jobs")  # fmt: skip
            t0 = time.perf_counter()
            self.collected_here += len(todo)
            try:
                for j, (arrays, seconds) in zip(todo, results, strict=True):
                    data = Data.from_arrays(arrays)
                    write_atomic(self.chunk_path(i, j), partial(_save_npz, arrays=data.arrays()))
                    # its cost beside it (a later fit or ship, reusing the chunk, still reports what it took)
                    _atomic_json(self.chunk_path(i, j).with_suffix(".json"),
                                 {"decisions": len(data), "seconds": round(float(seconds), 1)})
                    parts[j] = data
                    self.log(f"it{i} chunk {j + 1}/{self.opt.chunks()}: {len(data):,} decisions in {seconds:.0f} s "
                             f"({time.perf_counter() - t0:.0f} s since the collection started)")  # fmt: skip
            finally:
                results.close()
        return concat([parts[j] for j in range(self.opt.chunks())])

    def chunk_path(self, i: int, j: int) -> Path:
        return self.dir(i) / chunk_name(j)

    def collect_seconds(self, i: int) -> float | None:
        """The collection seconds of iteration ``i``'s chunks summed (each worker's own time; None when a chunk has
        no record, e.g. collected before the records were kept)."""
        total = 0.0
        for j in range(self.opt.chunks()):
            rec = self.chunk_path(i, j).with_suffix(".json")
            if not rec.exists():
                return None
            total += float(json.loads(rec.read_text())["seconds"])
        return round(total, 1)

    def chunk_seed(self, i: int, j: int) -> int:
        return self.opt.seed * 1_000_000 + i * 1_000 + j

    def chunk_size(self, j: int) -> int:
        return min(self.opt.chunk, self.opt.decisions - j * self.opt.chunk)

    def train(self, i: int) -> Path:
        """Iteration ``i``'s network: fitted once its data are complete (a finished fit is kept)."""
        from experiments.train.imitate import sharpen
        from experiments.train.selfplay.policy import export_npz

        path = self.dir(i) / "policy.npz"
        meta_path = self.dir(i) / "meta.json"
        self.blueprint(0)  # a start other than the run's is refused before anything is reused
        if path.exists() and meta_path.exists():
            old = json.loads(meta_path.read_text()).get("key")
            new = self.opt.fit_key(i)
            if old != new:  # a finished fit of other options is not this run's
                self._check_key(i)  # names the difference
                diff = sorted(k for k in set(old or {}) | set(new) if (old or {}).get(k) != new.get(k))
                raise ValueError(f"{meta_path} was fitted with other options ({', '.join(diff)}); use another --out "
                                 "or the recorded options")  # fmt: skip
            return path
        data = concat([self.collect(k) for k in range(1, i + 1)])
        iopt = self.imitate_options(i, seed=self.opt.seed * 1_000_000 + i * 1_000 + 999, decisions=len(data))
        # --with-runs: other runs' decisions by variant (a variant other than this run's needs a universal start)
        parts = [(self.config, data)] + [(cfg, concat([_read_chunk(f) for f in files]))
                                         for cfg, files in self.opt.other_runs() if files]  # fmt: skip
        # belief features on this machine's processes (a Ray run's workers may be elsewhere)
        procs = self.opt.workers if self.opt.backend == "local" else 1
        parts = [(cfg, with_features(d, cfg, iopt.features, procs)) for cfg, d in parts]
        frame = self.config
        if NumpyPolicy(self.blueprint(i - 1)).meta.get("universal"):  # one network for every variant of the game:
            # the decisions move into its layout and the fit is the universal network's (experiments.train.universal)
            from agents.universal import variant_configs
            from experiments.train.universal import to_universal

            parts = [(cfg, to_universal(d, cfg, iopt.features)) for cfg, d in parts]
            frame = variant_configs(self.opt.game)[0]
            iopt = dataclasses.replace(iopt, universal=True, players=frame.num_players, duel_layout=frame.duel_layout)
        data = concat([d for _, d in parts])
        t0 = time.perf_counter()
        model, last = fit(iopt, data, self.dir(i) / "fit.csv", quiet=self.quiet)
        sharpen(model, self.opt.temperature)
        export_npz(model, frame, path, len(data))
        _atomic_json(meta_path, {"key": self.opt.fit_key(i), "commit": _commit(), "decisions": len(data),
                                 "games": int(np.unique(data.game).size), "fit_s": round(time.perf_counter() - t0, 1),
                                 "init": str(self.blueprint(i - 1)), "final": last,
                                 "options": asdict(self.opt)})  # fmt: skip
        return path

    def run(self) -> list[Path]:
        paths = []
        for i in range(1, self.opt.iterations + 1):
            paths.append(self.train(i))
            self.log(f"iteration {i} done: {paths[-1]}")
            for line in eval_commands(self.opt, i):
                self.log("  measure: " + line)
        return paths


def chunk_name(j: int) -> str:
    """Chunk ``j``'s file name in an iteration's folder."""
    return f"chunk{j:03d}.npz"


def _read_chunk(path: Path) -> Data:
    with np.load(path, allow_pickle=False) as z:
        return Data.from_npz(z)


def _save_npz(fh: Any, arrays: dict[str, Any]) -> None:
    np.savez(fh, **arrays)


class ChunkCollector:
    """Collects chunks (:meth:`collect`) in a worker: this process, a pool process or a Ray actor
    (:func:`experiments.workers.ordered_results`). The blueprint travels as bytes, kept in a private folder."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="exit-blueprints-")

    def collect(self, job: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """One chunk's arrays (``Data.arrays``) and the seconds it took: ``job`` holds the imitation options (one
        worker, the chunk's seed and size), the search budget and the blueprint's bytes."""
        import torch

        torch.set_num_threads(1)
        blob: bytes = job["blueprint"]
        path = Path(self._dir.name) / f"{hashlib.sha256(blob).hexdigest()[:16]}.npz"
        if not path.exists():
            write_atomic(path, lambda fh: fh.write(blob))
        opt = ImitateOptions(**job["options"])
        opt = dataclasses.replace(opt, teacher=f"search:{job['budget']},blueprint={path}", init="")
        t0 = time.perf_counter()
        data = collect_all(opt)
        return data.arrays(), time.perf_counter() - t0


def eval_commands(opt: Options, i: int, games: int = 1000, seed: int = 7_300_000_000) -> list[str]:
    """The paired tournaments that measure iteration ``i`` against ``expert`` (fresh deals: the seed range is the
    evidence's, never the collection's)."""
    net = Path(opt.out) / f"it{i}" / "policy.npz"
    n = opt.config().num_players
    common = (f"--miners expert --saboteurs expert --players {n} --workers 1 --no-beliefs "
              f"--seed {seed} --secret 5a1e0c35e71de7ce5ea5c4bd0b5e35aa")  # fmt: skip
    if opt.game == "duel":  # both colours of every deal against expert (the Duel has no table to insert into)
        common = (f"--game duel --duel-layout {opt.duel_layout} --workers 1 --no-beliefs --seed {seed} "
                  "--secret 5a1e0c35e71de7ce5ea5c4bd0b5e35aa")  # fmt: skip
        return [f"python -m experiments.tournament --agents learned:{net} expert {common} --games {games} "
                f"--out {opt.out}/eval-it{i}-learned",
                f"python -m experiments.tournament --agents search:{opt.budget},blueprint={net} expert {common} "
                f"--games {games // 2} --out {opt.out}/eval-it{i}-search"]  # fmt: skip
    if opt.game != "base":
        common = f"--game {opt.game} " + common
    return [f"python -m experiments.tournament --insert learned:{net} expert {common} --games {games} "
            f"--out {opt.out}/eval-it{i}-learned",
            f"python -m experiments.tournament --insert search:{opt.budget},blueprint={net} expert {common} --games "
            f"{games // 2} --out {opt.out}/eval-it{i}-search"]  # fmt: skip


def parse_args(argv: list[str] | None = None) -> Options:
    d = Options()
    p = argparse.ArgumentParser(prog="python -m experiments.train.exit", description=__doc__.splitlines()[0])
    p.add_argument("--game", default=d.game, help="base, sab2 or duel")
    p.add_argument("--players", type=int, default=None, help="seats per game (a count with a shipped network)")
    p.add_argument("--duel-layout", choices=DUEL_LAYOUT_NAMES, default=d.duel_layout,
                   help=f"the Duel's geometry (--game duel; default: {d.duel_layout})")  # fmt: skip
    p.add_argument("--backend", default=d.backend,
                   help="who collects the chunks: local (this process, or --workers processes) or ray (--workers "
                        "actors); the data are the same (default: local)")  # fmt: skip
    p.add_argument("--address", default=None, help="a Ray cluster's address (--backend ray; default: a local one)")
    helps = {"iterations": "iterations to reach", "decisions": "search decisions collected per iteration",
             "chunk": "decisions per chunk file (the most an interruption loses)",
             "budget": "rollouts per searched move", "num_envs": "games in lock-step per worker",
             "workers": "chunks collected at once (local processes or Ray actors)",
             "epochs": "passes over the data per fit", "lr": "Adam step size",
             "batch": "minibatch rows", "vf_coef": "weight of the value error",
             "temperature": "the temperature each network is exported at (the shipped networks': 0.3)",
             "soft_temperature": "> 0: fit softmax(the search's per-move values / T) over its candidates, not "
                                 "its one choice (T in nuggets)",
             "seed": "the run's seed", "start": "iteration 0's policy.npz ('': the shipped network)",
             "with_runs": "other runs' --out folders, comma-separated: the decisions of their complete iterations "
                          "join every fit (another Duel layout or player count needs a universal start network)",
             "out": "output folder (outside git)"}  # fmt: skip
    for name, default in asdict(d).items():
        if name in ("game", "players", "duel_layout", "backend", "address"):
            continue
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default,
                       help=f"{helps[name]} (default: {default})")  # fmt: skip
    return Options(**vars(p.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    try:
        opt = parse_args(argv)
        run = ExitRun(opt)
        run.run()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
