"""Opponents for self-play (issue 14): a league of frozen snapshots and scripted agents, and a paired ladder check.

Used by :mod:`experiments.train.selfplay`.

* :class:`League` holds the opponents a league game can draw: the last ``pool_size`` frozen snapshots of the learner
  (``snapshot:ITERATION``) and scripted ladder agents by name (``heuristic``, ``bayes``, ...). Cheating oracles are
  refused.
* :class:`Seating` decides, whenever a game starts in a vector-env slot, who plays it: with probability ``p`` one
  seat (uniform) is the learner and every other seat is one opponent drawn uniformly from the league; otherwise all
  seats are the learner (self-play). :meth:`Seating.act` chooses the opponents' moves of a step; the learner's rows
  are left to the trainer. Only the learner's decisions are trained.
* :func:`evaluate` is the ladder check the trainer runs every ``--eval-every`` iterations: ``games`` deals, the
  learner in seat ``b % N`` of deal ``b`` and the opponent in every other seat, against the same deals with the
  opponent in that seat too (paired: same set-up, same opponents' seeds). Its agents' seeds are sealed (from a
  secret, default drawn once per process; never from the public deal seed). It reports the learner's mean score
  difference per game with a 95% interval, and per role the round-level difference.

Scripted agents are Python objects that remember the game they play; a checkpoint stores the seating (who plays
which seat of which slot, the snapshots' weights) but not their memory, so after ``--resume`` a scripted opponent
of a game in flight starts afresh from the observation in front of it (snapshot opponents and self-play resume
exactly).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from numpy.typing import NDArray

from agents import make_agent, oracle_names
from experiments.tournament.stats import mean_interval
from saboteur_env import GameConfig
from saboteur_env.common.seeding import seat_seeds
from saboteur_env.vector import VectorEnv, legal_indices

LEARNER = -1  # Seating.learner[b] when every seat of slot b is the learner


class PolicyLike(Protocol):
    def legal(self, obs: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


Sampled = tuple[NDArray[np.int64], NDArray[np.float32], NDArray[np.float32]]
RoleOf = Callable[[NDArray[np.float32]], NDArray[np.int64]]
ActFn = Callable[[NDArray[np.float32], NDArray[np.int8]], NDArray[np.int64]]
Played = tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_]]


def sample_rows(model: PolicyLike, obs: NDArray[np.float32], mask: NDArray[np.int8], gen: torch.Generator) -> Sampled:
    """Actions, their log-probabilities and the values of ``model`` for a batch of rows (masked sampling)."""
    from experiments.train.selfplay.policy import segment_sample

    dev = next(iter(model.parameters())).device if isinstance(model, torch.nn.Module) else torch.device("cpu")
    t_obs = torch.from_numpy(np.ascontiguousarray(obs)).to(dev)
    rows, cols = map(torch.from_numpy, legal_indices(mask))
    with torch.inference_mode():
        logp, value = model.legal(t_obs, rows.to(dev), cols.to(dev))
        pick = segment_sample(logp, rows.to(dev), t_obs.shape[0], gen)
    return cols[pick].numpy(), logp.cpu()[pick].numpy(), value.cpu().numpy()


@dataclass
class Snapshot:
    """A frozen copy of the learner taken at ``iteration``."""

    iteration: int
    model: Any

    @property
    def name(self) -> str:
        return f"snapshot:{self.iteration}"


def talking(name: str, config: GameConfig) -> str:
    """A scripted agent's name in ``config``'s games: under the claims rule (``claims=True``) a plain name talks
    as ``claims:NAME`` (``agents.claims.ClaimsAgent`` around it: the game's agents do not read claims); a
    ``claims...:NAME`` name, and every name in a game without claims, is kept."""
    return f"claims:{name}" if config.claims and not name.startswith("claims") else name


class League:
    """The opponents a league game may draw: snapshots of the learner and scripted agents (by name)."""

    def __init__(self, config: GameConfig, scripted: list[str], pool_size: int) -> None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or not 0 <= pool_size <= 64:
            raise ValueError(f"pool_size={pool_size!r} is out of range; valid: 0..64")
        for name in scripted:
            if name in oracle_names(config.game):
                raise ValueError(f"league agent {name!r} reads hidden state; oracles never join a league")
        scripted = [talking(name, config) for name in scripted]
        for name in scripted:
            make_agent(name, config)  # an unknown name fails here, naming the valid ones
        self.config, self.scripted, self.pool_size = config, scripted, pool_size
        self.snapshots: list[Snapshot] = []

    def add_snapshot(self, model: torch.nn.Module, iteration: int) -> None:
        if self.pool_size == 0:
            return
        frozen = copy.deepcopy(model).eval()
        for p in frozen.parameters():
            p.requires_grad_(False)
        self.snapshots.append(Snapshot(iteration, frozen))
        del self.snapshots[: -self.pool_size]

    def entries(self) -> list[str | Snapshot]:
        return [*self.snapshots, *self.scripted]

    def __len__(self) -> int:
        return len(self.snapshots) + len(self.scripted)

    def state(self) -> dict[str, Any]:
        """Snapshots' weights (plain tensors) for checkpoints."""
        return {f"snap{i}_{k}": v for i, s in enumerate(self.snapshots) for k, v in s.model.state_dict().items()} | {
            "snap_iterations": torch.tensor([s.iteration for s in self.snapshots], dtype=torch.int64)
        }

    def load(self, state: dict[str, Any], template: torch.nn.Module) -> None:
        self.snapshots = []
        for i, it in enumerate(state["snap_iterations"].tolist()):
            prefix = f"snap{i}_"
            weights = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
            model = copy.deepcopy(template)
            model.load_state_dict(weights)
            self.add_snapshot(model, int(it))


class Seating:
    """Who plays each seat of each slot of a vector env, and the opponents' moves."""

    def __init__(self, config: GameConfig, num_envs: int, league: League, p: float, seed: int) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"league fraction {p!r} is out of range; valid: [0, 1]")
        self.config, self.league, self.p = config, league, p
        self.n = config.num_players
        self.rng = np.random.default_rng([seed, 0x1EA6])
        self.seed = seed
        self.learner = np.full(num_envs, LEARNER, dtype=np.int64)  # the learner's seat, LEARNER: all seats
        self.opponent: list[str | Snapshot | None] = [None] * num_envs
        self.agents: list[list[Any] | None] = [None] * num_envs  # scripted agents of a slot, one per seat
        self.games = 0  # games seated (seeds the scripted agents)
        self.counts: dict[str, int] = {}
        self.snapshot = np.zeros(num_envs, dtype=bool)  # slot b's opponents are a snapshot (a network)

    def new_games(self, slots: NDArray[np.int64], eligible: NDArray[np.bool_] | None = None) -> None:
        """Seat the games that just started in ``slots`` (in slot order: deterministic for a seed). With
        ``eligible`` (``(len(slots), N)``) a league game's learner seat is drawn among its row's eligible seats
        (all seats where none is)."""
        entries = self.league.entries()
        for i, b in enumerate(np.asarray(slots, dtype=np.int64).tolist()):
            self.games += 1
            if entries and self.rng.random() < self.p:
                if eligible is not None and eligible[i].any():
                    pool = np.flatnonzero(eligible[i])
                    seat = int(pool[int(self.rng.integers(pool.size))])
                else:
                    seat = int(self.rng.integers(self.n))
                opp = entries[int(self.rng.integers(len(entries)))]
                self.learner[b], self.opponent[b] = seat, opp
                self._seat_scripted(b, opp)
                name = opp if isinstance(opp, str) else "snapshot"
                self.counts[name] = self.counts.get(name, 0) + 1
            else:
                self.learner[b], self.opponent[b], self.agents[b] = LEARNER, None, None
                self.snapshot[b] = False
                self.counts["self"] = self.counts.get("self", 0) + 1

    def _seat_scripted(self, b: int, opp: str | Snapshot | None) -> None:
        self.snapshot[b] = isinstance(opp, Snapshot)
        if not isinstance(opp, str):
            self.agents[b] = None
            return
        seeds = np.random.SeedSequence([self.seed, self.games, b]).generate_state(self.n)
        agents = []
        for s in range(self.n):
            agent = make_agent(opp, self.config)
            agent.reset(s, self.n, int(seeds[s]))
            agents.append(agent)
        self.agents[b] = agents

    def learner_rows(self, seats: NDArray[np.int64]) -> NDArray[np.bool_]:
        return (self.learner == LEARNER) | (self.learner == seats)

    def act(self, rows: NDArray[np.int64], obs: NDArray[np.float32], mask: NDArray[np.int8], seats: NDArray[np.int64],
            gen: torch.Generator, out: NDArray[np.int64],
            net_obs: NDArray[np.float32] | None = None) -> None:  # fmt: skip
        """Write the opponents' actions of slots ``rows`` into ``out``. Scripted agents read ``obs``, snapshots
        ``net_obs`` when given (the network's input: the observation and its belief features)."""
        by_snapshot: dict[int, list[int]] = {}
        for b in rows.tolist():
            opp = self.opponent[b]
            if isinstance(opp, Snapshot):
                by_snapshot.setdefault(id(opp), []).append(b)
            else:
                agents = self.agents[b]
                assert agents is not None
                out[b] = agents[int(seats[b])].act(obs[b], mask[b])
        for group in by_snapshot.values():
            snap = self.opponent[group[0]]
            assert isinstance(snap, Snapshot)
            idx = np.asarray(group)
            out[idx] = sample_rows(snap.model, (obs if net_obs is None else net_obs)[idx], mask[idx], gen)[0]

    def state(self) -> dict[str, Any]:
        """The seating for checkpoints: each slot's learner seat and opponent (league entry by name)."""
        names = [o if isinstance(o, str) else (o.name if o is not None else "") for o in self.opponent]
        return {"learner": torch.from_numpy(self.learner.copy()), "opponents": json.dumps(names),
                "rng": json.dumps(self.rng.bit_generator.state), "games": self.games,
                "counts": json.dumps(self.counts)}  # fmt: skip

    def load(self, state: dict[str, Any]) -> None:
        self.learner[:] = state["learner"].numpy()
        self.rng.bit_generator.state = json.loads(state["rng"])
        self.games = int(state["games"])
        self.counts = json.loads(state["counts"])
        snaps = {s.name: s for s in self.league.snapshots}
        for b, name in enumerate(json.loads(state["opponents"])):
            if not name:
                self.opponent[b] = None
            elif name.startswith("snapshot:"):
                # A snapshot that left the pool since is gone: its games continue with the oldest one kept.
                self.opponent[b] = snaps.get(name, self.league.snapshots[0] if self.league.snapshots else None)
            else:
                self.opponent[b] = name
            self._seat_scripted(b, self.opponent[b])  # scripted memory restarts (see the module docstring)


# ---- the ladder check ---------------------------------------------------------------------------------------------
def _play_once(
    config: GameConfig,
    games: int,
    seed: int,
    learner_seat: NDArray[np.int64] | None,
    opponent: str,
    act_learner: ActFn,
    role_of: RoleOf,
    num_roles: int = 2,
    learner_agents: list[Any] | None = None,
    secret: int | None = None,
) -> Played:
    """Play game ``b`` of ``games`` once on ``seed``; ``learner_seat[b]`` (None: nobody) is the learner's seat.
    With ``learner_agents`` the learner of deal ``b`` is the agent ``learner_agents[b]`` (one that remembers its
    game, e.g. a learned file with belief features) instead of the batched ``act_learner``.

    Returns each game's final returns ``(games, N)``, what the watched seat ``b % N`` earned in each role
    ``(games, num_roles)`` (a round's reward goes to the role of the seat's latest decision: the role it played
    that round unless the round ended before its first turn) and which roles it was seen in.

    The opponents' seeds are sealed (:func:`eval_seeds`): the same for both halves of a paired check, never a
    function of the public deal seed."""
    n = config.num_players
    env = VectorEnv(games, config=config)
    obs, info = env.reset(seed=seed)
    agents = []
    for b in range(games):
        row = [make_agent(opponent, config) for _ in range(n)]
        for s, (a, agent_seed) in enumerate(zip(row, eval_seeds(n, seed, b, opponent, secret), strict=True)):
            a.reset(s, n, agent_seed)
        agents.append(row)
    watched = np.arange(games) % n
    done = np.zeros(games, dtype=bool)
    finals = np.zeros((games, n), dtype=np.float32)
    earned = np.zeros((games, num_roles), dtype=np.float32)
    seen = np.zeros((games, num_roles), dtype=bool)
    role = np.zeros(games, dtype=np.int64)
    while not done.all():
        seats = info["seat"]
        mask = info["action_mask"]
        actions = np.zeros(games, dtype=np.int64)
        live = np.flatnonzero(~done)
        mine = live[:0] if learner_seat is None else live[seats[live] == learner_seat[live]]
        if mine.size and learner_agents is not None:
            actions[mine] = [learner_agents[b].act(obs[b], mask[b]) for b in mine.tolist()]
        elif mine.size:
            actions[mine] = act_learner(obs[mine], mask[mine])
        for b in np.setdiff1d(live, mine).tolist():
            actions[b] = agents[b][int(seats[b])].act(obs[b], mask[b])
        for b in np.flatnonzero(done).tolist():
            actions[b] = int(np.flatnonzero(mask[b])[0])  # finished deals idle on their next game
        acting_watched = live[seats[live] == watched[live]]
        if acting_watched.size:
            role[acting_watched] = role_of(obs[acting_watched])
            seen[acting_watched, role[acting_watched]] = True
        obs, rewards, term, _, info = env.step(actions)
        earned[live, role[live]] += rewards[live, watched[live]]
        ended = live[term[live]]
        finals[ended] = info["final_returns"][ended]
        done[ended] = True
    return finals, earned, seen


def eval_seeds(n: int, seed: int, deal: int, who: str, secret: int | None = None) -> list[int]:
    """The ``n`` agent seeds of ``who`` in deal ``deal`` of the ladder check on ``seed``: sealed
    (``saboteur_env.common.seeding.seat_seeds``; ``secret=None``: this process's session secret), so they say
    nothing about the deals, which come from the public ``seed``."""
    return seat_seeds(n, ("league_eval", who, n, seed, deal), secret)


def evaluate(config: GameConfig, model: PolicyLike | str, opponent: str, games: int, seed: int,
             role_names: tuple[str, ...], role_of: RoleOf, secret: int | None = None) -> dict[str, float]:  # fmt: skip
    """The learner in seat ``b % N`` of deal ``b`` among ``opponent`` agents, paired with ``opponent`` in that seat.
    ``model``: a batched policy, or an agent name (``learned:PATH``: one agent per deal). The deals come from
    ``seed``; every agent seed, and the batched policy's sampler, from ``secret`` (:func:`eval_seeds`; default this
    process's session secret): repeated calls in one process agree, and no seed is a function of ``seed``.

    Returns ``eval_diff`` (mean score difference per game), ``eval_lo``/``eval_hi`` (its 95% interval) and per role
    ``eval_diff_ROLE`` (the mean difference per game of what the watched seat earned in rounds it played in that
    role, over the games where it played that role; the deals fix the roles, so both halves share them)."""
    if opponent in oracle_names(config.game):
        raise ValueError(f"evaluation opponent {opponent!r} reads hidden state; choose a ladder agent")
    opponent = talking(opponent, config)
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= 100_000:
        raise ValueError(f"games={games!r} is out of range; valid: 1..100000")
    gen = torch.Generator().manual_seed(eval_seeds(1, seed, -1, "sampler", secret)[0])

    def act(obs: NDArray[np.float32], mask: NDArray[np.int8]) -> NDArray[np.int64]:
        assert not isinstance(model, str)
        return sample_rows(model, obs, mask, gen)[0]

    n, k = config.num_players, len(role_names)
    seat = np.arange(games) % n
    learners = None
    if isinstance(model, str):
        learners = [make_agent(model, config) for _ in range(games)]
        for b, a in enumerate(learners):
            a.reset(int(seat[b]), n, eval_seeds(1, seed, b, "learner", secret)[0])
    with_learner, earned_a, seen_a = _play_once(config, games, seed, seat, opponent, act, role_of, k, learners, secret)
    baseline, earned_b, seen_b = _play_once(config, games, seed, None, opponent, act, role_of, k, secret=secret)
    diff = with_learner[np.arange(games), seat] - baseline[np.arange(games), seat]
    mean, lo, hi = mean_interval(diff.tolist())
    out = {"eval_diff": mean, "eval_lo": lo, "eval_hi": hi, "eval_games": float(games)}
    seen = seen_a | seen_b
    for i, name in enumerate(role_names):
        vals = (earned_a[:, i] - earned_b[:, i])[seen[:, i]]
        out[f"eval_diff_{name}"] = float(vals.mean()) if vals.size else float("nan")
    return out
