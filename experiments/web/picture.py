"""Board pictures for papers: a position of any of the three games as SVG or PNG, with legend and coordinates
(a command line over the library's ``saboteur_env.pictures.board_svg`` / ``board_png``).

    python -m experiments.web.picture --game sab2 --players 6 --seed 3 --moves 40 --seat 0 --scale 3 --out fig.png
    python -m experiments.web.picture --game duel --seed 1 --moves 20 --public --out fig.svg

The position is the game ``--seed`` after ``--moves`` random legal moves (``--actions`` gives them instead). The
picture is drawn from one seat's view (``--seat``, default 0) or the public view (``--public``), so it never shows
what that viewer may not see. ``.svg`` writes vector graphics; ``.png`` rasterises at ``--scale`` (1 = 48 px per
cell, DejaVu Sans). ``--no-legend`` / ``--no-seats`` leave those parts out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game, variants
from saboteur_env.pictures import board_png, board_svg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.web.picture", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--game", choices=("base", "sab2", "duel"), default="base")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--moves", type=int, default=0, help="random legal moves played from the deal (0..2000)")
    parser.add_argument("--actions", type=int, nargs="*", default=None, help="action ids instead of --moves")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--seat", type=int, default=0)
    who.add_argument("--public", action="store_true")
    parser.add_argument("--scale", type=float, default=2.0, help="0.25..12 (PNG pixels and SVG size)")
    parser.add_argument("--title", default="")
    parser.add_argument("--no-legend", action="store_true")
    parser.add_argument("--no-seats", action="store_true")
    parser.add_argument("--out", type=Path, required=True, help="FILE.svg or FILE.png")
    args = parser.parse_args(argv)
    variant = variants.get(args.game)
    players = variant.default_players if args.players is None else args.players
    if not variant.min_players <= players <= variant.max_players:
        parser.error(f"--players {players} is out of range; valid: {variant.min_players}..{variant.max_players}")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be >= 0")
    if not 0 <= args.moves <= 2000:
        parser.error(f"--moves {args.moves} is out of range; valid: 0..2000")
    if not 0.25 <= args.scale <= 12:
        parser.error(f"--scale {args.scale} is out of range; valid: 0.25..12")
    if args.out.suffix.lower() not in (".svg", ".png"):
        parser.error(f"--out {args.out}: the name must end in .svg or .png")
    if not 0 <= args.seat < players:
        parser.error(f"--seat {args.seat} is out of range; valid: 0..{players - 1}")
    cfg = GameConfig(game=args.game, num_players=players)
    state = new_game(cfg, np.random.default_rng(args.seed))
    rng = np.random.default_rng(args.seed + 1)
    try:
        for n in range(args.moves if args.actions is None else len(args.actions)):
            if state.game_over:
                break
            a = int(rng.choice(np.flatnonzero(legal_action_mask(state)))) if args.actions is None else args.actions[n]
            state = apply_action(state, a)
    except ValueError as err:
        parser.error(f"cannot play the actions: {err}")
    viewer = None if args.public else args.seat
    options = {"legend": not args.no_legend, "seats": not args.no_seats, "title": args.title}
    if args.out.suffix.lower() == ".svg":
        args.out.write_text(board_svg(state, viewer, args.scale, **options))
    else:
        args.out.write_bytes(board_png(state, viewer, args.scale, **options))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
