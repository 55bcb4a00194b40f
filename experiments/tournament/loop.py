"""The one tournament loop: any game's config played through the public environment API and the agents, one JSON
record per round, and the one re-play of a logged game.

A game is a :class:`~experiments.tournament.rounds.GameSpec`. What differs between the games is data and small hooks,
a :class:`~experiments.tournament.rounds.Recording` per game (:data:`GAMES`): the environment's options, who sits
where, the round header, an event's record, the round's end, and an observer for what a record holds beyond the
common part (the base game's ``beliefs`` snapshots; Saboteur 2's and the Duel's reference-observer scores). The
loop does the rest the same way for every game: it seats the agents with their sealed seeds (hidden state for
declared oracles only), steps the environment to the game's end, and writes each round's ``header``, ``events``,
``actions``, ``claims`` (claims cells), ``end``, the observer's keys and ``seeds``, in that order; a game's last
round also gets ``agent_logs`` (seat -> the ``log_record()`` of its agents that keep one: an ``llm``'s transcript,
token usage and failure counts) when any seat has such an agent.

The claims rule is an option of the config, not another game: a cell whose agents are all ``claims:NAME`` /
``claims@K:NAME`` plays the game with ``claims=True`` and K claims per turn, every seat a ``ClaimsAgent`` around NAME;
claims go to the round's ``claims`` (``t`` = the round's game decisions before them), never to ``actions`` or
``events``, and the header gets ``claims_per_turn``. So a logged claims game re-plays from its actions on the game
without claims.
"""

from __future__ import annotations

from typing import Any

from experiments.tournament import base, duel, sab2
from experiments.tournament.claims import _bare, _claims_cell, claims_options
from experiments.tournament.logs.format import claim_record
from experiments.tournament.rounds import (
    GameSpec,
    Recording,
    draw_secret,
    replay_env,
    replay_rounds,
    seat_agents,
    seeds_record,
)
from saboteur_env import GameConfig, num_actions, raw_env

GAMES: dict[str, Recording] = {"base": base.RECORDING, "sab2": sab2.RECORDING, "duel": duel.RECORDING}


def recording(game: str) -> Recording:
    """The hooks of ``game`` (``ValueError`` for a game without them)."""
    try:
        return GAMES[game]
    except KeyError:
        raise ValueError(f"game={game!r} has no tournament hooks; valid: {', '.join(GAMES)}") from None


def env_options(spec: GameSpec) -> dict:
    """The ``raw_env`` keyword arguments a spec plays: the game's options, plus the claims rule for a claims cell."""
    k = _claims_cell(*spec.agents)
    return {**recording(spec.game).options(spec), **({"claims": True, "claims_per_turn": k} if k else {})}


def _with_claims(header: dict, k: int) -> dict:
    # Claims cells say how many claims a turn allows (the cell's names carry K as well: claims@K:NAME).
    return {**header, "claims_per_turn": k} if k else header


def _claims_agent(inner: Any, config: GameConfig, names: tuple[str, ...]) -> Any:
    """A claims seat: ``ClaimsAgent`` around the seat's agent, with its names' options (``claims+OPTION:NAME``). A
    base-game seat has a miner and a saboteur name: the digger's claim policy and the honesty model (the believer's)
    come from the first, the saboteur's claim policy from the last."""
    from agents.claims import ClaimsAgent, claims_kwargs

    first, last = (claims_kwargs(claims_options(n), config) for n in (names[0], names[-1]))
    return ClaimsAgent(inner, config, miner=first["miner"], saboteur=last["saboteur"], model=first.get("model"))


def _seat_agent(rec: Recording, config: GameConfig, names: tuple[str, ...], k: int) -> Any:
    """A seat's agent: the game's agent of its names (``config.game_config``: claims are a layer over the game),
    wrapped as a claims seat in a claims cell; a native talker (``claims+native:NAME``) is built on the claims
    config itself (every name of its seat the same)."""
    if k and any("native" in claims_options(n) for n in names):
        from agents.claims import make_native_talker

        if len(set(names)) != 1:
            raise ValueError(f"agents {list(names)}: a native talker (claims+native:NAME) plays every role of its "
                             "seat; give it as both the miners' and the saboteurs' name")  # fmt: skip
        return make_native_talker(_bare(names[0]), config, None, claims_options(names[0]))
    agent = rec.agent(config.game_config, *(_bare(n) for n in names))
    return _claims_agent(agent, config, names) if k else agent


def play(spec: GameSpec, env: raw_env | None = None) -> list[dict]:
    """Play one seeded game; returns one record per round.

    ``env`` is reused when it has the spec's configuration (``reset`` re-deals everything, so reuse changes nothing);
    otherwise a new one is made. ``spec.secret`` is the game secret the seats' seeds are spawned from
    (:mod:`experiments.tournament.rounds`: independent of the deal; a fresh one when ``None``; ``LEGACY_SECRET``
    re-plays logs from before sealed seeds). Only agents declared oracles (``oracle = True``) get the privileged
    state.
    """
    rec = recording(spec.game)
    k = _claims_cell(*spec.agents)
    options = env_options(spec)
    if env is None or env.config != GameConfig(**options):
        env = raw_env(**options)
    cfg = env.config.game_config  # what the agents play: the game itself (claims are a layer over it)
    seats = rec.seats(spec)
    agents: list[Any] = [_seat_agent(rec, env.config, names, k) for names in seats]
    env.reset(seed=spec.seed)
    game = env.unwrapped.game
    secret = draw_secret() if spec.secret is None else spec.secret
    seat_agents(agents, secret, spec.seed, env.state)  # the state reaches declared oracles only
    observer = rec.observer(game, spec)
    game_actions = num_actions(cfg)  # claim ids come after the game's actions

    def new_record() -> dict:
        record = {"header": _with_claims(rec.header(game, spec), k), "events": [], "actions": []}
        record.update((key, []) for key in observer.lists)
        if k:
            record["claims"] = []
        return record

    records: list[dict] = []
    current = new_record()
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        action = agents[seat].act(obs["observation"], obs["action_mask"])
        if k and action >= game_actions:  # a claim: logged with its truth labels, not an action
            made = len(env.claims_log())
            env.step(action)
            current["claims"].extend(claim_record(c, len(current["actions"])) for c in env.claims_log()[made:])
            continue
        observer.decided(seat, agents[seat], action, current)
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        rnd = current["header"]["round"]
        current["events"].extend(rec.event(game, i, rnd) for i in range(first, game.num_events))
        observer.stepped(first, current)
        if game.round_just_ended:
            current["end"] = rec.end(game, len(current["actions"]))
            records.append(current)
            if not game.game_over:
                current = new_record()
    extra = observer.closing(records)
    out = [dict(r, **x, **seeds_record(secret)) for r, x in zip(records, extra, strict=True)]
    logs = {str(seat): found for seat, agent in enumerate(agents) if (found := agent_logs(agent))}
    if logs and out:  # an llm seat's transcripts, usage and failure counts, once per game: with its last round
        out[-1]["agent_logs"] = logs
    return out


def agent_logs(agent: Any) -> list[dict]:
    """The ``log_record()`` of an agent and of every agent it wraps (a role pair's ``miner`` / ``saboteur``, a
    wrapper's ``inner``): what an ``llm`` seat said and how often it failed, for the game's log."""
    found, stack, seen = [], [agent], set()
    while stack:
        a = stack.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        record = getattr(a, "log_record", None)
        if callable(record):
            found.append(record())
        stack.extend(x for x in (getattr(a, k, None) for k in ("saboteur", "miner", "inner")) if x is not None)
    return found


def logged_spec(records: list[dict]) -> GameSpec:
    """The spec that plays a logged game again (agents and game secret included)."""
    return recording(records[0]["header"].get("game", "base")).spec(records)


def replay(records: list[dict]) -> None:
    """Re-play a logged game of any game from its seed and actions, on the game without claims (they never change
    it); raise :class:`~experiments.tournament.rounds.ReplayError` (an ``AssertionError``) naming the round and the
    first header field, event or round-end field that differs from the log (a tampered winner, action or rules
    version)."""
    spec = logged_spec(records)
    rec = recording(spec.game)
    k = _claims_cell(*spec.agents)  # from the cell's names, as the game was played: a tampered header shows
    env = replay_env(spec.seed, rec.what, **rec.options(spec))
    game = env.unwrapped.game
    replay_rounds(
        env,
        records,
        lambda _: _with_claims(rec.header(game, spec), k),
        lambda first, last, rnd: [rec.event(game, i, rnd) for i in range(first, last)],
        lambda decisions: rec.end(game, decisions),
    )
