"""Start the browser table: ``python -m experiments.web --game sab2 --players 6 --bots heuristic``.

Serves the page on 127.0.0.1 (``--port``, default 8765; ``--port 0`` picks a free one) and opens a browser on it
unless ``--no-browser``. The address it prints carries a secret token drawn at each launch (as Jupyter's does):
only a browser that opened it (or a client sending the token) is served, so other web pages cannot use the table.
The options prefill the page's form; several tables can be played at once from it. Model files (``--bots
ppo:PATH``) and language models (``--bots llm:prompt=compact``; the endpoint from $SABOTEUR_LLM_BASE_URL and
$SABOTEUR_LLM_MODEL) sit only when named here; the page offers them, and never opens a path or calls an endpoint a
request names. The llm seats' transcripts go to ``--transcripts FOLDER`` (default ``web-llm-transcripts``), one
file per table, written when its game is over or the server stops (never mid-game: they hold the bots' views).
``--replay LOG [--replay-game K]`` loads the K-th game of a tournament log into the page's replay viewer (after
checking that it re-plays as logged).
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
import threading
import webbrowser
from pathlib import Path

from saboteur_env import variants


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from agents.llm import is_llm_name
    from experiments.web.table import BOTS, THINK_SECONDS, TableError, bot_names, check_settings, make_bot
    from saboteur_env import GameConfig

    parser = argparse.ArgumentParser(prog="python -m experiments.web", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--game", choices=tuple(BOTS), default="base")
    parser.add_argument("--players", type=int, default=None, help="base 3-10, sab2 2-12, duel 2")
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 .. players-1)")
    offered = "; ".join(f"{g}: {', '.join(bot_names(g))}" for g in BOTS)  # from the agent registry
    parser.add_argument("--bots", default=None, help="agent in the other seats (heuristic; the duel: greedy), or "
                        "one name per seat separated by commas (your own seat's entry is ignored); ppo:PATH too. "
                        f"{offered}; every game: ismcts:N, llm, llm:KEY=VALUE,...")
    parser.add_argument("--seed", type=int, default=None, help="a non-negative integer (default: fresh entropy)")
    parser.add_argument("--rounds", type=int, default=3, choices=(1, 2, 3))
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--bot-seconds", type=float, default=THINK_SECONDS,
                        help=f"the agents' thinking time per request, and the cap of one IS-MCTS move; moves left "
                        f"wait for the page's next request (0.1 .. 600, default {THINK_SECONDS:g})")  # fmt: skip
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser (scripts, tests)")
    parser.add_argument("--transcripts", type=Path, default=None, help="with llm bots: the folder of their "
                        "transcripts, one JSON file per table, written at its game's end or the server's (default: "
                        "web-llm-transcripts, made here)")
    parser.add_argument("--replay", type=Path, help="a tournament log to watch in the replay viewer")
    parser.add_argument("--replay-game", type=int, default=0, help="index of the game in --replay's log")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is out of range; valid: 0..65535")
    if not 0.1 <= args.bot_seconds <= 600:  # (NaN fails too)
        parser.error(f"--bot-seconds {args.bot_seconds} is out of range; valid: 0.1..600")
    if args.bots is not None and "," in args.bots:
        args.bots = args.bots.split(",")
    names = [args.bots] if isinstance(args.bots, str) else args.bots or []
    args.model_bots = sorted({n for n in names if n.startswith(("ppo:", "learned:")) or is_llm_name(n)})
    try:
        check_settings(args.game, args.players, args.seat, args.bots, args.seed, args.rounds, args.model_bots)
    except TableError as err:
        parser.error(str(err).replace("players=", "--players ").replace("seat=", "--seat ").replace(
            "seed=", "--seed ").replace("bots: ", "--bots ").replace("bots=", "--bots "))  # fmt: skip
    llms = [n for n in args.model_bots if is_llm_name(n)]
    for name in llms:  # the endpoint's settings, checked now (no request is sent)
        try:
            make_bot(name, GameConfig(game=args.game))
        except (ValueError, TableError) as err:
            parser.error(f"--bots {name[:200]!r}: {err}")
    if args.transcripts is not None and not llms:
        parser.error("--transcripts keeps llm bots' transcripts: name an llm in --bots")
    if llms and args.transcripts is None:
        args.transcripts = Path("web-llm-transcripts")
    if args.transcripts is not None:
        try:
            args.transcripts.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            parser.error(f"--transcripts {str(args.transcripts)[:200]!r}: {err}")
    for name in args.model_bots:
        if is_llm_name(name):
            continue
        path = name.partition(":")[2]
        if not Path(path).is_file():  # found now, not at the first table; a device or FIFO is no model file
            parser.error(f"--bots {name!r}: no model file {path!r}")
    if args.players is None:
        args.players = variants.get(args.game).default_players
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for module in ("starlette", "uvicorn"):
        try:
            __import__(module)
        except ModuleNotFoundError:
            raise SystemExit(f"the web table needs {module!r} (the 'web' extra): pip install -e '.[web]'") from None
    import uvicorn

    from experiments.web.server import StoppingServer, create_app
    from experiments.web.table import TableStore

    log_game = None
    if args.replay is not None:
        from experiments.tournament.logs.read import cli_warnings
        from experiments.tournament.replay import game_from_log

        if not args.replay.exists():
            print(f"--replay {args.replay} does not exist", file=sys.stderr)
            return 2
        try:
            with cli_warnings():
                log_game = game_from_log(args.replay, args.replay_game)
        except ValueError as err:
            print(f"--replay: {err}", file=sys.stderr)
            return 2
    defaults = {"game": args.game, "players": args.players, "seat": args.seat, "bots": args.bots,
                "seed": args.seed, "rounds": args.rounds}  # fmt: skip
    store = TableStore(think_seconds=args.bot_seconds, model_bots=args.model_bots, transcripts=args.transcripts)
    token = secrets.token_urlsafe(24)
    app = create_app(defaults, log_game, store=store, token=token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as err:
        print(f"cannot listen on 127.0.0.1:{args.port}: {err} (try --port 0)", file=sys.stderr)
        return 1
    sock.listen(128)  # connections made as soon as the address is printed wait for the server
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/?token={token}" + ("#replay" if log_game else "")
    print(f"saboteur table on {url}  (Ctrl-C stops it)", flush=True)
    if not args.no_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url)).start()
    # SIGTERM / Ctrl-C end the agents' thinking first; a request still running after 10 s is not waited for.
    server = StoppingServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=10), store)
    try:
        server.run(sockets=[sock])
    finally:  # the games still in play end with the server: their llm seats' transcripts are kept
        store.save_transcripts()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
