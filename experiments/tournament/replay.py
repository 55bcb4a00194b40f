"""Replay a game of any of the three games step by step: a GIF, a self-contained HTML page, or frames for the web app.

    python -m experiments.tournament.replay runs/x --game 0 --seat 2 --gif game.gif --html game.html
    python -m experiments.tournament.replay --players 4 --seed 5 --actions 1200 1267 1184 --omniscient --html game.html
    python -m experiments.tournament.replay --game-type sab2 --players 6 --seed 3 --rounds 2 --actions ... --html
    game.html

The game comes from a tournament log (``--game K``: the K-th complete game in the file, each game counted once; base,
Saboteur 2 and duel logs) or from a seed and an action list (``--game-type`` base / sab2 / duel, default base). A
logged game is first re-played from its seed and actions and compared with the log (header, every event, every
round end): a damaged or tampered log is refused with a message naming the file, the record and the first
difference.

Frames are drawn from one seat's view (``--seat``), the public view (default) or ``--omniscient`` (every seat's
view at once, all roles and hands, and the true card of every face-down goal, peeked or not: the replay re-plays
the whole game, so its true state is known); each frame's caption lists the events of that
step as the chosen viewer may see them. The engine deals the next round in the step that ends a round, so the end
of every round gets a frame of its own (the exact board as the round ended, rebuilt from the view before the last
move and that move's public events by ``saboteur_env.pictures.round_end_view``, and the round's result with
the revealed roles) before the deal of the next one.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from experiments.tournament.logs.read import cli_warnings
from experiments.web.scene import board_scene, to_png
from experiments.web.words import event_lines, new_events, view_events
from saboteur_env import GameConfig, action_to_string, apply_action, new_game, player_view, variants
from saboteur_env.common.geometry import geometry
from saboteur_env.pictures import round_end_view

__all__ = ["Frame", "config_of_header", "frames", "game_from_log", "steps", "title_of", "true_goals", "write_gif",
           "write_html"]

Viewer = int | str | None


@dataclass(frozen=True)
class Frame:
    """One picture of a replay: the scene to draw, its caption, and whether it shows the end of a round."""

    scene: dict[str, Any]
    caption: str
    round_end: bool = False


def _names(config: GameConfig) -> list[str]:
    if config.game == "duel":
        return ["blue", "green"]
    return [f"seat {s}" for s in range(config.num_players)]


def _end_view(before: Any, after: Any, seat: int) -> Any:
    """``seat``'s view of the board as the round ended (the view before the last move plus that move's events)."""
    was, now = player_view(before, seat), player_view(after, seat)
    return round_end_view(was, new_events(view_events(was), view_events(now)), now)


def true_goals(state: Any) -> dict[int, tuple[str, str]]:
    """``{cell: (glyph, name)}`` of every goal of the round still face down in ``state``: the truth, which only an
    omniscient replay of a finished game shows (glyph g / s for gold / stone; the Duel: the goal's nuggets)."""
    cfg = state.config
    cells = geometry(cfg).goal_cells
    out = {}
    for slot, cell in enumerate(cells):
        if bool(state.goal_revealed[slot]):
            continue
        if cfg.game == "duel":
            from saboteur_env.duel import cards as dc

            card = int(state.goal_card[slot])
            out[int(cell)] = (str(int(dc.GOAL_NUGGETS[card])), f"{dc.GOAL_CARDS[card].code} {dc.GOAL_CARDS[card].name}")
        elif cfg.game == "sab2":
            from saboteur_env.sab2 import cards as sc

            kind = int(state.goal_kind[slot])
            gold = kind == sc.KIND_GOALS[0]
            out[int(cell)] = ("g" if gold else "s", "gold" if gold else "stone")
        else:
            from saboteur_env.base import cards as bc

            kind = int(state.goal_kind[slot])
            out[int(cell)] = ("g" if kind == bc.KIND_GOAL_GOLD else "s", bc.KIND_NAMES[kind])
    return out


def _scene(state: Any, viewer: Viewer, title: str, after: Any = None) -> dict[str, Any]:
    """The scene of ``viewer``: a seat's own view, the public view (seat 0's less its secrets), or omniscient (the
    public scene with every seat's role and hand from that seat's own view, and the true card of every face-down
    goal, peeked or not, from the replayed state: the game is over, so showing it is fine).
    With ``after`` (the state after a round's last move): the board as that round ended."""
    cfg = state.config
    names = _names(cfg)

    def view_of(seat: int) -> Any:
        return player_view(state, seat) if after is None else _end_view(state, after, seat)

    if isinstance(viewer, int):
        return board_scene(view_of(viewer), viewer, True, names, title)
    scene = board_scene(view_of(0), 0, False, names, title)
    if viewer != "omniscient":
        return scene
    from experiments.web.words import card_info, hand_kinds

    scene = {**scene, "seats": [dict(r, marks=list(r["marks"])) for r in scene["seats"]],
             "cells": [dict(c) for c in scene["cells"]]}  # fmt: skip
    by_seat = {row["seat"]: row for row in scene["seats"]}
    truth = true_goals(state)  # in a round-end frame the round's goals are those of the state before its last move
    for cell in scene["cells"]:
        flat = cell["r"] * cfg.cols + cell["c"]
        if cell["fill"] == "facedown" and flat in truth:
            cell["glyph"], name = truth[flat]
            cell["tip"] = f"{cell['tip']}: {name} (the true card)"
    for s in range(cfg.num_players):
        view = view_of(s)
        counts = np.asarray(view.hand)[: hand_kinds(cfg)]
        hand = " ".join(f"{card_info(cfg, int(k))['code']}x{int(counts[k])}" for k in np.flatnonzero(counts))
        role = getattr(view, "role", None)
        if role is not None and cfg.game != "duel":
            from saboteur_env.base.cards import ROLE_NAMES
            from saboteur_env.sab2.cards import ROLE_NAMES as SAB2_ROLES

            by_seat[s]["marks"].append(f"role: {(SAB2_ROLES if cfg.game == 'sab2' else ROLE_NAMES)[int(role)]}")
        by_seat[s]["marks"].append(f"hand: {hand or '-'}")
    return scene


def _round_caption(config: GameConfig, result: dict[str, Any], viewer: Viewer) -> str:
    from experiments.web.table import round_lines

    seat = viewer if isinstance(viewer, int) else None
    shown = result if viewer == "omniscient" else config.variant.public_round_result(result, seat or 0)
    if seat is None:
        shown.pop("my_nuggets", None)
    return "; ".join(round_lines(config, shown, seat, _names(config)))


def steps(config: GameConfig, seed: int, actions: list[int], viewer: Viewer = None) -> list[Frame]:
    """The deal, one frame after every action, and an extra frame at the end of every round but the last (whose end
    is the final board itself)."""
    state = new_game(config, np.random.default_rng(seed))
    seat = viewer if isinstance(viewer, int) else 0
    private = isinstance(viewer, int)
    names = _names(config)
    out = [Frame(_scene(state, viewer, "round 1: the deal"), "the deal")]
    before_events = view_events(player_view(state, seat))
    for n, action in enumerate(actions):
        actor = int(state.current)
        after = apply_action(state, action)
        events = view_events(player_view(after, seat))
        fresh = new_events(before_events, events)
        before_events = events
        lines = event_lines(config, fresh, seat, names, private)
        if viewer == "omniscient":
            lines = [f"{names[actor]}: {action_to_string(config, action)}", *lines]
        caption = "; ".join(lines) or "(no public event)"
        rnd = int(state.round)
        if after.round_just_ended or (after.game_over and not state.game_over):
            result = _round_caption(config, after.round_results[-1], viewer)
            if after.game_over:
                out.append(Frame(_scene(after, viewer, f"end of round {rnd + 1} (game over)"), f"{caption}; {result}",
                                 True))  # fmt: skip
            else:
                end = _scene(state, viewer, f"end of round {rnd + 1}", after)
                out.append(Frame(end, f"{caption}; {result}", True))
                out.append(Frame(_scene(after, viewer, f"round {rnd + 2}: the deal"), f"round {rnd + 2} dealt"))
        else:
            out.append(Frame(_scene(after, viewer, f"round {rnd + 1}, move {n + 1}"), caption))
        state = after
    return out


def frames(config: GameConfig, seed: int, actions: list[int], viewer: Viewer = None,
           scale: float = 1.5) -> tuple[list[NDArray[np.uint8]], list[str]]:  # fmt: skip
    """Images (PNG-ready arrays at ``scale``) and captions of :func:`steps`."""
    shots = steps(config, seed, actions, viewer)
    return [np.asarray(to_png(f.scene, scale), dtype=np.uint8) for f in shots], [f.caption for f in shots]


def config_of_header(h: dict[str, Any]) -> GameConfig:
    """The configuration of a logged game (its first round's header)."""
    game = h.get("game", "base")
    options: dict[str, Any] = {"game": game, "num_players": h["players"], "rounds": h.get("rounds", 3)}
    if game == "duel":
        options["duel_layout"] = h["duel_layout"]
    if game == "sab2" and str(h.get("rules_version", "")).endswith("/official"):
        options["rules"] = "official"
    return GameConfig(**options)


def game_from_log(path: Path, index: int) -> tuple[GameConfig, int, list[int]]:
    """Config, seed and actions of the ``index``-th game of a tournament log (base, Saboteur 2 or duel), after
    checking that the engine re-plays it exactly as logged (every header field, event and round end;
    :func:`experiments.tournament.tasks.replay_records`).

    Raises :class:`~experiments.tournament.logs.format.LogError` (a ``ValueError``) naming the file and record for a
    damaged
    log or a
    game that does not re-play as logged (a tampered action, winner or rules version), and ``ValueError`` for an
    index out of range.
    """
    from experiments.tournament.logs.format import LogError, describe, game_key
    from experiments.tournament.logs.read import LogReader
    from experiments.tournament.rounds import ReplayError
    from experiments.tournament.tasks import replay_records

    if index < 0:
        raise ValueError(f"--game {index} must be at least 0")
    count = 0
    for file, line, records in LogReader(path).numbered_games():
        if count == index:
            h = records[0]["header"]
            what = f"game {index} ({describe(game_key(h))})"
            try:
                replay_records(records)
                config = config_of_header(h)
            except (ReplayError, ValueError, KeyError) as err:
                raise LogError(file, f"{what} does not re-play as logged: {err}", line) from None
            return config, h["seed"], [a for r in records for a in r["actions"]]
        count += 1
    raise ValueError(f"--game {index} is out of range; the log holds games 0..{count - 1}")


def title_of(config: GameConfig, seed: int, viewer: Viewer) -> str:
    who = "omniscient" if viewer == "omniscient" else "public view" if viewer is None else f"seat {viewer}"
    players = "" if config.game == "duel" else f", {config.num_players} players"
    return f"{config.variant.title}{players}, seed {seed}, {who}"


def write_gif(path: Path, images: list[NDArray[np.uint8]], duration_ms: int = 700) -> None:
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
<style>body{{background:#1e1e24;color:#eee;font-family:sans-serif}} img{{max-width:100%}}
#cap{{min-height:3em;max-width:900px}}</style></head>
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
  else timer = setInterval(() => {{ if (i >= frames.length - 1) stop(); else show(i + 1); }}, 700);
}};
show(0);
</script></body></html>
"""
    path.write_text(page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="?", help="tournament log directory or rounds.jsonl.gz")
    parser.add_argument("--game", type=int, default=0, help="index of the game in the log")
    parser.add_argument("--game-type", choices=("base", "sab2", "duel"), default="base",
                        help="without a log: which game (default base)")  # fmt: skip
    parser.add_argument("--players", type=int, help="without a log: number of players (the duel has 2)")
    parser.add_argument("--seed", type=int, help="without a log: the game's seed")
    parser.add_argument("--actions", type=int, nargs="*", default=[], help="without a log: the action ids")
    parser.add_argument("--rounds", type=int, choices=(1, 2, 3), help="without a log: rounds of the game (default 3)")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, help="draw from this seat's perspective")
    view.add_argument("--omniscient", action="store_true", help="draw every seat's view at once")
    parser.add_argument("--scale", type=float, default=1.5, help="picture scale (1 = 48 px per cell; 0.5..6)")
    parser.add_argument("--gif", type=Path, help="write an animated GIF here")
    parser.add_argument("--html", type=Path, help="write a self-contained HTML player here")
    args = parser.parse_args(argv)
    if not 0.5 <= args.scale <= 6:
        parser.error(f"--scale {args.scale} is out of range; valid: 0.5..6")
    if args.log is not None:
        if not args.log.exists():
            parser.error(f"{args.log} does not exist")
        if args.players is not None or args.seed is not None or args.actions or args.rounds is not None:
            parser.error("give a log or --players/--seed/--rounds/--actions, not both")
        try:
            with cli_warnings():
                config, seed, actions = game_from_log(args.log, args.game)
        except ValueError as err:  # LogError included: damaged log, tampered game, bad index
            parser.error(str(err))
    else:
        if args.seed is None or (args.players is None and args.game_type != "duel"):
            parser.error("give a log, or --players and --seed (and --actions)")
        if args.seed < 0:
            parser.error(f"--seed {args.seed} must be at least 0")
        variant = variants.get(args.game_type)
        players = variant.default_players if args.players is None else args.players
        try:
            config = GameConfig(game=args.game_type, num_players=players, rounds=args.rounds or 3)
        except ValueError as err:
            parser.error(f"--players {players}: {err}")
        seed, actions = args.seed, list(args.actions)
    if args.seat is not None and not 0 <= args.seat < config.num_players:
        parser.error(f"--seat {args.seat} is out of range; valid: 0..{config.num_players - 1}")
    if not args.gif and not args.html:
        parser.error("nothing to write: give --gif and/or --html")
    viewer: Viewer = "omniscient" if args.omniscient else args.seat
    try:
        images, captions = frames(config, seed, actions, viewer, args.scale)
    except ValueError as err:  # an illegal or out-of-range action in the list
        parser.error(f"cannot replay: {err}")
    title = title_of(config, seed, viewer)
    if args.gif:
        write_gif(args.gif, images)
        print(f"wrote {args.gif} ({len(images)} frames)")
    if args.html:
        write_html(args.html, images, captions, title)
        print(f"wrote {args.html} ({len(images)} frames)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
