"""Head-to-head duels (Saboteur: The Duel) in the tournament: the game's hooks of the tournament loop
(:data:`RECORDING`: seats, round records, the reference observer) and the results table.

A duel cell is an ordered pair (blue agent, green agent); ``experiments.tournament --game duel --agents A B`` plays
both colour assignments of every pair on the same seeds (game ``g`` uses ``seed + g``), so each seed is a paired
comparison with colours swapped. Records are one per round: ``header`` (game, seed, agents by colour, layout,
round, rounds in the game, starter, rules and package versions), ``events`` (public; the private part of a map
peek under ``private``), ``actions`` and ``end`` (reason, nuggets gained and totals); ``experiments.tournament.logs``
writes and
reads them. :func:`experiments.tournament.loop.replay` re-plays a logged duel and compares it with the log.

**Reference observer.** Each seat of every duel also gets a :class:`~agents.duel.beliefs.DuelBelief` fed its own
views at its decisions (and its own discards), scored at each decision against the hidden truth: the log loss of
the true goal card of every face-down slot the seat has not seen, and the Brier score of P(the opponent holds a
card of kind k) over the 39 kinds; each next to a naive baseline (goals: uniform over the 18 minus the seat's own
peeks; hand: the same hypergeometric over the 52 cards minus the seat's own hand, ignoring everything public).
Round records carry the sums under ``observer``; :func:`summary_table` prints the means.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from agents import make_agent
from agents.duel.beliefs import DuelBelief, hand_distribution
from experiments.tournament.rounds import GameSpec, Recording, logged_secret
from experiments.tournament.stats import BOOT, bootstrap_mean, bootstrap_ratio
from saboteur_env import __version__
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelEvent
from saboteur_env.duel.view import duel_view

EVENT_NAMES = {int(t): t.name.lower() for t in DuelEvent}


def _event(game, row: tuple[int, int, int, int, int]) -> dict:
    etype, actor, kind, cell, arg = row
    rec: dict = {"type": EVENT_NAMES[etype], "actor": actor}
    if kind >= 0:
        rec["kind"] = dc.KIND_CODES[kind]
    if cell >= 0:
        rec["cell"] = list(game.config.cell_coords(cell))
    if arg >= 0:
        rec["arg"] = arg
    if etype == DuelEvent.MAP:
        rec["private"] = {"goal": dc.GOAL_CARDS[int(game.goal_card[arg])].code}
    return rec


def _header(cfg, game, seed: int, blue: str, green: str) -> dict:
    return {
        "game": "duel", "rules_version": cfg.rules_version, "package_version": __version__, "seed": seed,
        "players": 2, "agents": [blue, green], "duel_layout": cfg.duel_layout, "rounds": cfg.rounds,
        "round": game.round, "starter": game.current,
    }  # fmt: skip


OBSERVER_FIELDS = ("decisions", "goal_slots", "goal_log_loss", "goal_log_loss_naive", "hand_brier",
                   "hand_brier_naive")  # fmt: skip


def make_duel_agent(name: str, config):
    """``make_agent``, plus ``believer`` (agents.duel.ladder.DuelBeliever) while agents/__init__.py does not list it."""
    if name == "believer":
        from agents.duel.ladder import DuelBeliever

        return DuelBeliever(config)
    return make_agent(name, config)


class DuelObserver:
    """Per seat a DuelBelief fed that seat's views at its decisions, scored against the hidden state."""

    def __init__(self, game) -> None:
        self.game = game
        self.beliefs = [DuelBelief(game.config, 0), DuelBelief(game.config, 1)]
        self.sums: dict[int, np.ndarray] = defaultdict(lambda: np.zeros(len(OBSERVER_FIELDS)))

    def before(self, seat: int) -> None:
        g = self.game
        b = self.beliefs[seat].update(duel_view(g, seat))
        row = np.zeros(len(OBSERVER_FIELDS))
        row[0] = 1
        probs = b.goal_probabilities()
        naive = np.log(dc.NUM_GOALS - int(g.peeked[seat].sum()))  # the 18 goals minus my peeks
        for slot in range(dc.GOALS_PER_ROUND):
            if not g.goal_revealed[slot] and not g.peeked[seat, slot]:
                row[1] += 1
                row[2] -= np.log(max(float(probs[slot, int(g.goal_card[slot])]), 1e-12))
                row[3] += naive
        truth = g.hands[1 - seat] > 0
        _, holds = b.opponent_hand()
        h = int(g.hands[1 - seat].sum())
        naive_unseen = dc.DECK_COUNTS.astype(np.int64) - np.asarray(g.hands[seat], dtype=np.int64)
        _, naive_holds = hand_distribution(naive_unseen, min(h, int(naive_unseen.sum())))
        row[4] = float(((holds - truth) ** 2).mean())
        row[5] = float(((naive_holds - truth) ** 2).mean())
        self.sums[g.round] += row

    def after(self, seat: int, action: int) -> None:
        self.beliefs[seat].note_action(action)

    # ---- the tournament loop's observer (experiments.tournament.rounds.Observer) ----
    lists: tuple[str, ...] = ()

    def decided(self, seat: int, agent: object, action: int, record: dict) -> None:
        """Score the seat's belief on the state it decided in (the game does not move until the action is played),
        then let it note its own action. Claims are no decisions: the observer sees the game alone."""
        self.before(seat)
        self.after(seat, action)

    def stepped(self, first: int, record: dict) -> None:
        pass

    def closing(self, records: list[dict]) -> list[dict]:
        return [{"observer": dict(zip(OBSERVER_FIELDS, np.round(self.sums[r["header"]["round"]], 6).tolist(),
                                      strict=True))} for r in records]  # fmt: skip


def _end(result: dict) -> dict:
    return {"reason": result["reason"], "gained": result["gained"], "nuggets": result["nuggets"]}


def _spec(h: dict, secret: int) -> GameSpec:
    return GameSpec("duel", 2, tuple(h["agents"]), h["seed"], layout=h["duel_layout"], secret=secret)


RECORDING = Recording(
    what="a duel",
    options=lambda spec: {"game": "duel", "duel_layout": spec.layout},
    seats=lambda spec: [(spec.names[0],), (spec.names[1],)],  # blue, green
    agent=lambda cfg, name: make_duel_agent(name, cfg),
    header=lambda game, spec: _header(game.config, game, spec.seed, spec.names[0], spec.names[1]),
    event=lambda game, index, _: _event(game, game.events[index]),
    end=lambda game, decisions: dict(_end(game.round_results[-1]), decisions=decisions),
    observer=lambda game, _: DuelObserver(game),
    spec=lambda records: _spec(records[0]["header"], logged_secret(records)),
)


class DuelTable:
    """Running aggregates behind the head-to-head table: the final nugget totals per (pair, layout, seed) (two
    numbers per game), fed one round record at a time (``add``)."""

    def __init__(self) -> None:
        self.finals: dict[tuple[str, str, str], dict[int, tuple[int, list[int]]]] = defaultdict(dict)
        self.observer = np.zeros(len(OBSERVER_FIELDS))  # sums over every round seen

    def add(self, r: dict) -> None:
        h = r["header"]
        if h.get("game") != "duel":
            return
        key = (h["agents"][0], h["agents"][1], h["duel_layout"])
        if isinstance(r.get("observer"), dict):
            self.observer += [float(r["observer"].get(f, 0.0)) for f in OBSERVER_FIELDS]
        previous = self.finals[key].get(h["seed"])
        if previous is None or h["round"] >= previous[0]:
            self.finals[key][h["seed"]] = (h["round"], r["end"]["nuggets"])  # totals after the last round

    def rows(self, boot: int = BOOT) -> list[dict]:
        """Per unordered pair of agents: A's wins/draws/losses, score rate (a draw counts half) and the mean score
        difference A - B per seed (both colour games), each with a 95% bootstrap interval over seeds (the two colour
        games of a seed share its deals, so the seed is the unit)."""
        pairs: dict[tuple[str, str, str], dict] = {}
        for (blue, green, layout), by_seed in self.finals.items():
            a, b = sorted((blue, green))
            cell = pairs.setdefault((a, b, layout), {"score": defaultdict(list), "diff": defaultdict(float),
                                                     "blue_wins": [], "by_colour": ([], [])})  # fmt: skip
            for seed, (_, (nb, ng)) in by_seed.items():
                score_a, score_b = (nb, ng) if blue == a else (ng, nb)
                cell["score"][seed].append(float(np.sign(score_a - score_b)))
                cell["diff"][seed] += score_a - score_b
                cell["blue_wins"].append(np.sign(nb - ng))
                cell["by_colour"][0 if blue == a else 1].append(score_a - score_b)  # A as blue / as green
        rows = []
        for (a, b, layout), cell in sorted(pairs.items()):
            res = np.array([x for v in cell["score"].values() for x in v])
            n = len(res)
            wins, draws, losses = int((res > 0).sum()), int((res == 0).sum()), int((res < 0).sum())
            per_seed = list(cell["score"].values())
            points = np.array([sum((x + 1) / 2 for x in v) for v in per_seed])  # win 1, draw 1/2, loss 0
            rate, lo, hi = bootstrap_ratio(points, np.array([len(v) for v in per_seed], dtype=float), boot)
            mean, dlo, dhi = bootstrap_mean(list(cell["diff"].values()), boot)
            blue = np.array(cell["blue_wins"])
            # A's nugget difference per game in each colour (the colour the deal gives the first move), each with
            # its own bootstrap over games: "both colours" of the issue-35 evidence
            colour = {}
            for name, diffs in zip(("blue", "green"), cell["by_colour"], strict=True):
                m, clo, chi = bootstrap_mean(diffs, boot) if diffs else (math.nan, math.nan, math.nan)
                colour |= {f"a_as_{name}_games": len(diffs), f"a_as_{name}_diff": _r(m, 3),
                           f"a_as_{name}_ci_low": _r(clo, 3), f"a_as_{name}_ci_high": _r(chi, 3)}  # fmt: skip
            rows.append({
                "layout": layout, "agent_a": a, "agent_b": b, "games": n, "seeds": len(per_seed), "a_wins": wins,
                "draws": draws, "b_wins": losses, "a_score_rate": _r(rate, 4), "ci_low": _r(lo, 4),
                "ci_high": _r(hi, 4), "a_minus_b_per_seed": _r(mean, 3), "diff_ci_low": _r(dlo, 3),
                "diff_ci_high": _r(dhi, 3), "blue_win_rate": round(float((blue > 0).mean()), 4), **colour,
            })  # fmt: skip
        return rows


def _r(x: float, digits: int) -> float:
    return round(x, digits) if math.isfinite(x) else x


def head_to_head(rounds: Iterable[dict]) -> list[dict]:
    """The head-to-head rows (:meth:`DuelTable.rows`) of some round records."""
    table = DuelTable()
    for r in rounds:
        table.add(r)
    return table.rows()


def summary_table(rounds: Iterable[dict] | DuelTable) -> str:
    """The results table printed by the tournament, from round records or a :class:`DuelTable`."""
    rows = rounds.rows() if isinstance(rounds, DuelTable) else head_to_head(rounds)
    header = (f"{'layout':<14} {'A':<10} {'B':<10} {'games':>6} {'A-D-B':>12} {'A score':>8} {'95% CI':>16} "
              f"{'A-B / seed':>11} {'95% CI':>16} {'blue wins':>9}")  # fmt: skip
    lines = [header, "-" * len(header)]
    for r in rows:
        record = f"{r['a_wins']}-{r['draws']}-{r['b_wins']}"
        rate_ci = f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}]"
        diff_ci = f"[{r['diff_ci_low']:+.2f}, {r['diff_ci_high']:+.2f}]"
        lines.append(
            f"{r['layout']:<14} {r['agent_a']:<10} {r['agent_b']:<10} {r['games']:>6} {record:>12} "
            f"{r['a_score_rate']:>8.1%} {rate_ci:>16} {r['a_minus_b_per_seed']:>+11.2f} {diff_ci:>16} "
            f"{r['blue_win_rate']:>9.1%}"
        )
    for r in rows:
        lines.append(f"  {r['agent_a']} - {r['agent_b']} per game, {r['layout']}: {r['agent_a']} as blue "
                     f"{r['a_as_blue_diff']:+.2f} [{r['a_as_blue_ci_low']:+.2f}, {r['a_as_blue_ci_high']:+.2f}] "
                     f"({r['a_as_blue_games']} games), as green {r['a_as_green_diff']:+.2f} "
                     f"[{r['a_as_green_ci_low']:+.2f}, {r['a_as_green_ci_high']:+.2f}] ({r['a_as_green_games']} games)")
    lines.append("A score: wins + half the draws; A-B / seed: nugget difference summed over both colour games of a "
                 "seed (duplicate deals), mean over seeds; per colour: A's nugget difference per game in that colour.")
    if isinstance(rounds, DuelTable) and rounds.observer[0] > 0:
        o = dict(zip(OBSERVER_FIELDS, rounds.observer.tolist(), strict=True))
        slots = max(o["goal_slots"], 1.0)
        lines += ["", f"Reference observer ({int(o['decisions'])} decisions): goal log loss per unseen slot "
                  f"{o['goal_log_loss'] / slots:.4f} (naive {o['goal_log_loss_naive'] / slots:.4f}); opponent-hand "
                  f"Brier per kind {o['hand_brier'] / o['decisions']:.4f} "
                  f"(naive {o['hand_brier_naive'] / o['decisions']:.4f})"]  # fmt: skip
    return "\n".join(lines)


__all__ = ["RECORDING", "DuelObserver", "DuelTable", "head_to_head", "make_duel_agent", "summary_table"]
