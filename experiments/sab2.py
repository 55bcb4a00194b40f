"""Saboteur 2 games for the tournament: one game, its log records, the per-role results table.

A cell is (players, agent): every seat plays the agent (role-dispatching ones play each dealt role). Game ``g`` of
every cell uses seed ``seed + g`` (duplicate deals). Records are one per round: ``header`` (game, seed, players,
agents, roles dealt, round, starter), ``events`` (public; the private part of a face-down discard, a map peek, an
inspection or a hat swap under ``private``), ``actions`` and ``end`` (gold reached, finder, door routes, winners,
payouts, gold totals and gains after the thefts, roles at the end).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from agents import CHEATING, make_agent
from experiments.rounds import play_rounds, seat_agents
from experiments.stats import mean_interval, wilson_interval
from saboteur_env import raw_env
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.state import Sab2Event

EVENT_NAMES = {int(t): t.name.lower() for t in Sab2Event}


def _event(game, row) -> dict:
    etype, actor, kind, target, cell, arg = row
    rec: dict = {"type": EVENT_NAMES[etype], "actor": actor}
    if kind >= 0:
        rec["kind"] = sc.HAND_CODES[kind] if kind < sc.NUM_DECK_KINDS else sc.KIND_CODES[kind]
    if target >= 0:
        rec["target"] = target
    if cell >= 0:
        rec["cell"] = list(game.config.cell_coords(cell))
    if arg >= 0:
        rec["arg"] = arg
    return rec


def play_sab2(num_players: int, agent: str, seed: int, env: raw_env | None = None) -> list[dict]:
    """Play one seeded Saboteur 2 game with ``agent`` in every seat; returns one record per round."""
    if env is None or env.config.num_players != num_players:
        env = raw_env(game="sab2", num_players=num_players)
    cfg = env.config
    agents = [make_agent(agent, cfg) for _ in range(num_players)]
    env.reset(seed=seed)
    for a in agents:
        if hasattr(a, "bind_state"):
            a.bind_state(env.state)  # the cheating oracles
    game = env.unwrapped.game
    seat_agents(agents, seed)

    def header() -> dict:
        return {"game": "sab2", "rules_version": cfg.rules_version, "seed": seed, "players": num_players,
                "agent": agent, "agents": [agent] * num_players, "round": game.round, "starter": game.current,
                "roles": game.roles.tolist()}  # fmt: skip

    return play_rounds(env, agents, header, lambda row: _event(game, row), dict)


def role_table(rounds: list[dict]) -> list[dict]:
    """Per (players, agent, role at the round end): rounds, win rate (Wilson 95%), mean gold paid + stolen."""
    acc: dict[tuple[int, str, str], dict[str, list[float]]] = defaultdict(lambda: {"win": [], "gain": []})
    reached: dict[tuple[int, str], list[bool]] = defaultdict(list)
    for r in rounds:
        h, end = r["header"], r["end"]
        if h.get("game") != "sab2":
            continue
        reached[(h["players"], h["agent"])].append(end["gold_reached"])
        for role, won, gain in zip(end["roles"], end["winners"], end["gained"], strict=True):
            cell = acc[(h["players"], h["agent"], sc.ROLE_NAMES[role])]
            cell["win"].append(float(won))
            cell["gain"].append(float(gain))
    rows = []
    for (n, agent, role), cell in sorted(acc.items()):
        k = len(cell["win"])
        wins = int(sum(cell["win"]))
        lo, hi = wilson_interval(wins, k)
        mean, glo, ghi = mean_interval(cell["gain"])
        rows.append({"players": n, "agent": agent, "role": role, "seat_rounds": k, "win_rate": round(wins / k, 4),
                     "ci_low": round(lo, 4), "ci_high": round(hi, 4), "gold_per_round": round(mean, 3),
                     "gold_ci_low": round(glo, 3), "gold_ci_high": round(ghi, 3),
                     "gold_reached": round(float(np.mean(reached[(n, agent)])), 4)})  # fmt: skip
    return rows


def team_table(rounds: list[dict]) -> list[dict]:
    """Per (players, agent): share of rounds won by each side - blue team, green team (both when a door-free route
    let both win), saboteurs (gold not reached), nobody of the teams (gold reached behind doors of both colours) -
    with the team win rates' Wilson 95% intervals."""
    acc: dict[tuple[int, str], list[tuple[bool, bool, bool]]] = defaultdict(list)
    for r in rounds:
        h, end = r["header"], r["end"]
        if h.get("game") != "sab2":
            continue
        roles, winners = end["roles"], end["winners"]
        blue = any(w and role == sc.Sab2Role.BLUE_DIGGER for role, w in zip(roles, winners, strict=True))
        green = any(w and role == sc.Sab2Role.GREEN_DIGGER for role, w in zip(roles, winners, strict=True))
        acc[(h["players"], h["agent"])].append((end["gold_reached"], blue, green))
    rows = []
    for (n, agent), outcomes in sorted(acc.items()):
        k = len(outcomes)
        reached = sum(o[0] for o in outcomes)
        blue = sum(o[1] for o in outcomes)
        green = sum(o[2] for o in outcomes)
        both = sum(o[1] and o[2] for o in outcomes)
        no_team = sum(o[0] and not o[1] and not o[2] for o in outcomes)
        row = {"players": n, "agent": agent, "rounds": k, "gold_reached": round(reached / k, 4),
               "blue_team_won": round(blue / k, 4), "green_team_won": round(green / k, 4),
               "both_teams": round(both / k, 4), "no_team_with_gold": round(no_team / k, 4),
               "saboteurs_won": round((k - reached) / k, 4)}  # fmt: skip
        for team, wins in (("blue", blue), ("green", green)):
            lo, hi = wilson_interval(wins, k)
            row[f"{team}_ci"] = f"[{lo:.3f}, {hi:.3f}]"
        rows.append(row)
    return rows


def summary_table(rounds: list[dict]) -> str:
    teams = team_table(rounds)
    lines = [f"{'N':>3} {'agent':<10} {'rounds':>6} {'gold reached':>12} {'blue team':>10} {'green team':>10} "
             f"{'both':>6} {'no team':>8} {'saboteurs':>9}"]  # fmt: skip
    lines.append("-" * len(lines[0]))
    for t in teams:
        lines.append(f"{t['players']:>3} {t['agent']:<10} {t['rounds']:>6} {t['gold_reached']:>12.1%} "
                     f"{t['blue_team_won']:>10.1%} {t['green_team_won']:>10.1%} {t['both_teams']:>6.1%} "
                     f"{t['no_team_with_gold']:>8.1%} {t['saboteurs_won']:>9.1%}"
                     + (" (cheating)" if t["agent"] in CHEATING else ""))  # fmt: skip
    lines.append("")
    rows = role_table(rounds)
    header = (f"{'N':>3} {'agent':<10} {'role':<18} {'seat-rounds':>11} {'win rate':>9} {'95% CI':>16} "
              f"{'gold/round':>10} {'gold reached':>12}")  # fmt: skip
    lines += [header, "-" * len(header)]
    for r in rows:
        ci = f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
        lines.append(f"{r['players']:>3} {r['agent']:<10} {r['role']:<18} {r['seat_rounds']:>11} {r['win_rate']:>9.1%} "
                     f"{ci:>16} {r['gold_per_round']:>10.2f} {r['gold_reached']:>12.1%}")  # fmt: skip
    return "\n".join(lines)
