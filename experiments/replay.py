"""Replay a game step by step as a GIF and a self-contained HTML page (no server needed).

    python -m experiments.replay runs/x --game 0 --seat 2 --gif game.gif --html game.html
    python -m experiments.replay --players 4 --seed 5 --actions 1200 1267 1184 --omniscient --html game.html

The game comes from a tournament log (``--game K``: the K-th complete game in the file, each game counted once) or
from a seed and an action list. A logged game is first re-played from its seed and actions and compared with the
log (header, every event, every round end): a damaged or tampered log is refused with a message naming the file,
the record and the first difference. The viewer draws base-game logs (check the others with
``python -m experiments.logs verify``).
Frames are drawn from one seat's perspective (``--seat``), the public view (default) or ``--omniscient``; each
frame's caption lists the events of that step as the chosen viewer may see them.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from experiments.logs import cli_warnings
from saboteur_env import GameConfig, apply_action, new_game, render_image
from saboteur_env.base.cards import KIND_CODES, TOOL_NAMES
from saboteur_env.base.state import EventType, GameState


def caption(state: GameState, index: int, viewer: int | str | None) -> str:
    """One event of the engine log in words, as ``viewer`` may see it (other seats' discards stay hidden)."""
    etype, actor, kind, target, cell, arg = (int(x) for x in state.events[index])
    who = f"seat {actor}"
    where = "{},{}".format(*state.config.cell_coords(cell)) if cell >= 0 else ""
    if etype == EventType.PLACE:
        return f"{who} placed {KIND_CODES[kind]}{' 180' if arg else ''} at {where}"
    if etype == EventType.BREAK:
        return f"{who} broke seat {target}'s {TOOL_NAMES[arg]}"
    if etype == EventType.REPAIR:
        return f"{who} repaired seat {target}'s {TOOL_NAMES[arg]}"
    if etype == EventType.ROCKFALL:
        return f"{who} rockfall at {where} removed {KIND_CODES[arg]}"
    if etype == EventType.MAP:
        return f"{who} used a map on goal {arg}"
    if etype == EventType.DISCARD:
        visible = viewer == "omniscient" or viewer == actor
        return f"{who} discarded {KIND_CODES[kind] if visible else 'a card'}"
    if etype == EventType.REVEAL:
        return f"goal at {where} revealed: {KIND_CODES[kind]}"
    return f"round over: {'gold-diggers' if arg == 0 else 'saboteurs'} won"


def frames(
    config: GameConfig, seed: int, actions: list[int], viewer: int | str | None = None
) -> tuple[list[NDArray[np.uint8]], list[str]]:
    """Images and captions: the deal, then one frame after every action."""
    state = new_game(config, np.random.default_rng(seed))
    images = [render_image(state, viewer)]
    captions = ["the deal"]
    for action in actions:
        first = state.num_events
        state = apply_action(state, action)
        images.append(render_image(state, viewer))
        captions.append("; ".join(caption(state, i, viewer) for i in range(first, state.num_events)))
    return images, captions


def game_from_log(path: Path, index: int) -> tuple[GameConfig, int, list[int]]:
    """Config, seed and actions of the ``index``-th game of a tournament log, after checking that the engine
    re-plays it exactly as logged (every header field, event and round end; :func:`experiments.tournament.replay_game`).

    Raises :class:`~experiments.logs.LogError` (a ``ValueError``) naming the file and record for a damaged log, a
    game that does not re-play as logged (a tampered action, winner or rules version), a game of another rule set
    than the base game, or an index out of range.
    """
    from experiments.logs import LogError, LogReader, describe, game_key
    from experiments.rounds import ReplayError
    from experiments.tournament import replay_game

    if index < 0:
        raise ValueError(f"--game {index} must be at least 0")
    count = 0
    for file, line, records in LogReader(path).numbered_games():
        if count == index:
            h = records[0]["header"]
            what = f"game {index} ({describe(game_key(h))})"
            if h.get("game", "base") != "base":
                raise LogError(file, f"{what} is a {h['game']} game; the replay viewer draws base games (check it "
                               "with python -m experiments.logs verify)", line)  # fmt: skip
            try:
                replay_game(records)
            except ReplayError as err:
                raise LogError(file, f"{what} does not re-play as logged: {err}", line) from None
            return GameConfig(num_players=h["players"]), h["seed"], [a for r in records for a in r["actions"]]
        count += 1
    raise ValueError(f"--game {index} is out of range; the log holds games 0..{count - 1}")


def write_gif(path: Path, images: list[NDArray[np.uint8]], duration_ms: int = 500) -> None:
    from PIL import Image

    pics = [Image.fromarray(im) for im in images]
    pics[0].save(path, save_all=True, append_images=pics[1:], duration=duration_ms, loop=0)


def write_html(path: Path, images: list[NDArray[np.uint8]], captions: list[str], title: str) -> None:
    from PIL import Image

    encoded = []
    for im in images:
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="PNG")
        encoded.append("data:image/png;base64," + base64.b64encode(buf.getvalue()).decode())
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{background:#1e1e24;color:#eee;font-family:sans-serif}} img{{image-rendering:pixelated;width:680px}}
#cap{{min-height:3em;max-width:680px}}</style></head>
<body><h3>{html.escape(title)}</h3>
<img id="frame"><div><button id="prev">&lt;</button> <button id="play">play</button>
<button id="next">&gt;</button> <input id="slider" type="range" min="0" max="{len(images) - 1}" value="0">
<span id="pos"></span></div><p id="cap"></p>
<script>
const frames = {json.dumps(encoded)};
const captions = {json.dumps(captions)};
let i = 0, timer = null;
const el = id => document.getElementById(id);
function show(k) {{
  i = Math.max(0, Math.min(frames.length - 1, k));
  el('frame').src = frames[i]; el('cap').textContent = captions[i];
  el('slider').value = i; el('pos').textContent = i + ' / ' + (frames.length - 1);
}}
el('prev').onclick = () => show(i - 1);
el('next').onclick = () => show(i + 1);
el('slider').oninput = e => show(+e.target.value);
function stop() {{ clearInterval(timer); timer = null; }}
el('play').onclick = () => {{
  if (timer) stop();
  else timer = setInterval(() => {{ if (i >= frames.length - 1) stop(); else show(i + 1); }}, 500);
}};
show(0);
</script></body></html>
"""
    path.write_text(page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="?", help="tournament log directory or rounds.jsonl.gz")
    parser.add_argument("--game", type=int, default=0, help="index of the game in the log")
    parser.add_argument("--players", type=int, help="without a log: number of players")
    parser.add_argument("--seed", type=int, help="without a log: the game's seed")
    parser.add_argument("--actions", type=int, nargs="*", default=[], help="without a log: the action ids")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, help="draw from this seat's perspective")
    view.add_argument("--omniscient", action="store_true", help="draw everything, hidden information included")
    parser.add_argument("--gif", type=Path, help="write an animated GIF here")
    parser.add_argument("--html", type=Path, help="write a self-contained HTML player here")
    args = parser.parse_args(argv)
    if args.log is not None:
        if not args.log.exists():
            parser.error(f"{args.log} does not exist")
        if args.players is not None or args.seed is not None or args.actions:
            parser.error("give a log or --players/--seed/--actions, not both")
        try:
            with cli_warnings():
                config, seed, actions = game_from_log(args.log, args.game)
        except ValueError as err:  # LogError included: damaged log, tampered game, bad index
            parser.error(str(err))
    else:
        if args.players is None or args.seed is None:
            parser.error("give a log, or --players and --seed (and --actions)")
        if args.seed < 0:
            parser.error(f"--seed {args.seed} must be at least 0")
        try:
            config = GameConfig(num_players=args.players)
        except ValueError as err:
            parser.error(f"--players {args.players}: {err}")
        seed, actions = args.seed, list(args.actions)
    if args.seat is not None and not 0 <= args.seat < config.num_players:
        parser.error(f"--seat {args.seat} is out of range; valid: 0..{config.num_players - 1}")
    if not args.gif and not args.html:
        parser.error("nothing to write: give --gif and/or --html")
    viewer: int | str | None = "omniscient" if args.omniscient else args.seat
    try:
        images, captions = frames(config, seed, actions, viewer)
    except ValueError as err:  # an illegal or out-of-range action in the list
        parser.error(f"cannot replay: {err}")
    title = f"Saboteur, {config.num_players} players, seed {seed}, " + (
        "omniscient" if viewer == "omniscient" else "public view" if viewer is None else f"seat {viewer}"
    )
    if args.gif:
        write_gif(args.gif, images)
        print(f"wrote {args.gif} ({len(images)} frames)")
    if args.html:
        write_html(args.html, images, captions, title)
        print(f"wrote {args.html} ({len(images)} frames)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
