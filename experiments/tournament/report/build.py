"""Tables and plots from tournament logs alone (no re-play).

    python -m experiments.tournament.report runs/x            # writes runs/x/report/{summary.md, *.csv, *.png}
    python -m experiments.tournament.report runs/a runs/b --out runs/ab   # several logs read as one (each game once)

The log is streamed through :mod:`experiments.tournament.logs` (each complete game once; duplicates, incomplete games
and a
torn tail are skipped with a warning; damage is an error naming the file and record), and ``summary.md`` says how
many games were read, by which versions, and what was skipped.

Tables (CSV and Markdown; method in docs/evaluation.md). Every interval is a 95% percentile bootstrap that
resamples whole games (paired claims: the seeds two cells share), with a fixed seed:

* P0 provenance: games per (game, rules version, package version, commit, dirty tree). Logs that hold one game's
  games under two rules versions are refused (:class:`MixedRulesError`).
* T1 balance per cell: miner round win rate, share of rounds the gold was reached, decisions per round.
* T2 miner-policy x saboteur-policy matrix of miner win rates, per player count.
* Claims C1-C5: paired differences between cells over the same seeds (one value per game), one-sided paired t
  p-values and Holm's adjustment over the rows printed.
* T5 belief quality per (N, cell, observer, fraction of the round): Brier, log-loss, AUROC, mean P(true role),
  top-k hit rate (tied seats share the places left).
* T6 deception per cell: posterior mass on the saboteurs, top-k unsuspected share (split ties), Kaplan-Meier turns
  to sustained suspicion (never-suspected saboteurs censored), miners' friendly fire, dead ends by role.
* Ratings per (agent, role) with openskill's Plackett-Luce model (oracles excluded), bootstrap re-ratings.
* S1/S2 (Saboteur 2) and D1 (duel) when the logs hold those games.

Declared oracles are marked ``NAME*`` in every table, with a footnote.

Plots (PNG): miner win rate vs N with 95% bands, T2 heatmaps, belief trajectories per cell (mean probability given
to the true roles over the round), Kaplan-Meier curves of "no sustained suspicion yet".
"""

from __future__ import annotations

import argparse
import csv
import math
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from experiments._optional import require
from experiments.tournament.duel import DuelTable
from experiments.tournament.logs.format import LogError, LogVersionError, LogWarning, log_path
from experiments.tournament.logs.read import LogReader, cli_warnings
from experiments.tournament.report.calibration import reliability_plot, table_calibration
from experiments.tournament.report.metrics import (
    _group,
    _save,
    compact,
)
from experiments.tournament.report.tables import (
    RATING_BOOT,
    table_balance,
    table_beliefs,
    table_claims,
    table_deception,
    table_ladder,
    table_matrix,
    table_ratings,
    table_t2,
)
from experiments.tournament.rounds import ORACLE_NOTE, oracle_name
from experiments.tournament.sab2 import Sab2Tables
from experiments.tournament.stats import (
    BOOT,
    kaplan_meier,
)

# ---- output ----------------------------------------------------------------------------------------------------
AGENT_COLUMNS = ("miners", "saboteurs", "agent", "agent_a", "agent_b")


def flag_oracles(rows: list[dict], game: str = "base") -> tuple[list[dict], bool]:
    """Rows with every declared oracle's name marked ``NAME*`` (agent columns; ``agent_role`` and ``agent:NAME``
    labels too); returns them and whether any was marked (the table then gets :data:`ORACLE_NOTE`)."""
    flagged = False

    def mark(v: object) -> object:
        nonlocal flagged
        if not isinstance(v, str):
            return v
        base, sep, rest = v.partition(" +")  # "MINERS +INSERT"
        names = [base, rest] if sep else [base]
        out = [f"{x}*" if oracle_name(x, game) else x for x in names]
        flagged |= out != names
        return " +".join(out)

    out = []
    for row in rows:
        new = dict(row)
        for col in AGENT_COLUMNS:
            if col in new:
                new[col] = mark(new[col])
        if isinstance(new.get("observer"), str) and new["observer"].startswith("agent:"):
            new["observer"] = "agent:" + str(mark(new["observer"][6:]))
        if isinstance(new.get("agent_role"), str):
            name, _, role = new["agent_role"].rpartition("/")
            new["agent_role"] = f"{mark(name)}/{role}"
        out.append(new)
    return out, flagged


def write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def markdown(rows: list[dict]) -> str:
    if not rows:
        return "(no data)\n"
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def plots(out: Path, balance: list[dict], beliefs_rows: list[dict], rounds: list[dict], survival: dict) -> list[str]:
    matplotlib = require("matplotlib", "eval", "experiments.tournament.report (plots; --no-plots skips them)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    # Miner win rate vs N with CI bands, per cell.
    fig, ax = plt.subplots(figsize=(6, 4))
    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in balance:
        by_cell[(row["miners"], row["saboteurs"])].append(row)
    for (m, s), rows in sorted(by_cell.items()):
        rows.sort(key=lambda x: x["players"])
        n = [x["players"] for x in rows]
        ax.plot(n, [x["miner_win"] for x in rows], marker="o", label=f"{m} vs {s}")
        ax.fill_between(n, [x["miner_win_lo"] for x in rows], [x["miner_win_hi"] for x in rows], alpha=0.2)
    written.append(_save(fig, ax, out / "win_rate_vs_players.png", "players", "miner win rate (95% CI)", (0, 1)))
    # T2 heatmaps.
    for n, rows in sorted(table_matrix(balance).items()):
        miners = sorted({x["miners"] for x in rows})
        sabs = sorted({x["saboteurs"] for x in rows})
        grid = np.full((len(miners), len(sabs)), np.nan)
        for x in rows:
            grid[miners.index(x["miners"]), sabs.index(x["saboteurs"])] = x["miner_win"]
        fig, ax = plt.subplots(figsize=(1.5 + 1.2 * len(sabs), 1 + 0.6 * len(miners)))
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(sabs)), sabs)
        ax.set_yticks(range(len(miners)), miners)
        for i in range(len(miners)):
            for j in range(len(sabs)):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xlabel("saboteurs")
        ax.set_ylabel("miners")
        ax.set_title(f"miner win rate, {n} players")
        fig.colorbar(im)
        fig.tight_layout()
        fig.savefig(out / f"matrix_{n}p.png", dpi=100)
        plt.close(fig)
        written.append(f"matrix_{n}p.png")
    # Belief trajectories: mean probability of the true roles over the round, per cell.
    fig, ax = plt.subplots(figsize=(6, 4))
    for (n, m, sab, obs), rows in sorted(_group(beliefs_rows, ("players", "miners", "saboteurs", "observer")).items()):
        if obs.startswith("agent:"):
            continue  # observers only; agents' own beliefs are in the T5 table
        rows.sort(key=lambda x: x["round_fraction"])
        fractions = [x["round_fraction"] for x in rows]
        ax.plot(fractions, [x["p_true_roles"] for x in rows], marker="o", label=f"{obs}, {m}/{sab}, {n}p")
    written.append(_save(fig, ax, out / "belief_trajectories.png", "fraction of the round", "mean P(true role)"))
    # Survival of "saboteur not yet under sustained suspicion" (Kaplan-Meier; censored at the round end).
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, items in sorted(survival.items()):
        if not items:
            continue
        t, e = zip(*items, strict=True)
        times, surv = kaplan_meier(np.array(t), np.array(e))
        ax.step([0, *times.tolist()], [1.0, *surv.tolist()], where="post", label=f"{key[1]} vs {key[2]}, {key[0]}p")
    written.append(_save(fig, ax, out / "survival_unsuspected.png", "saboteur's own turns",
                         "P(no sustained suspicion yet)", (0, 1)))  # fmt: skip
    return written


class MixedRulesError(LogVersionError):
    """The logs given to one report hold games of one game under two rules versions (never pooled)."""


def _provenance_key(h: dict) -> tuple:
    unknown = "not recorded"
    return (h.get("game", "base"), h.get("rules_version") or unknown, h.get("package_version") or unknown,
            h.get("commit") or unknown, unknown if h.get("dirty") is None else bool(h["dirty"]))  # fmt: skip


def table_provenance(seen: dict[tuple, list]) -> list[dict]:
    """P0: games per (game, rules version, package version, commit, dirty tree)."""
    return [{"game": g, "rules_version": rules, "package_version": package, "commit": commit, "dirty": dirty,
             "games": count}
            for (g, rules, package, commit, dirty), (count, _) in sorted(seen.items(), key=str)]  # fmt: skip


def check_rules_versions(seen: dict[tuple, list]) -> None:
    """Refuse to pool one game's results over rules versions (:class:`MixedRulesError` naming them and a file
    holding each)."""
    by_game: dict[str, dict[str, tuple[int, Path]]] = defaultdict(dict)
    for (game, rules, *_), (count, first) in seen.items():
        total, path = by_game[game].get(rules, (0, first))
        by_game[game][rules] = (total + count, path)
    for game, versions in sorted(by_game.items()):
        if len(versions) > 1:
            listed = "; ".join(f"rules {v} ({n} games, e.g. in {f})" for v, (n, f) in sorted(versions.items()))
            raise MixedRulesError(next(iter(versions.values()))[1], f"the logs mix {game} games of different rules "
                                  f"versions: {listed}. Tables never pool rules versions: report each version's "
                                  "logs separately")  # fmt: skip


def build_report(
    log: Path | list[Path], out: Path | None = None, with_plots: bool = True, boot: int = BOOT,
    rating_boot: int = RATING_BOOT, calibration: bool = False, policy_samples: int = 0,
) -> dict[str, list[dict]]:
    """Compute every table (and the plots) from the log(s) at ``log``; returns the tables.

    The log is streamed (:class:`experiments.tournament.logs.read.LogReader`: every complete game once, duplicates and a
    torn tail
    skipped with a warning, damage a ``LogError``). Base-game rounds are kept in compact form (header, end, four
    belief snapshots and a few per-round statistics) for T1-T6 and the ratings; duel and Saboteur 2 rounds only
    update per-game aggregates: the head-to-head table D1 and the tables S1/S2. P0 lists which code wrote the
    games; one game's games under two rules versions are refused (:class:`MixedRulesError`). ``boot``: resamples
    behind each interval (the seed is fixed: the same logs give the same report). ``calibration`` adds T7 (it
    re-plays every base game once more to fit and score the observers: :func:`table_calibration`);
    ``policy_samples`` > 0 adds the policy-aware observer to it.
    """
    logs = [Path(log)] if isinstance(log, str | Path) else [Path(p) for p in log]
    reader = LogReader(logs)
    rounds: list[dict] = []
    duels, sab2 = DuelTable(), Sab2Tables()
    counts = {"duel": 0, "sab2": 0}
    seen: dict[tuple, list] = {}
    for path, _, records in reader.numbered_games():
        slot = seen.setdefault(_provenance_key(records[0]["header"]), [0, path])
        slot[0] += 1
        for r in records:
            game = r["header"].get("game")
            if game == "duel":
                duels.add(r)
            elif game == "sab2":
                sab2.add(r)
            else:
                rounds.append(compact(r))
            if game in counts:
                counts[game] += 1
    check_rules_versions(seen)
    provenance = table_provenance(seen)
    if len({(row["package_version"], row["commit"], row["dirty"]) for row in provenance}) > 1:
        warnings.warn(f"{', '.join(map(str, logs))}: games written by different code (see P0 in the report); the "
                      "rules version is the same", LogWarning, stacklevel=2)  # fmt: skip
    log = logs[0]
    out = out or (log if log.is_dir() else log.parent) / "report"
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, list[dict]] = {"P0_provenance": provenance}
    survival: dict = {}
    if rounds:
        balance = table_balance(rounds, boot)
        deception, survival = table_deception(rounds, boot)
        tables.update({
            "T1_balance": balance,
            "T2_matrix": table_t2(balance),
            "claims": table_claims(rounds, boot),
            "T5_beliefs": table_beliefs(rounds, boot),
            "T6_deception": deception,
            "ratings": table_ratings(rounds, boot=rating_boot),
        })  # fmt: skip
        if any("insert" in r["header"] for r in rounds):
            tables["ladder"] = table_ladder(rounds, boot=rating_boot)
    reliability: list[dict] = []
    if calibration and rounds:
        tables["T7_calibration"], reliability = table_calibration(logs, boot, policy_samples)
        tables["T7_reliability"] = reliability
    if counts["duel"]:
        tables["D1_head_to_head"] = duels.rows(boot)
    if counts["sab2"]:
        tables["S1_sab2_roles"] = sab2.role_rows(boot)
        tables["S2_sab2_teams"] = sab2.team_rows(boot)
        if sab2.inserted:
            tables["S3_sab2_inserted"] = sab2.inserted_rows(boot)
    flagged_any = {}
    for name, rows in list(tables.items()):
        rows, flagged = flag_oracles(rows, "sab2" if name.startswith("S") else "base")
        flagged_any[name] = flagged
        write_csv(out / f"{name}.csv", rows)
        tables[name] = rows
    st = reader.stats
    skipped = [f"{st.duplicates} duplicate records"] if st.duplicates else []
    skipped += [f"{len(st.incomplete)} incomplete games"] if st.incomplete else []
    skipped += ["a torn tail"] if st.torn else []
    source = ", ".join(f"`{p}`" for p in logs)
    dirty = any(row["dirty"] is not False for row in provenance)
    parts = [f"# Tournament report\n\nSource: {source} ({st.games} games: {len(rounds)} base-game rounds, "
             f"{counts['duel']} duel rounds, {counts['sab2']} Saboteur 2 rounds; written by "
             f"{reader.version_summary() or 'no records'}" + (f"; skipped {', '.join(skipped)}" if skipped else "")
             + ").\n"
             + ("\n**Not reproducible from a commit**: some games were written from a dirty tree or without a "
                "recorded commit (P0).\n" if dirty and provenance else "")
             + f"\nIntervals: 95% percentile bootstrap over games ({boot} resamples; paired claims over shared seeds; "
             f"ratings {rating_boot} re-ratings), seed 0.\n"]  # fmt: skip
    for name, rows in tables.items():
        note = f"\n{chr(92)}{ORACLE_NOTE}\n" if flagged_any[name] else ""
        parts.append(f"## {TITLES[name]}\n\n{markdown(rows)}{note}")
    if with_plots and rounds:
        for png in plots(out, tables["T1_balance"], tables["T5_beliefs"], rounds, survival):
            parts.append(f"![{png}]({png})\n")
        for png in reliability_plot(out, reliability):
            parts.append(f"![{png}]({png})\n")
    (out / "summary.md").write_text("\n".join(parts))
    return tables


TITLES = {
    "P0_provenance": "P0 provenance (games per game, rules version, package version, commit, dirty tree)",
    "T1_balance": "T1 balance per cell (miner round win rate, gold reached, decisions per round; game bootstrap)",
    "T2_matrix": "T2 miner policy x saboteur policy: miner win rate [95% interval]",
    "claims": "Claims (paired over shared seeds, one value per game; one-sided p, Holm over the `family` rows; "
    "`holds` = Holm-adjusted p < 0.05)",
    "T5_beliefs": "T5 belief quality per cell and observer (game bootstrap; top-k ties split equally)",
    "T6_deception": "T6 deception and behaviour per cell (reference observer; Kaplan-Meier for the censored turns to "
    "sustained suspicion)",
    "ratings": "Ratings per (agent, role), openskill Plackett-Luce (bootstrap re-ratings over games)",
    "ladder": "Ladder of the inserted agents: openskill Plackett-Luce, one match per deal among the agents inserted "
    "in its seat, ranked by that seat's nuggets (overall, and in the rounds played as miner / saboteur); ordinal = "
    "mu - 3 sigma, bootstrap re-ratings over deals",
    "T7_calibration": "T7 observer calibration per population (cell): fixed behaviour tables (baseline) vs tables "
    "fitted on the cell's even seeds, scored on its odd seeds; ECE over 10 bins and Brier, game bootstrap",
    "T7_reliability": "T7 reliability diagram points (held-out games; per bin: mean prediction, observed frequency)",
    "S1_sab2_roles": "S1 Saboteur 2 by role at the round end (win rate and gold per seat-round, resampled as whole "
    "games)",
    "S2_sab2_teams": "S2 Saboteur 2 outcomes per round by side (game bootstrap)",
    "S3_sab2_inserted": "S3 Saboteur 2 inserted seat (--insert): gold per game, win rate by the side dealt, paired "
    "difference against the first insert of its table (same deals)",
    "D1_head_to_head": "D1 duel head-to-head (A score = wins + half the draws; nugget difference A - B per seed; "
    "bootstrap over seeds)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="+",
                        help="tournament log directories (or rounds.jsonl.gz files), read as one log")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: the first LOG/report)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--calibration", action="store_true",
                        help="add T7: fit the observer's behaviour tables per cell on even seeds, score fixed and "
                        "fitted tables on odd seeds (re-plays every base game; slower)")  # fmt: skip
    parser.add_argument("--policy-observer", type=int, default=0, metavar="SAMPLES",
                        help="with --calibration: add the policy-aware observer (agents.base.policy_observer) drawing "
                        "SAMPLES hands per decision (4 is a good start; about 2-3 s per held-out game)")  # fmt: skip
    parser.add_argument("--boot", type=int, default=BOOT, help=f"bootstrap resamples per interval (default {BOOT})")
    parser.add_argument("--rating-boot", type=int, default=RATING_BOOT,
                        help=f"re-ratings behind the ratings' intervals (default {RATING_BOOT}; 0: none)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.boot < 1 or args.rating_boot < 0:
        parser.error(f"--boot {args.boot} must be at least 1 and --rating-boot {args.rating_boot} at least 0")
    for path in args.log:
        if not path.exists():
            parser.error(f"{path} does not exist")
        if not log_path(path).is_file():
            parser.error(f"{path}: no {log_path(path).name} there (a tournament run with --out DIR writes one)")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory")
    with cli_warnings():
        try:
            build_report(args.log if len(args.log) > 1 else args.log[0], args.out, not args.no_plots, args.boot,
                         args.rating_boot, args.calibration, args.policy_observer)  # fmt: skip
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    first = args.log[0]
    out = args.out or (first if first.is_dir() else first.parent) / "report"
    print((out / "summary.md").read_text())
    return 0

