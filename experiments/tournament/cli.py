"""Self-play tournaments between ladder agents, with crash-safe logs and a results table.

Examples::

    python -m experiments.tournament                                   # the README's short main job
    python -m experiments.tournament --miners suspicious --saboteurs covert --players 5 7 \\
        --games 2000 --workers 2 --out runs/x
    python -m experiments.tournament.report runs/x

The main job (the base game with none of ``--miners``, ``--saboteurs`` and ``--insert``): the top of the ladder,
``expert``, ``learned`` and ``search``, each inserted into one seat of a table of ``expert`` miners and saboteurs,
12 games at 5 players unless ``--games`` / ``--players`` say otherwise. Naming any of the three options plays the
tables asked for instead (the missing ones default to ``random suspicious`` miners and ``random covert``
saboteurs).

Every combination of ``--miners`` x ``--saboteurs`` x ``--players`` is a cell. In a cell every gold-digger seat plays
the miner policy and every saboteur seat the saboteur policy (roles are dealt each round, so a seat switches policy with
its role). Game ``g`` of every cell uses seed ``seed + g`` (duplicate deals: the same decks, roles, goals and seats in
every compared cell). The agents' seeds are sealed: spawned from a tournament secret (``--secret``, default drawn from
``os.urandom`` once per process and printed when the run ends) mixed with the game's key, never from the public seed, so
an agent's seed says nothing about the deal; each game's own secret is logged with it (``seeds``), after the game.
Results are identical for the same arguments and ``--secret`` whatever ``--workers``. Only agents declared oracles
(``oracle = True``) are given the hidden state; tables mark them ``*``.

With ``--out DIR`` each finished game is appended to ``DIR/rounds.jsonl.gz`` (one gzip member per game, written and
fsync-ed before the next; format, keys and checks in :mod:`experiments.tournament.logs`) as one JSON record per round:
``header`` (seed, rules and package versions, commit and dirty flag, N, rounds, agents per seat, roles, left-over
role, gold goal slot),
``events`` (public, with the private part - a face-down discard's card, a map result - under ``private``),
``actions``, ``beliefs`` (the reference observer and a heuristic public observer after every decision, per mille;
each acting agent's own beliefs where it has any) and ``end`` (winner, reason, decisions, finder, nuggets).

Interruptions. A SIGKILL at any instant loses at most the games in flight. SIGTERM or SIGINT (Ctrl-C) finishes the
games in flight (the current game, or the chunks the workers are playing), logs them, prints the table so far and
exits with 128 + the signal number; a second signal stops at once. Re-running the same command resumes: games in
the log are skipped, a torn tail is cut off, incomplete or duplicated games are dropped and re-played once, and a
log of another package or rules version is refused. A worker process that dies (local pool or Ray actor) has its
games re-run on a new one. The main process keeps running aggregates, not records: memory stays flat in the
number of games; each worker keeps one environment per configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agents import agent_names, oracle_names, usage_by_game
from experiments.tournament.claims import (
    _bare,
    _claims_cell,
    _claims_k,
    check_claims_options,
    claims_options,
    with_claims_per_turn,
)
from experiments.tournament.duel import DuelTable
from experiments.tournament.duel import summary_table as duel_summary_table
from experiments.tournament.logs.format import LogError
from experiments.tournament.rounds import (
    SecretError,
    format_secret,
    parse_secret,
    session_secret,
)
from experiments.tournament.run import Interrupted, run, run_duel, run_sab2
from experiments.tournament.sab2 import Sab2Tables
from experiments.tournament.sab2 import summary_table as sab2_summary_table
from experiments.tournament.summary import Summary
from saboteur_env.duel.variant import DUEL_LAYOUT_NAMES

DEFAULT_MINERS = ("random", "suspicious")
DEFAULT_SABOTEURS = ("random", "covert")
# README's main job (no --miners, --saboteurs or --insert): the top of the ladder in one seat of an expert table.
MAIN_JOB_TABLE = "expert"
MAIN_JOB_INSERT = ("expert", "learned", "search")




# ---- command line ---------------------------------------------------------------------------------------------------
def _unique(parser: argparse.ArgumentParser, option: str, values: list) -> None:
    seen = set()
    for v in values:
        if v in seen:
            parser.error(f"{option} lists {v!r} twice")
        seen.add(v)


MODEL_PREFIXES = ("ppo:", "learned:")  # agents loaded from a file: ppo:PATH (MaskablePPO), learned:PATH.npz


def _known(name: str, game: str) -> bool:
    """Whether ``name`` plays ``game`` here: its scripted names (``agents.agent_names``), model files, the search
    agents (``ismcts[:N]``) and ``text:NAME`` of a scripted NAME that is no oracle (make_agent names the exact error
    of a bad N or NAME)."""
    scripted = agent_names(game, kind="scripted")
    if name in scripted or name == SHIPPED or name.startswith(MODEL_PREFIXES) or name.partition(":")[0] == LLM:
        return True
    if name.partition(":")[0] in agent_names(game, kind="search"):  # ismcts, ismcts:N
        return True
    return name.startswith("text:") and name[5:] in scripted and name[5:] not in oracle_names(game)


SHIPPED = "learned"  # the learned policy shipped for the game and player count (agents/policies/)
LLM = "llm"  # llm / llm:KEY=VALUE,...: a chat endpoint (agents.llm; $SABOTEUR_LLM_BASE_URL, $SABOTEUR_LLM_MODEL)


def _check_shipped(parser: argparse.ArgumentParser, names: list[str], configs: list[Any]) -> None:
    """``learned`` needs a shipped policy for every configuration of the run: say so now, not inside a worker."""
    if SHIPPED in names:
        from agents.learned import shipped_agent
        from saboteur_env import GameConfig

        for kwargs in configs:
            try:
                shipped_agent(GameConfig(**kwargs))
            except ValueError as err:
                parser.error(f"agent {SHIPPED!r}: {err}")


def _native(parser: argparse.ArgumentParser, name: str, configs: list[dict[str, Any]]) -> bool:
    """Whether ``name`` is a native talker (``claims[@K]+native:NAME``, ``agents.claims.NativeTalker``); one that
    does not talk by itself, or does not fit a configuration of the run, is an error now, not in a worker."""
    if "native" not in claims_options(name):
        return False
    from agents.claims import make_native_talker
    from saboteur_env import GameConfig

    for kwargs in configs:
        try:
            make_native_talker(_bare(name), GameConfig(**kwargs, claims=True, claims_per_turn=_claims_k(name)), None,
                               claims_options(name))  # fmt: skip
        except (ValueError, OSError) as err:
            parser.error(f"agent {name!r}: {err}")
    return True


def _check_ppo(parser: argparse.ArgumentParser, names: list[str], game: str = "base") -> None:
    for name in names:
        for prefix in MODEL_PREFIXES:
            if name.startswith(prefix) and not Path(name[len(prefix) :]).is_file():
                parser.error(f"agent {name!r}: no model file {name[len(prefix) :]!r}")
        if name.partition(":")[0] == LLM:  # its options and endpoint settings: say what is wrong now, not in a worker
            from agents import make_agent
            from saboteur_env import GameConfig

            try:
                make_agent(name, GameConfig(game=game))
            except ValueError as err:
                parser.error(str(err))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="scripted agents by game (agents.agent_names):\n"
                                     + usage_by_game(("base", "sab2", "duel"), kind="scripted")
                                     + "\n  every game: ismcts[:N], learned, learned:PATH.npz, text:NAME, claims:NAME, "
                                     "llm[:KEY=VALUE,...] (agents.llm)"
                                     "\n  base and duel: ppo:PATH")  # fmt: skip
    parser.add_argument("--game", choices=("base", "duel", "sab2"), default="base", help="rule set")
    parser.add_argument("--agents", nargs="+", default=["greedy", "random"],
                        help="duel: every ordered pair plays (both colours on the same seeds); sab2: one cell per "
                        "agent, which plays every seat (every seat but the inserted one with --insert)")  # fmt: skip
    parser.add_argument("--duel-layout", choices=DUEL_LAYOUT_NAMES, default="seed_5x9", help="duel geometry")
    parser.add_argument("--miners", nargs="+", default=None,
                        help=f"miner policies (default: {' '.join(DEFAULT_MINERS)}; none of the three: the main job)")
    parser.add_argument("--saboteurs", nargs="+", default=None,
                        help=f"saboteur policies (default: {' '.join(DEFAULT_SABOTEURS)})")  # fmt: skip
    parser.add_argument("--insert", nargs="+", default=None, metavar="AGENT",
                        help="seat one AGENT (every role) at seat seed mod N of each table (base: --miners x "
                        "--saboteurs; sab2: --agents); each is a cell, the first is the reference of the paired "
                        "comparison")  # fmt: skip
    parser.add_argument("--players", type=int, nargs="+", default=None,
                        help="player counts (base 3-10, default 5; sab2 2-12, default 5; the duel is 2-player)")
    parser.add_argument("--games", type=int, default=12, help="games per cell (each game has 3 rounds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (local) or actors (ray)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where the games run")
    parser.add_argument("--address", default=None, help="Ray cluster address (ray backend; default: a local one)")
    parser.add_argument("--chunk", type=int, default=4, help="games per request to a worker process or Ray actor")
    parser.add_argument("--out", type=Path, default=None,
                        help="log directory (DIR/rounds.jsonl.gz; crash-safe; re-run the same command to resume)")
    parser.add_argument("--no-beliefs", action="store_true", help="skip observers and belief snapshots (faster)")
    parser.add_argument("--claims-per-turn", type=int, default=None, metavar="K",
                        help="claims per turn (1-8) of the claims cells (agents claims:NAME; the cells are then "
                        "named claims@K:NAME)")  # fmt: skip
    parser.add_argument("--secret", default=None, metavar="HEX",
                        help="tournament secret the agents' seeds come from (128-bit hex; default: drawn from "
                        "os.urandom and printed at the end). Each game's own secret is in its log records")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
    except SecretError as err:
        parser.error(f"--secret: {err}")
    if args.games < 1 or args.workers < 1 or args.chunk < 1:
        parser.error("--games, --workers and --chunk must be at least 1")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be at least 0")
    if args.address and args.backend != "ray":
        parser.error("--address needs --backend ray")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        parser.error("--backend ray needs the 'ray' extra: pip install -e '.[ray]'")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a log directory")
    common = {"workers": args.workers, "out": args.out, "backend": args.backend, "address": args.address,
              "chunk": args.chunk, "secret": secret}  # fmt: skip
    if args.claims_per_turn is not None:
        if not 1 <= args.claims_per_turn <= 8:
            parser.error(f"--claims-per-turn {args.claims_per_turn} is out of range; valid: 1..8")
        try:
            applies = {"base": ("miners", "saboteurs", "insert"), "sab2": ("agents", "insert"), "duel": ("agents",)}
            for option in applies[args.game]:
                names = getattr(args, option)
                if names is not None:
                    setattr(args, option, [with_claims_per_turn(n, args.claims_per_turn) for n in names])
        except ValueError as err:
            parser.error(str(err))
    if args.game != "base":
        # Seats by role are the base game's: Saboteur 2 has six roles and the Duel none (never silently ignored).
        for option, given in (("--miners", args.miners), ("--saboteurs", args.saboteurs)):
            if given is not None:
                parser.error(f"{option} is for the base game; with --game {args.game} every seat plays --agents"
                             + (" (and --insert seats one agent at seat seed mod N)" if args.game == "sab2" else ""))
    if args.game == "duel" and args.insert is not None:
        parser.error("--insert is for the base game and sab2; the duel's --agents play each other in both colours")
    if args.game == "duel":
        if args.players not in (None, [2]):
            parser.error("--players: the duel is a two-player game")
        _unique(parser, "--agents", args.agents)
        try:
            _claims_cell(*args.agents)
        except ValueError as err:
            parser.error(str(err))
        for name in args.agents:
            try:
                check_claims_options(name, "duel", 2)
            except ValueError as err:
                parser.error(str(err))
            if _native(parser, name, [{"game": "duel", "duel_layout": args.duel_layout}]):
                continue
            if _claims_k(name) and _bare(name) in agent_names("duel", kind="scripted"):
                continue
            if not _known(name, "duel"):
                parser.error(f"unknown duel agent {name!r}; valid: {', '.join(agent_names('duel', kind='scripted'))}, "
                             "ismcts[:N], text:NAME, ppo:PATH, learned, learned:PATH.npz or "
                             "llm[:KEY=VALUE,...]")  # fmt: skip
        _check_ppo(parser, args.agents, "duel")
        _check_shipped(parser, args.agents, [{"game": "duel", "duel_layout": args.duel_layout}])
        duels = DuelTable()
        games = run_duel(args.agents, args.games, args.seed, args.duel_layout, **common)
        return _consume(parser, games, lambda records: [duels.add(r) for r in records],
                        lambda: duel_summary_table(duels), secret)  # fmt: skip
    players = args.players or [5]
    _unique(parser, "--players", players)
    if args.game == "sab2":
        for n in players:
            if not 2 <= n <= 12:
                parser.error(f"--players {n} is out of range for sab2; valid: 2..12")
        _unique(parser, "--agents", args.agents)
        _unique(parser, "--insert", args.insert or [])
        named = [*args.agents, *(args.insert or [])]
        try:
            for name in named:
                _claims_k(name)
            for table in args.agents:
                for ins in args.insert or [None]:
                    _claims_cell(table, ins)
        except ValueError as err:
            parser.error(str(err))
        for name in named:
            try:
                for n in players:
                    check_claims_options(name, "sab2", n)
            except ValueError as err:
                parser.error(str(err))
            if _native(parser, name, [{"game": "sab2", "num_players": n} for n in players]):
                continue
            if _claims_k(name) and _bare(name) in agent_names("sab2", kind="scripted"):
                continue
            if not _known(name, "sab2") or name.startswith("ppo:"):
                parser.error(f"unknown Saboteur 2 agent {name!r}; valid: "
                             f"{', '.join(agent_names('sab2', kind='scripted'))}, ismcts[:N], text:NAME, learned, "
                             "learned:PATH.npz or llm[:KEY=VALUE,...]")  # fmt: skip
        _check_ppo(parser, named, "sab2")
        _check_shipped(parser, named, [{"game": "sab2", "num_players": n} for n in players])
        tables = Sab2Tables(inserts=args.insert)
        games = run_sab2(players, args.agents, args.games, args.seed, inserts=args.insert, **common)
        return _consume(parser, games, lambda records: [tables.add(r) for r in records],
                        lambda: sab2_summary_table(tables), secret)  # fmt: skip
    for n in players:
        if not 3 <= n <= 10:
            parser.error(f"--players {n} is out of range; valid: 3..10")
    if args.miners is None and args.saboteurs is None and args.insert is None:
        args.miners, args.saboteurs = [MAIN_JOB_TABLE], [MAIN_JOB_TABLE]
        args.insert = list(MAIN_JOB_INSERT)
    args.miners = args.miners or list(DEFAULT_MINERS)
    args.saboteurs = args.saboteurs or list(DEFAULT_SABOTEURS)
    for option, names in (("--miners", args.miners), ("--saboteurs", args.saboteurs), ("--insert", args.insert or [])):
        _unique(parser, option, names)
        for name in names:
            try:
                for n in players:
                    check_claims_options(name, "base", n)
                if _native(parser, name, [{"num_players": n} for n in players]):
                    continue
                if _claims_k(name) and _bare(name) in agent_names("base", kind="scripted"):
                    continue
            except ValueError as err:
                parser.error(str(err))
            if not _known(name, "base"):
                parser.error(f"unknown agent {name!r}; valid: {', '.join(agent_names('base', kind='scripted'))}, "
                             "ismcts[:N], text:NAME, ppo:PATH, learned, learned:PATH.npz or "
                             "llm[:KEY=VALUE,...]")  # fmt: skip
        _check_ppo(parser, names)
        _check_shipped(parser, names, [{"num_players": n} for n in players])
    try:
        for m in args.miners:
            for sab in args.saboteurs:
                for ins in args.insert or [None]:
                    _claims_cell(m, sab, ins)
    except ValueError as err:
        parser.error(str(err))
    summary = Summary(inserts=args.insert)
    games = run(players, args.miners, args.saboteurs, args.games, args.seed, beliefs=not args.no_beliefs,
                inserts=args.insert, **common)  # fmt: skip
    return _consume(parser, games, summary.add, summary.table, secret)


def _consume(
    parser: argparse.ArgumentParser,
    games: Iterator[list[dict]],
    add: Callable[[list[dict]], object],
    table: Callable[[], str],
    secret: int,
) -> int:
    """Feed every game to the running aggregates, then print the table (also after an interruption) and, once no
    game of the run is being played any more, the tournament secret."""
    from experiments.tournament.logs.read import cli_warnings

    with cli_warnings(), _reveal(secret):
        try:
            for records in games:
                add(records)
        except Interrupted as stop:
            print(table())
            print(stop, file=sys.stderr)
            return 128 + stop.signum
        except KeyboardInterrupt:  # a second signal: stopped at once, the games in flight are lost
            print("\nstopped at once; every game logged so far is kept: run the same command again to resume",
                  file=sys.stderr)  # fmt: skip
            return 130
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    print(table())
    return 0


@contextlib.contextmanager
def _reveal(secret: int) -> Iterator[None]:
    try:
        yield
    finally:  # after the last game (or the interruption): no agent of this run is playing any more
        print(f"agent-seed secret: {format_secret(secret)} (--secret {format_secret(secret)} re-runs the agents' "
              "randomness; each logged game carries its own game secret)", file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
