"""Tournaments under the claims rule (issue 18): agent names ``claims:NAME`` / ``claims@K:NAME``, Saboteur 2 and Duel
games with claims, and their re-play (the claims never change the game)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from experiments.tournament.logs.format import claim_record
from experiments.tournament.rounds import (
    draw_secret,
    replay_env,
    replay_rounds,
    seat_agents,
    seeds_record,
)
from saboteur_env import raw_env

CLAIMS_PREFIX = "claims:"


_CLAIMS_K = re.compile(r"claims(?:@(\d+))?:(.+)")  # claims:NAME (K = 1) or claims@K:NAME


def _claims_k(name: str) -> int:
    """Claims per turn of an agent name: ``claims:NAME`` 1, ``claims@K:NAME`` K, anything else 0 (no claims)."""
    m = _CLAIMS_K.fullmatch(name)
    if m is None:
        return 0
    k = int(m.group(1) or 1)
    if not 1 <= k <= 8:
        raise ValueError(f"agent {name!r}: claims per turn {k} is out of range; valid: 1..8")
    return k


def _bare(name: str) -> str:
    m = _CLAIMS_K.fullmatch(name)
    return m.group(2) if m else name


def with_claims_per_turn(name: str, k: int) -> str:
    """``claims:NAME`` with K claims per turn (``claims@K:NAME``; K = 1 keeps ``claims:NAME``): the cell's name
    carries K, so logs of different K never share a key."""
    if not _claims_k(name):
        raise ValueError(f"--claims-per-turn applies to claims agents (claims:NAME), not {name!r}")
    return f"claims:{_bare(name)}" if k == 1 else f"claims@{k}:{_bare(name)}"


def _claims_cell(*names: str | None) -> int:
    """Claims per turn of a cell (0: no claims rule): its agents are named ``claims:NAME`` / ``claims@K:NAME``
    (ClaimsAgent around NAME), all of them with the same K, or none is."""
    given = [n for n in names if n is not None]
    ks = {_claims_k(n) for n in given}
    if len(ks) > 1:
        raise ValueError(f"agents {given}: either every agent of a cell is claims:NAME (the claims rule, one K) or "
                         "none is")  # fmt: skip
    return ks.pop()


def _play_claims_rounds(env: raw_env, agents: list[Any], header: Callable[[], dict], event: Callable[[Any], dict],
                        end: Callable[[dict], dict]) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.rounds.play_rounds` for a claims environment: claims go to the round's ``claims``
    (with
    ``t`` = the game decisions before them), ``actions`` and ``events`` stay the game's, so the log replays from its
    actions on the game without claims."""

    game = env.unwrapped.game
    num_game_actions = env.unwrapped._claim_layout.game_actions
    records: list[dict] = []

    def new_record() -> dict:
        return {"header": header(), "events": [], "actions": [], "claims": []}

    current = new_record()
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[env.possible_agents.index(name)].act(obs["observation"], obs["action_mask"])
        if action >= num_game_actions:
            made = len(env.claims_log())
            env.step(action)
            current["claims"].extend(claim_record(c, len(current["actions"])) for c in env.claims_log()[made:])
            continue
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        current["events"].extend(event(game.events[i]) for i in range(first, game.num_events))
        if game.round_just_ended:
            current["end"] = dict(end(game.round_results[-1]), decisions=len(current["actions"]))
            records.append(current)
            if not game.game_over:
                current = new_record()
    return records


def play_sab2_claims(num_players: int, agent: str, seed: int, env: raw_env | None = None,
                     agent_secret: int | None = None) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.sab2.play_sab2` with the claims rule: ``agent`` is ``claims:NAME`` /
    ``claims@K:NAME``,
    every seat a ``ClaimsAgent`` around NAME; the records also hold ``claims`` and ``header.claims_per_turn``."""
    from agents.claims import ClaimsAgent
    from experiments.tournament.sab2 import ReferenceObserver, make_sab2_agent
    from experiments.tournament.sab2 import _event as sab2_event
    from experiments.tournament.sab2 import _header as sab2_header

    k = _claims_cell(agent)
    if env is None or env.config.num_players != num_players or env.config.claims_per_turn != k:
        env = raw_env(game="sab2", num_players=num_players, claims=True, claims_per_turn=k)
    cfg = env.config.game_config
    agents = [ClaimsAgent(make_sab2_agent(_bare(agent), cfg), env.config) for _ in range(num_players)]
    env.reset(seed=seed)
    game = env.unwrapped.game
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    observer = ReferenceObserver(game)

    def event(row: Any) -> dict:
        observer(row)
        return sab2_event(game, row)

    records = _play_claims_rounds(env, agents, lambda: dict(sab2_header(cfg, game, seed, agent), claims_per_turn=k),
                                  event, dict)  # fmt: skip
    scored = observer.rounds + [None] * (len(records) - len(observer.rounds))
    return [dict(r, observer=o, **seeds_record(secret)) for r, o in zip(records, scored, strict=False)]


def play_duel_claims(blue: str, green: str, seed: int, layout: str = "seed_5x9", env: raw_env | None = None,
                     agent_secret: int | None = None) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.duel.play_duel` with the claims rule (both agents ``claims:NAME`` /
    ``claims@K:NAME``)."""
    from agents.claims import ClaimsAgent
    from experiments.tournament.duel import OBSERVER_FIELDS, DuelObserver, _Observed, make_duel_agent
    from experiments.tournament.duel import _end as duel_end
    from experiments.tournament.duel import _event as duel_event
    from experiments.tournament.duel import _header as duel_header

    k = _claims_cell(blue, green)
    if env is None or env.config.duel_layout != layout or env.config.claims_per_turn != k:
        env = raw_env(game="duel", duel_layout=layout, claims=True, claims_per_turn=k)
    cfg = env.config.game_config
    env.reset(seed=seed)
    game = env.unwrapped.game
    observer = DuelObserver(game)
    # The observer sees the game decisions only: it sits inside the ClaimsAgent, around the plain agent.
    agents = [ClaimsAgent(_Observed(make_duel_agent(_bare(name), cfg), observer, i), env.config)
              for i, name in enumerate((blue, green))]  # fmt: skip
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    records = _play_claims_rounds(env, agents, lambda: dict(duel_header(cfg, game, seed, blue, green),
                                                            claims_per_turn=k),
                                  lambda row: duel_event(game, row), duel_end)  # fmt: skip
    out = []
    for r in records:
        sums = observer.sums[r["header"]["round"]]
        out.append(dict(r, observer=dict(zip(OBSERVER_FIELDS, np.round(sums, 6).tolist(), strict=True)),
                        **seeds_record(secret)))  # fmt: skip
    return out


def _replay_claims(records: list[dict]) -> None:
    """Re-play a logged Saboteur 2 game or duel of the claims rule from its seed and game actions (the claims never
    change the game), comparing headers (with ``claims_per_turn``), events and round ends with the log."""
    h = records[0]["header"]
    k = _claims_cell(*h["agents"])  # from the cell's names, as the game was played: a tampered header shows
    if h["game"] == "sab2":
        from experiments.tournament.sab2 import _event as sab2_event
        from experiments.tournament.sab2 import _header as sab2_header

        env = replay_env(h["seed"], "a Saboteur 2 game", game="sab2", num_players=h["players"])
        game = env.unwrapped.game
        replay_rounds(env, records, lambda _: dict(sab2_header(env.config, game, h["seed"], h["agent"]),
                                                   claims_per_turn=k),
                      lambda first, last, _: [sab2_event(game, game.events[i]) for i in range(first, last)],
                      lambda decisions: dict(game.round_results[-1], decisions=decisions))  # fmt: skip
        return
    from experiments.tournament.duel import _end as duel_end
    from experiments.tournament.duel import _event as duel_event
    from experiments.tournament.duel import _header as duel_header

    env = replay_env(h["seed"], "a duel", game="duel", duel_layout=h["duel_layout"])
    game = env.unwrapped.game
    blue, green = h["agents"]
    replay_rounds(env, records, lambda _: dict(duel_header(env.config, game, h["seed"], blue, green),
                                               claims_per_turn=k),
                  lambda first, last, _: [duel_event(game, game.events[i]) for i in range(first, last)],
                  lambda decisions: dict(duel_end(game.round_results[-1]), decisions=decisions))  # fmt: skip
