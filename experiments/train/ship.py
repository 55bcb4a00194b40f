"""Train, export and evaluate the shipped learned policies (issue 14): ``python -m experiments.train.ship``.

One command (re)trains every policy of ``agents/policies/`` from fixed seeds (the collected data are reproduced
exactly, and a refit from reused data gives the same weights: base 7 players, every array equal; a file written
before the ``embed`` header field differs from its refit in that field only, so its SHA-256, which keys a DAgger
round's data, does too): each :class:`Entry` below declares
its game, player count, seed and budget (learner decisions) as data; the training run is
``python -m experiments.train.selfplay`` with the arguments of :meth:`Entry.train_argv` (a league against the scripted
``heuristic``, the Duel's ``greedy``: what learned something so far, docs/selfplay.md), run in this process. The
exported ``policy.npz`` is stored as ``agents/policies/NAME.npz`` with float16 weights (half the size;
``agents.learned`` computes in float32) and ``agents/policies/manifest.json`` records, per file: game, players,
the exact training command, seed, budget (decisions, wall seconds), the commit and dirty files it was trained at,
its sha256 and, after ``--evaluate``, its evaluation.

* Resumable: an entry whose file exists with the manifest's sha256 and the same training command is skipped
  (``--force`` redoes it; ``--only base:5`` redoes one). An interrupted training run restarts from scratch (a
  resumed league run is not bit-exact: scripted opponents' memory is not checkpointed).
* ``--evaluate``: the paired ladder check of ``experiments.train.league.evaluate`` on the shipped file (fresh deals from
  seed :data:`EVAL_SEED`, far from every training seed): the learner in seat ``b % N`` of deal ``b`` among opponent
  agents, against the same deals with the opponent in that seat too; mean score difference per game with a normal
  95% interval, and per role. Opponents: base ``heuristic``, ``expert`` and ``random``; Saboteur 2 ``heuristic`` and
  ``random``; the Duel ``greedy`` and ``random``. ``--pairs`` sets the deals per opponent.

Runs go to ``--runs`` (default ``runs/ship``; progress.csv and a log per entry).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from experiments.train.ship_entries import ENTRIES, EVAL_SEED, Entry, ShipError, find_entry

if TYPE_CHECKING:  # training and evaluation need torch (the train extra); --table and --to-half do not
    import torch

ROOT = Path(__file__).resolve().parents[2]
POLICY_DIR = ROOT / "agents" / "policies"
MANIFEST = POLICY_DIR / "manifest.json"
MAX_TOTAL_BYTES = 10 << 20
# Files whose state decides what a training run computes (the commit plus these, if modified, are recorded).
TRAINING_CODE = ("saboteur_env", "agents", "experiments/train/selfplay", "experiments/train/league.py",
                 "experiments/train/imitate.py", "experiments/train/imitate_data.py")  # fmt: skip


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    if not path.exists():
        return {"format": "saboteur-env/shipped-policies", "version": 1, "policies": {}}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ShipError(f"{path} is not valid JSON ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("policies"), dict):
        raise ShipError(f"{path} has no 'policies' mapping")
    return data


def write_manifest(data: dict[str, Any], path: Path = MANIFEST) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def git_state(commit: str = "") -> dict[str, Any]:
    """HEAD and the modified training-relevant files (the run is only as reproducible as what it ran).

    ``commit``: the tree is an unmodified ``git archive`` of that commit (no .git to ask)."""
    if commit:
        return {"commit": commit, "dirty": [], "tree": "git archive of the commit"}

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return ""

    dirty = [ln[3:] for ln in git("status", "--porcelain", "--", *TRAINING_CODE).splitlines() if ln.strip()]
    return {"commit": git("rev-parse", "HEAD").strip() or "unknown", "dirty": sorted(dirty)}


def command_text(entry: Entry, out: Path | str) -> str:
    """The commands an entry runs, joined by ``&&``: the imitation warm start, then PPO or expert iteration (either
    may be absent)."""
    parts = []
    if entry.imitate:
        argv = entry.imitate_argv(Path(out) / "imitate")
        module = "experiments.train.universal" if entry.universal else "experiments.train.imitate"
        parts.append(shlex.join(["python", "-m", module, *argv]))
    if entry.dagger_argv(out):  # the student file is the imitation's policy as shipped (float16)
        im = Path(out) / "imitate"
        half = ["python", "-m", "experiments.train.ship", "--to-half", str(im / "policy.npz"),
                str(im / "policy-f16.npz")]  # fmt: skip
        parts += [shlex.join(half), shlex.join(["python", "-m", "experiments.train.imitate", *entry.dagger_argv(out)])]
    # after the warm start (or the file shipped at `start`): expert iteration or PPO, each from init_file
    then = (["python", "-m", "experiments.train.exit", *entry.exit_argv(out)] if entry.exit else
            ["python", "-m", "experiments.train.selfplay", *entry.train_argv(out)])  # fmt: skip
    if entry.start:
        get = ["python", "-m", "experiments.train.ship", "--shipped-at", entry.start, entry.name,
               str(entry.init_file(out))]  # fmt: skip
        return " && ".join([shlex.join(get), shlex.join(then)])
    if entry.exit or entry.train_argv(out):
        half = ["python", "-m", "experiments.train.ship", "--to-half", str(entry.warm_start(out)),
                str(entry.init_file(out))]  # fmt: skip
        parts += [shlex.join(half), shlex.join(then)]
    return " && ".join(parts)


def shipped_at(commit: str, name: str, dst: Path) -> dict[str, Any]:
    """Write ``agents/policies/NAME.npz`` as committed at ``commit`` to ``dst`` and return that commit's manifest
    record of it; the file's SHA-256 must be the record's. A ShipError names what is missing."""
    rel = "agents/policies"  # where a commit ships its files, whatever --policies names now

    def show(path: str) -> bytes:
        try:
            return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True,
                                  check=True).stdout  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as e:
            err = getattr(e, "stderr", b"") or b""
            raise ShipError(f"git show {commit}:{path} failed ({err.decode(errors='replace').strip() or e}); "
                            "--shipped-at needs a git checkout holding that commit") from e  # fmt: skip

    try:
        rec = json.loads(show(f"{rel}/manifest.json"))["policies"][name]
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise ShipError(f"the manifest at {commit} has no record of {name!r}") from e
    data = show(f"{rel}/{name}.npz")
    if hashlib.sha256(data).hexdigest() != rec.get("sha256"):
        raise ShipError(f"{name}.npz at {commit} does not match that commit's manifest record (sha256)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(dst)
    return dict(rec)


def to_half(src: Path, dst: Path) -> None:
    """Store the exported weights as float16 (the loader computes in float32); the header is kept as it is."""
    from agents.learned import NumpyPolicy

    NumpyPolicy(src)  # the loader's checks first (a regular file; names, sizes, shapes), then np.load reads it whole
    with np.load(src, allow_pickle=False) as data:
        arrays: dict[str, NDArray[Any]] = {}
        for k in data.files:
            a = np.asarray(data[k])
            arrays[k] = a.astype(np.float16) if a.dtype == np.float32 and k != "scale" else a
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    with tmp.open("wb") as fh:
        np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
    tmp.replace(dst)


def settings(argv: list[str]) -> list[str]:
    """A training command without its output folder and the warm start's path in it (which do not change what is
    computed: the warm start is fixed by its own command)."""
    out = list(argv)
    for flag in ("--out", "--init", "--student", "--extra", "--start"):
        if flag in out:
            i = out.index(flag)
            del out[i : i + 2]
    return out


def is_done(entry: Entry, manifest: dict[str, Any]) -> bool:
    """The entry's file exists with the manifest's sha256, trained with the entry's current settings."""
    rec = manifest["policies"].get(entry.name)
    path = POLICY_DIR / f"{entry.name}.npz"
    if not isinstance(rec, dict) or not path.exists() or rec.get("sha256") != sha256(path):
        return False
    t = rec.get("training", {})
    same_ppo = settings(t.get("argv", [])) == settings(entry.train_argv(""))
    same_dagger = settings(t.get("dagger_argv", [])) == settings(entry.dagger_argv(""))
    same_start = (t.get("start") or {}).get("commit", "") == entry.start
    same_imitation = settings(t.get("imitate_argv", [])) == settings(entry.imitate_argv(""))
    same_exit = settings(t.get("exit_argv", [])) == settings(entry.exit_argv(""))
    return same_ppo and same_dagger and same_start and same_imitation and same_exit


def train(entry: Entry, runs: Path, commit: str = "") -> dict[str, Any]:
    """Train ``entry`` from scratch in this process, export it as float16, return its manifest record."""
    from experiments.train import imitate
    from experiments.train.selfplay.args import parse_args
    from experiments.train.selfplay.trainer import Trainer

    out = runs / entry.name
    for stale in ("checkpoint.pt", "policy.npz", "progress.csv"):  # from scratch: deterministic
        (out / stale).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    argv, im_argv, dg_argv = entry.train_argv(out), entry.imitate_argv(out / "imitate"), entry.dagger_argv(out)
    state = git_state(commit)
    print(f"== {entry.name}: {command_text(entry, out)}", file=sys.stderr, flush=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.perf_counter()
    decisions: int = 0
    im_meta: dict[str, Any] | None = None
    dg_meta: dict[str, Any] | None = None
    start: dict[str, Any] | None = None
    if entry.start:  # the file shipped at that commit is PPO's --init; its stages are its record's
        shipped = shipped_at(entry.start, entry.name, entry.init_file(out))
        st = shipped["training"]
        im_argv, dg_argv = st.get("imitate_argv") or [], st.get("dagger_argv") or []
        declared = (settings(entry.imitate_argv("")), settings(entry.dagger_argv("")))
        if (settings(im_argv), settings(dg_argv)) != declared:
            raise ShipError(f"{entry.name}: the file shipped at {entry.start} was trained with other imitation "
                            "settings than the entry declares (imitate, dagger, epochs, ...)")  # fmt: skip
        if st.get("decisions") or st.get("exit_argv"):
            raise ShipError(f"{entry.name}: the file shipped at {entry.start} already had a PPO or expert "
                            "iteration stage")  # fmt: skip
        start = {"commit": entry.start, "sha256": shipped["sha256"], "training": st}
    elif im_argv and entry.universal:  # every variant's data.npz of an earlier run with the same options is reused
        from experiments.train import universal

        um = universal.run(universal.parse_args(im_argv))
        im_meta = {"decisions": um["decisions"], "games": sum(v["games"] for v in um["variants"].values()),
                   "collect_s": sum(v["collect_s"] or 0.0 for v in um["variants"].values()), "fit_s": um["fit_s"],
                   "data_reused": all(v["reused"] for v in um["variants"].values()), "final": um["final"],
                   "per_variant": um["held_out_agreement"]}  # fmt: skip
        result = out / "imitate" / "policy.npz"
    elif im_argv:  # data.npz of an earlier run with the same collection options is reused
        im_meta = imitate.run(imitate.parse_args(im_argv))
        result = out / "imitate" / "policy.npz"
    if dg_argv and not start:  # one DAgger round: the imitation's policy as shipped plays, the teacher labels
        to_half(result, out / "imitate" / "policy-f16.npz")
        dg_meta = imitate.run(imitate.parse_args(dg_argv))
        result = out / "dagger" / "policy.npz"
    t1 = time.perf_counter()
    ex_meta: dict[str, Any] | None = None
    if entry.exit:  # expert iteration from the warm start as it would be shipped (or the shipped start file)
        from experiments.train import exit as exit_run

        if not start:
            to_half(result, entry.init_file(out))
        try:
            run = exit_run.ExitRun(exit_run.parse_args(entry.exit_argv(out)))
            run.run()
        except ValueError as e:
            raise ShipError(f"{entry.name}: expert iteration failed ({e})") from e
        result = entry.exit_result(out)
        ex_meta = json.loads((result.parent / "meta.json").read_text())
        ex_meta["wall_s"] = round(time.perf_counter() - t1, 1)
        # the collection's worker seconds, also where this run reused an earlier run's chunks (then not in wall_s)
        per_it = [run.collect_seconds(i) for i in range(1, entry.exit_iterations() + 1)]
        ex_meta["collect_s"] = None if None in per_it else round(sum(s for s in per_it if s is not None), 1)
        ex_meta["data_reused"] = run.collected_here == 0
    if argv:
        if im_argv and not start:
            to_half(result, result.with_name("policy-f16.npz"))  # the --init of train_argv
        trainer = Trainer(parse_args(argv))
        trainer.train()
        decisions, result = int(trainer.decisions), out / "policy.npz"
    wall = time.perf_counter() - t0
    if start:  # the stages of the start file, as its record has them
        im_rec, dg_rec = start["training"].get("imitate"), start["training"].get("dagger")
    else:
        im_rec = None if im_meta is None else {
            "teacher": entry.teacher, "partners": entry.partners, "decisions": im_meta["decisions"],
            "games": im_meta["games"], "collect_s": im_meta["collect_s"], "fit_s": im_meta["fit_s"],
            "data_reused": im_meta["data_reused"], "held_out_agreement": round(im_meta["final"]["val_agree"], 4),
            "wall_s": round(t1 - t0, 1)}  # fmt: skip
        if im_rec is not None and im_meta is not None and "per_variant" in im_meta:
            im_rec["held_out_agreement_per_variant"] = im_meta["per_variant"]
        dg_rec = None if dg_meta is None else {
            "decisions": dg_meta["collected"], "fitted": dg_meta["decisions"], "student_share": entry.dagger_share,
            "collect_s": dg_meta["collect_s"], "fit_s": dg_meta["fit_s"], "data_reused": dg_meta["data_reused"],
            "held_out_agreement": round(dg_meta["final"]["val_agree"], 4)}  # fmt: skip
    ex_rec: dict[str, Any] = {}
    if ex_meta is not None:
        keep = ("decisions", "games", "fit_s", "final", "commit", "wall_s", "collect_s", "data_reused")
        ex_rec = {"exit_argv": entry.exit_argv(out), "exit": {k: ex_meta.get(k) for k in keep}}
    dst = POLICY_DIR / f"{entry.name}.npz"
    to_half(result, dst)
    from agents.universal import variant_configs

    counts = sorted({c.num_players for c in variant_configs(entry.game)}) if entry.universal else entry.players
    return {
        "file": dst.name,
        "game": entry.game,
        "players": counts,
        **({"universal": True} if entry.universal else {}),
        "config": {"game": entry.game} if entry.universal else {"game": entry.game, "num_players": entry.players},
        "sha256": sha256(dst),
        "bytes": dst.stat().st_size,
        "training": {
            "command": command_text(entry, out),
            "argv": argv,
            "reproduce": f"python -m experiments.train.ship --only {entry.key} --force",
            "seed": entry.seed,
            "imitate_argv": im_argv,
            "imitate": im_rec,
            "dagger_argv": dg_argv,
            "dagger": dg_rec,
            **ex_rec,
            "decisions": decisions,
            "budget_decisions": entry.decisions,
            "wall_s": round(wall, 1),
            "started_utc": started,
            "hidden": entry.hidden,
            "embed": entry.embed,
            "role_heads": entry.role_heads,
            "league_agents": entry.league_agents,
            "nice": _niceness(),
            **({"start": start} if start else {}),
            **state,
        },
    }


def _niceness() -> int:
    import os

    return os.nice(0)


class _NumpyLegal:
    """``experiments.train.league.PolicyLike`` over a shipped numpy policy: evaluation plays the file users get."""

    def __init__(self, path: Path, config: Any = None) -> None:
        from agents.learned import NumpyPolicy

        self.policy = NumpyPolicy(path) if config is None else NumpyPolicy(path).for_config(config)

    def legal(self, obs: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        from experiments.train.selfplay.policy import segment_log_softmax

        logits, value = self.policy.forward(obs.numpy())
        flat = torch.from_numpy(np.ascontiguousarray(logits[rows.numpy(), cols.numpy()]))
        return segment_log_softmax(flat, rows, obs.shape[0]), torch.from_numpy(value)


def evaluate_entry(entry: Entry, pairs: int | None = None, opponents: tuple[str, ...] | None = None,
                   done: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The paired check of the shipped file against each opponent (fresh seeds): ``{opponent: result}``.

    ``pairs`` overrides the entry's deals per opponent; a result in ``done`` for the same file, deals and seed is
    kept (resumable)."""
    from saboteur_env import GameConfig

    if entry.universal:  # every variant of the game: {variant: {opponent: result}}
        from agents.universal import variant_configs, variant_name

        out: dict[str, Any] = {}
        for c in variant_configs(entry.game):
            v = variant_name(c)
            print(f"   {entry.name} at {v}:", file=sys.stderr, flush=True)
            out[v] = _evaluate_config(entry, c, pairs, opponents, (done or {}).get(v))
        return out
    return _evaluate_config(entry, GameConfig(game=entry.game, num_players=entry.players), pairs, opponents, done)


def _evaluate_config(entry: Entry, config: Any, pairs: int | None, opponents: tuple[str, ...] | None,
                     done: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    from agents.learned import role_names, role_slice
    from experiments.train.league import evaluate

    path = POLICY_DIR / f"{entry.name}.npz"
    model = _NumpyLegal(path, config)
    model.policy.check_config(config)
    digest = sha256(path)
    names = role_names(config)
    sl = role_slice(config)

    def role_of(obs: NDArray[np.float32]) -> NDArray[np.int64]:
        if sl is None:
            return np.zeros(obs.shape[0], dtype=np.int64)
        return np.asarray(obs[:, sl].argmax(axis=1), dtype=np.int64)

    out: dict[str, Any] = {}
    plan = entry.eval_pairs()
    for opp in opponents or tuple(plan):
        n = pairs or plan.get(opp, 100)
        old = (done or {}).get(opp)
        if isinstance(old, dict) and (old.get("pairs"), old.get("seed"), old.get("sha256")) == (n, EVAL_SEED, digest):
            out[opp] = old
            continue
        t0 = time.perf_counter()
        # A file with belief features follows its game: one agent per deal instead of the batched policy.
        learner = f"learned:{path}" if model.policy.features else model
        r = evaluate(config, learner, opp, n, EVAL_SEED, names, role_of)
        res: dict[str, Any] = {"pairs": n, "seed": EVAL_SEED, "sha256": digest,
                               "wall_s": round(time.perf_counter() - t0, 1)}  # fmt: skip
        for k, v in r.items():
            if k != "eval_games":
                res[k.removeprefix("eval_")] = None if v != v else round(float(v), 4)  # NaN -> null (JSON)
        out[opp] = res
        print(f"   {entry.name} vs {opp}: {res['diff']:+.3f} [{res['lo']:+.3f}, {res['hi']:+.3f}] over {n} "
              f"pairs ({res['wall_s']} s)", file=sys.stderr, flush=True)  # fmt: skip
    return out


def table(manifest: dict[str, Any]) -> str:
    """The docs table of the shipped policies, from the manifest."""

    def cell(ev: dict[str, Any], opp: str) -> str:
        r = ev.get(opp)
        if not isinstance(r, dict):
            return "-"
        return f"{r['diff']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}] ({r['pairs']})"

    lines = ["| game | players | trained by | decisions | wall time | vs random | vs heuristic / greedy | vs expert |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for e in sorted(ENTRIES, key=lambda e: (("base", "sab2", "duel").index(e.game), e.universal, e.players)):
        rec = manifest["policies"].get(e.name)
        if rec is None:
            continue
        t, ev = rec["training"], rec.get("evaluation", {})
        best = "greedy" if e.game == "duel" else "heuristic"
        if e.universal:  # one row per variant; the training (decisions, wall time) is the whole file's
            im = t["imitate"]
            agree = im.get("held_out_agreement_per_variant", {})
            wide = f"{t['hidden']} wide" + (f", heads on {t['embed']}" if t.get("embed") else "")
            for i, (v, evv) in enumerate(sorted(ev.items(), key=lambda kv: -len(kv[0]) if not kv[0].isdigit()
                                                else int(kv[0]))):  # fmt: skip
                how = f"universal imitation, {wide} (agreement {agree.get(v, float('nan')):.3f})" + _exit_text(t, e)
                spent = (f"{im['decisions'] + _exit_decisions(t):,} | {_total_wall(t) / 60:.1f} min" if i == 0
                         else "(same file) | -")  # fmt: skip
                lines.append(f"| {e.game} | {v} | {how} | {spent} | {cell(evv, 'random')} | {cell(evv, best)} | "
                             f"{cell(evv, 'expert') if e.game == 'base' else '-'} |")  # fmt: skip
            continue
        expert = cell(ev, "expert") if e.game == "base" else "-"
        im = t.get("imitate")
        if im:  # imitation (then PPO, if the entry has a budget); the wall time includes the collection
            wide = f"{t['hidden']} wide" + (f", heads on {t['embed']}" if t.get("embed") else "")
            argv = t.get("imitate_argv") or []
            if "--features" in argv:  # the belief features the network reads besides the observation
                wide += f", {argv[argv.index('--features') + 1]} features"
            dg = t.get("dagger")
            if dg:  # agreement over the union of both rounds' data
                how = f"imitation + DAgger {dg['decisions']:,}, {wide} (agreement {dg['held_out_agreement']:.3f})"
            else:
                how = f"imitation, {wide} (agreement {im['held_out_agreement']:.3f})"
            if t["decisions"]:  # PPO after the imitation; "--train-role R": of that role's decisions only
                role = t["argv"][t["argv"].index("--train-role") + 1] if "--train-role" in t["argv"] else ""
                head = " (heads only)" if "--freeze-trunk" in t["argv"] else ""
                how += f" + PPO {t['decisions']:,}" + (f" as {role}{head}" if role else head)
            how += _exit_text(t, e)
            decisions = im["decisions"] + (dg["decisions"] if dg else 0) + t["decisions"] + _exit_decisions(t)
            wall = _total_wall(t)
        else:
            how, decisions, wall = f"PPO league, {t['hidden']} wide", t["decisions"], t["wall_s"]
        lines.append(f"| {e.game} | {e.players} | {how} | {decisions:,} | {wall / 60:.1f} min | "
                     f"{cell(ev, 'random')} | {cell(ev, best)} | {expert} |")  # fmt: skip
    recs = list(manifest["policies"].values())
    total = sum(_total_wall(r["training"]) for r in recs)  # a start file's training counts with what continued it
    size = sum(r["bytes"] for r in recs)
    lines.append(f"\n{len(recs)} policies, {size / 2**20:.2f} MiB, {total / 60:.1f} min of training")
    starts = [time.mktime(time.strptime(r["training"]["started_utc"], "%Y-%m-%dT%H:%M:%SZ")) for r in recs]
    if starts:  # wall time of the whole job: the first start to the last end (restarts and idle gaps included)
        end = max(s + r["training"]["wall_s"] for s, r in zip(starts, recs, strict=True))
        lines[-1] += f" ({(end - min(starts)) / 60:.1f} min from the first start to the last end)"
    return "\n".join(lines) + "."


def _exit_decisions(t: dict[str, Any]) -> int:
    """The searched decisions of a record's expert iteration (its last fit's data: every iteration's)."""
    return int((t.get("exit") or {}).get("decisions") or 0)


def _exit_text(t: dict[str, Any], e: Entry) -> str:
    """`` + ExIt N iterations, D searched`` (with the held-out agreement with the search) or ''."""
    ex = t.get("exit")
    if not ex:
        return ""
    n = e.exit_iterations()
    agree = (ex.get("final") or {}).get("val_agree", float("nan"))
    return f" + ExIt {n} iterations, {ex['decisions']:,} searched (agreement {agree:.3f})"


def _total_wall(t: dict[str, Any]) -> float:
    """A record's training wall seconds with its earlier stages: collections of reused data made by an earlier
    run (imitation, DAgger, expert iteration: these count their workers' seconds) and the whole training of a start
    file (``start``: PPO or expert iteration continued a file shipped before)."""
    im, dg, ex = t.get("imitate") or {}, t.get("dagger") or {}, t.get("exit") or {}
    wall = float(t["wall_s"]) + ((ex.get("collect_s") or 0.0) if ex.get("data_reused") else 0.0)
    st = t.get("start")
    if st:  # the imitation records are the start file's own: counted once, through it
        return wall + _total_wall(st["training"])
    wall += (im.get("collect_s") or 0.0) if im.get("data_reused") else 0.0
    return wall + ((dg.get("collect_s") or 0.0) if dg.get("data_reused") else 0.0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.train.ship", description=__doc__.splitlines()[0])
    keys = ", ".join(e.key for e in ENTRIES)
    p.add_argument("--only", action="append", default=[], metavar="GAME:PLAYERS",
                   help=f"redo only these entries (repeatable); valid: {keys}")  # fmt: skip
    p.add_argument("--force", action="store_true", help="retrain entries that are already done")
    p.add_argument("--no-train", action="store_true", help="train nothing (with --evaluate: evaluate what exists)")
    p.add_argument("--evaluate", action="store_true", help="run the paired evaluation into the manifest")
    p.add_argument("--pairs", type=int, default=None, help="paired deals per opponent in --evaluate (default: "
                   "per entry, EVAL_PAIRS / DEFAULT_PAIRS)")  # fmt: skip
    p.add_argument("--table", action="store_true", help="print the docs table of the manifest and exit")
    p.add_argument("--opponents", default="", help="comma-separated evaluation opponents (default: per game)")
    p.add_argument("--policies", default=str(POLICY_DIR), help="where the .npz files and manifest.json go")
    p.add_argument("--commit", default="", help="record this commit (the tree is a git archive of it, no .git)")
    p.add_argument("--to-half", nargs=2, metavar=("SRC", "DST"), help="only store policy SRC as float16 in DST")
    p.add_argument("--shipped-at", nargs=3, metavar=("COMMIT", "NAME", "DST"),
                   help="only write policy NAME (e.g. base-4p) as shipped at COMMIT to DST (checked against that "
                   "commit's manifest)")  # fmt: skip
    p.add_argument("--runs", default="runs/ship", help="folder of the training runs (default runs/ship)")
    return p


def main(argv: list[str] | None = None) -> int:
    global POLICY_DIR, MANIFEST  # one folder per invocation; the default is the package's
    ns = build_parser().parse_args(argv)
    POLICY_DIR, MANIFEST = Path(ns.policies), Path(ns.policies) / "manifest.json"
    try:
        selected = [find_entry(k) for k in ns.only] if ns.only else list(ENTRIES)
        if ns.pairs is not None and not 1 <= ns.pairs <= 100_000:
            raise ShipError(f"--pairs {ns.pairs} is out of range; valid: 1..100000")
        manifest = read_manifest()
    except ShipError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if ns.table:
        print(table(manifest))
        return 0
    if ns.to_half:  # one step of an entry's commands (the DAgger round's student is the shipped form)
        try:
            to_half(Path(ns.to_half[0]), Path(ns.to_half[1]))
        except (OSError, ValueError) as e:
            print(f"error: --to-half {ns.to_half[0]}: {e}", file=sys.stderr)
            return 2
        return 0
    if ns.shipped_at:  # the first step of an entry with a start commit
        try:
            shipped_at(ns.shipped_at[0], ns.shipped_at[1], Path(ns.shipped_at[2]))
        except (OSError, ShipError) as e:
            print(f"error: --shipped-at: {e}", file=sys.stderr)
            return 2
        return 0
    if not ns.no_train or ns.evaluate:  # training and the paired evaluation run torch (the trainer, the sampler)
        from experiments._optional import require

        require("torch", "train", "training or evaluating shipped policies")
    runs = Path(ns.runs)
    opponents = tuple(o.strip() for o in ns.opponents.split(",") if o.strip()) or None
    for entry in selected:
        if not ns.no_train and (ns.force or ns.only or not is_done(entry, manifest)):
            log = runs / entry.name / "train.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            try:
                with log.open("w") as fh, contextlib.redirect_stderr(_Tee(fh, sys.stderr)):
                    rec = train(entry, runs, ns.commit)
            except ShipError as e:  # e.g. a start commit that this tree (a git archive?) cannot show
                print(f"error: {e}", file=sys.stderr)
                return 2
            manifest["policies"][entry.name] = rec
            write_manifest(manifest)
        elif not ns.no_train:
            print(f"== {entry.name}: done ({MANIFEST.name}); --force to retrain", file=sys.stderr)
        if ns.evaluate:
            rec = manifest["policies"].get(entry.name)
            if rec is None:
                print(f"== {entry.name}: not trained, no evaluation", file=sys.stderr)
                continue
            old = rec.get("evaluation", {})
            rec["evaluation"] = {**old, **evaluate_entry(entry, ns.pairs, opponents, None if ns.force else old)}
            write_manifest(manifest)
    total = sum(p.stat().st_size for p in POLICY_DIR.glob("*.npz"))
    print(f"shipped policies: {total / 2**20:.2f} MiB in all (limit {MAX_TOTAL_BYTES >> 20} MiB)", file=sys.stderr)
    return 0


class _Tee(io.TextIOBase):
    def __init__(self, *streams: Any) -> None:
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
            st.flush()
        return len(s)


if __name__ == "__main__":
    raise SystemExit(main())
