"""Does talk change who wins? Paired arms on fresh sealed deals (issue 36; docs/claims.md "Talk that changes who
wins"): ``python -m experiments.analysis.talk_effect``.

Every seat of every game is the same claims agent (``claims+OPTIONS:AGENT``); the arms differ only in how the
seats use the claims:

* ``listen`` - ``claims+fit:AGENT`` (``--honesty fit``, the default) or ``claims:AGENT`` (``handset``): everyone
  talks, and the believers update on the claims with that honesty model;
* ``deaf`` - the same with ``+deaf``: everyone talks, nobody reacts (every move as without claims, so the game is
  the one the plain ``AGENT`` plays on that deal: claims never change the game, and the arms share the agents'
  randomness).

Deal ``i`` is the public seed ``2**32 + (game_secret(secret, ("talk-effect", GAME, N, i)) mod 2**62)``: fresh deals,
above every public seed a tournament, a training run or a honesty fit plays, unknown without the secret; both arms of
a deal give every seat the same game secret (the agents' seeds), so the paired difference is the effect of
listening alone. The compared rate is the gold-diggers' round win rate of the deal (its rounds' mean; in the base
game a round is won by one side, so the saboteurs' rate is its complement). The interval is a percentile bootstrap
over deals at the level corrected for ``--comparisons`` (Bonferroni: 1 - 0.05 / m), with the uncorrected 95% one
and the smallest effect the design detects with 80% power at that level (``(z(1 - 0.025 / m) + 0.84) x`` the paired
standard error: 2.8 x at m = 1).

    python -m experiments.analysis.talk_effect --agent bayes --deals 1000 --secret HEX --out runs/talk-bayes
    python -m experiments.analysis.talk_effect --agent heuristic --honesty handset --deals 200 --workers 2

Logs (``--out``) are the tournament's: crash-safe and resumed by the same command.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from experiments.bluff.protocol import SEED_OFFSET, SEED_RANGE  # the sealed-deal range the benchmark uses too
from experiments.tournament.claims import check_claims_options, claims_name
from experiments.tournament.rounds import format_secret, parse_secret, session_secret
from experiments.tournament.run import run_tasks
from experiments.tournament.stats import bootstrap_mean
from saboteur_env.common.seeding import game_secret

ARMS = ("listen", "deaf")
HONESTY = ("fit", "handset")


def arm_names(agent: str, honesty: str) -> dict[str, str]:
    """The claims name every seat plays in each arm."""
    opts = ("fit",) if honesty == "fit" else ()
    return {"listen": claims_name(agent, 1, opts), "deaf": claims_name(agent, 1, (*opts, "deaf"))}


def deal_seed(secret: int, players: int, i: int) -> int:
    return SEED_OFFSET + game_secret(secret, ("talk-effect", "base", players, i)) % SEED_RANGE


def digger_rate(records: list[dict]) -> float:
    """The gold-diggers' round win rate of one logged game."""
    return float(np.mean([r["end"]["winner"] == "gold-diggers" for r in records]))


def measure(agent: str, players: int, deals: int, secret: int, honesty: str = "fit", comparisons: int = 1,
            workers: int = 1, out: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """Play both arms on ``deals`` sealed deals and return the numbers (module docstring)."""
    if honesty not in HONESTY:
        raise ValueError(f"honesty={honesty!r}; valid: {', '.join(HONESTY)}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ValueError(f"deals={deals!r} must be an int >= 2 (intervals need two deals)")
    if isinstance(comparisons, bool) or not isinstance(comparisons, int) or comparisons < 1:
        raise ValueError(f"comparisons={comparisons!r} must be an int >= 1")
    if not isinstance(agent, str) or not agent or agent.startswith("claims"):
        raise ValueError(f"agent={agent!r}: give a bare agent name (e.g. bayes); the arms add claims+fit: and +deaf")
    names = arm_names(agent, honesty)
    for name in names.values():
        check_claims_options(name, "base", players)  # a bad agent or a missing honesty file, before any game
    seeds = [deal_seed(secret, players, i) for i in range(deals)]
    keys = [game_secret(secret, ("talk-effect", "base", players, "agents", i)) for i in range(deals)]
    tasks, secrets = [], []
    for arm in ARMS:
        n = names[arm]
        tasks += [(players, n, n, s, False, None) for s in seeds]
        secrets += keys
    games = list(run_tasks(tasks, workers=workers, out=out, secret=secret, game_secrets=secrets))
    rates = {arm: np.array([digger_rate(g) for g in games[k * deals : (k + 1) * deals]])
             for k, arm in enumerate(ARMS)}  # fmt: skip
    d = rates["listen"] - rates["deaf"]
    level = 1 - 0.05 / comparisons
    mean, lo, hi = bootstrap_mean(d, 1000, 0, level)
    _, lo95, hi95 = bootstrap_mean(d, 1000, 0, 0.95)
    se = float(d.std(ddof=1) / math.sqrt(deals))
    z = NormalDist().inv_cdf(1 - 0.025 / comparisons)
    t = mean / se if se > 0 else math.nan
    p = 2 * (1 - NormalDist().cdf(abs(t))) if se > 0 else math.nan
    return {
        "game": "base", "players": players, "agent": agent, "honesty": honesty, "arms": names, "deals": deals,
        "secret": format_secret(secret), "comparisons": comparisons, "level": level,
        "digger_win": {arm: float(r.mean()) for arm, r in rates.items()},
        "listen_minus_deaf": {"mean": mean, "lo": lo, "hi": hi, "lo95": lo95, "hi95": hi95, "se": se,
                              "p_bonferroni": min(1.0, p * comparisons) if not math.isnan(p) else math.nan,
                              "mde80": (z + 0.8416) * se},
        "deals_differing": int((d != 0).sum()),
    }  # fmt: skip


def render(r: dict[str, Any]) -> str:
    x = r["listen_minus_deaf"]
    pct = f"{100 * r['level']:.1f}%"
    lines = [
        f"base, {r['players']} players, every seat {r['arms']['listen']} (listen) vs {r['arms']['deaf']} (deaf), "
        f"{r['deals']} sealed deals, honesty {r['honesty']}",
        f"gold-diggers' round win rate: listen {100 * r['digger_win']['listen']:.1f}%, deaf "
        f"{100 * r['digger_win']['deaf']:.1f}%",
        f"listen minus deaf: {100 * x['mean']:+.1f} points, {pct} interval (Bonferroni over {r['comparisons']}) "
        f"[{100 * x['lo']:+.1f}, {100 * x['hi']:+.1f}], 95% [{100 * x['lo95']:+.1f}, {100 * x['hi95']:+.1f}], "
        f"p (corrected) {x['p_bonferroni']:.2g}; deals whose rate differs {r['deals_differing']} of {r['deals']}",
        f"smallest effect detectable with 80% power at that level: {100 * x['mde80']:.1f} points",
        f"secret {r['secret']} (--secret re-plays these deals)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.analysis.talk_effect", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)  # fmt: skip
    ap.add_argument("--agent", default="bayes", help="the scripted agent every seat plays (default: bayes)")
    ap.add_argument("--players", type=int, default=5)
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--honesty", default="fit", choices=HONESTY, help="the believers' honesty model (default fit)")
    ap.add_argument("--comparisons", type=int, default=1, help="comparisons made (the Bonferroni factor)")
    ap.add_argument("--secret", default=None, metavar="HEX", help="secret of the deals and agent seeds (default: "
                    "drawn, printed)")  # fmt: skip
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="log directory (crash-safe, resumable)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    a = ap.parse_args(argv)
    try:
        secret = session_secret() if a.secret is None else parse_secret(a.secret)
        r = measure(a.agent, a.players, a.deals, secret, a.honesty, a.comparisons, a.workers, a.out)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(render(r))
    if a.json:
        a.json.write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
