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

from agents import CHEATING, DUEL_AGENTS, LADDER, SAB2_AGENTS, make_agent
from agents.base import RoleDispatch
from agents.beliefs import BayesModel, SuspicionModel
from agents.tracker import LogTracker
from experiments.duel import play_duel
from experiments.duel import summary_table as duel_summary_table
from experiments.sab2 import play_sab2
from experiments.sab2 import summary_table as sab2_summary_table
from experiments.stats import mean_interval, paired_difference, wilson_interval
from saboteur_env import EventType, raw_env
from saboteur_env.base.cards import KIND_CODES, KIND_GOAL_GOLD
from saboteur_env.common.geometry import geometry
from saboteur_env.duel.variant import DUEL_LAYOUT_NAMES

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


def insert_seat(seed: int, num_players: int) -> int:
    """The seat an inserted agent takes in game ``seed`` (rotates over the seats from game to game)."""
    return seed % num_players


def _header(game, seed: int, miners: str, saboteurs: str, insert: str | None) -> dict:
    agents = [saboteurs if r else miners for r in game.roles.tolist()]
    extra = {}
    if insert is not None:
        seat = insert_seat(seed, game.config.num_players)
        agents[seat] = insert
        extra = {"insert": insert, "insert_seat": seat}
    return {
        "seed": seed,
        "rules_version": game.config.rules_version,
        "players": game.config.num_players,
        "miners": miners,
        "saboteurs": saboteurs,
        **extra,
        "agents": agents,
        "round": game.round,
        "starter": game.current,
        "roles": game.roles.tolist(),
        "leftover_role": game.leftover_role,
        "gold_goal": int(np.flatnonzero(game.goal_kind == KIND_GOAL_GOLD)[0]),
        "first_event": game.num_events,
    }


def play_game(
    num_players: int,
    miners: str,
    saboteurs: str,
    seed: int,
    beliefs: bool = True,
    insert: str | None = None,
    env: raw_env | None = None,
) -> list[dict]:
    """Play one seeded game; returns one record per round.

    ``insert`` seats that agent (both roles) at :func:`insert_seat` instead of the cell's policies. ``env`` reuses
    an environment of the right player count (``reset`` re-deals everything, so reuse changes nothing).
    """
    if env is None or env.config.num_players != num_players:
        env = raw_env(num_players=num_players)
    cfg = env.config
    agents = [
        RoleDispatch(cfg, make_agent(miners, cfg, "miner"), make_agent(saboteurs, cfg, "saboteur"))
        for _ in range(num_players)
    ]
    if insert is not None:
        agents[insert_seat(seed, num_players)] = RoleDispatch(
            cfg, make_agent(insert, cfg, "miner"), make_agent(insert, cfg, "saboteur")
        )
    env.reset(seed=seed)
    game = env.unwrapped.game
    for i, (agent, ss) in enumerate(zip(agents, np.random.SeedSequence(seed).spawn(num_players), strict=True)):
        agent.reset(i, num_players, int(ss.generate_state(1)[0]))
        agent.bind_state(env.state)
    goal_cells = geometry(cfg).goal_cells
    tracker = LogTracker(cfg)
    reference, heuristic = BayesModel(num_players, goal_cells), SuspicionModel(num_players, goal_cells)
    records: list[dict] = []
    def new_record() -> dict:
        return {"header": _header(game, seed, miners, saboteurs, insert), "events": [], "actions": [], "beliefs": []}

    current = new_record()
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
                current = new_record()
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


# Base: (players, miners, saboteurs, seed, beliefs, insert); duel: ("duel", blue, green, seed, layout).
Task = tuple


def _task(args: Task) -> list[dict]:
    if args[0] == "duel":
        return play_duel(*args[1:])
    if args[0] == "sab2":
        return play_sab2(*args[1:])
    return play_game(*args)


class TournamentWorker:
    """One environment per player count, reused across games; plays chunks of tasks (a Ray actor's body)."""

    def __init__(self) -> None:
        self.envs: dict[int | str, raw_env] = {}

    def play(self, tasks: list[Task]) -> list[list[dict]]:
        out = []
        for task in tasks:
            if task[0] == "sab2":
                _, n, agent, seed = task
                key = f"sab2:{n}"
                env = self.envs.get(key) or self.envs.setdefault(key, raw_env(game="sab2", num_players=n))
                out.append(play_sab2(n, agent, seed, env=env))
                continue
            if task[0] == "duel":
                _, blue, green, seed, layout = task
                key = f"duel:{layout}"
                env = self.envs.get(key) or self.envs.setdefault(key, raw_env(game="duel", duel_layout=layout))
                out.append(play_duel(blue, green, seed, layout, env=env))
                continue
            n, m, s, seed, beliefs, insert = task
            env = self.envs.get(n) or self.envs.setdefault(n, raw_env(num_players=n))
            out.append(play_game(n, m, s, seed, beliefs, insert, env=env))
        return out


def _ray_results(tasks: list[Task], workers: int, address: str | None, chunk: int) -> Iterator[list[dict]]:
    """Games on ``workers`` Ray actors, ``chunk`` seeds per request, yielded in task order."""
    try:
        import ray
    except ImportError as err:  # pragma: no cover - depends on the optional extra
        raise ImportError("--backend ray needs the 'ray' extra: pip install -e '.[ray]'") from err
    if not ray.is_initialized():
        kwargs: dict = {"include_dashboard": False, "log_to_driver": False}
        if address:  # a cluster: ship this checkout to the workers
            root = Path(__file__).resolve().parents[1]
            kwargs["runtime_env"] = {"working_dir": str(root), "excludes": ["runs/", ".git/", ".venv*/", "*.gz"]}
        else:
            kwargs["num_cpus"] = workers
        ray.init(address=address, **kwargs)
    actor_cls = ray.remote(num_cpus=1)(TournamentWorker)
    actors = [actor_cls.remote() for _ in range(workers)]
    chunks = [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]
    refs = [actors[i % workers].play.remote(c) for i, c in enumerate(chunks)]
    try:
        for ref in refs:
            yield from ray.get(ref)
    finally:
        for actor in actors:
            ray.kill(actor)


def read_rounds(path: Path) -> Iterator[dict]:
    """Round records from a log file (``rounds.jsonl.gz``) or a log directory."""
    if path.is_dir():
        path = path / LOG_NAME
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _game_key(h: dict) -> tuple:
    if h.get("game") == "sab2":
        return "sab2", h["players"], h["agent"], h["seed"]
    if h.get("game") == "duel":
        return "duel", h["agents"][0], h["agents"][1], h["seed"], h["duel_layout"]
    return h["players"], h["miners"], h["saboteurs"], h["seed"], h.get("insert")


def _task_key(t: Task) -> tuple:
    return t if t[0] in ("duel", "sab2") else (t[0], t[1], t[2], t[3], t[5])


def _done_games(path: Path, rounds: int) -> set[tuple]:
    if not path.exists():
        return set()
    counts: dict[tuple, int] = {}
    for rec in read_rounds(path):
        key = _game_key(rec["header"])
        counts[key] = counts.get(key, 0) + 1
    return {k for k, c in counts.items() if c >= rounds}


def _check_backend(backend: str) -> None:
    if backend not in ("local", "ray"):
        raise ValueError(f"backend={backend!r}; valid: 'local', 'ray'")


def run(
    players: list[int],
    miners: list[str],
    saboteurs: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    out: Path | None = None,
    beliefs: bool = True,
    inserts: list[str | None] | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
) -> Iterator[list[dict]]:
    """Play every cell; yields each game's round records (in a deterministic order, whatever the backend).

    ``inserts``: agents seated one at a time at :func:`insert_seat` (``None`` = no inserted seat); each is a cell.
    ``backend``: ``"local"`` (``workers`` processes) or ``"ray"`` (``workers`` actors on the Ray cluster at
    ``address``, a local one when ``None``; ``chunk`` games per request).
    """
    _check_backend(backend)
    inserts = [None] if not inserts else list(inserts)
    tasks: list[Task] = [
        (n, m, s, seed + g, beliefs, i)
        for n in players
        for m in miners
        for s in saboteurs
        for i in inserts
        for g in range(games)
    ]
    yield from _execute(tasks, workers, out, backend, address, chunk)


def run_duel(
    agents: list[str],
    games: int,
    seed: int = 0,
    layout: str = "seed_5x9",
    workers: int = 1,
    out: Path | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
) -> Iterator[list[dict]]:
    """Duels between every ordered pair of distinct ``agents`` (both colour assignments; one agent: self-play),
    game ``g`` on seed ``seed + g``; yields each game's round records in a deterministic order."""
    _check_backend(backend)
    pairs = [(a, b) for a in agents for b in agents if a != b] or [(agents[0], agents[0])]
    tasks: list[Task] = [("duel", a, b, seed + g, layout) for a, b in pairs for g in range(games)]
    yield from _execute(tasks, workers, out, backend, address, chunk)


def run_sab2(
    players: list[int],
    agents: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    out: Path | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
) -> Iterator[list[dict]]:
    """Saboteur 2 cells (players x agent, the agent in every seat), game ``g`` on seed ``seed + g``."""
    _check_backend(backend)
    tasks: list[Task] = [("sab2", n, a, seed + g) for n in players for a in agents for g in range(games)]
    yield from _execute(tasks, workers, out, backend, address, chunk)


def _execute(
    tasks: list[Task], workers: int, out: Path | None, backend: str, address: str | None, chunk: int
) -> Iterator[list[dict]]:
    log = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / LOG_NAME
        done = _done_games(path, rounds=3)
        skipped = {_task_key(t) for t in tasks if _task_key(t) in done}
        tasks = [t for t in tasks if _task_key(t) not in done]
        if skipped:
            print(f"resuming: {len(skipped)} games already in {path}", file=sys.stderr)
            for rec in read_rounds(path):
                if _game_key(rec["header"]) in skipped:
                    yield [rec]
        log = gzip.open(path, "at")  # gzip members append cleanly, so an interrupted run can resume
    start = time.perf_counter()
    pool = None
    if backend == "ray":
        results: Iterable[list[dict]] = _ray_results(tasks, workers, address, chunk)
    elif workers > 1:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        results = pool.imap(_task, tasks, chunksize=2)
    else:
        worker = TournamentWorker()
        results = (worker.play([t])[0] for t in tasks)
    try:
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


def _cell(h: dict) -> tuple[int, str, str, str]:
    return h["players"], h["miners"], h["saboteurs"], h.get("insert") or ""


def summary_table(rounds: list[dict]) -> str:
    """Miner win rate per cell with a 95% Wilson interval over games (a game = share of its rounds won).

    With inserted seats, a second table gives the inserted agent's nuggets per game (normal 95% interval) and
    its team's round win rate by role, and a third the paired difference in nuggets per game between each insert
    and the first one listed, over the same seeds (same deals, same seat).
    """
    cells: dict[tuple[int, str, str, str], dict[int, list[int]]] = {}
    decisions: dict[tuple[int, str, str, str], list[int]] = {}
    seat_nuggets: dict[tuple[int, str, str, str], dict[int, float]] = {}
    seat_wins: dict[tuple[int, str, str, str], dict[int, list[bool]]] = {}
    for r in rounds:
        h = r["header"]
        key = _cell(h)
        cells.setdefault(key, {}).setdefault(h["seed"], []).append(r["end"]["winner"] == "gold-diggers")
        decisions.setdefault(key, []).append(r["end"]["decisions"])
        if h.get("insert"):
            seat = h["insert_seat"]
            games = seat_nuggets.setdefault(key, {})
            games[h["seed"]] = games.get(h["seed"], 0.0) + r["end"]["nuggets"][seat]
            role = h["roles"][seat]
            won = r["end"]["winner"] == ("saboteurs" if role else "gold-diggers")
            seat_wins.setdefault(key, {0: [], 1: []})[role].append(won)
    with_insert = any(k[3] for k in cells)
    width = max([12, *(len(k[3]) for k in cells)])
    head = f"{'N':>3} {'miners':<12} {'saboteurs':<12} " + (f"{'insert':<{width}} " if with_insert else "")
    header = head + f"{'games':>6} {'miner win':>10} {'95% CI':>16} {'decisions':>10}"
    lines = [header, "-" * len(header)]
    for key in sorted(cells):
        per_game = [np.mean(v) for v in cells[key].values()]
        rate = float(np.mean(per_game))
        lo, hi = wilson_interval(round(rate * len(per_game)), len(per_game))
        n, m, s, ins = key
        flag = " (cheating)" if {m, s, ins} & CHEATING else ""
        cols = f"{n:>3} {m:<12} {s:<12} " + (f"{ins or '-':<{width}} " if with_insert else "")
        lines.append(
            f"{cols}{len(per_game):>6} {rate:>10.1%} {f'[{lo:.1%}, {hi:.1%}]':>16} "
            f"{np.mean(decisions[key]):>10.1f}{flag}"
        )
    if seat_nuggets:
        lines += ["", "Inserted seat (seat = seed mod N, both roles):"]
        header = (f"{'N':>3} {'miners':<12} {'saboteurs':<12} {'insert':<{width}} {'games':>6} {'nuggets/game':>13} "
                  f"{'95% CI':>16} {'win as miner':>13} {'win as sab.':>12}")  # fmt: skip
        lines += [header, "-" * len(header)]
        for key in sorted(seat_nuggets):
            mean, lo, hi = mean_interval(list(seat_nuggets[key].values()))
            wins = seat_wins[key]
            rates = [f"{np.mean(wins[r]):.1%}" if wins[r] else "-" for r in (0, 1)]
            n, m, s, ins = key
            lines.append(
                f"{n:>3} {m:<12} {s:<12} {ins:<{width}} {len(seat_nuggets[key]):>6} {mean:>13.2f} "
                f"{f'[{lo:.2f}, {hi:.2f}]':>16} {rates[0]:>13} {rates[1]:>12}"
            )
        by_base: dict[tuple[int, str, str], list[str]] = {}
        for n, m, s, ins in seat_nuggets:  # insertion order = the order the inserts were listed
            by_base.setdefault((n, m, s), []).append(ins)
        pairs = [(b, ins[0], other) for b, ins in by_base.items() for other in ins[1:]]
        if pairs:
            lines += ["", "Paired difference in the inserted seat's nuggets per game (same seeds):"]
            for (n, m, s), ref, other in pairs:
                d, lo, hi, k = paired_difference(seat_nuggets[(n, m, s, other)], seat_nuggets[(n, m, s, ref)])
                lines.append(f"  N={n} {m}/{s}: {other} - {ref} = {d:+.2f} [{lo:+.2f}, {hi:+.2f}] over {k} games")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("base", "duel", "sab2"), default="base", help="rule set")
    parser.add_argument("--agents", nargs="+", default=["greedy", "random"],
                        help="duel: every ordered pair plays (both colours on the same seeds); sab2: one cell per "
                        "agent, which plays every seat")  # fmt: skip
    parser.add_argument("--duel-layout", choices=DUEL_LAYOUT_NAMES, default="seed_5x9", help="duel geometry")
    parser.add_argument("--miners", nargs="+", default=list(DEFAULT_MINERS), help="miner policies")
    parser.add_argument("--saboteurs", nargs="+", default=list(DEFAULT_SABOTEURS), help="saboteur policies")
    parser.add_argument("--insert", nargs="+", default=None, metavar="AGENT",
                        help="seat one AGENT (both roles) at seat seed mod N; each is a cell, the first is the "
                        "reference of the paired comparison")  # fmt: skip
    parser.add_argument("--players", type=int, nargs="+", default=[5], help="player counts (3-10)")
    parser.add_argument("--games", type=int, default=12, help="games per cell (each game has 3 rounds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (local) or actors (ray)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where the games run")
    parser.add_argument("--address", default=None, help="Ray cluster address (ray backend; default: a local one)")
    parser.add_argument("--chunk", type=int, default=4, help="games per Ray request")
    parser.add_argument("--out", type=Path, default=None, help="log directory (rounds.jsonl.gz; resumable)")
    parser.add_argument("--no-beliefs", action="store_true", help="skip observers and belief snapshots (faster)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.workers < 1 or args.chunk < 1:
        parser.error("--games, --workers and --chunk must be at least 1")
    if args.address and args.backend != "ray":
        parser.error("--address needs --backend ray")
    if args.game == "sab2":
        for n in args.players:
            if not 2 <= n <= 12:
                parser.error(f"--players {n} is out of range for sab2; valid: 2..12")
        for name in args.agents:
            if name not in SAB2_AGENTS:
                parser.error(f"unknown Saboteur 2 agent {name!r}; valid: {', '.join(SAB2_AGENTS)}")
        games = run_sab2(args.players, args.agents, args.games, args.seed, args.workers, args.out, args.backend,
                         args.address, args.chunk)  # fmt: skip
        print(sab2_summary_table([r for records in games for r in records]))
        return 0
    if args.game == "duel":
        for name in args.agents:
            if name not in DUEL_AGENTS and not name.startswith("ppo:"):
                parser.error(f"unknown duel agent {name!r}; valid: {', '.join(DUEL_AGENTS)} or ppo:PATH")
        games = run_duel(args.agents, args.games, args.seed, args.duel_layout, args.workers, args.out, args.backend,
                         args.address, args.chunk)  # fmt: skip
        print(duel_summary_table([r for records in games for r in records]))
        return 0
    for n in args.players:
        if not 3 <= n <= 10:
            parser.error(f"--players {n} is out of range; valid: 3..10")
    for name in args.miners + args.saboteurs + (args.insert or []):
        if name not in LADDER and not name.startswith("ppo:"):
            parser.error(f"unknown agent {name!r}; valid: {', '.join(sorted(LADDER))} or ppo:PATH")
    games = run(
        args.players,
        args.miners,
        args.saboteurs,
        args.games,
        args.seed,
        args.workers,
        args.out,
        not args.no_beliefs,
        inserts=args.insert,
        backend=args.backend,
        address=args.address,
        chunk=args.chunk,
    )
    rounds = [r for records in games for r in records]
    print(summary_table(rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
