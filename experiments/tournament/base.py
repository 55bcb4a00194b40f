"""The base game's hooks of the tournament loop (:mod:`experiments.tournament.loop`): its seats (a miner / saboteur
pair each, one inserted agent), its round records (header, events, end) and the observers behind their ``beliefs``
snapshots."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from agents import make_agent
from agents.agent import RoleDispatch
from agents.base.beliefs import BayesModel, SuspicionModel
from agents.base.tracker import LogTracker
from experiments.tournament.rounds import GameSpec, Recording, logged_secret
from saboteur_env import EventType, GameConfig, __version__
from saboteur_env.base.cards import KIND_CODES, KIND_GOAL_GOLD
from saboteur_env.common.geometry import geometry

EVENT_NAMES = {int(t): t.name.lower() for t in EventType}


def _permille(p: Iterable[float]) -> list[int]:
    return [round(1000 * float(x)) for x in p]


def _event_record(game, index: int, round_index: int) -> dict:
    etype, actor, kind, target, cell, arg = (int(x) for x in game.events[index])
    cfg = game.config
    rec: dict = {"t": index, "type": EVENT_NAMES[etype], "actor": actor}
    if etype == EventType.DISCARD:
        rec["private"] = {"kind": KIND_CODES[kind]}  # known only to the discarder
    elif kind >= 0:
        rec["kind"] = KIND_CODES[kind]
    if target >= 0:
        rec["target"] = target
    if cell >= 0:
        rec["cell"] = list(cfg.cell_coords(cell))
    if arg >= 0:
        rec["arg"] = arg
    if etype == EventType.MAP:
        gold = game.round_goals[round_index][arg] == KIND_GOAL_GOLD  # the round's goals (a new round may have begun)
        rec["private"] = {"result": "gold" if gold else "stone"}
    return rec


def insert_seat(seed: int, num_players: int) -> int:
    """The seat an inserted agent takes in game ``seed`` (rotates over the seats from game to game)."""
    return seed % num_players


def _seats(spec: GameSpec) -> list[tuple[str, ...]]:
    miners, saboteurs = spec.names
    seats: list[tuple[str, ...]] = [(miners, saboteurs)] * spec.players
    if spec.insert is not None:
        seats[insert_seat(spec.seed, spec.players)] = (spec.insert, spec.insert)
    return seats


def _agent(cfg: GameConfig, miner: str, saboteur: str) -> Any:
    """A seat plays the miner policy in its gold-digger rounds and the saboteur policy in its saboteur rounds."""
    return RoleDispatch(cfg, make_agent(miner, cfg, "miner"), make_agent(saboteur, cfg, "saboteur"))


def _header(game, spec: GameSpec) -> dict:
    (miners, saboteurs), insert = spec.names, spec.insert
    agents = [saboteurs if r else miners for r in game.roles.tolist()]
    extra = {}
    if insert is not None:
        seat = insert_seat(spec.seed, game.config.num_players)
        agents[seat] = insert
        extra = {"insert": insert, "insert_seat": seat}
    return {
        "seed": spec.seed,
        "rules_version": game.config.rules_version,
        "package_version": __version__,
        "players": game.config.num_players,
        "miners": miners,
        "saboteurs": saboteurs,
        **extra,
        "agents": agents,
        "rounds": game.config.rounds,
        "round": game.round,
        "starter": game.current,
        "roles": game.roles.tolist(),
        "leftover_role": game.leftover_role,
        "gold_goal": int(np.flatnonzero(game.goal_kind == KIND_GOAL_GOLD)[0]),
        "first_event": game.num_events,
    }


def _end(game, decisions: int) -> dict:
    result = game.round_results[-1]
    return {
        "winner": result["winner"],
        "reason": "gold_reached" if result["winner"] == "gold-diggers" else "exhausted",
        "decisions": decisions,
        "finder": result["finder"],
        "last_player": result["last_player"],
        "nuggets": result["nuggets"],
        "gold_cards": result["gold_cards"],
    }


class BeliefObserver:
    """The ``beliefs`` snapshots of a round record: after every decision, the reference observer's (exact Bayes)
    and a heuristic public observer's beliefs, per mille, and the acting agent's own where it has any. With
    ``beliefs`` off the list stays empty and nothing is tracked."""

    lists: tuple[str, ...] = ("beliefs",)

    def __init__(self, game, beliefs: bool) -> None:
        self.game, self.on = game, beliefs
        self.snapshot: dict = {}
        if beliefs:
            n, goal_cells = game.config.num_players, geometry(game.config).goal_cells
            self.tracker = LogTracker(game.config)
            self.reference, self.heuristic = BayesModel(n, goal_cells), SuspicionModel(n, goal_cells)

    def decided(self, seat: int, agent: Any, action: int, record: dict) -> None:
        if not self.on:
            return
        self.snapshot = {"t": len(record["actions"]), "actor": seat}
        own = agent.role_beliefs()  # the agent's view as it chose, before the action's events
        if own is not None:
            self.snapshot["agent"] = _permille(own[s] for s in range(self.game.config.num_players))

    def stepped(self, first: int, record: dict) -> None:
        if not self.on:
            return
        round_over = False
        for ev in self.tracker.update(self.game):
            if ev.type == EventType.ROUND_END:
                round_over = True  # always the last event of a decision
            else:
                self.reference.observe(ev)
                self.heuristic.observe(ev)
        # The observers' beliefs after this decision, before a round end resets them.
        self.snapshot["reference"] = _permille(self.reference.p_saboteur())
        self.snapshot["reference_gold"] = _permille(self.reference.p_gold())
        self.snapshot["heuristic"] = _permille(self.heuristic.p_saboteur())
        record["beliefs"].append(self.snapshot)
        if round_over:
            self.reference.reset_round(None, None)
            self.heuristic.reset_round(None, None)

    def closing(self, records: list[dict]) -> list[dict]:
        return [{} for _ in records]


def _spec(records: list[dict]) -> GameSpec:
    h = records[0]["header"]
    beliefs = any(r.get("beliefs") for r in records)
    return GameSpec("base", h["players"], (h["miners"], h["saboteurs"]), h["seed"], insert=h.get("insert"),
                    beliefs=beliefs, secret=logged_secret(records))


RECORDING = Recording(
    what="a base game",
    options=lambda spec: {"num_players": spec.players},
    seats=_seats,
    agent=_agent,
    header=_header,
    event=_event_record,
    end=_end,
    observer=lambda game, spec: BeliefObserver(game, spec.beliefs),
    spec=_spec,
)
