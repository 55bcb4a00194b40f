"""Insertion experiment for the ``ismcts`` agent: one IS-MCTS seat among scripted agents, on paired deals.

Game ``g`` is played twice from the same seed: once with every seat played by the line-up agent (``--lineup``),
once with seat ``g % P`` played by ``ismcts`` instead (same agent seeds for the other seats). Agent seeds are sealed
(``experiments.tournament.rounds``): spawned from a secret (``--secret``, default drawn from ``os.urandom`` and
printed at the
end) and the game, never from the public seed, so no agent can recover the deal from its seed; each record holds its
game's secret (``seeds``), written after the game. The per-game
difference of that seat's score (gold) is the paired effect; it is reported overall and by the role the seat
was dealt in round 1 (with ``--rounds 1`` the score is exactly that role's round), with percentile bootstrap
intervals over games (``experiments.tournament.stats.bootstrap_mean``), and the IS-MCTS cost per decision (ms).

Each game appends one JSON line to ``--out`` (a finished game is never replayed: the run is resumable, and
``--start`` / ``--games`` cut it into chunks)::

    python -m experiments.analysis.ismcts --players 5 --games 500 --sims 20 --out runs/ismcts_base5.jsonl
    python -m experiments.analysis.ismcts --summary runs/ismcts_base5.jsonl      # the table of a finished (or
    partial) run

``--game sab2`` and ``--game duel`` run the same experiment in Saboteur 2 (line-up ``heuristic``) and the Duel
(``greedy``). The default base line-up is ``expert`` when the base game registers it (``agents.agent_names``),
else ``bayes``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents import agent_names, make_agent
from agents.ismcts import ISMCTSAgent
from experiments.tournament.rounds import (
    SecretError,
    draw_secret,
    format_secret,
    game_secret,
    parse_secret,
    seat_agents,
    seeds_record,
    session_secret,
)
from experiments.tournament.stats import bootstrap_mean
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game, returns


def default_lineup(game: str) -> str:
    if game == "duel":
        return "greedy"
    if game == "sab2":
        return "heuristic"
    return "expert" if "expert" in agent_names("base") else "bayes"


def role_name(config: GameConfig, state: Any, seat: int) -> str:
    """The role ``seat`` holds at the start of the game (for the per-role table; the state is the referee's)."""
    if config.game == "duel":
        return ("blue", "green")[seat]
    if config.game == "sab2":
        from saboteur_env.sab2.cards import Sab2Role

        return Sab2Role(int(state.roles[seat])).name.lower()
    return ("gold-digger", "saboteur")[int(state.roles[seat])]


def play(config: GameConfig, seed: int, lineup: str, insert: int | None, options: dict[str, Any],
         agent_secret: int | None = None) -> dict[str, Any]:  # fmt: skip
    """One game; ``insert`` is the seat played by ismcts (None: nobody). Returns scores and costs. The seats' seeds
    are sealed (``experiments.tournament.rounds``): spawned from the game secret ``agent_secret`` (a fresh one when
    ``None``),
    never from the public deal seed; the two games of a pair share it."""
    p = config.num_players
    state = new_game(config, np.random.default_rng(seed))
    role = role_name(config, state, insert if insert is not None else 0)
    agents: list[Any] = [ISMCTSAgent(config, **options) if seat == insert else make_agent(lineup, config)
                         for seat in range(p)]  # fmt: skip
    seat_agents(agents, draw_secret() if agent_secret is None else agent_secret, seed)
    spent, cpu, moves = 0.0, 0.0, 0
    while not state.game_over:
        seat = state.current
        obs = encode_observation(state, seat)
        mask = legal_action_mask(state).astype(np.int8)
        t0, c0 = time.perf_counter(), time.process_time()
        action = agents[seat].act(obs, mask)
        if seat == insert:
            spent += time.perf_counter() - t0
            cpu += time.process_time() - c0  # CPU time: the wall clock depends on the machine's load
            moves += 1
        state = apply_action(state, action, inplace=True)
    return {"score": [float(x) for x in returns(state)], "role": role, "ismcts_s": spent, "ismcts_cpu_s": cpu,
            "ismcts_moves": moves}  # fmt: skip


def run(args: argparse.Namespace) -> None:
    config = GameConfig(game=args.game, num_players=args.players, rounds=args.rounds)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    lineup = args.lineup or default_lineup(args.game)
    widening = None if args.widening == "none" else float(args.widening)
    options = {"simulations": args.sims, "prior": args.prior, "widening": widening, "exploration": args.exploration}
    setup = {"game": args.game, "players": config.num_players, "rounds": args.rounds, "lineup": lineup,
             "sims": args.sims, "prior": args.prior, "widening": widening, "exploration": args.exploration}  # fmt: skip
    old = _records(out) if out.exists() else []
    for rec in old[:1]:
        theirs = {k: rec.get(k, _V1.get(k)) for k in setup}
        if theirs != setup:
            raise SystemExit(f"{out} holds another experiment ({theirs}); this one is {setup}: use another --out")
    done = {rec["seed"] for rec in old}
    secret = session_secret() if args.secret is None else args.secret
    with out.open("a") as fh:
        for seed in range(args.start, args.start + args.games):
            if seed in done:
                continue
            seat = seed % config.num_players
            key = ("ismcts", *(setup[k] for k in ("game", "players", "rounds", "lineup")), seed)
            agent_secret = game_secret(secret, key)  # both games of the pair: the same seats' seeds
            base = play(config, seed, lineup, None, options, agent_secret)
            ism = play(config, seed, lineup, seat, options, agent_secret)
            rec = {"seed": seed, **setup, "seat": seat, "role": ism["role"],
                   "ismcts": ism["score"][seat], "scripted": base["score"][seat],
                   "ismcts_s": ism["ismcts_s"], "ismcts_cpu_s": ism["ismcts_cpu_s"],
                   "ismcts_moves": ism["ismcts_moves"], **seeds_record(agent_secret)}  # fmt: skip
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            if args.verbose:
                print(json.dumps(rec), flush=True)
    print(summary(out))
    print(f"agent seeds: secret {format_secret(secret)} (--secret re-plays this run's games)")


_V1 = {"prior": "uniform", "widening": None, "exploration": None}  # records written before these options existed


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summary(path: Path) -> str:
    """A markdown table of a run: paired score difference (ismcts - scripted) overall and by role, cost per move."""
    recs = _records(path)
    if not recs:
        return f"{path}: no games yet"
    head = recs[0]
    lines = [f"{path}: game={head['game']} players={head['players']} rounds={head['rounds']} "
             f"lineup={head['lineup']} sims={head['sims']} prior={head.get('prior', _V1['prior'])} "
             f"widening={head.get('widening', _V1['widening'])} exploration={head.get('exploration')}",
             "", "| role | games | ismcts | scripted | difference [95% CI] |", "|---|---|---|---|---|"]  # fmt: skip
    groups: dict[str, list[dict[str, Any]]] = {"all": recs}
    for rec in recs:
        groups.setdefault(rec["role"], []).append(rec)
    for name, rows in groups.items():
        d = [r["ismcts"] - r["scripted"] for r in rows]
        mean, lo, hi = bootstrap_mean(d)
        ism, scr = np.mean([r["ismcts"] for r in rows]), np.mean([r["scripted"] for r in rows])
        lines.append(f"| {name} | {len(rows)} | {ism:.3f} | {scr:.3f} | {mean:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    moves = sum(r["ismcts_moves"] for r in recs)
    spent = sum(r["ismcts_s"] for r in recs)
    lines.append("")
    cost = f"cost: {1000 * spent / max(moves, 1):.1f} ms (wall clock) per ismcts decision over {moves} decisions"
    timed = [r for r in recs if "ismcts_cpu_s" in r]
    if timed:
        cpu_moves = sum(r["ismcts_moves"] for r in timed)
        cost += f"; {1000 * sum(r['ismcts_cpu_s'] for r in timed) / max(cpu_moves, 1):.1f} ms CPU time"
    lines.append(cost)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--game", choices=("base", "sab2", "duel"), default="base")
    ap.add_argument("--players", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, choices=(1, 2, 3))
    ap.add_argument("--games", type=int, default=500, help="paired games (deals) to play from --start")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--sims", type=int, default=20, help="IS-MCTS simulations per decision")
    ap.add_argument("--prior", choices=("heuristic", "uniform"), default="heuristic", help="expansion order")
    ap.add_argument("--widening", default="2", help="progressive widening constant, or 'none'")
    ap.add_argument("--exploration", type=float, default=None, help="UCB / PUCT constant (default: the agent's)")
    ap.add_argument("--lineup", default=None, help="scripted agent of the other seats (and of the paired seat)")
    ap.add_argument("--out", default="runs/ismcts.jsonl", help="JSON lines, appended (resumable)")
    ap.add_argument("--summary", metavar="JSONL", default=None, help="only print the table of a run")
    ap.add_argument("--secret", default=None, help="hex secret the agents' seeds come from (default: drawn from "
                    "os.urandom, printed at the end); never derived from the public seeds")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.secret is not None:
        try:
            args.secret = parse_secret(args.secret)
        except SecretError as err:
            ap.error(str(err))
    if args.summary:
        print(summary(Path(args.summary)))
        return
    if args.game == "duel":
        args.players = 2
    if args.widening != "none":
        try:
            if float(args.widening) <= 0:
                raise ValueError
        except ValueError:
            ap.error(f"--widening {args.widening!r} must be a positive number or 'none'")
    if args.games < 1 or args.sims < 1 or args.start < 0:
        ap.error(f"--games ({args.games}) and --sims ({args.sims}) must be >= 1, --start ({args.start}) >= 0")
    run(args)


if __name__ == "__main__":
    main()
