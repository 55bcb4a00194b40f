"""Self-play tournaments between ladder agents, with JSONL logs and a results table.

Examples::

    python -m experiments.tournament                                   # the README's short main job
    python -m experiments.tournament --miners suspicious --saboteurs covert --players 5 7 \\
        --games 2000 --workers 2 --out runs/x
    python -m experiments.report runs/x

Every combination of ``--miners`` x ``--saboteurs`` x ``--players`` is a cell. In a cell every gold-digger seat
plays the miner policy and every saboteur seat the saboteur policy (roles are dealt each round, so a seat switches
policy with its role). Game ``g`` of every cell uses seed ``seed + g`` (duplicate deals: the same decks, roles,
goals and seats in every compared cell). Results are identical for the same arguments whatever ``--workers``.

With ``--out DIR`` each finished game appends one JSON record per round to ``DIR/rounds.jsonl``: ``header`` (seed,
rules version, N, agents per seat, roles, left-over role, gold goal slot), ``events`` (public, with the private
part - a face-down discard's card, a map result - under ``private``), ``actions``, ``beliefs`` (the reference
observer and a heuristic public observer after every decision, per mille; each acting agent's own beliefs where it
has any) and ``end`` (winner, reason, decisions, finder, nuggets). Re-running the same command resumes: games
already in the file are skipped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from agents import CHEATING, LADDER, make_agent
from agents.base import RoleDispatch
from agents.beliefs import BayesModel, SuspicionModel
from agents.tracker import LogTracker
from experiments.stats import wilson_interval
from saboteur_env import RULES_VERSION, EventType, raw_env
from saboteur_env.board import geometry
from saboteur_env.cards import KIND_CODES, KIND_GOAL_GOLD

LOG_NAME = "rounds.jsonl.gz"
EVENT_NAMES = {int(t): t.name.lower() for t in EventType}
DEFAULT_MINERS = ("random", "suspicious")
DEFAULT_SABOTEURS = ("random", "covert")


def _permille(p: Iterable[float]) -> list[int]:
    return [round(1000 * float(x)) for x in p]


def _event_record(game, index: int, round_index: int) -> dict:
    etype, actor, kind, target, cell, arg = (int(x) for x in game.events[index])
    cfg = game.config
    rec: dict = {"t": index, "type": EVENT_NAMES[etype], "actor": actor}
    if etype == EventType.DISCARD:
        rec["private"] = {"kind": KIND_CODES[kind]}  # known only to the discarder
    elif kind >= 0:
        rec["kind"] = KIND_CODES[kind]
    if target >= 0:
        rec["target"] = target
    if cell >= 0:
        rec["cell"] = list(cfg.cell_coords(cell))
    if arg >= 0:
        rec["arg"] = arg
    if etype == EventType.MAP:
        gold = game.round_goals[round_index][arg] == KIND_GOAL_GOLD  # the round's goals (a new round may have begun)
        rec["private"] = {"result": "gold" if gold else "stone"}
    return rec


def _header(game, seed: int, miners: str, saboteurs: str) -> dict:
    return {
        "seed": seed,
        "rules_version": RULES_VERSION,
        "players": game.config.num_players,
        "miners": miners,
        "saboteurs": saboteurs,
        "agents": [saboteurs if r else miners for r in game.roles.tolist()],
        "round": game.round,
        "starter": game.current,
        "roles": game.roles.tolist(),
        "leftover_role": game.leftover_role,
        "gold_goal": int(np.flatnonzero(game.goal_kind == KIND_GOAL_GOLD)[0]),
        "first_event": game.num_events,
    }


def play_game(num_players: int, miners: str, saboteurs: str, seed: int, beliefs: bool = True) -> list[dict]:
    """Play one seeded game; returns one record per round."""
    env = raw_env(num_players=num_players)
    cfg = env.config
    agents = [
        RoleDispatch(cfg, make_agent(miners, cfg, "miner"), make_agent(saboteurs, cfg, "saboteur"))
        for _ in range(num_players)
    ]
    env.reset(seed=seed)
    game = env.unwrapped.game
    for i, (agent, ss) in enumerate(zip(agents, np.random.SeedSequence(seed).spawn(num_players), strict=True)):
        agent.reset(i, num_players, int(ss.generate_state(1)[0]))
        agent.bind_state(env.state)
    goal_cells = geometry(cfg).goal_cells
    tracker = LogTracker(cfg)
    reference, heuristic = BayesModel(num_players, goal_cells), SuspicionModel(num_players, goal_cells)
    records: list[dict] = []
    current = {"header": _header(game, seed, miners, saboteurs), "events": [], "actions": [], "beliefs": []}
    decision = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        agent = agents[seat]
        action = agent.act(obs["observation"], obs["action_mask"])
        snapshot: dict = {"t": decision, "actor": seat}
        own = agent.role_beliefs() if beliefs else None
        if own is not None:
            snapshot["agent"] = _permille(own[s] for s in range(num_players))
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        round_over = False
        for ev in tracker.update(game):
            if ev.type == EventType.ROUND_END:
                round_over = True  # always the last event of a decision
            else:
                reference.observe(ev)
                heuristic.observe(ev)
        rnd = current["header"]["round"]
        current["events"].extend(_event_record(game, i, rnd) for i in range(first, game.num_events))
        if beliefs:  # observers' beliefs after this decision (before a round end resets them)
            snapshot["reference"] = _permille(reference.p_saboteur())
            snapshot["reference_gold"] = _permille(reference.p_gold())
            snapshot["heuristic"] = _permille(heuristic.p_saboteur())
            current["beliefs"].append(snapshot)
        if round_over:
            reference.reset_round(None, None)
            heuristic.reset_round(None, None)
        decision += 1
        if game.round_just_ended:
            result = game.round_results[-1]
            current["end"] = {
                "winner": result["winner"],
                "reason": "gold_reached" if result["winner"] == "gold-diggers" else "exhausted",
                "decisions": len(current["actions"]),
                "finder": result["finder"],
                "last_player": result["last_player"],
                "nuggets": result["nuggets"],
                "gold_cards": result["gold_cards"],
            }
            records.append(current)
            decision = 0
            if not game.game_over:
                current = {"header": _header(game, seed, miners, saboteurs), "events": [], "actions": [], "beliefs": []}
    return records


def replay_game(records: list[dict]) -> None:
    """Replay a logged game (its rounds in order) from the seed and actions; raise if any event differs."""
    header = records[0]["header"]
    env = raw_env(num_players=header["players"])
    env.reset(seed=header["seed"])
    game = env.unwrapped.game
    for rec in records:
        first = game.num_events
        if rec["header"]["roles"] != game.roles.tolist() or rec["header"]["first_event"] != first:
            raise AssertionError(f"round {rec['header']['round']}: the deal differs from the log")
        for action in rec["actions"]:
            env.step(action)
        rnd = rec["header"]["round"]
        replayed = [_event_record(game, i, rnd) for i in range(first, first + len(rec["events"]))]
        if replayed != rec["events"]:
            raise AssertionError(f"round {rec['header']['round']}: replayed events differ from the log")


def _task(args: tuple[int, str, str, int, bool]) -> list[dict]:
    return play_game(*args)


def read_rounds(path: Path) -> Iterator[dict]:
    """Round records from a log file (``rounds.jsonl.gz``) or a log directory."""
    if path.is_dir():
        path = path / LOG_NAME
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _done_games(path: Path, rounds: int) -> set[tuple[int, str, str, int]]:
    if not path.exists():
        return set()
    counts: dict[tuple[int, str, str, int], int] = {}
    for rec in read_rounds(path):
        h = rec["header"]
        key = (h["players"], h["miners"], h["saboteurs"], h["seed"])
        counts[key] = counts.get(key, 0) + 1
    return {k for k, c in counts.items() if c >= rounds}


def run(
    players: list[int],
    miners: list[str],
    saboteurs: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    out: Path | None = None,
    beliefs: bool = True,
) -> Iterator[list[dict]]:
    """Play every cell; yields each game's round records (in a deterministic order)."""
    tasks = [(n, m, s, seed + g, beliefs) for n in players for m in miners for s in saboteurs for g in range(games)]
    log = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / LOG_NAME
        done = _done_games(path, rounds=3)
        skipped = {t[:4] for t in tasks if t[:4] in done}
        tasks = [t for t in tasks if t[:4] not in done]
        if skipped:
            print(f"resuming: {len(skipped)} games already in {path}", file=sys.stderr)
            for rec in read_rounds(path):
                h = rec["header"]
                if (h["players"], h["miners"], h["saboteurs"], h["seed"]) in skipped:
                    yield [rec]
        log = gzip.open(path, "at")  # gzip members append cleanly, so an interrupted run can resume
    start = time.perf_counter()
    pool = multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_task, tasks, chunksize=2) if pool else map(_task, tasks)
        for i, records in enumerate(results, 1):
            if log is not None:
                log.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
                log.flush()
            rate = i / (time.perf_counter() - start)
            if sys.stderr.isatty() or i == len(tasks) or i % 200 == 0:
                eta = (len(tasks) - i) / rate
                end = "\n" if i == len(tasks) or not sys.stderr.isatty() else ""
                print(f"\r{i}/{len(tasks)} games  {rate:.2f} games/s  ETA {eta:,.0f}s   ", end=end, file=sys.stderr)
            yield records
    finally:
        if pool:
            pool.close()
        if log is not None:
            log.close()


def summary_table(rounds: list[dict]) -> str:
    """Miner win rate per cell with a 95% Wilson interval over games (a game = share of its rounds won)."""
    cells: dict[tuple[int, str, str], dict[int, list[int]]] = {}
    decisions: dict[tuple[int, str, str], list[int]] = {}
    for r in rounds:
        h = r["header"]
        key = (h["players"], h["miners"], h["saboteurs"])
        cells.setdefault(key, {}).setdefault(h["seed"], []).append(r["end"]["winner"] == "gold-diggers")
        decisions.setdefault(key, []).append(r["end"]["decisions"])
    header = (
        f"{'N':>3} {'miners':<12} {'saboteurs':<12} {'games':>6} {'miner win':>10} {'95% CI':>16} {'decisions':>10}"
    )
    lines = [header, "-" * len(header)]
    for key in sorted(cells):
        per_game = [np.mean(v) for v in cells[key].values()]
        rate = float(np.mean(per_game))
        lo, hi = wilson_interval(round(rate * len(per_game)), len(per_game))
        n, m, s = key
        flag = " (cheating)" if m in CHEATING or s in CHEATING else ""
        lines.append(
            f"{n:>3} {m:<12} {s:<12} {len(per_game):>6} {rate:>10.1%} {f'[{lo:.1%}, {hi:.1%}]':>16} "
            f"{np.mean(decisions[key]):>10.1f}{flag}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--miners", nargs="+", default=list(DEFAULT_MINERS), help="miner policies")
    parser.add_argument("--saboteurs", nargs="+", default=list(DEFAULT_SABOTEURS), help="saboteur policies")
    parser.add_argument("--players", type=int, nargs="+", default=[5], help="player counts (3-10)")
    parser.add_argument("--games", type=int, default=12, help="games per cell (each game has 3 rounds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--out", type=Path, default=None, help="log directory (rounds.jsonl.gz; resumable)")
    parser.add_argument("--no-beliefs", action="store_true", help="skip observers and belief snapshots (faster)")
    args = parser.parse_args(argv)
    for n in args.players:
        if not 3 <= n <= 10:
            parser.error(f"--players {n} is out of range; valid: 3..10")
    for name in args.miners + args.saboteurs:
        if name not in LADDER and not name.startswith("ppo:"):
            parser.error(f"unknown agent {name!r}; valid: {', '.join(sorted(LADDER))}")
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be at least 1")
    games = run(
        args.players, args.miners, args.saboteurs, args.games, args.seed, args.workers, args.out, not args.no_beliefs
    )
    rounds = [r for records in games for r in records]
    print(summary_table(rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
