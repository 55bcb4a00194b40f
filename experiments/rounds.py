"""The play-and-log loop shared by the expansion games' tournaments (one JSON record per round)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def seat_agents(agents: Sequence, seed: int) -> None:
    """Reset every agent for its seat with a seed spawned from the game's seed."""
    n = len(agents)
    for i, (agent, ss) in enumerate(zip(agents, np.random.SeedSequence(seed).spawn(n), strict=True)):
        agent.reset(i, n, int(ss.generate_state(1)[0]))


def play_rounds(
    env,
    agents: Sequence,
    header: Callable[[], dict],
    event: Callable[[tuple], dict],
    end: Callable[[dict], dict],
) -> list[dict]:
    """Play the environment's current game to the end; one record per round: ``header()``, the events since the
    round began (``event(row)``), the actions, and ``end(round_result)`` plus the decision count."""
    game = env.unwrapped.game
    records: list[dict] = []
    current = {"header": header(), "events": [], "actions": []}
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        first = game.num_events
        action = agents[seat].act(obs["observation"], obs["action_mask"])
        env.step(action)
        current["actions"].append(action)
        current["events"].extend(event(game.events[i]) for i in range(first, game.num_events))
        if game.round_just_ended:
            current["end"] = dict(end(game.round_results[-1]), decisions=len(current["actions"]))
            records.append(current)
            if not game.game_over:
                current = {"header": header(), "events": [], "actions": []}
    return records
