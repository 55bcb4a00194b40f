"""Fitting a population's honesty model from logged games (issue 36 part 1; docs/bluff.md).

    python -m experiments.bluff.honesty --protocol base-5 --deals 300 --out runs/honesty-base-5 --write
    python -m experiments.bluff.honesty --protocol base-5 --log runs/some-claims-tournament     # fit a given log

Without ``--log`` it plays the protocol's pool with the hand-set model (``fit_pool``: the names without ``+fit``) on
the public seeds ``0 .. deals-1`` through the tournament loop (logged to ``--out``, resumable), one pool member per
deal in turn; the benchmark's own deals are drawn above ``2**32`` (``experiments.bluff.protocol``), so they are held
out by construction. The games are split by a hash of their seed: ``--holdout`` of them (default a quarter) are
not fitted on, and the public claims observer's calibration (ECE of its end-of-round P(saboteur) per seat, with a
95% interval over deals) is measured on them with the hand-set and with the fitted model. ``--write`` saves the fit
as the model shipped for the protocol's game and player count (``agents/fitted/honesty-GAME-N.json``, what
``claims+fit:NAME`` loads).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agents.claims_beliefs import ClaimsObserver, HonestyModel, PublicClaims, phase_of
from agents.honesty import KINDS, PHASES, ROLES, HonestyTable
from experiments.bluff.protocol import SEED_OFFSET, Protocol, protocol
from experiments.tournament.logs.read import LogReader
from experiments.tournament.run import run_tasks
from experiments.tournament.stats import ece
from saboteur_env import GameConfig
from saboteur_env.claims import layout

LAYOUT = "seed_5x9"


def _saboteur_role(game: str) -> int | None:
    cfg = GameConfig(game=game, claims=True)
    lay = layout(cfg)
    return lay.facts.saboteur if lay.roles else None


def claim_rows(games: Iterable[list[dict]]) -> Iterator[tuple[int, int, int, bool]]:
    """``(role, kind, phase, truth)`` of every logged claim: the speaker's dealt role (1 saboteur, 0 anyone else;
    the Duel: 0), the kind's index in ``agents.honesty.KINDS``, the phase from its ``t`` and the truth label."""
    sab: dict[str, int | None] = {}
    for records in games:
        for r in records:
            h = r["header"]
            game = h.get("game", "base")
            if game not in sab:
                sab[game] = _saboteur_role(game)
            n = int(h.get("players", 2))
            roles = h.get("roles")
            for c in r.get("claims", ()):
                role = int(sab[game] is not None and roles is not None and roles[c["speaker"]] == sab[game])
                yield role, KINDS.index(c["kind"]), phase_of(c["t"], n), bool(c["truth"])


def held_out(seed: int, fraction: float) -> bool:
    """Whether the game of ``seed`` is held out of the fit (a hash of the seed: the same split for any log)."""
    h = int.from_bytes(hashlib.blake2b(str(seed).encode(), digest_size=8).digest(), "big")
    return h % 10_000 < round(fraction * 10_000)


def public_items(games: list[list[dict]], model: HonestyModel) -> list[tuple[int, float, int]]:
    """(game index, the public observer's P(saboteur) of a seat at the end of a round, whether it is one) for every
    seat and round of games with roles."""
    items: list[tuple[int, float, int]] = []
    for g, records in enumerate(games):
        h0 = records[0]["header"]
        game, n = h0.get("game", "base"), int(h0.get("players", 2))
        sab = _saboteur_role(game)
        if sab is None:
            continue
        obs = ClaimsObserver(GameConfig(game=game, num_players=n, claims=True), model)
        for r in records:
            p = obs.posterior(PublicClaims.from_records(r.get("claims", []), None, n))[1]
            items += [(g, float(p[s]), int(role == sab)) for s, role in enumerate(r["header"]["roles"])]
    return items


def fit(games: list[list[dict]], game: str, players: int, holdout: float = 0.25, **meta: Any
        ) -> tuple[HonestyTable, dict[str, Any]]:  # fmt: skip
    """Fit on the games not held out; return the table and the calibration of the public observer on the held-out
    ones (hand-set vs fitted)."""
    if not 0 <= holdout < 1:
        raise ValueError(f"holdout={holdout!r} must be in [0, 1)")
    train = [g for g in games if not held_out(g[0]["header"]["seed"], holdout)]
    test = [g for g in games if held_out(g[0]["header"]["seed"], holdout)]
    if not train:
        raise ValueError(f"no game to fit on ({len(games)} games, holdout {holdout})")
    seeds = [g[0]["header"]["seed"] for g in games]
    names = sorted({a for g in train for r in g for a in r["header"].get("agents", [])})
    table = HonestyTable.fit(claim_rows(train), game, players=players, population=names, games=len(train),
                             held_out=len(test), seeds=[min(seeds), max(seeds) + 1], **meta)  # fmt: skip
    calib: dict[str, Any] = {"games": len(test)}
    if test:
        for label, model in (("handset", HonestyModel()), ("fit", table.model())):
            items = public_items(test, model)
            calib[label] = ece(items, len(test)) if items else None
    return table, calib


def fit_games(p: Protocol, deals: int, out: Path | None, secret: int | None, workers: int = 1) -> Iterator[list[dict]]:
    """The hand-set pool's games on the public seeds ``0 .. deals-1`` (one pool member per deal in turn)."""
    if not 1 <= deals <= SEED_OFFSET:
        raise ValueError(f"--deals {deals} must be in 1..{SEED_OFFSET}")
    tasks: list[tuple] = []
    for seed in range(deals):
        member = p.fit_pool[seed % len(p.fit_pool)]
        if p.game == "duel":
            tasks.append(("duel", member[0], member[0], seed, LAYOUT))
        elif p.game == "sab2":
            tasks.append(("sab2", p.players, member[0], seed, None))
        else:
            tasks.append((p.players, member[0], member[-1], seed, False, None))
    yield from run_tasks(tasks, workers=workers, out=out, secret=secret)


def render(table: HonestyTable, calib: dict[str, Any]) -> str:
    mean, (lo, hi) = table.mean(), table.interval()
    lines = ["| speaker | claim | " + " | ".join(PHASES) + " |", "|---|---|" + "---|" * len(PHASES)]
    for r, role in enumerate(ROLES):
        for k, kind in enumerate(KINDS):
            if table.counts[r, k].sum() == 0:
                continue
            cells = [f"{mean[r, k, p]:.2f} [{lo[r, k, p]:.2f}, {hi[r, k, p]:.2f}] ({table.counts[r, k, p, 0]}/"
                     f"{table.counts[r, k, p].sum()})" for p in range(len(PHASES))]
            lines.append(f"| {role} | {kind} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("truth rate (posterior mean) [95% interval] (true / claims); empty cells keep the hand-set prior")
    if calib.get("games"):
        for label in ("handset", "fit"):
            v = calib.get(label)
            if v:
                lines.append(f"public observer, {label} honesty model, on {calib['games']} held-out games: ECE of "
                             f"P(saboteur) {v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.bluff.honesty", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--protocol", default="base-5", help="whose pool to fit (experiments.bluff.protocol)")
    ap.add_argument("--deals", type=int, default=300, help="games of the pool to play (public seeds 0..deals-1)")
    ap.add_argument("--log", type=Path, default=None, help="fit this tournament log instead of playing")
    ap.add_argument("--out", type=Path, default=None, help="log directory of the pool's games (resumable)")
    ap.add_argument("--holdout", type=float, default=0.25, help="share of games held out for calibration")
    ap.add_argument("--secret", default=None, help="hex secret of the agents' seeds (default: drawn, printed)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="save as the shipped model of the protocol's game and N")
    ap.add_argument("--save", type=Path, default=None, help="save the fit to this JSON file")
    args = ap.parse_args(argv)
    from experiments.tournament.rounds import format_secret, parse_secret, session_secret

    try:
        p = protocol(args.protocol)
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
        if args.log is not None:
            games = list(LogReader(args.log).games())
            source = str(args.log)
        else:
            games = list(fit_games(p, args.deals, args.out, secret, args.workers))
            source = f"python -m experiments.bluff.honesty --protocol {p.name} --deals {args.deals}"
        table, calib = fit(games, p.game, p.players, args.holdout, name=f"fit-{p.name}", source=source,
                           secret=format_secret(secret) if args.log is None else None)  # fmt: skip
    except ValueError as err:
        ap.error(str(err))
    print(render(table, calib))
    for path in [*([p.honesty] if args.write else []), *([args.save] if args.save else [])]:
        table.save(path)
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
