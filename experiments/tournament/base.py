"""The base game in a tournament: one game's round records (header, events, actions, beliefs, end) and its re-play
from the log."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from agents import make_agent
from agents.agent import RoleDispatch
from agents.base.beliefs import BayesModel, SuspicionModel
from agents.base.tracker import LogTracker
from experiments.tournament.claims import _bare, _claims_cell
from experiments.tournament.logs.format import claim_record
from experiments.tournament.rounds import (
    draw_secret,
    replay_env,
    replay_rounds,
    seat_agents,
    seeds_record,
)
from saboteur_env import EventType, __version__, raw_env
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


def _header(game, seed: int, miners: str, saboteurs: str, insert: str | None) -> dict:
    agents = [saboteurs if r else miners for r in game.roles.tolist()]
    extra = {}
    if insert is not None:
        seat = insert_seat(seed, game.config.num_players)
        agents[seat] = insert
        extra = {"insert": insert, "insert_seat": seat}
    return {
        "seed": seed,
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
        # Claims cells (agents claims:NAME / claims@K:NAME) play the claims rule with K claims per turn.
        **({"claims_per_turn": k} if (k := _claims_cell(miners, saboteurs, insert)) else {}),
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


def play_game(
    num_players: int,
    miners: str,
    saboteurs: str,
    seed: int,
    beliefs: bool = True,
    insert: str | None = None,
    env: raw_env | None = None,
    agent_secret: int | None = None,
) -> list[dict]:
    """Play one seeded game; returns one record per round.

    ``insert`` seats that agent (both roles) at :func:`insert_seat` instead of the cell's policies. ``env`` reuses
    an environment of the right player count (``reset`` re-deals everything, so reuse changes nothing).
    ``agent_secret`` is the game secret the seats' seeds are spawned from (:mod:`experiments.tournament.rounds`:
    independent of
    the deal; a fresh one when ``None``; ``LEGACY_SECRET`` re-plays logs from before sealed seeds). Only agents
    declared oracles (``oracle = True``) get the privileged state.
    """
    k = _claims_cell(miners, saboteurs, insert)
    claims = k > 0
    if env is None or env.config.num_players != num_players or env.config.claims != claims or (
            claims and env.config.claims_per_turn != k):
        env = raw_env(num_players=num_players, **({"claims": True, "claims_per_turn": k} if claims else {}))
    cfg = env.config.game_config

    def seat_agent(miner: str, saboteur: str) -> Any:
        agent = RoleDispatch(cfg, make_agent(_bare(miner), cfg, "miner"), make_agent(_bare(saboteur), cfg, "saboteur"))
        if not claims:
            return agent
        from agents.claims import ClaimsAgent

        return ClaimsAgent(agent, env.config)

    agents = [seat_agent(miners, saboteurs) for _ in range(num_players)]
    if insert is not None:
        agents[insert_seat(seed, num_players)] = seat_agent(insert, insert)
    env.reset(seed=seed)
    game = env.unwrapped.game
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    goal_cells = geometry(cfg).goal_cells
    tracker = LogTracker(cfg)
    reference, heuristic = BayesModel(num_players, goal_cells), SuspicionModel(num_players, goal_cells)
    records: list[dict] = []

    def new_record() -> dict:
        rec = {"header": _header(game, seed, miners, saboteurs, insert), "events": [], "actions": [], "beliefs": []}
        if claims:
            rec["claims"] = []
        return rec

    current = new_record()
    decision = 0
    num_game_actions = env.unwrapped._layout.num_actions
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        agent = agents[seat]
        action = agent.act(obs["observation"], obs["action_mask"])
        if claims and action >= num_game_actions:  # a claim: logged with its truth labels, not an action
            made = len(env.claims_log())
            env.step(action)
            current["claims"].extend(claim_record(c, decision) for c in env.claims_log()[made:])
            continue
        snapshot: dict = {"t": decision, "actor": seat}
        own = agent.role_beliefs() if beliefs else None
        if own is not None:
            snapshot["agent"] = _permille(own[s] for s in range(num_players))
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        round_over = False
        for ev in tracker.update(game):
            if ev.type == EventType.ROUND_END:
                round_over = True  # always the last event of a decision
            else:
                reference.observe(ev)
                heuristic.observe(ev)
        rnd = current["header"]["round"]
        current["events"].extend(_event_record(game, i, rnd) for i in range(first, game.num_events))
        if beliefs:  # observers' beliefs after this decision (before a round end resets them)
            snapshot["reference"] = _permille(reference.p_saboteur())
            snapshot["reference_gold"] = _permille(reference.p_gold())
            snapshot["heuristic"] = _permille(heuristic.p_saboteur())
            current["beliefs"].append(snapshot)
        if round_over:
            reference.reset_round(None, None)
            heuristic.reset_round(None, None)
        decision += 1
        if game.round_just_ended:
            current["end"] = _end(game, len(current["actions"]))
            records.append(current)
            decision = 0
            if not game.game_over:
                current = new_record()
    return [dict(r, **seeds_record(secret)) for r in records]


def replay_game(records: list[dict]) -> None:
    """Re-play a logged base game (its rounds in order) from the seed and actions; raise
    :class:`~experiments.tournament.rounds.ReplayError` (an ``AssertionError``) naming the round and the first header
    field,
    event or round-end field that differs from the log (a tampered winner, action or rules version)."""
    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    game = env.unwrapped.game
    replay_rounds(
        env,
        records,
        lambda lh: _header(game, h["seed"], lh["miners"], lh["saboteurs"], lh.get("insert")),
        lambda first, last, rnd: [_event_record(game, i, rnd) for i in range(first, last)],
        lambda decisions: _end(game, decisions),
    )
