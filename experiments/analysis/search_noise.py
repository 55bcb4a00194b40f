"""How much of the search's choice is noise? Each decision of a ``search`` seat re-valued by a large reference run.

The search (``agents.search``) keeps the top ``M`` moves of its prior and plays the one with the best mean over
``rollouts / M`` determinizations each. Where the moves' true values differ by less than the rollouts' noise, the
chosen move is the luckiest, not the best (the winner's curse), and the seat's play is no better than the prior's.
This experiment measures that per decision, by the side the seat plays:

* game ``g`` seats ``search:ROLLOUTS`` at seat ``g mod P`` of an ``expert`` table (deal seed ``--seed + g``; agent
  seeds sealed from ``--secret``, never from the deal seed);
* at every searched decision (two or more candidates), after the search has chosen, the same candidates are valued
  again by ``--reference`` rollouts of fresh determinizations of the same information set, on a generator of their
  own (the game goes on exactly as without the measurement), split in two independent halves A and B;
* per decision it records the search's estimated advantage of its choice over the prior's first move, the
  reference's advantage of that choice (**realized gain**: what the search's deviations from the prior are worth),
  and the advantage of the best move by half A valued on half B (**attainable gain**: what an exact search over the
  same candidates would gain, without the max-of-noise bias).

Every value is the searching seat's gold of the round (the Duel: minus the opponent's), in paired differences over
the same determinizations (common random numbers), so a decision's noise is that of the difference. One JSON line
per game in ``--out`` (resumable: finished games are skipped)::

    python -m experiments.analysis.search_noise --players 5 --games 20 --seed 7600000000 \\
        --secret HEX --out runs/noise-base5.jsonl
    python -m experiments.analysis.search_noise --summary runs/noise-base5.jsonl

The summary gives, per side: decisions, the share where the search left its prior, the mean estimated, realized
and attainable gains per decision and per game (sums over a game's decisions of that side), with 95% bootstrap
intervals over games.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from agents.search import MAX_ROLLOUTS, SearchAgent, _blas_controller
from experiments.analysis.ismcts import role_name
from experiments.tournament.rounds import (
    SecretError,
    format_secret,
    game_secret,
    parse_secret,
    seat_agents,
    seeds_record,
    session_secret,
)
from experiments.tournament.stats import bootstrap_mean
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game

__all__ = ["measure_game", "summary"]


def side_of(config: GameConfig, state: Any, seat: int) -> str:
    """The side ``seat`` plays this round: the base game's and Saboteur 2's role groups, the Duel's colour."""
    name = role_name(config, state, seat)
    if config.game == "sab2":
        return {"blue_digger": "gold-digger", "green_digger": "gold-digger", "saboteur": "saboteur"}.get(name, "other")
    return name


def parse_rule(text: str) -> dict[str, Any]:
    """A selection rule ``ROLLOUTS[,halving=1][,margin=Z]`` as the search's settings."""
    budget, *opts = text.split(",")
    if not (budget.isascii() and budget.isdigit() and 1 <= int(budget) <= MAX_ROLLOUTS):
        raise ValueError(f"rule {text!r}: ROLLOUTS must be a whole number 1..{MAX_ROLLOUTS}")
    rule: dict[str, Any] = {"rollouts": int(budget), "halving": False, "margin": 0.0}
    for opt in opts:
        key, _, value = opt.partition("=")
        if key == "halving" and value in ("0", "1"):
            rule["halving"] = value == "1"
        elif key == "margin" and value.replace(".", "", 1).isdigit() and float(value) <= 10:
            rule["margin"] = float(value)
        else:
            raise ValueError(f"rule {text!r}: {opt!r} is not valid; valid options: halving=0|1, margin=0..10")
    return rule


def measure_game(config: GameConfig, seed: int, rollouts: int, reference: int, agent_secret: int,
                 rules: tuple[str, ...] = ()) -> dict[str, Any]:  # fmt: skip
    """One game with ``search:rollouts`` at seat ``seed mod P`` among ``expert`` seats; per searched decision the
    search's estimate and the reference's (``reference`` rollouts in two halves) of each candidate's advantage over
    the prior's first move, and the move each selection rule of ``rules`` would have chosen there (on generators
    of their own: what the rule would play at the same decision, valued by the same reference)."""
    p = config.num_players
    seat = seed % p
    state = new_game(config, np.random.default_rng(seed))
    search = SearchAgent(config, rollouts=rollouts)
    agents: list[Any] = [search if s == seat else make_agent("expert", config) for s in range(p)]
    seat_agents(agents, agent_secret, seed)
    # The reference's own generator: from the game secret, apart from every seat's (the measurement must not move
    # the search's stream, or the game it measures would not be the one the search plays).
    ref_rng = np.random.default_rng([agent_secret, 0x5EA2C4])
    decisions: list[dict[str, Any]] = []
    while not state.game_over:
        s = state.current
        obs = encode_observation(state, s)
        mask = legal_action_mask(state).astype(np.int8)
        action = agents[s].act(obs, mask)
        stats = search.last_stats if s == seat else {}
        if s == seat and stats.get("candidates", 1) > 1:
            decisions.append(_reference(search, stats, action, reference, ref_rng, rules) | {
                "side": side_of(config, state, seat), "round": int(state.round)})  # fmt: skip
        state = apply_action(state, action, inplace=True)
    return {"seat": seat, "decisions": decisions}


def _reference(search: SearchAgent, stats: dict[str, Any], action: int, reference: int,
               rng: np.random.Generator, rules: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    """The reference valuation of the search's candidates at the decision it has just made, and the choices of
    the other selection rules there."""
    cand = np.array(list(stats["values"]), dtype=np.int64)  # the prior's order: the first is its first choice
    est = np.array(list(stats["values"].values()))
    own = (search.rng, search.rollouts, search.halving, search.margin)
    choices: dict[str, int] = {}
    try:
        search.rng = rng
        with contextlib.ExitStack() as stack:
            if search.blas_threads is not None:  # as the search's own act(): its BLAS threads (one by default)
                stack.enter_context(_blas_controller().limit(limits=search.blas_threads, user_api="blas"))
            k = max(2, reference // cand.size)
            value, valid = search._evaluate(cand, k, None)
            for text in rules:
                rule = parse_rule(text)
                search.rollouts, search.halving, search.margin = rule["rollouts"], rule["halving"], rule["margin"]
                choices[text] = search._select(cand, None)[0]
    finally:
        search.rng, search.rollouts, search.halving, search.margin = own
    ok = valid.all(axis=1)  # determinizations where every candidate finished (all, without a deadline)
    d = value[ok] - value[ok][:, :1]  # paired advantage over the prior's first move, per determinization
    half = d.shape[0] // 2
    a, b = d[:half].mean(axis=0), d[half:].mean(axis=0)
    chosen = int(np.flatnonzero(cand == action)[0])
    best_a = int(np.argmax(a))
    return {
        "candidates": int(cand.size),
        "action": int(action),
        "chosen": chosen,
        "estimated": float(est[chosen] - est[0]),
        "realized": float(d[:, chosen].mean()),
        "realized_se": float(d[:, chosen].std(ddof=1) / np.sqrt(d.shape[0])) if d.shape[0] > 1 else float("nan"),
        "attainable": float(b[best_a]),
        "reference": [round(float(x), 4) for x in d.mean(axis=0)],
        "rules": {text: {"chosen": c, "realized": float(d[:, c].mean())} for text, c in choices.items()},
    }


def _ci(lo: float, hi: float) -> str:
    return "[n/a]" if not (np.isfinite(lo) and np.isfinite(hi)) else f"[{lo:+.3f}, {hi:+.3f}]"


def _per_game(records: list[dict[str, Any]], side: str) -> list[list[dict[str, Any]]]:
    """Each game's decisions of ``side``, for the games that have any."""
    games = [[d for d in r["decisions"] if d["side"] == side] for r in records]
    return [g for g in games if g]


def summary(path: Path) -> str:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records:
        return f"{path}: no games yet"
    head = records[0]
    sides = sorted({d["side"] for r in records for d in r["decisions"]})
    lines = [f"{path}: {head['game']} {head['players']} players, search:{head['rollouts']} at seat g mod P of an "
             f"expert table, reference {head['reference']} rollouts; {len(records)} games",
             "gains over the prior's first move, the seat's gold (Duel: difference) per decision and per game "
             "[95% bootstrap over games]",
             f"{'side':12s} {'decisions':>9s} {'left prior':>10s} {'estimated':>10s} {'realized/dec':>13s} "
             f"{'attainable/dec':>15s} {'realized/game':>24s} {'attainable/game':>24s}"]  # fmt: skip
    for side in sides:
        per_game = _per_game(records, side)
        flat = [d for g in per_game for d in g]
        n = len(flat)
        left = np.mean([d["chosen"] != 0 for d in flat])
        est, real, att = (np.mean([d[k] for d in flat]) for k in ("estimated", "realized", "attainable"))
        rg = bootstrap_mean(np.array([sum(d["realized"] for d in g) for g in per_game]))
        ag = bootstrap_mean(np.array([sum(d["attainable"] for d in g) for g in per_game]))
        lines.append(
            f"{side:12s} {n:9d} {left:10.1%} {est:+10.3f} {real:+13.3f} {att:+15.3f} "
            f"{rg[0]:+8.3f} {_ci(rg[1], rg[2]):18s} {ag[0]:+8.3f} {_ci(ag[1], ag[2]):18s}"
        )
    rules = list(head.get("rules") or [])  # the run's setup, in every record
    if rules:
        lines += ["", "selection rules at the same decisions (each on its own generator): realized gain per game, "
                  f"the share of decisions where the rule left the prior, and minus rule {rules[0]!r} on the same "
                  "decisions (paired) [95% bootstrap over games]:"]  # fmt: skip
        for side in sides:
            per_game = _per_game(records, side)
            ref = np.array([sum(d["rules"][rules[0]]["realized"] for d in g) for g in per_game])
            lines.append(f"  {side}:")
            for text in rules:
                x = np.array([sum(d["rules"][text]["realized"] for d in g) for g in per_game])
                m, lo, hi = bootstrap_mean(x)
                dm, dlo, dhi = bootstrap_mean(x - ref)
                left = np.mean([d["rules"][text]["chosen"] != 0 for g in per_game for d in g])
                lines.append(f"    {text:22s} {m:+7.3f} {_ci(lo, hi)}  left prior {left:4.0%}  "
                             f"minus {rules[0]}: {dm:+.3f} {_ci(dlo, dhi)}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.analysis.search_noise", description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="base", choices=["base", "sab2", "duel"])
    ap.add_argument("--players", type=int, default=5)
    ap.add_argument("--duel-layout", default=None, help="the Duel's layout (default: the game's default)")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7600000000, help="deal seed of game 0 (game g: seed + g)")
    ap.add_argument("--rollouts", type=int, default=128, help="the search's budget per move")
    ap.add_argument("--reference", type=int, default=2048, help="the reference's rollouts per decision")
    ap.add_argument(
        "--rules",
        nargs="*",
        default=[],
        help="selection rules ROLLOUTS[,halving=1][,margin=Z] to "
        "compare at the same decisions (e.g. 128 512 128,halving=1)",
    )
    ap.add_argument("--secret", default=None, help="agent-seed secret (hex); default: drawn and printed")
    ap.add_argument("--out", type=Path, default=None, help="JSONL of the games (resumable)")
    ap.add_argument("--summary", type=Path, default=None, help="print the table of a run's JSONL and stop")
    args = ap.parse_args(argv)
    if args.summary is not None:
        if not args.summary.is_file():
            ap.error(f"--summary {args.summary}: no such file")
        print(summary(args.summary))
        return
    if args.out is None:
        ap.error("give --out FILE (or --summary FILE)")
    for name, lo in (("games", 1), ("rollouts", 2), ("reference", 4)):
        v = getattr(args, name)
        if not lo <= v <= MAX_ROLLOUTS:
            ap.error(f"--{name.replace('_', '-')} {v} is out of range; valid: {lo}..{MAX_ROLLOUTS}")
    try:
        for text in args.rules:
            parse_rule(text)
        config = (
            GameConfig(game="duel", duel_layout=args.duel_layout)
            if args.game == "duel" and args.duel_layout
            else GameConfig(game=args.game, num_players=2 if args.game == "duel" else args.players)
        )
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
    except (ValueError, SecretError) as err:
        ap.error(str(err))
    setup = {"game": args.game, "players": config.num_players, "layout": args.duel_layout,
             "rollouts": args.rollouts, "reference": args.reference, "rules": args.rules}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()] if args.out.exists() else []
    if old and {k: old[0].get(k) for k in setup} != setup:
        ap.error(f"{args.out} holds another experiment ({ {k: old[0].get(k) for k in setup} }); this one is {setup}")
    done = {r["seed"] for r in old}
    with args.out.open("a") as fh:
        for seed in range(args.seed, args.seed + args.games):
            if seed in done:
                continue
            agent_secret = game_secret(secret, ("search_noise", args.game, config.num_players, seed))
            game = measure_game(config, seed, args.rollouts, args.reference, agent_secret, tuple(args.rules))
            rec = {"seed": seed, **setup, **game,
                   **seeds_record(agent_secret)}  # fmt: skip
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(f"game {seed}: {len(rec['decisions'])} searched decisions", file=sys.stderr, flush=True)
    print(summary(args.out))
    print(f"agent seeds: secret {format_secret(secret)} (--secret re-plays this run's games)")


if __name__ == "__main__":
    main()
