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

from collections import defaultdict
from collections.abc import Iterable

from agents import CHEATING, make_agent
from experiments.rounds import play_rounds, replay_env, replay_rounds, seat_agents
from experiments.stats import RunningMean, wilson_interval
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
    return play_rounds(env, agents, lambda: _header(cfg, game, seed, agent), lambda row: _event(game, row), dict)


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
    """Running aggregates behind the role and team tables (counts and running means; no records kept), fed one
    round record at a time (``add``)."""

    def __init__(self) -> None:
        self.roles: dict[tuple[int, str, str], list] = defaultdict(lambda: [0, 0, RunningMean()])  # rounds, wins
        self.reached: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])  # rounds, gold reached
        # (rounds, gold reached, blue won, green won, both, gold reached but no team won)
        self.teams: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0] * 6)

    def add(self, r: dict) -> None:
        h, end = r["header"], r["end"]
        if h.get("game") != "sab2":
            return
        cell = (h["players"], h["agent"])
        reached = bool(end["gold_reached"])
        acc = self.reached[cell]
        acc[0] += 1
        acc[1] += reached
        roles, winners = end["roles"], end["winners"]
        for role, won, gain in zip(roles, winners, end["gained"], strict=True):
            row = self.roles[(*cell, sc.ROLE_NAMES[role])]
            row[0] += 1
            row[1] += bool(won)
            row[2].add(float(gain))
        blue = any(w and role == sc.Sab2Role.BLUE_DIGGER for role, w in zip(roles, winners, strict=True))
        green = any(w and role == sc.Sab2Role.GREEN_DIGGER for role, w in zip(roles, winners, strict=True))
        for i, flag in enumerate((True, reached, blue, green, blue and green, reached and not blue and not green)):
            self.teams[cell][i] += bool(flag)

    def role_rows(self) -> list[dict]:
        """Per (players, agent, role at the round end): rounds, win rate (Wilson 95%), mean gold paid + stolen."""
        rows = []
        for (n, agent, role), (k, wins, gain) in sorted(self.roles.items()):
            lo, hi = wilson_interval(wins, k)
            mean, glo, ghi = gain.interval()
            rounds, reached = self.reached[(n, agent)]
            rows.append({"players": n, "agent": agent, "role": role, "seat_rounds": k, "win_rate": round(wins / k, 4),
                         "ci_low": round(lo, 4), "ci_high": round(hi, 4), "gold_per_round": round(mean, 3),
                         "gold_ci_low": round(glo, 3), "gold_ci_high": round(ghi, 3),
                         "gold_reached": round(reached / rounds, 4)})  # fmt: skip
        return rows

    def team_rows(self) -> list[dict]:
        """Per (players, agent): share of rounds won by each side - blue team, green team (both when a door-free
        route let both win), saboteurs (gold not reached), nobody of the teams (gold reached behind doors of both
        colours) - with the team win rates' Wilson 95% intervals."""
        rows = []
        for (n, agent), (k, reached, blue, green, both, no_team) in sorted(self.teams.items()):
            row = {"players": n, "agent": agent, "rounds": k, "gold_reached": round(reached / k, 4),
                   "blue_team_won": round(blue / k, 4), "green_team_won": round(green / k, 4),
                   "both_teams": round(both / k, 4), "no_team_with_gold": round(no_team / k, 4),
                   "saboteurs_won": round((k - reached) / k, 4)}  # fmt: skip
            for team, wins in (("blue", blue), ("green", green)):
                lo, hi = wilson_interval(wins, k)
                row[f"{team}_ci"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return rows


def _tables(rounds: Iterable[dict] | Sab2Tables) -> Sab2Tables:
    if isinstance(rounds, Sab2Tables):
        return rounds
    tables = Sab2Tables()
    for r in rounds:
        tables.add(r)
    return tables


def role_table(rounds: Iterable[dict] | Sab2Tables) -> list[dict]:
    """Per (players, agent, role at the round end): rounds, win rate (Wilson 95%), mean gold paid + stolen."""
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
                     + (" (cheating)" if t["agent"] in CHEATING else ""))  # fmt: skip
    lines.append("")
    rows = tables.role_rows()
    header = (f"{'N':>3} {'agent':<10} {'role':<18} {'seat-rounds':>11} {'win rate':>9} {'95% CI':>16} "
              f"{'gold/round':>10} {'gold reached':>12}")  # fmt: skip
    lines += [header, "-" * len(header)]
    for r in rows:
        ci = f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
        lines.append(f"{r['players']:>3} {r['agent']:<10} {r['role']:<18} {r['seat_rounds']:>11} {r['win_rate']:>9.1%} "
                     f"{ci:>16} {r['gold_per_round']:>10.2f} {r['gold_reached']:>12.1%}")  # fmt: skip
    return "\n".join(lines)
