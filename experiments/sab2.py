"""Saboteur 2 games for the tournament: one game, its log records, the per-role results table.

A cell is (players, agent): every seat plays the agent (role-dispatching ones play each dealt role). Game ``g`` of
every cell uses seed ``seed + g`` (duplicate deals). Records are one per round: ``header`` (game, seed, players,
agents, roles dealt, round, rounds in the game, starter, rules and package versions), ``events`` (public; the
private part of a face-down discard, a map peek, an inspection or a hat swap under ``private``), ``actions`` and
``end`` (gold reached, finder, door routes, winners, payouts, gold totals and gains after the thefts, roles at the
end); ``experiments.logs`` writes and reads them, and :func:`replay_sab2` re-plays a logged game against its log.
The tables (:class:`Sab2Tables`) are running aggregates, fed one record at a time.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from agents import make_agent
from experiments.rounds import (
    ORACLE_NOTE,
    draw_secret,
    oracle_name,
    play_rounds,
    replay_env,
    replay_rounds,
    seat_agents,
    seeds_record,
)
from experiments.stats import BOOT, bootstrap_ratio
from saboteur_env import __version__, raw_env
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


def _header(cfg, game, seed: int, agent: str) -> dict:
    return {"game": "sab2", "rules_version": cfg.rules_version, "package_version": __version__, "seed": seed,
            "players": cfg.num_players, "agent": agent, "agents": [agent] * cfg.num_players, "rounds": cfg.rounds,
            "round": game.round, "starter": game.current, "roles": game.roles.tolist()}  # fmt: skip


def play_sab2(
    num_players: int, agent: str, seed: int, env: raw_env | None = None, agent_secret: int | None = None
) -> list[dict]:
    """Play one seeded Saboteur 2 game with ``agent`` in every seat; returns one record per round.

    ``agent_secret``: the game secret the seats' seeds come from (:mod:`experiments.rounds`; fresh when ``None``).
    """
    if env is None or env.config.num_players != num_players:
        env = raw_env(game="sab2", num_players=num_players)
    cfg = env.config
    agents = [make_agent(agent, cfg) for _ in range(num_players)]
    env.reset(seed=seed)
    game = env.unwrapped.game
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)  # the state reaches declared oracles only
    records = play_rounds(env, agents, lambda: _header(cfg, game, seed, agent), lambda row: _event(game, row), dict)
    return [dict(r, **seeds_record(secret)) for r in records]


def replay_sab2(records: list[dict]) -> None:
    """Re-play a logged Saboteur 2 game from its seed and actions; raise :class:`~experiments.rounds.ReplayError`
    at the first header, event or round end that differs from the log."""
    h = records[0]["header"]
    env = replay_env(h["seed"], "a Saboteur 2 game", game="sab2", num_players=h["players"])
    game = env.unwrapped.game
    replay_rounds(
        env,
        records,
        lambda _: _header(env.config, game, h["seed"], h["agent"]),
        lambda first, last, _: [_event(game, game.events[i]) for i in range(first, last)],
        lambda decisions: dict(game.round_results[-1], decisions=decisions),
    )


class Sab2Tables:
    """Per-game aggregates behind the role and team tables (a few counts per game; no records kept), fed one round
    record at a time (``add``). Intervals resample whole games: the seats of a round and the rounds of a game are
    not independent trials."""

    def __init__(self) -> None:
        # (players, agent, role) -> seed -> [seat-rounds, wins, gold]
        self.roles: dict[tuple[int, str, str], dict[int, list[float]]] = defaultdict(dict)
        # (players, agent) -> seed -> [rounds, gold reached, blue won, green won, both, gold reached but no team won]
        self.teams: dict[tuple[int, str], dict[int, list[int]]] = defaultdict(dict)

    def add(self, r: dict) -> None:
        h, end = r["header"], r["end"]
        if h.get("game") != "sab2":
            return
        cell, seed = (h["players"], h["agent"]), h["seed"]
        reached = bool(end["gold_reached"])
        roles, winners = end["roles"], end["winners"]
        for role, won, gain in zip(roles, winners, end["gained"], strict=True):
            acc = self.roles[(*cell, sc.ROLE_NAMES[role])].setdefault(seed, [0, 0, 0.0])
            acc[0] += 1
            acc[1] += bool(won)
            acc[2] += float(gain)
        blue = any(w and role == sc.Sab2Role.BLUE_DIGGER for role, w in zip(roles, winners, strict=True))
        green = any(w and role == sc.Sab2Role.GREEN_DIGGER for role, w in zip(roles, winners, strict=True))
        acc_t = self.teams[cell].setdefault(seed, [0] * 6)
        for i, flag in enumerate((True, reached, blue, green, blue and green, reached and not blue and not green)):
            acc_t[i] += bool(flag)

    def role_rows(self, boot: int = BOOT) -> list[dict]:
        """Per (players, agent, role at the round end): seat-rounds, win rate and mean gold (paid + stolen) per
        seat-round, each with a 95% bootstrap interval over games, and the share of rounds the gold was reached."""
        rows = []
        for (n, agent, role), games in sorted(self.roles.items()):
            a = np.array(list(games.values()), dtype=float)  # games x [seat-rounds, wins, gold]
            rate, lo, hi = bootstrap_ratio(a[:, 1], a[:, 0], boot)
            gold, glo, ghi = bootstrap_ratio(a[:, 2], a[:, 0], boot)
            t = np.array(list(self.teams[(n, agent)].values()), dtype=float)
            rows.append({"players": n, "agent": agent, "role": role, "games": len(games),
                         "seat_rounds": int(a[:, 0].sum()), "win_rate": _r(rate, 4), "ci_low": _r(lo, 4),
                         "ci_high": _r(hi, 4), "gold_per_round": _r(gold, 3), "gold_ci_low": _r(glo, 3),
                         "gold_ci_high": _r(ghi, 3), "gold_reached": _r(t[:, 1].sum() / t[:, 0].sum(), 4)})  # fmt: skip
        return rows

    def team_rows(self, boot: int = BOOT) -> list[dict]:
        """Per (players, agent): share of rounds won by each side - blue team, green team (both when a door-free
        route let both win), saboteurs (gold not reached), nobody of the teams (gold reached behind doors of both
        colours) - with 95% bootstrap intervals over games for the team win rates."""
        rows = []
        for (n, agent), games in sorted(self.teams.items()):
            t = np.array(list(games.values()), dtype=float)
            k, reached, blue, green, both, no_team = t.sum(axis=0)
            row = {"players": n, "agent": agent, "games": len(games), "rounds": int(k),
                   "gold_reached": round(reached / k, 4), "blue_team_won": round(blue / k, 4),
                   "green_team_won": round(green / k, 4), "both_teams": round(both / k, 4),
                   "no_team_with_gold": round(no_team / k, 4),
                   "saboteurs_won": round((k - reached) / k, 4)}  # fmt: skip
            for team, col in (("blue", 2), ("green", 3)):
                _, lo, hi = bootstrap_ratio(t[:, col], t[:, 0], boot)
                row[f"{team}_ci"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return rows


def _r(x: float, digits: int) -> float:
    return round(x, digits) if math.isfinite(x) else x


def _tables(rounds: Iterable[dict] | Sab2Tables) -> Sab2Tables:
    if isinstance(rounds, Sab2Tables):
        return rounds
    tables = Sab2Tables()
    for r in rounds:
        tables.add(r)
    return tables


def role_table(rounds: Iterable[dict] | Sab2Tables) -> list[dict]:
    """Per (players, agent, role at the round end): seat-rounds, win rate, mean gold (game bootstrap intervals)."""
    return _tables(rounds).role_rows()


def team_table(rounds: Iterable[dict] | Sab2Tables) -> list[dict]:
    """Per (players, agent): share of rounds won by each side (see :meth:`Sab2Tables.team_rows`)."""
    return _tables(rounds).team_rows()


def summary_table(rounds: Iterable[dict] | Sab2Tables) -> str:
    """The results table printed by the tournament, from round records or a :class:`Sab2Tables`."""
    tables = _tables(rounds)
    teams = tables.team_rows()
    lines = [f"{'N':>3} {'agent':<10} {'rounds':>6} {'gold reached':>12} {'blue team':>10} {'green team':>10} "
             f"{'both':>6} {'no team':>8} {'saboteurs':>9}"]  # fmt: skip
    lines.append("-" * len(lines[0]))
    for t in teams:
        lines.append(f"{t['players']:>3} {t['agent']:<10} {t['rounds']:>6} {t['gold_reached']:>12.1%} "
                     f"{t['blue_team_won']:>10.1%} {t['green_team_won']:>10.1%} {t['both_teams']:>6.1%} "
                     f"{t['no_team_with_gold']:>8.1%} {t['saboteurs_won']:>9.1%}"
                     + (" *" if oracle_name(t["agent"], "sab2") else ""))  # fmt: skip
    lines.append("")
    rows = tables.role_rows()
    header = (f"{'N':>3} {'agent':<10} {'role':<18} {'seat-rounds':>11} {'win rate':>9} {'95% CI':>16} "
              f"{'gold/round':>10} {'gold reached':>12}")  # fmt: skip
    lines += [header, "-" * len(header)]
    for r in rows:
        ci = f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
        lines.append(f"{r['players']:>3} {r['agent']:<10} {r['role']:<18} {r['seat_rounds']:>11} {r['win_rate']:>9.1%} "
                     f"{ci:>16} {r['gold_per_round']:>10.2f} {r['gold_reached']:>12.1%}")  # fmt: skip
    if any(oracle_name(t["agent"], "sab2") for t in teams):
        lines += ["", ORACLE_NOTE]
    return "\n".join(lines)
