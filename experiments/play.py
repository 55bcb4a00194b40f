"""Play Saboteur in the terminal against bots.

    python -m experiments.play --players 4 --seat 0 --bots heuristic --seed 7
    python -m experiments.play --players 5 --bots bayes
    python -m experiments.play --game duel --seat 1 --bots greedy          # Saboteur: The Duel
    python -m experiments.play --game sab2 --players 6 --bots heuristic    # Saboteur 2
    python -m experiments.play --bots llm:prompt=compact --transcript t.json  # language-model bots (docs/text.md)

With ``llm`` bots ($SABOTEUR_LLM_BASE_URL and $SABOTEUR_LLM_MODEL name the endpoint) every prompt and reply, the
failures and fallbacks and the token counts are written to ``--transcript`` (default ``play-llm-UTCTIME.json``)
however the game ends: over, ``quit``, end of input or Ctrl-C.

Run it from the repository root (``experiments`` is part of the checkout, not of the installed package).

Every move of the bots is reported once, as the public event it is (``  > seat 2 placed T05 rot180 at (2,3)``). On
your turn you see your view (board with row and column numbers, your hand with each card's name and what it does,
tools) and the numbered legal moves, each named in the move notation of docs/text.md (cells ``(row,col)`` as the
board labels them, ``rot180`` for a turned card, ``seat+k`` for the seat k places after you). When a round ends, the
exact board as the round ended (``saboteur_env.pictures.round_end_view``: your view before the last move plus that
move's public events), the goals turned up and the round's result (roles revealed) are shown before the next deal.
Answer with a move's number, its name as listed, or the start of a name when only one legal move fits; in the base
game:

=========================  ==================================================================================
``place T05 at (2,3)``     place T05 at row 2, col 3 (``place T06 rot180 at (1,4)``: turned 180°)
``discard T05``            discard (pass) a T05
``map goal 1``             use a map on goal slot 1 (0 top, 1 middle, 2 bottom)
``rockfall at (2,3)``      rockfall at row 2, col 3
``break cart seat+2``      broken cart on the seat 2 places after you (``seat+0`` = yourself)
``repair lantern seat+0``  repair your lantern (a double repair adds ``with REPAIR_LANTERN_CART``)
``help`` / ``quit``        this table / leave the game
=========================  ==================================================================================

The older short forms still work: ``T05 2,3``, ``T06' 1,4``, ``d T05``, ``map 1``, ``rock 2,3``, ``break cart 2``,
``repair lantern 0``.

Bad input (any text, huge numbers, non-ASCII digits, empty lines, undecodable bytes) is answered with a message and
a new prompt; the game is never lost to a typo. End of input or Ctrl-C leaves the game.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from agents import agent_names
from agents.agent import bind_oracle
from agents.llm import is_llm_name
from experiments.llm.logs import save_transcripts
from experiments.tournament.rounds import agent_seeds, draw_secret
from experiments.web.scene import board_scene
from experiments.web.table import TableError, ismcts_sims, make_bot, round_lines
from experiments.web.words import card_info, event_lines, hand_kinds, moves, new_events, reveals, view_events
from saboteur_env import (
    ActionType,
    ConfigError,
    GameConfig,
    final_ranking,
    legal_action_mask,
    num_actions,
    player_view,
    raw_env,
    render_text,
    returns,
    variants,
)
from saboteur_env.base.cards import KIND_CODES, KIND_NAMES, TOOL_NAMES
from saboteur_env.common.notation import cell_text
from saboteur_env.pictures import round_end_view
from saboteur_env.text import MoveError as TextMoveError
from saboteur_env.text import parse_move as parse_name

HELP = __doc__.split("in the base\ngame:", 1)[1].split("Bad input", 1)[0]
GAMES = ("base", "duel", "sab2")
# ASCII digits only: int() accepts '١' and fails on 5,000 digits; str.isdigit() accepts '²', which int() rejects.
_NUMBER = re.compile(r"[0-9]{1,6}")


def _number(text: str) -> int | None:
    """``text`` as a small non-negative ASCII integer, else None."""
    return int(text) if _NUMBER.fullmatch(text) else None


def _shown(text: str, limit: int = 24) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


class MoveError(ValueError):
    """The text is not a legal move now; the message says why."""


def parse_move(text: str, layout, legal: np.ndarray, config: GameConfig | None = None) -> int:
    """Turn a number (index into the listed moves), a move name (``saboteur_env.text.parse_move``: the notation and
    its older spellings) or, in the base game, an older short form into a legal action id."""
    text = text.strip()
    if not text:
        raise MoveError("empty input; type a move number or 'help'")
    if re.fullmatch(r"[0-9]+", text):
        i = _number(text)
        if i is None or not 0 <= i < len(legal):
            shown = text if len(text) <= 12 else text[:12] + "..."
            raise MoveError(f"no move number {shown}; choose 0..{len(legal) - 1}")
        return int(legal[i])
    config = config if config is not None else getattr(layout, "config", None)
    named: str | None = None
    if config is not None:
        mask = np.zeros(num_actions(config), dtype=bool)
        mask[np.asarray(legal, dtype=np.int64)] = True
        try:
            return parse_name(config, text, mask)
        except TextMoveError as err:
            named = str(err).split("; valid:")[0]  # the legal moves are listed above the prompt
    try:
        return _parse_short(text, layout, legal)
    except MoveError as err:
        if named is not None and str(err).startswith("cannot read"):
            raise MoveError(f"cannot read {_shown(text)}: {named}; type a move number (0..{len(legal) - 1}) or a "
                            "listed move's name") from None
        raise


def _parse_short(text: str, layout, legal: np.ndarray) -> int:
    """The base game's older short forms (``T05 2,3``, ``d T05``, ``map 1``, ``rock 2,3``, ``break cart 2``)."""
    from saboteur_env.base.actions import ActionLayout

    if not isinstance(layout, ActionLayout):  # the duel's and Saboteur 2's layouts: moves by number only
        raise MoveError(f"cannot read {_shown(text)}; type a move number (0..{len(legal) - 1})")
    words = text.replace(",", " ").split()
    if not words:  # only commas
        raise MoveError(f"cannot read {_shown(text)}; type a move number or 'help'")
    head = words[0].upper().rstrip("'")
    candidates = [int(a) for a in legal]

    def pick(pred, what: str) -> int:
        found = [a for a in candidates if pred(layout.decode(a))]
        if not found:
            raise MoveError(f"{what} is not a legal move now")
        return found[0]

    def cell(args: list[str]) -> tuple[int, int]:
        cells = [_number(a.removeprefix("-")) for a in args]
        if len(args) != 2 or None in cells:
            raise MoveError("give the cell as ROW,COL, e.g. 2,3")
        return int(args[0]), int(args[1])

    if head in KIND_CODES[:16]:
        kind = KIND_CODES.index(head)
        rot = 1 if words[0].endswith("'") else 0
        row, col = cell(words[1:])
        what = f"placing {KIND_NAMES[kind]}{' 180' if rot else ''} at {row},{col}"

        def matches(a) -> bool:
            return a.type == ActionType.PLACE and a.kind == kind and a.rotation == rot and (a.row, a.col) == (row, col)

        return pick(matches, what)
    if head in ("D", "DISCARD", "PASS"):
        if len(words) != 2 or words[1].upper() not in KIND_CODES[:27]:
            raise MoveError("say which card to discard, e.g. 'd T05' or 'd MAP'")
        kind = KIND_CODES.index(words[1].upper())
        return pick(lambda a: a.type == ActionType.DISCARD and a.kind == kind, f"discarding {KIND_NAMES[kind]}")
    if head == "MAP":
        if len(words) != 2 or words[1] not in ("0", "1", "2"):
            raise MoveError("say which goal: 'map 0', 'map 1' or 'map 2'")
        return pick(lambda a: a.type == ActionType.MAP and a.goal == int(words[1]), f"a map on goal {words[1]}")
    if head in ("ROCK", "ROCKFALL"):
        row, col = cell(words[1:])
        return pick(
            lambda a: a.type == ActionType.ROCKFALL and (a.row, a.col) == (row, col), f"a rockfall at {row},{col}"
        )
    if head in ("BREAK", "REPAIR"):
        if len(words) != 3 or words[1].lower() not in TOOL_NAMES or _number(words[2]) is None:
            verb = head.lower()
            raise MoveError(f"say '{verb} TOOL SEAT', e.g. '{verb} cart 1' (tools: {', '.join(TOOL_NAMES)})")
        tool, target = TOOL_NAMES.index(words[1].lower()), int(words[2])
        types = (ActionType.BREAK,) if head == "BREAK" else (ActionType.REPAIR, ActionType.DOUBLE_REPAIR)
        return pick(lambda a: a.type in types and a.tool == tool and a.target == target,
                    f"{head.lower()} {TOOL_NAMES[tool]} on seat+{target}")  # fmt: skip
    raise MoveError(f"cannot read {_shown(text)}; type a move number or 'help'")


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, raw_env]:
    """The command line, checked, and the environment it asks for; a bad value is an argparse error (exit code 2)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=GAMES, default="base")
    parser.add_argument("--players", type=int, default=None, help="3-10 (base, default 4), 2-12 (sab2, default 5); "
                        "the duel has 2")  # fmt: skip
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 .. players-1)")
    scripted = "; ".join(f"{g}: {', '.join(agent_names(g, kind='scripted'))}" for g in GAMES)  # from the registry
    parser.add_argument("--bots", default=None, help=f"bot policy (default heuristic; the duel greedy): {scripted}; "
                        "every game: ismcts, ismcts:N (IS-MCTS, N simulations a move), learned (the shipped policy), "
                        "llm / llm:KEY=VALUE,... (a chat endpoint: $SABOTEUR_LLM_BASE_URL, docs/text.md)")
    parser.add_argument("--transcript", type=Path, default=None, help="with llm bots: the JSON file their prompts, "
                        "replies, failures and token counts go to when the game ends or you leave (default: "
                        "play-llm-UTCTIME.json here)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=None, help="a non-negative integer (default: fresh entropy)")
    parser.add_argument("--rounds", type=int, choices=(1, 2, 3), default=3)
    args = parser.parse_args(argv)
    variant = variants.get(args.game)
    if args.players is None:
        args.players = variant.default_players
    lo, hi = variant.min_players, variant.max_players
    if not lo <= args.players <= hi:
        parser.error(f"--players {args.players} is out of range for --game {args.game}; valid: {lo}..{hi}")
    if not 0 <= args.seat < args.players:
        parser.error(f"--seat {args.seat} is out of range; valid: 0..{args.players - 1}")
    if args.bots is None:
        args.bots = "greedy" if args.game == "duel" else "heuristic"
    valid_bots = agent_names(args.game, kind="scripted")
    try:
        sims = ismcts_sims(args.bots)  # ismcts / ismcts:N (IS-MCTS with N simulations a move), else None
    except TableError as err:
        parser.error(f"--{err}")
    if args.bots == "learned":  # the policy shipped for this game and player count (agents/policies/)
        from agents.learned import shipped_agent

        try:
            shipped_agent(GameConfig(game=args.game, num_players=args.players))
        except ValueError as err:
            parser.error(f"--bots learned: {err}")
    elif is_llm_name(args.bots):  # the endpoint's settings are checked now (no request is sent)
        try:
            make_bot(args.bots, GameConfig(game=args.game, num_players=args.players))
        except (ValueError, TableError) as err:
            parser.error(f"--bots {args.bots[:200]!r}: {err}")
    elif args.bots not in valid_bots and sims is None:
        parser.error(f"--bots {args.bots!r} is unknown for --game {args.game}; valid: {', '.join(valid_bots)}, "
                     "ismcts, ismcts:N, llm, llm:KEY=VALUE,...")  # fmt: skip
    if args.transcript is not None and not is_llm_name(args.bots):
        parser.error("--transcript keeps llm bots' transcripts: give --bots llm or llm:KEY=VALUE,...")
    if is_llm_name(args.bots) and args.transcript is None:
        args.transcript = Path(time.strftime("play-llm-%Y%m%dT%H%M%SZ.json", time.gmtime()))
    if args.transcript is not None and not args.transcript.parent.is_dir():
        parser.error(f"--transcript {str(args.transcript)[:200]!r}: no folder {str(args.transcript.parent)[:200]!r}")
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed {args.seed} must be >= 0")
    try:  # anything else the game's config rejects, named by the config itself
        env = raw_env(game=args.game, num_players=args.players, rounds=args.rounds)
    except ConfigError as err:
        parser.error(str(err))
    return args, env


def _picture(game, seat: int) -> str:
    """The seat's text view without its list of recent events: :func:`_play` reports every event once, itself, with
    absolute seats (the view's list repeated the bots' moves with relative ones)."""
    if game.config.game == "base":
        from saboteur_env.base.render import render_view

        return render_view(player_view(game, seat), title=f"view of seat {seat}", events=0)
    if game.config.game == "duel":
        from saboteur_env.duel.render import COLOUR_NAMES
        from saboteur_env.duel.render import render_view as duel_render_view

        return duel_render_view(player_view(game, seat), f"view of seat {seat} ({COLOUR_NAMES[seat]})", events=0)
    return render_text(game, seat)  # Saboteur 2's picture lists no events


def _read_line(inp: TextIO) -> str | None:
    """One line of input, ``None`` at its end; undecodable bytes become U+FFFD instead of an exception."""
    try:
        line = inp.readline()
    except UnicodeDecodeError:
        return "\ufffd"
    return line or None


# tunnel arms N=1 E=2 S=4 W=8 as box-drawing characters
_BOX = " ╵╶└╷│┌├╴┘─┴┐┤┬┼"


def scene_text(scene: dict) -> str:
    """A scene (``saboteur_env.pictures.board_scene``) as text: tunnels as box lines, S start, ? face-down goal,
    G / x revealed gold / stone, . empty; rows and columns labelled as the moves name them."""
    cols = scene["cols"]
    lines = ["     " + "".join(f"{c:>3}" for c in scene["col_labels"])]
    grid = {(c["r"], c["c"]): c for c in scene["cells"]}
    for r, label in enumerate(scene["row_labels"]):
        row = []
        for c in range(cols):
            cell = grid[(r, c)]
            arms = sum(1 << e for e, a in enumerate(cell["arms"]) if a is not None)
            ch = {"facedown": "?", "start": "S"}.get(cell["fill"], "")
            if not ch and cell["fill"] in ("gold", "stone"):
                ch = "G" if cell["fill"] == "gold" else "x"
            row.append(f"{ch or (_BOX[arms] if arms else '.'):>3}")
        lines.append(f"{label:>5}" + "".join(row))
    lines.append("     (S start, ? face-down goal, G gold, x stone, . empty; lines: the tunnels of each card)")
    return "\n".join(lines)


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Play one game on ``stdin``/``stdout`` (default: the terminal); returns the exit code (130 after Ctrl-C).

    Text streams that can be reconfigured are set to replace undecodable input bytes and unencodable output.
    """
    args, env = parse_args(argv)
    inp, out = stdin or sys.stdin, stdout or sys.stdout
    if isinstance(inp, io.TextIOWrapper):
        inp.reconfigure(errors="replace")  # stray bytes are text, not a crash
    if isinstance(out, io.TextIOWrapper):
        out.reconfigure(errors="backslashreplace")  # echoed input on an ASCII terminal
    try:
        return _play(args, env, inp, out)
    except KeyboardInterrupt:
        print("\ninterrupted: leaving the game", file=out, flush=True)
        return 130


def _play(args: argparse.Namespace, env: raw_env, inp: TextIO, out: TextIO) -> int:
    bots = {s: make_bot(args.bots, env.config) for s in range(args.players) if s != args.seat}
    try:
        return _game(args, env, bots, inp, out)
    finally:  # however the game ends (over, quit, end of input, Ctrl-C): the llm bots' transcripts are kept
        header = {"game": args.game, "players": args.players, "seat": args.seat, "bots": args.bots,
                  "seed": args.seed, "rounds": args.rounds}  # fmt: skip
        if args.transcript is not None and save_transcripts(args.transcript, bots, header):
            print(f"llm transcript: {args.transcript}", file=out, flush=True)


def _game(args: argparse.Namespace, env: raw_env, bots: dict[int, Any], inp: TextIO, out: TextIO) -> int:
    duel, sab2 = args.game == "duel", args.game == "sab2"
    cfg = env.config
    env.reset(seed=args.seed)
    game = env.game
    # Sealed agent seeds (docs/evaluation.md): drawn from a fresh secret, never derived from the public deal seed.
    seeds = agent_seeds(draw_secret(), 0 if args.seed is None else args.seed, args.players)
    for s, bot in bots.items():
        bot.reset(s, args.players, seeds[s])
        bind_oracle(bot, env.state)  # only agents declared oracles get the hidden state
    layout = env.unwrapped._layout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    if duel:
        say(f"Saboteur: The Duel: you are {('blue', 'green')[args.seat]} (seat {args.seat}); the bot plays "
            f"'{args.bots}'. Type a move number or name ('help' says how).")  # fmt: skip
    elif sab2:
        say(f"Saboteur 2: you are seat {args.seat} of {args.players}; bots play '{args.bots}'. "
            "Type a move number or name ('help' says how).")
    else:
        say(f"Saboteur: you are seat {args.seat} of {args.players}; bots play '{args.bots}'. "
            "Type 'help' for notation.")  # fmt: skip
    names = [("you" if q == args.seat else f"seat {q}") for q in range(args.players)]
    if duel:
        names = [("you" if q == args.seat else ("blue", "green")[q]) for q in range(2)]
    seen = view_events(player_view(game, args.seat))

    def report(before) -> None:
        """Every public event since the last report, as the person's seat sees it (bots' moves included)."""
        nonlocal seen
        events = view_events(player_view(game, args.seat))
        fresh = new_events(seen, events)
        seen = events
        for line in event_lines(cfg, fresh, args.seat, names):
            say(f"  > {line}")
        if game.round_just_ended and not game.game_over:
            # The engine deals the next round in the same step: show the board as the round ended.
            say(f"\n== end of round {before.round + 1}: the board as it ended ==")
            was = player_view(before, args.seat)
            last = round_end_view(was, new_events(view_events(was), events), player_view(game, args.seat))
            say(scene_text(board_scene(last, args.seat, names=names)))
            for cell, gold, name in reveals(cfg, fresh):
                r, c = cfg.cell_coords(cell)
                say(f"  goal at {cell_text(r, c)}: {name}{' (gold)' if gold else ''}")

    for name in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        before = game.clone()
        if seat != args.seat:
            env.step(bots[seat].act(obs["observation"], obs["action_mask"]))
        else:
            say()
            say(_picture(game, args.seat))
            if not duel:  # the view counts seats from yours; the reports name them absolutely
                say("  (seat+k is the seat k places after you: " + ", ".join(
                    f"seat+{k} = seat {(args.seat + k) % args.players}" for k in range(1, args.players)) + ")")
            view = player_view(game, args.seat)
            counts = np.asarray(view.hand)[: hand_kinds(cfg)]
            for k in np.flatnonzero(counts):
                info = card_info(cfg, int(k))
                say(f"  card {info['code']} x{int(counts[k])}: {info['text'] or info['name']}")
            legal = np.flatnonzero(legal_action_mask(game))
            for i, move in enumerate(moves(cfg, [int(a) for a in legal], args.seat, names)):
                say(f"  {i:3d}: {move.text}")
            while True:
                print("move> ", end="", file=out, flush=True)
                line = _read_line(inp)
                if line is None:
                    say("\nend of input: leaving the game")
                    return 0
                text = line.strip()
                if text.lower() in ("quit", "exit", "q"):
                    say("bye")
                    return 0
                if text.lower() in ("help", "h", "?"):
                    if args.game == "base":
                        say(HELP)
                    else:
                        say(f"type the number of a listed move (0..{len(legal) - 1}) or its name as listed (the "
                            "start of a name is enough when only one move fits); cells are (row,col) as the board "
                            "labels them; 'quit' leaves")  # fmt: skip
                    continue
                try:
                    action = parse_move(text, layout, legal, cfg)
                except MoveError as err:
                    say(f"  ! {err}")
                    continue
                say(f"  you: {layout.to_string(action)}")
                env.step(action)
                break
        report(before)
        if game.round_just_ended and not term:
            # What every seat learns at a round end (roles and card counts; base nuggets only one's own).
            result = cfg.variant.public_round_result(game.round_results[-1], args.seat)
            say("\n== " + "; ".join(round_lines(cfg, result, args.seat, names)))
    if game.game_over:
        say("\n== the final board ==")
        say(_picture(game, args.seat))
    ranks = final_ranking(game)
    totals = [int(x) for x in returns(game)]
    say(f"== game over: nuggets {totals}; ranks {ranks}; you are seat {args.seat}, "
        f"rank {ranks[args.seat]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
