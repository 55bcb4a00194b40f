"""Saboteur 2 in the tournament: the game's hooks of the tournament loop (:data:`RECORDING`: seats, round records,
the reference observer), the per-role results table and an insertion experiment.

A cell is (players, agent): every seat plays the agent (role-dispatching ones play each dealt role); a game may
insert another agent at seat ``seed mod N`` (``--insert``, the bluffing benchmark; such games stay out of the cell
tables and fill the inserted-seat table, :meth:`Sab2Tables.inserted_table`). Game
``g`` of every cell uses seed ``seed + g`` (duplicate deals). Records are one per round: ``header`` (game, seed,
players, agents, roles dealt, round, rounds in the game, starter, rules and package versions), ``events`` (public; the
private part of a face-down discard, a map peek, an inspection or a hat swap under ``private``), ``actions`` and
``end`` (gold reached, finder, door routes, winners, payouts, gold totals and gains after the thefts, roles at the
end); ``experiments.tournament.logs`` writes and reads them, and :func:`experiments.tournament.loop.replay` re-plays
a logged game against its log.
The tables (:class:`Sab2Tables`) are running aggregates, fed one record at a time.

**Reference observer.** Every game also runs a public :class:`~agents.sab2.beliefs.Sab2RoleBelief` (no seat, fed the
public events as they happen) and scores it after every event against the roles the seats hold at that moment:
Brier score (summed over the 6 roles, averaged over seats) and log loss, next to the same scores of the public
prior (each seat a random card of the 15). Each round record carries them under ``observer`` (sums per quarter of
the round's events) and :func:`summary_table` prints them by round progress. ``python -m experiments.tournament.sab2``
also
measures one inserted agent against a base population on paired seeds (see :func:`main`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from agents import make_agent
from agents.sab2.beliefs import COPIES, RoleEvent, Sab2RoleBelief
from experiments.tournament.base import insert_seat
from experiments.tournament.rounds import (
    ORACLE_NOTE,
    GameSpec,
    Recording,
    insert_rank,
    logged_secret,
    oracle_name,
    seat_agents,
)
from experiments.tournament.stats import BOOT, bootstrap_mean, bootstrap_ratio, paired_difference
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


def _header(cfg, game, seed: int, agent: str, insert: str | None = None) -> dict:
    agents, extra = [agent] * cfg.num_players, {}
    if insert is not None:  # one seat plays another agent (the bluffing benchmark's seating, as the base game's)
        seat = insert_seat(seed, cfg.num_players)
        agents[seat] = insert
        extra = {"insert": insert, "insert_seat": seat}
    return {"game": "sab2", "rules_version": cfg.rules_version, "package_version": __version__, "seed": seed,
            "players": cfg.num_players, "agent": agent, **extra, "agents": agents, "rounds": cfg.rounds,
            "round": game.round, "starter": game.current, "roles": game.roles.tolist()}  # fmt: skip


BINS = 4  # quarters of a round's events
PRIOR = COPIES / COPIES.sum()


def make_sab2_agent(name: str, config):
    """``make_agent``, plus ``believer`` (agents.sab2.ladder.Sab2Believer) while agents/__init__.py does not list it."""
    if name == "believer":
        from agents.sab2.ladder import Sab2Believer

        return Sab2Believer(config)
    return make_agent(name, config)


class ReferenceObserver:
    """A public role belief fed every event of the game, scored after each against the roles held then."""

    def __init__(self, game) -> None:
        self.game = game
        self.belief = Sab2RoleBelief(game.config.num_players)
        self.round = game.round
        self.scores: list[tuple[float, float, float, float]] = []
        self.rounds: list[dict] = []

    def __call__(self, row) -> None:
        etype = int(row[0])
        if etype == Sab2Event.ROUND_END:
            self._close()
            return
        if self.game.round != self.round:
            return  # the theft phase or the next round's set-up: nothing to score
        self.belief.observe(RoleEvent(*(int(x) for x in row)))
        truth = np.asarray(self.game.roles, dtype=np.int64)
        p = self.belief.p_role()
        seats = np.arange(len(truth))
        onehot = np.eye(len(PRIOR))[truth]
        brier = float(((p - onehot) ** 2).sum(1).mean())
        loss = float(-np.log(np.clip(p[seats, truth], 1e-12, 1)).mean())
        prior_brier = float(((PRIOR[None, :] - onehot) ** 2).sum(1).mean())
        prior_loss = float(-np.log(PRIOR[truth]).mean())
        self.scores.append((brier, loss, prior_brier, prior_loss))

    def _close(self) -> None:
        bins = np.zeros((BINS, 5))
        k = len(self.scores)
        for i, sc_ in enumerate(self.scores):
            b = min(BINS - 1, i * BINS // max(k, 1))
            bins[b] += (1, *sc_)
        self.rounds.append({"bins": np.round(bins, 6).tolist(), "exact": self.belief.exact})
        self.scores = []
        self.round += 1  # the next round (set up after the theft phase)
        self.belief.reset_round(None, None, self.round)


class Sab2Observer:
    """What a Saboteur 2 round record adds: ``observer``, the :class:`ReferenceObserver`'s scores of the round (fed
    every event as it happens)."""

    lists: tuple[str, ...] = ()

    def __init__(self, game) -> None:
        self.game = game
        self.reference = ReferenceObserver(game)

    def decided(self, seat: int, agent: object, action: int, record: dict) -> None:
        pass

    def stepped(self, first: int, record: dict) -> None:
        for i in range(first, self.game.num_events):
            self.reference(self.game.events[i])

    def closing(self, records: list[dict]) -> list[dict]:
        # Every round ends with ROUND_END, so every record has its scores; None stays as the guard it always was.
        scored = self.reference.rounds + [None] * (len(records) - len(self.reference.rounds))
        return [{"observer": o} for o in scored[: len(records)]]


def _spec(h: dict, secret: int) -> GameSpec:
    return GameSpec("sab2", h["players"], (h["agent"],), h["seed"], insert=h.get("insert"), secret=secret)


def _seats(spec: GameSpec) -> list[tuple[str, ...]]:
    seats = [(spec.names[0],)] * spec.players  # the cell's agent in every seat
    if spec.insert is not None:
        seats[insert_seat(spec.seed, spec.players)] = (spec.insert,)
    return seats


RECORDING = Recording(
    what="a Saboteur 2 game",
    options=lambda spec: {"game": "sab2", "num_players": spec.players},
    seats=_seats,
    agent=lambda cfg, name: make_sab2_agent(name, cfg),
    header=lambda game, spec: _header(game.config, game, spec.seed, spec.names[0], spec.insert),
    event=lambda game, index, _: _event(game, game.events[index]),
    end=lambda game, decisions: dict(game.round_results[-1], decisions=decisions),
    observer=lambda game, _: Sab2Observer(game),
    spec=lambda records: _spec(records[0]["header"], logged_secret(records)),
)


class Sab2Tables:
    """Per-game aggregates behind the role and team tables (a few counts per game; no records kept), fed one round
    record at a time (``add``). Intervals resample whole games: the seats of a round and the rounds of a game are
    not independent trials."""

    def __init__(self, inserts: Sequence[str] | None = None) -> None:
        # The inserts in the order the command listed them (the first is the paired comparison's reference);
        # without it, the order their games arrived in (a resumed log yields its games first).
        self.insert_order = list(inserts or [])
        # (players, agent, role) -> seed -> [seat-rounds, wins, gold]
        self.roles: dict[tuple[int, str, str], dict[int, list[float]]] = defaultdict(dict)
        # (players, agent) -> seed -> [rounds, gold reached, blue won, green won, both, gold reached but no team won]
        self.teams: dict[tuple[int, str], dict[int, list[int]]] = defaultdict(dict)
        # (players, agent) -> quarter of the round x [events, Brier, log loss, prior Brier, prior log loss] (sums)
        self.calibration: dict[tuple[int, str], np.ndarray] = defaultdict(lambda: np.zeros((BINS, 5)))
        # (players, agent, insert) -> seed -> the inserted seat's [gold, then per side of SIDES: rounds, wins, gold]
        self.inserted: dict[tuple[int, str, str], dict[int, list[float]]] = defaultdict(dict)

    def add(self, r: dict) -> None:
        h, end = r["header"], r["end"]
        if h.get("game") != "sab2":
            return
        if h.get("insert"):  # the cell tables are of one agent in every seat; this is the inserted-seat table's
            seat = h["insert_seat"]
            acc = self.inserted[(h["players"], h["agent"], h["insert"])].setdefault(h["seed"], [0.0] * (1 + 3 * 3))
            # The side the deal gave the seat this round (the header's roles, before any hat swap): the same whoever
            # plays the seat, so the paired comparison per side compares the same rounds.
            k = 1 + 3 * SIDE_OF_ROLE[h["roles"][seat]]
            gain = float(end["gained"][seat])
            acc[0] += gain
            acc[k] += 1
            acc[k + 1] += bool(end["winners"][seat])
            acc[k + 2] += gain
            return
        cell, seed = (h["players"], h["agent"]), h["seed"]
        if isinstance(r.get("observer"), dict):
            self.calibration[cell] += np.asarray(r["observer"]["bins"], dtype=float)
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

    def calibration_rows(self) -> list[dict]:
        """Per (players, agent) and quarter of the round: the reference observer's mean Brier score and log loss
        against the roles held at each event, and the public prior's."""
        rows = []
        for (n, agent), bins in sorted(self.calibration.items()):
            for q, (k, brier, loss, pb, pl) in enumerate(bins.tolist()):
                if k:
                    rows.append({"players": n, "agent": agent, "progress": f"{25 * q}-{25 * (q + 1)}%",
                                 "events": int(k), "brier": round(brier / k, 4), "log_loss": round(loss / k, 4),
                                 "prior_brier": round(pb / k, 4), "prior_log_loss": round(pl / k, 4)})  # fmt: skip
        return rows


    def inserted_rows(self, boot: int = BOOT) -> list[dict]:
        """Per (players, agent, insert), in the order the inserts were listed: the inserted seat's gold per game
        (paid + stolen; 95% bootstrap interval over games), its win rate per round by the side the deal gave it
        (``SIDES``), and - for every insert but the first of its table - the paired difference in gold per game
        against that first one (same deals, same seat; bootstrap over seeds), in all and per side (the gold of the
        seat's rounds on that side, over the games where both had such rounds; NaN where no game had). Intervals of
        a single game are NaN (none exists)."""
        keys = sorted(self.inserted, key=lambda k: (k[0], k[1], insert_rank(self.insert_order, k[2])))
        first: dict[tuple[int, str], str] = {}
        rows = []
        for n, agent, ins in keys:
            games = self.inserted[(n, agent, ins)]
            a = np.array(list(games.values()), dtype=float)
            mean, lo, hi = bootstrap_mean(a[:, 0], boot)
            row: dict = {"players": n, "agent": agent, "insert": ins, "games": len(games), "gold_per_game": _r(mean, 3),
                         "ci_low": _r(lo, 3), "ci_high": _r(hi, 3)}  # fmt: skip
            for i, side in enumerate(SIDES):
                rounds, wins = a[:, 1 + 3 * i], a[:, 2 + 3 * i]
                rate, rlo, rhi = bootstrap_ratio(wins, rounds, boot) if rounds.sum() else (math.nan,) * 3
                row.update({f"{side} rounds": int(rounds.sum()), f"{side} win rate": _r(rate, 4),
                            f"{side} win ci_low": _r(rlo, 4), f"{side} win ci_high": _r(rhi, 4)})  # fmt: skip
            ref = first.setdefault((n, agent), ins)
            row["reference"] = ref if ref != ins else ""
            # every row has every column (one CSV header); the reference's differences are NaN with 0 pairs
            row.update({"difference": math.nan, "difference ci_low": math.nan, "difference ci_high": math.nan,
                        "pairs": 0})  # fmt: skip
            for side in SIDES:
                row.update({f"{side} difference": math.nan, f"{side} difference ci_low": math.nan,
                            f"{side} difference ci_high": math.nan, f"{side} pairs": 0})  # fmt: skip
            if ref != ins:
                b_g = self.inserted[(n, agent, ref)]
                d, lo, hi, k = paired_difference({s: v[0] for s, v in games.items()}, {s: v[0] for s, v in b_g.items()})
                row.update({"difference": _r(d, 3), "difference ci_low": _r(lo, 3), "difference ci_high": _r(hi, 3),
                            "pairs": k})  # fmt: skip
                for i, side in enumerate(SIDES):
                    a_s = {s: v[3 + 3 * i] for s, v in games.items() if v[1 + 3 * i]}
                    b_s = {s: v[3 + 3 * i] for s, v in b_g.items() if v[1 + 3 * i]}
                    d, lo, hi, k = paired_difference(a_s, b_s)
                    if not k:  # no game of both gave the seat this side: nothing to compare (never a made-up 0)
                        d = math.nan
                    row.update({f"{side} difference": _r(d, 3), f"{side} difference ci_low": _r(lo, 3),
                                f"{side} difference ci_high": _r(hi, 3), f"{side} pairs": k})  # fmt: skip
            rows.append(row)
        return rows

    def inserted_table(self, boot: int = BOOT) -> list[str]:
        """Lines of :meth:`inserted_rows`: the inserted seats' table, then the paired differences against the first
        insert listed, in all and per side."""
        rows = self.inserted_rows(boot)
        if not rows:
            return []
        width = max(12, *(len(r["insert"]) for r in rows))
        header = (f"{'N':>3} {'agent':<10} {'insert':<{width}} {'games':>6} {'gold/game':>10} {'95% CI':>16} "
                  + " ".join(f"{'win as ' + side + ' [95% CI]':>30}" for side in SIDES))  # fmt: skip
        lines = ["", "Inserted seat (seat = seed mod N, every role; gold = paid + stolen):", header, "-" * len(header)]
        for r in rows:
            rates = [f"{r[f'{side} win rate']:.1%} {_ci(r[f'{side} win ci_low'], r[f'{side} win ci_high'], '.0%')} "
                     f"({r[f'{side} rounds']})" if r[f"{side} rounds"] else "-" for side in SIDES]  # fmt: skip
            flag = " *" if any(oracle_name(x, "sab2") for x in (r["agent"], r["insert"])) else ""
            lines.append(f"{r['players']:>3} {r['agent']:<10} {r['insert']:<{width}} {r['games']:>6} "
                         f"{r['gold_per_game']:>10.2f} {_ci(r['ci_low'], r['ci_high'], '.2f'):>16} "
                         + " ".join(f"{x:>30}" for x in rates) + flag)  # fmt: skip
        lines.append("(rounds per side in brackets; n/a: an interval needs at least 2 games)")
        paired = [r for r in rows if r["reference"]]
        if paired:
            lines += ["", "Paired difference in the inserted seat's gold per game (same seeds):"]
        for r in paired:
            lines.append(f"  N={r['players']} {r['agent']} table: {r['insert']} - {r['reference']} = "
                         f"{r['difference']:+.2f} {_ci(r['difference ci_low'], r['difference ci_high'], '+.2f')} "
                         f"over {r['pairs']} games")  # fmt: skip
            for side in SIDES:
                if not r[f"{side} pairs"]:
                    lines.append(f"      as {side:<12}: - (no game with {side} rounds in both)")
                    continue
                ci = _ci(r[f"{side} difference ci_low"], r[f"{side} difference ci_high"], "+.2f")
                lines.append(f"      as {side:<12}: {r[f'{side} difference']:+.2f} {ci} gold per game over "
                             f"{r[f'{side} pairs']} games with {side} rounds")  # fmt: skip
        return lines


def _ci(lo: float, hi: float, spec: str) -> str:
    """An interval, or ``n/a`` where none exists (a single game: the bootstrap resamples games)."""
    return "n/a" if math.isnan(lo) or math.isnan(hi) else f"[{lo:{spec}}, {hi:{spec}}]"


# The inserted seat's rounds by the side the deal gave it: gold-diggers of either team, saboteurs, and the roles
# that win with either side (the Boss, the Profiteer) or on their own (the Geologist).
SIDES = ("gold-digger", "saboteur", "other role")
SIDE_OF_ROLE = {sc.Sab2Role.BLUE_DIGGER: 0, sc.Sab2Role.GREEN_DIGGER: 0, sc.Sab2Role.SABOTEUR: 1,
                sc.Sab2Role.BOSS: 2, sc.Sab2Role.PROFITEER: 2, sc.Sab2Role.GEOLOGIST: 2}  # fmt: skip


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
    cells = bool(teams) or not tables.inserted
    lines = _cell_tables(tables, teams) if cells else []
    lines += tables.inserted_table()[0 if cells else 1 :]  # only inserted games: their table alone
    if any(oracle_name(t["agent"], "sab2") for t in teams) or any(
        oracle_name(x, "sab2") for k in tables.inserted for x in k[1:]
    ):
        lines += ["", ORACLE_NOTE]
    return "\n".join(lines)


def _cell_tables(tables: Sab2Tables, teams: list[dict]) -> list[str]:
    """The cells' team, role and reference-observer tables."""
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
    cal = tables.calibration_rows()
    if cal:
        header = (f"{'N':>3} {'agent':<10} {'round':>8} {'events':>7} {'Brier':>7} {'log loss':>9} {'prior Brier':>11} "
                  f"{'prior log loss':>14}")  # fmt: skip
        lines += ["", "Reference observer (public role belief vs the roles held; prior: a random role card)", header,
                  "-" * len(header)]  # fmt: skip
        for c in cal:
            lines.append(f"{c['players']:>3} {c['agent']:<10} {c['progress']:>8} {c['events']:>7} {c['brier']:>7.4f} "
                         f"{c['log_loss']:>9.4f} {c['prior_brier']:>11.4f} {c['prior_log_loss']:>14.4f}")  # fmt: skip
    return lines


# ---- one inserted agent against a base population, on paired seeds ----
def play_seats(num_players: int, names: list[str], seed: int, secret: int, env: raw_env | None = None) -> list[dict]:
    """One seeded game with agent ``names[i]`` at seat ``i``; returns the engine's round results."""
    if env is None or env.config.num_players != num_players:
        env = raw_env(game="sab2", num_players=num_players)
    agents = [make_sab2_agent(name, env.config) for name in names]
    env.reset(seed=seed)
    seat_agents(agents, secret, seed)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        env.step(agents[seat].act(obs["observation"], obs["action_mask"]))
    return list(env.unwrapped.game.round_results)


def insertion(num_players: int, base: str, insert: str, games: int, seed: int = 0, secret: int = 0) -> dict:
    """Game ``g`` (seed ``seed + g``) is played twice: every seat ``base``, and the same with seat
    ``(seed + g) % N`` playing ``insert`` (same deal, same agent seeds). Per game: that seat's gold and wins per
    round in both copies; returns the paired differences (insert - base) with bootstrap intervals over games, also
    split by the seat's dealt side (saboteur or not)."""
    if not 2 <= num_players <= 12:
        raise ValueError(f"num_players={num_players} is out of range for sab2 (2..12)")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    env = raw_env(game="sab2", num_players=num_players)
    gold: dict[str, dict[int, float]] = {"base": {}, "insert": {}}
    wins: dict[str, dict[int, float]] = {"base": {}, "insert": {}}
    side: dict[str, dict[str, dict[int, list[float]]]] = {s: {"base": {}, "insert": {}} for s in ("saboteur", "other")}
    for g in range(games):
        s = seed + g
        k = s % num_players
        for label, name in (("base", base), ("insert", insert)):
            names = [base] * num_players
            names[k] = name
            results = play_seats(num_players, names, s, secret, env)
            gold[label][s] = float(np.mean([r["gained"][k] for r in results]))
            wins[label][s] = float(np.mean([bool(r["winners"][k]) for r in results]))
            dealt = env.unwrapped.game.round_roles[:, k]  # the seat's dealt role per round (public after the game)
            for r, role in zip(results, dealt.tolist(), strict=False):
                key = "saboteur" if role == sc.Sab2Role.SABOTEUR else "other"
                side[key][label].setdefault(s, []).append(float(r["gained"][k]))
    out: dict = {"players": num_players, "base": base, "insert": insert, "games": games, "seed": seed}
    for metric, table in (("gold_per_round", gold), ("win_rate", wins)):
        mean, lo, hi, n = paired_difference(table["insert"], table["base"])
        out[metric] = {"base": round(float(np.mean(list(table["base"].values()))), 4),
                       "insert": round(float(np.mean(list(table["insert"].values()))), 4),
                       "difference": round(mean, 4), "ci": [round(lo, 4), round(hi, 4)], "pairs": n}  # fmt: skip
    for key, tables in side.items():
        a = {s: float(np.mean(v)) for s, v in tables["insert"].items()}
        b = {s: float(np.mean(v)) for s, v in tables["base"].items()}
        mean, lo, hi, n = paired_difference(a, b)
        out[f"gold_per_round_dealt_{key}"] = {"difference": round(mean, 4), "ci": [round(lo, 4), round(hi, 4)],
                                              "pairs": n}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m experiments.tournament.sab2 --base heuristic --insert believer --players 5 --games 200``: the
    insertion
    comparison of :func:`insertion` as JSON (the agents' seeds come from ``--secret``, default 0)."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m experiments.tournament.sab2", description=main.__doc__)
    parser.add_argument("--base", default="heuristic")
    parser.add_argument("--insert", default="believer")
    parser.add_argument("--players", type=int, nargs="+", default=[5])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--secret", type=int, default=0)
    args = parser.parse_args(argv)
    for n in args.players:
        print(json.dumps(insertion(n, args.base, args.insert, args.games, args.seed, args.secret)), flush=True)


if __name__ == "__main__":
    main()
