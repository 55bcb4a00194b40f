"""The play-and-log loop shared by the expansion games' tournaments (one JSON record per round), and the re-play
check shared by all three games (``experiments.logs verify``, ``experiments.replay``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from saboteur_env import raw_env


class ReplayError(AssertionError):
    """A logged game that the engine does not re-play as logged; the message names the round and the first
    difference (an ``AssertionError``, as before: replaying a log is a check)."""


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


def plain(value: object) -> object:
    """``value`` as it reads back from JSON (tuples -> lists, numpy scalars -> numbers)."""
    return json.loads(json.dumps(value, default=lambda x: x.item() if hasattr(x, "item") else str(x)))


def first_difference(logged: object, replayed: object, where: str, ignore: Sequence[str] = ()) -> str | None:
    """Where two JSON values first differ, e.g. ``end.winner: logged 'saboteurs', re-played 'gold-diggers'``
    (``ignore``: object keys left out at any depth)."""
    if isinstance(logged, dict) and isinstance(replayed, dict):
        for key in [*logged, *(k for k in replayed if k not in logged)]:
            if key in ignore:
                continue
            if key not in replayed:
                return f"{where}.{key}: logged {logged[key]!r}, absent from the re-play"
            if key not in logged:
                return f"{where}.{key}: absent from the log, re-played {replayed[key]!r}"
            diff = first_difference(logged[key], replayed[key], f"{where}.{key}", ignore)
            if diff:
                return diff
        return None
    if isinstance(logged, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(logged, replayed, strict=False)):
            diff = first_difference(a, b, f"{where}[{i}]", ignore)
            if diff:
                return diff
        if len(logged) != len(replayed):
            return f"{where}: {len(logged)} logged, {len(replayed)} re-played"
        return None
    if logged != replayed or type(logged) is not type(replayed):
        return f"{where}: logged {logged!r}, re-played {replayed!r}"
    return None


def replay_env(seed: int, what: str, **config: object) -> raw_env:
    """A ``raw_env`` for the logged configuration, reset with the logged seed (:class:`ReplayError` naming ``what``
    when the log's configuration is not one)."""
    try:
        env = raw_env(**config)
    except ValueError as err:
        raise ReplayError(f"the logged configuration is not {what}: {err}") from None
    env.reset(seed=seed)
    return env


def replay_rounds(
    env,
    records: Sequence[dict],
    header: Callable[[dict], dict],
    events: Callable[[int, int, int], list[dict]],
    end: Callable[[int], dict],
) -> None:
    """Re-play logged rounds on ``env`` (reset with the game's seed) from their actions alone and compare each
    round's header (``header(logged header)``, before the round's first action), events (``events(first, last,
    round)`` for each decision, right after it, as they were logged: a duel's map result reads the round's goals,
    which the next round replaces) and end (``end(decisions)``, after its last action) with the log. Raise
    :class:`ReplayError` at the first difference (package versions are not compared: a log re-plays under any
    version with the same rules version)."""
    game = env.unwrapped.game
    for rec in records:
        h = rec["header"]
        rnd = h["round"]
        if game.game_over:
            raise ReplayError(f"round {rnd}: the game is over before this record")
        # Records from before the crash-safe log writer have no ``rounds``; no record's package version is compared.
        ignore = ("package_version",) if "rounds" in h else ("package_version", "rounds")
        diff = first_difference(h, plain(header(h)), "header", ignore)
        if diff:
            raise ReplayError(f"round {rnd}: {diff}")
        replayed: list[dict] = []
        actions = rec["actions"]
        for d, action in enumerate(actions):
            if d and game.round_just_ended:
                raise ReplayError(f"round {rnd}: the round ends after {d} of the {len(actions)} logged decisions")
            if isinstance(action, bool) or not isinstance(action, int):
                raise ReplayError(f"round {rnd} decision {d}: logged action {action!r} is not an action id")
            first = game.num_events
            try:
                env.step(action)
            except (ValueError, IndexError, KeyError, TypeError) as err:
                msg = f"round {rnd} decision {d}: logged action {action} cannot be played: {err}"
                raise ReplayError(msg) from None
            replayed += events(first, game.num_events, rnd)
        if not game.round_just_ended:
            raise ReplayError(f"round {rnd}: the round goes on after the {len(actions)} logged decisions")
        diff = first_difference(rec["events"], plain(replayed), "events") or (
            first_difference(rec["end"], plain(end(len(actions))), "end")
        )
        if diff:
            raise ReplayError(f"round {rnd}: {diff}")
    if not game.game_over:
        raise ReplayError(f"the log ends after {len(records)} rounds, before the game does")
