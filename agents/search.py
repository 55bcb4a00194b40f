"""Search on a blueprint (agent ``search`` / ``search:BUDGET``): batched rollouts on the compiled core, issue 35.

At each decision the agent

1. ranks the legal moves by the blueprint's prior - the network shipped for the configuration (``learned``, with
   the seat's own belief features where the file reads them), or the IS-MCTS rollout weights where none is shipped
   - and keeps the top ``candidates`` (all of them when there are no more);
2. draws ``K = rollouts // candidates`` determinizations of its information set (:mod:`agents.determinize`: roles
   from the belief posterior, other hands and the pile from the unseen cards, unpeeked goals);
3. builds one batch of ``K x M`` games on the compiled core (``Batch.from_states`` then ``take``: each
   determinization once per candidate, its generator words copied, so every candidate meets the same deal), plays
   each candidate as the row's first move and then every seat of every row by the rollout blueprint to the end of
   the round, in one batched loop (:func:`saboteur_env.core.rollout.rollout`: one kernel call and one numpy
   forward per step, common random numbers across the candidates of a determinization); the rollout blueprint is
   the shipped observation-only network (:func:`agents.blueprint.rollout_blueprint`), or with ``beliefs`` the
   prior's belief-feature network with its features followed in the rollouts - by default exactly where no
   observation-only network is shipped for the configuration;
4. plays the candidate with the best mean return for its side: its own gold of the round (the Duel: its gold minus
   the opponent's); ties go to the better prior. With ``margin=Z`` it leaves the prior's first choice only for a
   move whose paired advantage over it (per determinization, common random numbers) is more than Z standard errors.
   With ``halving=True`` the budget is spent in ``ceil(log2 M)`` rounds of sequential halving (fresh
   determinizations each round, the better half of the candidates kept), so the last two share most rollouts.

Budgets: ``rollouts`` (K x M per decision, deterministic for a seed) and optionally ``ms`` (milliseconds per
decision): with ``ms`` the determinizations are played in waves of ``wave`` and the search stops when the time is
up, playing the best move among the finished rollouts - the prior's first move when none finished. A move is
always one of the legal moves of the mask it was given.

Reads only its own observations (through the determinizer) and the mask: resampling the hidden state behind the
same view leaves its move unchanged (``tests/test_search.py``). Saboteur 2's theft decision (which the determinizer
does not model) is played by the prior. The agent's generator comes from ``reset(seat, num_players, seed)`` only.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from agents.base.beliefs import BayesModel
from agents.blueprint import (
    BeliefBlueprint,
    NetworkBlueprint,
    WeightsBlueprint,
    load_network,
    rollout_blueprint,
    shipped_network,
)
from agents.determinize import Determinizer, make_determinizer
from agents.learned import LearnedAgent, NumpyPolicy
from agents.value import ValueHead, value_head_for
from saboteur_env import GameConfig, observation_layout
from saboteur_env.claims import ClaimsBatch
from saboteur_env.claims import layout as claims_layout
from saboteur_env.core.batch import Batch, padded
from saboteur_env.core.rollout import pick, rollout
from saboteur_env.vector import VectorEnv

__all__ = ["MAX_ROLLOUTS", "SearchAgent"]

DEFAULT_ROLLOUTS = 128
MAX_ROLLOUTS = 100_000
MAX_CANDIDATES = 64
_THEFT = 3  # Saboteur 2's Phase.THEFT


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """The process's BLAS libraries (found once; kept out of the agents, which are pickled and copied)."""
    return ThreadpoolController()


class SearchAgent:
    """See the module docstring."""

    name = "search"

    def __init__(
        self,
        config: GameConfig,
        rollouts: int = DEFAULT_ROLLOUTS,
        candidates: int = 8,
        ms: float | None = None,
        temperature: float = 1.0,
        blueprint: str | Path | None = None,
        wave: int = 4,
        blas_threads: int | None = 1,
        depth: int | None = None,
        value: str | Path | None = None,
        margin: float = 0.0,
        halving: bool = False,
        beliefs: bool | None = None,
    ) -> None:
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or not 1 <= rollouts <= MAX_ROLLOUTS:
            raise ValueError(f"rollouts={rollouts!r} is out of range; valid: 1..{MAX_ROLLOUTS}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or not 1 <= candidates <= MAX_CANDIDATES:
            raise ValueError(f"candidates={candidates!r} is out of range; valid: 1..{MAX_CANDIDATES}")
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 < ms <= 600_000):
            raise ValueError(f"ms={ms!r} is out of range; valid: (0, 600000] milliseconds or None")
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 100:
            raise ValueError(f"temperature={temperature!r} is out of range; valid: 0..100 (0: greedy)")
        if isinstance(wave, bool) or not isinstance(wave, int) or not 1 <= wave <= 1024:
            raise ValueError(f"wave={wave!r} is out of range; valid: 1..1024 determinizations")
        if blas_threads is not None and (isinstance(blas_threads, bool) or not isinstance(blas_threads, int)
                                         or not 1 <= blas_threads <= 1024):  # fmt: skip
            raise ValueError(f"blas_threads={blas_threads!r} is out of range; valid: 1..1024 or None (BLAS's own)")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 10_000):
            raise ValueError(f"depth={depth!r} is out of range; valid: 1..10000 decisions per rollout or None (to the "
                             "round's end)")  # fmt: skip
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin <= 10:
            raise ValueError(f"margin={margin!r} is out of range; valid: 0..10 standard errors (0: the best mean)")
        if not isinstance(halving, bool):
            raise ValueError(f"halving={halving!r} is not valid; valid: True or False")
        if beliefs is not None and not isinstance(beliefs, bool):
            raise ValueError(f"beliefs={beliefs!r} is not valid; valid: True, False or None (automatic)")
        if config.claims:
            # Under the claims rule a claim is a move like any other: its rollouts need seats that hear it, so the
            # rollout policy is a network trained with claims (issue 36 part 2a; docs/search.md): the given one,
            # else the talker shipped for the configuration.
            if blueprint is None and shipped_network(config) is None:
                raise ValueError("a search under the claims rule rolls out a network trained with claims "
                                 "(experiments.train.selfplay --claims), and none is shipped for "
                                 f"{config.game} at {config.num_players} players: give blueprint=PATH")  # fmt: skip
            if depth is not None or value is not None:
                raise ValueError("depth= / value= (the value head's cut) are not available under the claims rule")
        # The trunk's products are small (K x M rows): BLAS threads only wait on each other, badly so on a loaded
        # machine (docs/search.md, "BLAS threads"), so a search runs them in one thread by default.
        self.blas_threads = blas_threads
        self.config = config
        self.rollouts, self.candidates, self.ms = rollouts, candidates, ms
        self.temperature, self.wave = float(temperature), wave
        self.margin = float(margin)
        self.halving = halving
        # The prior network: a given file (refused with the difference named when trained for another game or
        # shape), else the one shipped for the configuration (None where none is).
        self.network: NumpyPolicy | None = (
            load_network(blueprint, config) if blueprint is not None else shipped_network(config)
        )
        self.blueprint: NetworkBlueprint | BeliefBlueprint | WeightsBlueprint
        fallback: NetworkBlueprint | WeightsBlueprint | None = None  # the rollout blueprint, when looked up here
        if beliefs is None:
            # Automatic: where the prior reads belief features and no observation-only network is shipped for the
            # configuration (the base game's one network reads them at every count), the rollouts play that same
            # network with its features followed; else the observation-only rollout network.
            beliefs = False
            if (self.network is not None and self.network.features == "bayes" and config.game == "base"
                    and not config.claims and depth is None):  # fmt: skip
                fallback = rollout_blueprint(config, self.network)
                beliefs = isinstance(fallback, WeightsBlueprint)
        self.beliefs = beliefs
        if beliefs:
            # Rollout seats that read belief features, followed from each row's events (agents.base.batched_beliefs)
            if self.network is None or self.network.features != "bayes" or config.game != "base" or config.claims:
                raise ValueError("beliefs=1 rolls out a base-game network that reads 'bayes' belief features; "
                                 f"the prior for {config.game} at {config.num_players} players "
                                 f"({self.network.path.name if self.network else 'none'}) does not")  # fmt: skip
            if depth is not None:
                raise ValueError("beliefs=1 plays rollouts to the round's end (no value head reads the features): "
                                 "leave depth= out")  # fmt: skip
            self.blueprint = BeliefBlueprint(self.network, config)
        else:
            self.blueprint = fallback if fallback is not None else rollout_blueprint(config, self.network)
        self._prior_agent: LearnedAgent | None = None
        if self.network is not None:
            self._prior_agent = LearnedAgent(self.network.path, config)
        if isinstance(self.blueprint, WeightsBlueprint):
            from agents.ismcts import rollout_weights

            self._weights = rollout_weights(config)
        # The value head that ends a rollout cut after ``depth`` decisions (agents.value): a given head file, else
        # the one shipped for the configuration; it belongs to the rollout network's trunk.
        self.depth = depth
        self.value_head: ValueHead | None = None
        if depth is not None:
            if not isinstance(self.blueprint, NetworkBlueprint):
                raise ValueError(f"depth={depth} needs a rollout network; this configuration rolls out the IS-MCTS "
                                 "weights (no observation-only network is shipped for it)")  # fmt: skip
            self.value_head = value_head_for(self.blueprint.policy, config, value)
        elif value is not None:
            raise ValueError("value= is read only with depth= (the decisions after which rollouts are cut)")
        self.rng = np.random.default_rng()
        self.seat = 0
        self.det: Determinizer | None = None
        self.last_stats: dict[str, Any] = {}
        # Claims: the determinizer reads the game part of the observation; the claims block is public and is
        # carried into every rollout as it is (ClaimsBatch.from_blocks). Such an agent talks by itself
        # (agents.claims.NativeTalker: claims+native:search:...).
        self.talks = bool(config.claims)
        self.claims_layout = claims_layout(config) if config.claims else None
        self._game_size = observation_layout(config).size
        self._block: NDArray[np.float32] | None = None

    # ---- protocol ----
    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        if num_players != self.config.num_players:
            raise ValueError(f"num_players={num_players} does not match the config ({self.config.num_players})")
        if not 0 <= seat < num_players:
            raise ValueError(f"seat={seat} out of range 0..{num_players - 1}")
        self.rng = np.random.default_rng(seed)
        self.seat = seat
        self.det = make_determinizer(self.config.game_config, seat)
        if self._prior_agent is not None:
            self._prior_agent.reset(seat, num_players, None)  # never samples: only its belief features are used

    def observe(self, observation: NDArray[np.float32]) -> None:
        """Follow the game without acting (optional: keeps the determinizer's event log complete)."""
        if self.det is None:
            raise ValueError("call reset(seat, num_players, seed) before observe()")
        self.det.observe(np.asarray(observation)[: self._game_size])

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        if self.det is None:
            raise ValueError("call reset(seat, num_players, seed) before act()")
        if self.blas_threads is None:
            return self._act(observation, action_mask)
        with _blas_controller().limit(limits=self.blas_threads, user_api="blas"):
            return self._act(observation, action_mask)

    def _act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        t0 = time.perf_counter()
        deadline = None if self.ms is None else t0 + self.ms / 1000.0
        mask = np.asarray(action_mask).astype(bool)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        view = self.det.observe(np.asarray(observation)[: self._game_size])
        if self.claims_layout is not None:
            self._block = np.asarray(observation, dtype=np.float32)[self._game_size :]
        prior = self._prior(observation, legal)  # every decision: the prior's belief features follow the seat
        order = np.argsort(-prior, kind="stable")
        if legal.size == 1 or (self.config.game == "sab2" and int(view.phase) == _THEFT):
            self.last_stats = {"rollouts": 0, "seconds": time.perf_counter() - t0, "candidates": 1}
            return int(legal[order[0]])
        cand = legal[order[: self.candidates]]
        best, self.last_stats = self._select(cand, deadline)
        self.last_stats["seconds"] = time.perf_counter() - t0
        return int(cand[best])

    def _halving_plan(self, m: int) -> list[int]:
        """Determinizations per round of sequential halving over ``m`` candidates (``ceil(m / 2**r)`` alive in
        round ``r``): the budget ``rollouts // m * m`` in ``ceil(log2 m)`` equal parts."""
        rounds = int(np.ceil(np.log2(m)))
        per_round = max(1, max(1, self.rollouts // m) * m // rounds)
        return [max(1, per_round // int(np.ceil(m / 2**r))) for r in range(rounds)]

    def _select(self, cand: NDArray[np.int64], deadline: float | None) -> tuple[int, dict[str, Any]]:
        """The index in ``cand`` (prior order) of the move to play, and the statistics behind it."""
        m = cand.size
        k_total = max(1, self.rollouts // m)
        sums, counts = np.zeros(m), np.zeros(m, dtype=np.int64)
        # Paired differences against the prior's first choice, per determinization (common random numbers make
        # them far less noisy than the two means): their sums, sums of squares and counts.
        d_sum, d_sq, d_n = np.zeros(m), np.zeros(m), np.zeros(m, dtype=np.int64)
        alive = np.arange(m)
        if self.halving and m > 2:
            # Sequential halving (Karnin et al. 2013): log2(M) rounds of equal budget on fresh determinizations,
            # the better half kept after each; the last two share every determinization they were played in, so
            # the close final comparison gets most of the rollouts instead of 1/M of them.
            plan = self._halving_plan(m)
        elif deadline is None:
            plan = [k_total]
        else:
            plan = [min(self.wave, k_total - i) for i in range(0, k_total, self.wave)]
        for r, k in enumerate(plan):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            value, valid = self._evaluate(cand[alive], k, deadline)
            sums[alive] += np.where(valid, value, 0.0).sum(axis=0)
            counts[alive] += valid.sum(axis=0)
            if alive[0] == 0:  # the prior's first choice is still played: pair every survivor with it
                both = valid & valid[:, :1]
                d = np.where(both, value - value[:, :1], 0.0)
                d_sum[alive] += d.sum(axis=0)
                d_sq[alive] += (d * d).sum(axis=0)
                d_n[alive] += both.sum(axis=0)
            if self.halving and r + 1 < len(plan):
                live_mean = np.where(counts[alive] > 0, sums[alive] / np.maximum(counts[alive], 1), -np.inf)
                keep = np.sort(np.argsort(-live_mean, kind="stable")[: max(2, (alive.size + 1) // 2)])
                alive = alive[keep]  # sorted: prior order, so ties keep going to the better prior
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
        # Among the survivors only (all of them without halving): their means share every rollout they were in.
        final = np.where(np.isin(np.arange(m), alive), mean, -np.inf)
        best = int(np.argmax(final)) if counts.any() else 0  # argmax: the first, i.e. the better prior, on ties
        # The best mean's paired advantage over the prior's first choice and its standard error.
        n = max(int(d_n[best]), 1)
        adv = d_sum[best] / n
        se = float(np.sqrt(max(d_sq[best] / n - adv * adv, 0.0) / max(n - 1, 1))) if n > 1 else float("inf")
        by_mean = best
        if self.margin > 0 and best != 0 and not adv > self.margin * se:
            # Leave the prior's first choice only for a move whose paired advantage over it is more than `margin`
            # standard errors: the best of M noisy means is biased upwards (the winner's curse), most at small K.
            best = 0
        stats = {"rollouts": int(counts.sum()), "candidates": m,
                 "values": dict(zip(cand.tolist(), np.round(mean, 4).tolist(), strict=True)),
                 "best_mean": int(cand[by_mean]), "advantage": (float(adv), se)}  # fmt: skip
        return best, stats

    # ---- search ----
    def _prior(self, observation: NDArray[np.float32], legal: NDArray[np.int64]) -> NDArray[np.float64]:
        """The prior's score of each legal move: the network's logits (on the seat's own observation, with its
        belief features where the file reads them), or the log rollout weights."""
        if self._prior_agent is not None:
            assert self.network is not None
            logits, _ = self.network.forward(self._prior_agent.network_input(observation))
            return logits[0, legal].astype(np.float64)
        return np.log(self._weights[legal])

    def _evaluate(
        self, cand: NDArray[np.int64], k: int, deadline: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Values ``(k, m)`` of the candidates in ``k`` fresh determinizations, and which are valid (the rollout
        finished, and the candidate is legal in that determinization - always, for a consistent view)."""
        assert self.det is not None
        m = cand.size
        states = [self.det.sample(self.rng) for _ in range(k)]
        base = Batch.from_states(states)
        if self.claims_layout is not None:
            return self._claims_rollouts(base, cand, int(self.rng.integers(2**63)), deadline)
        masks = np.zeros((k, padded(base.num_actions)), dtype=np.int8)
        base.masks(masks, np.zeros(k, dtype=np.int64))
        ok = masks[:, cand] != 0  # (k, m)
        # A candidate illegal in a determinization (none, for a determinization consistent with the view) is
        # replaced in that row by a legal move so the lock-step can play it, and its value is not counted.
        first_legal = masks[:, : base.num_actions].argmax(axis=1)
        first = np.where(ok, cand[None, :], first_legal[:, None]).reshape(-1)
        games = base.take(np.repeat(np.arange(k), m))
        if isinstance(self.blueprint, BeliefBlueprint):
            # Every row starts from the seat's own public model and board (the prior's follower has just seen the
            # current view): the determinizations share the public past and differ only in what is hidden.
            assert self._prior_agent is not None and self._prior_agent.beliefs is not None
            follower = self._prior_agent.beliefs.follower
            assert isinstance(follower.public, BayesModel)
            self.blueprint.set_root(follower.public.loglik, follower.tracker.board.shape)
        seed = int(self.rng.integers(2**63))
        res = rollout(games, self.blueprint, first_actions=first, streams=np.repeat(np.arange(k), m), seed=seed,
                      temperature=self.temperature, deadline=deadline, max_steps=self.depth,
                      leaf=self._leaf if self.value_head is not None else None)  # fmt: skip
        r = res.returns
        value = r[:, self.seat] - r[:, 1 - self.seat] if self.config.game == "duel" else r[:, self.seat]
        done = res.finished if res.estimated is None else res.finished | res.estimated
        return value.reshape(k, m), ok & done.reshape(k, m)

    def _claims_rollouts(self, base: Batch, cand: NDArray[np.int64], seed: int,
                         deadline: float | None) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:  # fmt: skip
        """Under the claims rule, :meth:`_evaluate` on a claims vector env: each determinization of ``base`` once
        per candidate, the claims made so far carried in from the seat's own claims block, every row played from
        its candidate (a claim or a game move) to the end of its round with every seat by the claims network and
        common random numbers by determinization as in ``core.rollout``."""
        lay, k, m = self.claims_layout, base.batch, cand.size
        assert lay is not None and self._block is not None
        b = k * m
        streams = np.repeat(np.arange(k), m)
        games = base.take(streams)
        env = VectorEnv(b, config=self.config, copy=False)
        sc = games.k
        rounds = games.scalar(sc.SC_ROUND).astype(np.int64)
        talk = ClaimsBatch.from_blocks(self.config, np.full(b, self.seat), rounds, np.repeat(self._block[None], b, 0))
        _, info = env.set_games(games, talk)
        mask = info["action_mask"]
        ok = mask[np.arange(b), np.tile(cand, k)] != 0  # always, for a determinization consistent with the view
        first = np.where(ok, np.tile(cand, k), mask.argmax(axis=1))
        p = self.config.num_players
        returns = np.zeros((b, p))
        live = np.ones(b, dtype=bool)
        finished = np.zeros(b, dtype=bool)
        gens = [np.random.default_rng([seed, s]) for s in range(k)]
        acts = np.asarray(first, dtype=np.int64)
        for _ in range(self.config.max_decisions_per_round + 1):  # claims included: a true bound on a round
            obs, rewards, term, _, info = env.step(acts)
            returns[live] += rewards[live]
            # A row's round ended with its game move (a claim row's just-ended flag is its previous game move's).
            ended = term | ((env.batch.scalar(sc.SC_JUST_ENDED) != 0) & (acts < lay.game_actions))
            finished |= live & ended
            live &= ~ended
            if not live.any() or (deadline is not None and time.perf_counter() >= deadline):
                break
            rows, cols = np.nonzero(info["action_mask"])
            u = np.array([g.random() for g in gens])[streams]
            acts = pick(rows.astype(np.int64), cols.astype(np.int64),
                        self.blueprint.logits(obs, rows.astype(np.int64), cols.astype(np.int64)), u, b,
                        self.temperature)  # fmt: skip
        r = returns
        value = r[:, self.seat] - r[:, 1 - self.seat] if self.config.game == "duel" else r[:, self.seat]
        return value.reshape(k, m), (ok & finished).reshape(k, m)

    def _leaf(self, batch: Batch, slots: NDArray[np.int64], rows: NDArray[np.int64]) -> NDArray[np.float64]:
        """The value head's estimate of the searching seat's gold in the rest of the round (the Duel: minus the
        opponent's), from the seat's own observation in each cut game."""
        assert self.value_head is not None
        hi = int(slots.max()) + 1
        out = np.zeros((hi, batch.obs_size), dtype=np.float32)
        batch.observe(np.full(hi, self.seat, dtype=np.int64), out, 0, hi)
        est = np.zeros((slots.size, self.config.num_players))
        est[:, self.seat] = self.value_head.estimate(out[slots])
        return est

    # ---- measurement ----
    def rollouts_per_decision(self, num_legal: int) -> int:
        """Rollouts a decision with ``num_legal`` legal moves plays at the rollout budget (no time limit)."""
        m = min(self.candidates, num_legal)
        if num_legal <= 1:
            return 0
        if self.halving and m > 2:
            return sum(k * int(np.ceil(m / 2**r)) for r, k in enumerate(self._halving_plan(m)))
        return max(1, self.rollouts // m) * m


# ---- the benchmark: python -m agents.search --bench ------------------------------------------------------------
def bench(config: GameConfig, games: int, seed: int, **kwargs: Any) -> dict[str, float]:
    """Seconds per move of a search agent at seat 0 (the other seats ``expert``) over ``games`` games dealt from
    ``seed``, ``seed + 1``, ...: median and 95th percentile of its searched decisions (more than one legal move)."""
    from agents import make_agent
    from saboteur_env import apply_action, encode_observation, legal_action_mask, new_game

    times: list[float] = []
    rollouts: list[int] = []
    for g in range(games):
        agents: list[Any] = [SearchAgent(config, **kwargs)]
        agents += [make_agent("expert", config) for _ in range(config.num_players - 1)]
        for seat, agent in enumerate(agents):
            agent.reset(seat, config.num_players, 1000 + 10 * g + seat)
        state = new_game(config, np.random.default_rng(seed + g))
        while not state.game_over:
            seat = state.current
            mask = legal_action_mask(state).astype(np.int8)
            t = time.perf_counter()
            action = agents[seat].act(encode_observation(state, seat), mask)
            if seat == 0 and int(mask.sum()) > 1:
                times.append(time.perf_counter() - t)
                rollouts.append(int(agents[0].last_stats["rollouts"]))
            state = apply_action(state, action, inplace=True)
    return _timing(times, rollouts)


def bench_claims(config: GameConfig, games: int, seed: int, **kwargs: Any) -> dict[str, float]:
    """:func:`bench` under the claims rule: the search at seat 0 talks by itself (``config.claims``; its blueprint a
    claims network), the other seats are ``claims:expert``; also the share of its searched moves that were claims."""
    from agents import make_agent
    from saboteur_env import raw_env

    times: list[float] = []
    rollouts: list[int] = []
    claims = 0
    a = claims_layout(config).game_actions
    for g in range(games):
        env = raw_env(
            game=config.game, num_players=config.num_players, claims=True, claims_per_turn=config.claims_per_turn
        )
        env.reset(seed=seed + g)
        agents: list[Any] = [SearchAgent(config, **kwargs)]
        agents += [make_agent("claims:expert", config) for _ in range(config.num_players - 1)]
        for s, agent in enumerate(agents):
            agent.reset(s, config.num_players, 1000 + 10 * g + s)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            s = env.possible_agents.index(name)
            mask = obs["action_mask"]
            t = time.perf_counter()
            action = agents[s].act(obs["observation"], mask)
            if s == 0 and int(mask.sum()) > 1:
                times.append(time.perf_counter() - t)
                rollouts.append(int(agents[0].last_stats["rollouts"]))
                claims += action >= a
            env.step(action)
    return {**_timing(times, rollouts), "claim_share": claims / max(1, len(times))}


def _timing(times: list[float], rollouts: list[int]) -> dict[str, float]:
    t_arr = np.array(times)
    return {"moves": float(t_arr.size), "median_s": float(np.median(t_arr)), "p95_s": float(np.percentile(t_arr, 95)),
            "mean_rollouts": float(np.mean(rollouts))}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agents.search", description="The search agent's benchmark: "
                                     "seconds per move at seat 0 against expert seats (issue 35).")  # fmt: skip
    parser.add_argument("--bench", action="store_true", help="run the benchmark (the only mode)")
    parser.add_argument(
        "--game",
        nargs="+",
        default=["base:5", "sab2:5", "duel:2"],
        help="GAME:PLAYERS cells; the Duel's layout as duel:LAYOUT (duel:2 is seed_5x9)",
    )
    parser.add_argument("--games", type=int, default=2, help="games per cell")
    parser.add_argument("--seed", type=int, default=0, help="deal seed of the first game")
    parser.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS, help="rollouts per move")
    parser.add_argument("--candidates", type=int, default=8, help="candidate moves kept by the prior")
    parser.add_argument("--temperature", type=float, default=1.0, help="rollout temperature (0: greedy)")
    parser.add_argument("--depth", type=int, default=None, help="decisions per rollout before the value head (none)")
    parser.add_argument("--blueprint", default=None, help="rollout network file (default: the shipped one)")
    parser.add_argument("--value", default=None, help="value head file (default: the blueprint's)")
    parser.add_argument("--beliefs", action=argparse.BooleanOptionalAction, default=None,
                        help="rollout seats read belief features followed in the rollouts (beliefs=1; a base-game "
                        "'bayes' network) or not (beliefs=0); default: automatic, as the agent")  # fmt: skip
    parser.add_argument("--claims", action="store_true", help="the claims rule: the search talks (its --blueprint "
                        "a network trained with claims), the other seats are claims:expert")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.bench:
        parser.error("nothing to do: pass --bench")
    configs = []
    for cell in args.game:
        game, _, players = cell.partition(":")
        try:
            if not players or players.isdigit():
                configs.append(GameConfig(game=game, num_players=int(players or 2), claims=args.claims))
            elif game == "duel":
                configs.append(GameConfig(game="duel", duel_layout=players, claims=args.claims))
            else:
                raise ValueError("give GAME:PLAYERS (e.g. base:5, sab2:6) or duel:LAYOUT")
        except ValueError as err:
            parser.error(f"--game {cell!r}: {err}")
    for cell, config in zip(args.game, configs, strict=True):
        t0 = time.perf_counter()
        run = bench_claims if args.claims else bench
        try:
            r = run(config, args.games, args.seed, rollouts=args.rollouts, candidates=args.candidates,
                    temperature=args.temperature, depth=args.depth, blueprint=args.blueprint,
                    value=args.value, beliefs=args.beliefs)  # fmt: skip
        except ValueError as err:  # e.g. --claims without a claims network: one line, not a traceback
            parser.error(f"{cell}: {err}")
        print(
            f"{cell:8s} rollouts={args.rollouts} candidates={args.candidates} depth={args.depth} "
            + ("" if args.beliefs is None else f"beliefs={int(args.beliefs)} ")
            + f"moves={int(r['moves'])} "
            f"median={r['median_s'] * 1000:.0f} ms p95={r['p95_s'] * 1000:.0f} ms "
            f"mean_rollouts={r['mean_rollouts']:.0f} wall={time.perf_counter() - t0:.0f} s"
            + (f" claims={r['claim_share']:.0%} of searched moves" if args.claims else ""),
            flush=True,
        )


if __name__ == "__main__":
    main()
