"""The claims report (issue 18; docs/claims.md): lie rates by role, detection of liars by a public claims observer,
and the effect of claims on win rates, on paired deals (deal ``g`` is ``seed + g`` with and without claims, the
same agent seeds). Intervals are 95% percentile bootstraps over deals. The agents' seeds are sealed
(``experiments.tournament.rounds``): spawned from a secret (``--secret``, default drawn from ``os.urandom``, printed)
and the
deal, never from the public seed.

    python -m experiments.analysis.claims_report --game base --players 5 --agent heuristic --deals 100
    python -m experiments.analysis.claims_report --game sab2 --players 6 --agent heuristic --deals 60 --json out.json

With claims every seat plays ``agents.claims.ClaimsAgent`` around ``--agent`` (honest diggers, covert saboteurs who
lie when it pays, the claims observer's reactions); without claims the plain ``--agent``. The detection observer
is public: it reads the claims' public fields and the face-up goals only, never the truth labels.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents import make_agent
from agents.claims import ClaimPolicy, make_claims_agent
from agents.claims_beliefs import ClaimsObserver, HonestyModel, PublicClaims
from experiments.tournament.rounds import (
    ORACLE_NOTE,
    draw_secret,
    format_secret,
    game_secret,
    oracle_name,
    parse_secret,
    seat_agents,
    session_secret,
)
from experiments.tournament.stats import auc_interval, bootstrap_mean, bootstrap_ratio, ece
from saboteur_env import GameConfig, raw_env
from saboteur_env.claims import layout, state_fields

BOOT = 1000


def _public_goals(env: Any) -> NDArray[np.int8]:
    """Face-up goals (1 gold, 0 stone, -1 face down): public facts only."""
    lay = layout(env.config)
    f = state_fields(env.game)
    up = f("goal_revealed").reshape(-1)[: lay.num_goals].astype(bool)
    gold = lay.facts.gold(f(lay.facts.goal_field).reshape(-1)[: lay.num_goals])
    return np.where(up, gold.astype(np.int8), -1).astype(np.int8)


def play_deal(config: GameConfig, agent: str, seed: int, claims: bool, react: bool = True,
              agent_secret: int | None = None, honesty: HonestyModel | None = None) -> dict[str, Any]:  # fmt: skip
    """One game of deal ``seed``: round results, and with claims every claim (with the speaker's role when made)
    and the public observer's last P(saboteur) per seat in each round. ``react=False``: the diggers talk but play
    as without claims (``ClaimPolicy(react=False)``). The seats' seeds are sealed (``experiments.tournament.rounds``):
    spawned
    from the game secret ``agent_secret`` (fresh when ``None``), never from the deal seed."""
    cfg = dataclasses.replace(config, claims=claims, claims_per_turn=config.claims_per_turn if claims else 1)
    env = raw_env(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)})
    n = cfg.num_players
    agents = [make_claims_agent(agent, cfg, miner=ClaimPolicy(react=react)) if claims else make_agent(agent, cfg)
              for _ in range(n)]  # fmt: skip
    env.reset(seed=seed)
    seat_agents(agents, draw_secret() if agent_secret is None else agent_secret, seed, env.state)
    observer = ClaimsObserver(cfg, honesty) if claims else None
    roles_at: list[int] = []
    scores: dict[int, list[float]] = {}
    # The last score of each round while every goal was still face down, with the decision it was taken before.
    early: dict[int, tuple[int, list[float]]] = {}
    decision = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        game = env.game
        if observer is not None and observer.lay.roles:
            log = env.claims_log()
            pub = PublicClaims.from_records([{k: r[k] for k in ("round", "speaker", "kind", "target", "value")}
                                             for r in log], game.round)  # fmt: skip
            up = _public_goals(env)
            _, p_sab = observer.posterior(pub, gold_known=up)
            scores[int(game.round)] = p_sab.tolist()
            if (up < 0).all():
                early[int(game.round)] = (decision, p_sab.tolist())
        seat = int(name.split("_")[1])
        size = len(env.claims_log()) if claims else 0
        env.step(agents[seat].act(obs["observation"], obs["action_mask"]))
        decision += 1  # the claims log's ``step``: decisions of the game, claims included
        if claims and len(env.claims_log()) > size:
            roles_at.append(int(game.roles[seat]) if observer is not None and observer.lay.roles else -1)
    results = env.game.round_results
    log = env.claims_log()
    for r, role in zip(log, roles_at, strict=True):
        r["role"] = role
    return {"seed": seed, "rounds": results, "claims": log, "scores": scores, "early": early,
            "returns": env.variant.returns(env.game).tolist()}  # fmt: skip


def _team_win(config: GameConfig, result: dict[str, Any]) -> float:
    """The rate the report compares: base - the gold-diggers won the round; Saboteur 2 - the gold was reached;
    the Duel - blue scored more nuggets that round."""
    if config.game == "sab2":
        return float(result["gold_reached"])
    if config.game == "duel":
        return float(result["gained"][0] > result["gained"][1])
    return float(result["winner"] == "gold-diggers")


def report(config: GameConfig, agent: str, deals: int, seed: int = 0, reaction: bool = True,
           secret: int | None = None, honesty: HonestyModel | None = None) -> dict[str, Any]:  # fmt: skip
    """The numbers of docs/claims.md. ``reaction``: also play the deals with claims but non-reacting diggers, to
    split the effect of claims into the talk and the diggers' reaction to it. ``secret``: where the agents' seeds
    come from (``experiments.tournament.rounds``; default this process's session secret): the arms of a deal share
    them. ``honesty``: the public observer's honesty model (default the hand-set one; the agents keep theirs)."""
    secret = session_secret() if secret is None else secret
    keys = [game_secret(secret, ("claims_report", config.game, config.num_players, agent, seed + g))
            for g in range(deals)]  # fmt: skip
    on = [play_deal(config, agent, seed + g, True, agent_secret=keys[g], honesty=honesty) for g in range(deals)]
    off = [play_deal(config, agent, seed + g, False, agent_secret=keys[g]) for g in range(deals)]
    deaf = ([play_deal(config, agent, seed + g, True, react=False, agent_secret=keys[g]) for g in range(deals)]
            if reaction else None)  # fmt: skip
    out: dict[str, Any] = {"game": config.game, "players": config.num_players, "agent": agent, "deals": deals,
                           "seed": seed, "rounds": config.rounds, "claims_per_turn": config.claims_per_turn,
                           "secret": format_secret(secret),
                           "oracle": oracle_name(f"claims:{agent}", config.game)}  # fmt: skip
    roles = layout(dataclasses.replace(config, claims=True)).roles
    sab = layout(dataclasses.replace(config, claims=True)).facts.saboteur
    # Lie rates by role: among the claims whose speaker knew the fact, the share that were false.
    groups = {"saboteur": lambda r: r["role"] == sab, "digger side": lambda r: r["role"] != sab} if roles else {
        "any": lambda r: True}
    lies: dict[str, Any] = {}
    for label, member in groups.items():
        num = [sum(1 for r in d["claims"] if r["known"] and member(r) and r["lie"]) for d in on]
        den = [sum(1 for r in d["claims"] if r["known"] and member(r)) for d in on]
        lies[label] = {"known_claims": int(sum(den)), "lies": int(sum(num)),
                       "rate": bootstrap_ratio(num, den, BOOT)}  # fmt: skip
    out["lie_rate"] = lies
    out["claims_per_game"] = bootstrap_mean([len(d["claims"]) for d in on], BOOT)
    # Detection: the public observer's last P(saboteur) in each round, for the seats that made a known claim that
    # round: liars (any lie) vs truth-tellers; and for every seat, true saboteurs vs the rest.
    if roles:
        liars: list[tuple[int, float]] = []
        honest: list[tuple[int, float]] = []
        sabs: list[tuple[int, float]] = []
        rest: list[tuple[int, float]] = []
        early_liars: list[tuple[int, float]] = []
        early_honest: list[tuple[int, float]] = []
        for g, d in enumerate(on):
            for res in d["rounds"]:
                rnd = res["round"]
                p, q = d["scores"].get(rnd), d["early"].get(rnd)
                if p is None:
                    continue
                said = [r for r in d["claims"] if r["round"] == rnd and r["known"]]
                for s in {r["speaker"] for r in said}:
                    lied = any(r["lie"] for r in said if r["speaker"] == s)
                    (liars if lied else honest).append((g, p[s]))
                    before = [r for r in said if r["speaker"] == s and q is not None and r["step"] < q[0]]
                    if before:  # speakers whose known claims came while every goal was face down
                        lied = any(r["lie"] for r in before)
                        (early_liars if lied else early_honest).append((g, q[1][s]))
                for s, role in enumerate(res["roles"]):
                    (sabs if role == sab else rest).append((g, p[s]))
        out["detection"] = {"liars": len(liars), "truth_tellers": len(honest),
                            "auc_liars": auc_interval(liars, honest, deals),
                            "auc_liars_face_down": auc_interval(early_liars, early_honest, deals),
                            "auc_saboteurs": auc_interval(sabs, rest, deals),
                            "ece_saboteurs": ece([(g, p, 1) for g, p in sabs] + [(g, p, 0) for g, p in rest], deals),
                            "honesty": (honesty or HonestyModel()).name}  # fmt: skip
    # Effect on win rates, paired by deal.
    rate_on = [np.mean([_team_win(config, r) for r in d["rounds"]]) for d in on]
    rate_off = [np.mean([_team_win(config, r) for r in d["rounds"]]) for d in off]
    out["win_rate"] = {"claims": bootstrap_mean(rate_on, BOOT), "no_claims": bootstrap_mean(rate_off, BOOT),
                       "difference": bootstrap_mean(np.subtract(rate_on, rate_off), BOOT),
                       "identical_deals": int(sum(a == b for a, b in zip(rate_on, rate_off, strict=True)))}  # fmt: skip
    if deaf is not None:
        rate_deaf = [np.mean([_team_win(config, r) for r in d["rounds"]]) for d in deaf]
        out["reaction"] = {"claims_not_reacting": bootstrap_mean(rate_deaf, BOOT),
                           "not_reacting_minus_none": bootstrap_mean(np.subtract(rate_deaf, rate_off), BOOT),
                           "reacting_minus_not_reacting": bootstrap_mean(np.subtract(rate_on, rate_deaf), BOOT),
                           "identical_deals": int(sum(a == b for a, b in zip(rate_on, rate_deaf, strict=True)))}
    return out


def _ci(t: Sequence[float], pct: bool = True) -> str:
    f = (lambda x: f"{100 * x:.1f}%") if pct else (lambda x: f"{x:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def render(r: dict[str, Any]) -> str:
    what = {"base": "gold-diggers win the round", "sab2": "the gold is reached", "duel": "blue wins the round"}
    star = "*" if r.get("oracle") else ""
    lines = [f"Claims report: {r['game']}, {r['players']} players, agent {r['agent']}{star}, {r['deals']} paired deals "
             f"(seeds {r['seed']}..{r['seed'] + r['deals'] - 1}), {r['rounds']} rounds, K = {r['claims_per_turn']}",
             "", f"claims per game: {r['claims_per_game'][0]:.1f} [{r['claims_per_game'][1]:.1f}, "
             f"{r['claims_per_game'][2]:.1f}]", "", "| speaker | known claims | lies | lie rate |", "|---|---|---|---|"]
    for label, v in r["lie_rate"].items():
        lines.append(f"| {label} | {v['known_claims']} | {v['lies']} | {_ci(v['rate'])} |")
    if "detection" in r:
        d = r["detection"]
        lines += ["", f"public observer, last P(saboteur) of each round: AUC liars ({d['liars']}) vs truth-tellers "
                  f"({d['truth_tellers']}) {_ci(d['auc_liars'], False)}; the same while every goal was face down "
                  f"{_ci(d['auc_liars_face_down'], False)}; AUC saboteurs vs the rest "
                  f"{_ci(d['auc_saboteurs'], False)}"]
        if "ece_saboteurs" in d:
            lines += [f"calibration of that P(saboteur) (honesty model {d['honesty']}): ECE "
                      f"{_ci(d['ece_saboteurs'], False)}"]
    w = r["win_rate"]
    lines += ["", f"rate that {what[r['game']]}: claims {_ci(w['claims'])}, no claims {_ci(w['no_claims'])}, "
              f"paired difference {_ci(w['difference'])} ({w['identical_deals']} of {r['deals']} deals with equal "
              "rates)"]
    if "reaction" in r:
        v = r["reaction"]
        lines += ["", f"claims with diggers that do not react: {_ci(v['claims_not_reacting'])}; paired difference "
                  f"to no claims {_ci(v['not_reacting_minus_none'])}; reacting minus not reacting "
                  f"{_ci(v['reacting_minus_not_reacting'])} ({v['identical_deals']} of {r['deals']} deals equal)"]
    if r.get("oracle"):
        lines += ["", ORACLE_NOTE]
    if "secret" in r:
        lines += ["", f"agent seeds: secret {r['secret']} (--secret re-plays these deals)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.analysis.claims_report",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="base", choices=("base", "sab2", "duel"))
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--agent", default="heuristic")
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--claims-per-turn", type=int, default=1)
    ap.add_argument("--no-reaction-arm", action="store_true",
                    help="skip the third arm (claims, diggers that do not react)")
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    ap.add_argument("--honesty", default="handset", help="the public observer's honesty model: handset (default), "
                    "fit (the fitted model shipped for the game and player count) or a honesty JSON file")
    ap.add_argument("--secret", default=None, help="hex secret the agents' seeds come from (default: drawn from "
                    "os.urandom, printed); never derived from the deal seeds")
    args = ap.parse_args(argv)
    if args.deals < 2:
        ap.error(f"--deals {args.deals} must be >= 2 (intervals need two deals)")
    try:
        config = GameConfig(game=args.game, num_players=args.players, rounds=args.rounds, claims=True,
                            claims_per_turn=args.claims_per_turn)  # fmt: skip
        secret = None if args.secret is None else parse_secret(args.secret)
        from agents.honesty import honesty_model

        model = honesty_model(args.honesty, config.game, config.num_players)
        r = report(config, args.agent, args.deals, args.seed, reaction=not args.no_reaction_arm, secret=secret,
                   honesty=model)
    except ValueError as e:
        ap.error(str(e))
    print(render(r))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
