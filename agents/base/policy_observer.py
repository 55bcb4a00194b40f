"""A policy-aware public observer (DeepRole-style) for the base game: exact Bayes over role assignments whose
likelihoods are a known population policy's own action probabilities.

:class:`PolicyObserver` is a :class:`~agents.base.beliefs.BayesModel` (same hypotheses: saboteur set A x gold slot g,
same prior, same goal handling) in which each decision of seat ``s`` is scored by

    P(observable o | A, g) = eps * U(o) + (1 - eps) * E_hand[ pi_{role_A(s)}(o | context(hand, role, g)) ]

* ``pi_r`` is the population policy (a name for :func:`agents.make_agent`: ``random``, ``heuristic``, ``bayes``,
  any ladder name, or ``learned:PATH.npz``; or a (miner name, saboteur name) pair) built for role r; ``o`` is the
  public part of the action (a face-down discard shows no card, so every discard id is one observable).
* The decision context is rebuilt from public information only: the observer gets each actor's *public
  observation* (:func:`public_observation`: the actor's observation with its hand, role, map results, nuggets and
  own discard kinds erased), a :class:`~agents.base.determinize.BaseDeterminizer` turns it into a full game state, and
  the actor's hand, role and (for the seat's own map results) the gold slot are then set per hypothesis; the
  policy sees ``encode_observation`` of that state and its legal mask, as the engine would give them.
* Hands: ``samples`` hands of the actor's hand size, drawn uniformly from the cards unseen by the public this round
  (the deck minus every card played face up). A non-discard action needs its card: the hands are drawn holding
  it (one copy forced, the rest uniform), which is the uniform draw conditioned on holding the card once weighted
  by 1 / (copies held) - an importance weight applied here. Conditioning multiplies every hypothesis by the same
  factor, so the posterior is unchanged by it.
* ``U`` is the uniform-random policy's probability of ``o`` on the same hands (a role-blind trembling hand): a
  scripted policy's indicator probabilities never zero a hypothesis, so the posterior never collapses on a wrong
  one (``epsilon`` > 0 required).
* The generator of the hand draws and determinizations is seeded from ``seed``, the seat and the public event
  count: the posterior is a deterministic function of public information.

Memory. Scripted agents carry memory (their tracker, belief models and, for ``covert`` / ``bayes`` saboteurs, a
public model of themselves). The observer keeps a *shadow agent per (seat, role hypothesis, gold hypothesis)*, fed
the hypothesised observation of that seat at each of its decisions - exactly the moments at which the real agent
sees its observations - so its memory is what the real agent's would be under that hypothesis: public events
through its own history window (the same rows), its role, its own map results given the gold slot. The hand only
enters the current decision (the agents keep no memory of their hands), so one shadow serves every hand sample.
With the true role and gold slot a shadow's memory equals the real agent's (tested against real agents).

Policy probabilities. ``random``: uniform over the legal ids. ``learned:``: the exported policy's softmax over the
legal ids (``greedy``: an indicator). Ladder agents (``agents.base.ladder``): their decisions are deterministic except
``pick`` (uniform among the best-scoring ids) and the covert saboteur's bluff coin (``rng.random() < bluff``), so the
shadow's ``pick`` is replaced by one that reports its tie set, and each coin is enumerated (both branches, weights
``bluff`` and ``1 - bluff``): the exact distribution of the agent's choice. A ladder agent that used its generator
any other way would raise :class:`PolicyModelError` rather than be scored wrongly.

Cost: per decision ``2 x (1 or 3) x samples`` policy evaluations (3 gold hypotheses only once the actor has used a
map this round), one determinization and ``samples`` masks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.agent import is_oracle
from agents.base.belief_features import BeliefFeatures
from agents.base.beliefs import BayesModel
from agents.base.determinize import BaseDeterminizer
from agents.base.ladder import LadderAgent
from agents.determinize import RoleSample
from saboteur_env import ActionType, GameConfig, PlayerView, action_layout, legal_action_mask
from saboteur_env.base import board as bboard
from saboteur_env.base import observation as bobs
from saboteur_env.base.cards import (
    KIND_GOAL_GOLD,
    KIND_GOAL_STONE_A,
    KIND_GOAL_STONE_B,
    NUM_DECK_KINDS,
    Role,
    deck_counts,
)
from saboteur_env.base.state import EventType, GameState

__all__ = [
    "DISCARD",
    "PolicyModel",
    "PolicyModelError",
    "PolicyObserver",
    "public_action",
    "public_observation",
]

DISCARD = -1  # the observable of every face-down discard (the card kind is hidden)
ROLES = (int(Role.GOLD_DIGGER), int(Role.SABOTEUR))
_PLAYED = (EventType.PLACE, EventType.BREAK, EventType.REPAIR, EventType.ROCKFALL, EventType.MAP, EventType.DISCARD)


class PolicyModelError(ValueError):
    """A policy the observer cannot score exactly (unknown name, another game, unsupported randomness)."""


# ---- public projections ----------------------------------------------------------------------------------------
def public_action(config: GameConfig, action: int) -> int:
    """What the public sees of ``action``: the id itself, or :data:`DISCARD` for any face-down discard."""
    lay = action_layout(config)
    if not 0 <= action < lay.num_actions:
        raise ValueError(f"action={action} out of range 0..{lay.num_actions - 1} for {config}")
    return DISCARD if lay.type_arr[action] == ActionType.DISCARD else int(action)


def public_observation(observation: NDArray[np.floating], config: GameConfig) -> NDArray[np.float32]:
    """A seat's observation with everything private to it erased: hand, role, map results (the peek planes; the
    public peek flags stay), nuggets, the card kinds of its own face-down discards. What remains is public."""
    lay = bobs.observation_layout(config)
    obs = np.array(observation, dtype=np.float32)
    if obs.shape != (lay.size,):
        raise ValueError(f"observation has shape {obs.shape}; expected ({lay.size},) for {config}")
    hw = lay.hw
    obs[24 * hw : 26 * hw] = 0.0  # planes "peeked_gold", "peeked_stone"
    for name in ("role", "hand", "my_nuggets"):
        obs[lay.slices[name]] = 0.0
    if lay.history_length:
        hist = obs[lay.slices["history"]].reshape(lay.history_length, lay.event_size)
        eo = lay.event_offsets
        own_discard = (hist[:, eo["type"] + int(EventType.DISCARD)] > 0.5) & (hist[:, eo["actor"]] > 0.5)
        hist[own_discard, eo["kind"] : eo["kind"] + bobs.NUM_KINDS] = 0.0
    return obs


# ---- policies ----------------------------------------------------------------------------------------------------
class _PickedError(Exception):
    """Raised by a shadow's ``pick``: the ids it would choose from uniformly."""

    def __init__(self, ids: NDArray[np.int64]) -> None:
        super().__init__()
        self.ids = ids


def _tie_pick(ids: NDArray[np.int64], scores: NDArray[np.float64] | None = None) -> int:
    """``LadderAgent.pick`` with the random tie-break replaced by reporting the tie set (same tolerance)."""
    ids = np.asarray(ids)
    if scores is None:
        raise _PickedError(ids)
    raise _PickedError(ids[np.flatnonzero(scores >= scores.max() - 1e-9)])


class _BranchRng:
    """Stands in for a ladder agent's generator: ``random()`` follows a forced branch sequence over the
    intervals cut by ``cuts`` (returning each interval's midpoint), recording the weight of the path taken."""

    def __init__(self, prefix: tuple[int, ...], cuts: Sequence[float], owner: str) -> None:
        self.prefix, self.owner = prefix, owner
        self.edges = [0.0, *sorted(cuts), 1.0]
        self.taken: list[int] = []
        self.weight = 1.0

    def random(self) -> float:
        i = len(self.taken)
        b = self.prefix[i] if i < len(self.prefix) else 0
        self.taken.append(b)
        lo, hi = self.edges[b], self.edges[b + 1]
        self.weight *= hi - lo
        return (lo + hi) / 2

    def __getattr__(self, name: str) -> Any:
        raise PolicyModelError(f"{self.owner} used rng.{name} outside pick(): the observer cannot score it exactly")


_RANDOM_CUTS = ("bluff",)  # attributes that a ladder agent compares rng.random() with


def ladder_distribution(agent: LadderAgent, view: PlayerView, legal: NDArray[np.int64]) -> dict[int, float]:
    """The exact distribution of ``agent.choose(view, legal)`` over action ids (ties and coins enumerated)."""
    cuts = [float(getattr(agent, a)) for a in _RANDOM_CUTS if hasattr(agent, a)]
    cuts = [c for c in cuts if 0.0 < c < 1.0]
    out: dict[int, float] = {}
    stack: list[tuple[int, ...]] = [()]
    saved_pick, saved_rng = agent.__dict__.get("pick"), agent.rng
    agent.pick = _tie_pick  # type: ignore[method-assign]
    try:
        while stack:
            prefix = stack.pop()
            rng = _BranchRng(prefix, cuts, type(agent).__name__)
            agent.rng = rng  # type: ignore[assignment]
            try:
                ties = np.array([agent.choose(view, legal)])
            except _PickedError as e:
                ties = e.ids
            for i in range(len(prefix), len(rng.taken)):  # coins first met on this path: the other branches
                stack.extend((*rng.taken[:i], b) for b in range(1, len(rng.edges) - 1))
            if rng.weight > 0 and ties.size:
                w = rng.weight / ties.size
                for a in ties.tolist():
                    out[int(a)] = out.get(int(a), 0.0) + w
    finally:
        if saved_pick is None:
            del agent.pick
        else:
            agent.pick = saved_pick  # type: ignore[method-assign]
        agent.rng = saved_rng
    return out


class PolicyModel:
    """A population policy's action probabilities per (seat, role, gold slot) hypothesis, with one shadow agent per
    hypothesis for policies that carry memory. ``policy``: one name for both roles, or (miner name, saboteur name)
    for populations such as ``suspicious`` miners against ``covert`` saboteurs."""

    def __init__(self, policy: str | tuple[str, str], config: GameConfig) -> None:
        from agents.registry import make_agent

        if config.game != "base":
            raise PolicyModelError(f"the policy-aware observer covers the base game only, not game={config.game!r}")
        names = (policy, policy) if isinstance(policy, str) else tuple(policy)
        if len(names) != 2 or not all(isinstance(n, str) for n in names):
            raise PolicyModelError(f"policy={policy!r} must be a name or a (miner name, saboteur name) pair")
        self.names, self.config = names, config
        self.name = names[0] if names[0] == names[1] else f"{names[0]}/{names[1]}"
        self.probes = [make_agent(n, config, role) for n, role in zip(names, ("miner", "saboteur"), strict=True)]
        self.kinds: list[str] = []
        for n, agent in zip(names, self.probes, strict=True):
            if n == "random":
                self.kinds.append("random")
            elif n.startswith("learned:"):
                self.kinds.append("learned")
            elif is_oracle(agent):
                raise PolicyModelError(f"policy {n!r} is an oracle (it reads the hidden state): a public observer "
                                       "cannot rebuild its decisions")  # fmt: skip
            elif isinstance(agent, LadderAgent) and type(agent).act_view is not LadderAgent.act_view:
                # e.g. agents.base.expert remembers its own face-down discards: private memory a shadow cannot have
                raise PolicyModelError(f"policy {n!r} ({type(agent).__name__}) keeps memory of its own actions "
                                       "beyond the public events: not supported")  # fmt: skip
            elif isinstance(agent, LadderAgent):
                self.kinds.append("ladder")
            else:
                raise PolicyModelError(f"policy {n!r} ({type(agent).__name__}) is not supported: use 'random', a "
                                       "ladder agent name or learned:PATH.npz")  # fmt: skip
        self.shadows: dict[tuple[int, int, int], LadderAgent] = {}
        # learned files with belief features: per hypothesis, a follower of its views
        self.followers: dict[tuple[int, int, int], BeliefFeatures] = {}
        self._make: Callable[[int], Any] = lambda r: make_agent(names[r], config, "saboteur" if r else "miner")

    def shadow(self, seat: int, role: int, gold: int) -> LadderAgent:
        key = (seat, role, gold)
        agent = self.shadows.get(key)
        if agent is None:
            agent = self._make(role)
            agent.reset(seat, self.config.num_players, 0)  # its generator is never used (see ladder_distribution)
            self.shadows[key] = agent
        return agent

    @property
    def features(self) -> dict[tuple[int, int, int], NDArray[np.float32]]:
        """Per (seat, role, gold) hypothesis of a learned file with belief features: the features after its
        latest view."""
        return {k: f.last for k, f in self.followers.items() if f.last is not None}

    def follow(self, seat: int, role: int, gold: int, view: PlayerView) -> None:
        """Show the hypothesised observation to the shadow (its memory of public events, role and map results)."""
        if self.kinds[role] == "ladder":
            self.shadow(seat, role, gold).observe_view(view)
        elif self.kinds[role] == "learned" and getattr(self.probes[role], "beliefs", None) is not None:
            key = (seat, role, gold)
            f = self.followers.get(key)
            if f is None:
                f = self.followers[key] = BeliefFeatures(self.config, self.probes[role].policy.features)  # type: ignore[attr-defined]
                f.reset(seat)
            f.update(view)  # public events, the role and map results: not the hand

    def distribution(self, seat: int, role: int, gold: int, obs: NDArray[np.float32], view: PlayerView,
                     mask: NDArray[np.bool_]) -> dict[int, float]:  # fmt: skip
        """P(action id) of the policy for role ``role`` at this hypothesised decision (after :meth:`follow`)."""
        legal = np.flatnonzero(mask)
        kind = self.kinds[role]
        if kind == "random":
            return {int(a): 1.0 / legal.size for a in legal}
        if kind == "learned":
            agent = self.probes[role]
            if agent.beliefs is not None:  # type: ignore[attr-defined]
                last = self.followers[(seat, role, gold)].last
                assert last is not None  # follow() came first
                obs = np.concatenate([obs, last])
            logits, _ = agent.policy.forward(obs)  # type: ignore[attr-defined]
            z = logits[0, legal].astype(np.float64)
            if agent.greedy:  # type: ignore[attr-defined]
                return {int(legal[int(np.argmax(z))]): 1.0}
            p = np.exp(z - z.max())
            p /= p.sum()
            return {int(a): float(q) for a, q in zip(legal, p, strict=True)}
        return ladder_distribution(self.shadow(seat, role, gold), view, legal)


# ---- the observer ------------------------------------------------------------------------------------------------
class _FixedRoles:
    """Roles for the determinizer: irrelevant to the actor's observation (only its own role shows, and that is
    set per hypothesis), so a fixed assignment does."""

    def __init__(self, num_players: int) -> None:
        self.p = num_players

    def observe(self, view: Any) -> None:
        pass

    def sample_roles(self, view: Any, rng: np.random.Generator) -> RoleSample:
        return RoleSample(tuple([int(Role.GOLD_DIGGER)] * self.p), (int(Role.SABOTEUR),), None)


class PolicyObserver(BayesModel):
    """Public observer whose behaviour model is a known population policy (see the module docstring).

    Per decision: ``observe_decision(seat, public_obs, observable)`` with the actor's :func:`public_observation`
    taken before it acts and :func:`public_action` of its action; the public events (goal reveals) go through
    :meth:`observe` as for :class:`BayesModel` (actions there are ignored: they are scored by the policy).
    """

    name = "policy"

    def __init__(self, config: GameConfig, policy: str | tuple[str, str], samples: int = 8, epsilon: float = 0.05,
                 seed: int = 0) -> None:  # fmt: skip
        if isinstance(samples, bool) or not isinstance(samples, int | np.integer) or samples < 1:
            raise ValueError(f"samples={samples!r} must be an integer >= 1 (hands drawn per decision)")
        if not 0 < epsilon <= 1:
            raise ValueError(f"epsilon={epsilon!r} must be in (0, 1]: with 0 a scripted policy's zero probabilities "
                             "would rule out the true hypothesis")  # fmt: skip
        self.config = config
        self.policy = PolicyModel(policy, config)
        self.samples, self.policy_epsilon, self.seed = int(samples), float(epsilon), int(seed)
        super().__init__(config.num_players, bboard.geometry(config).goal_cells, epsilon=0.0)
        p = config.num_players
        self.determinizers = [BaseDeterminizer(config, s, roles=_FixedRoles(p)) for s in range(p)]
        self.layout = action_layout(config)
        self.full = deck_counts(config).astype(np.int64)
        self.last_likelihood: NDArray[np.float64] | None = None  # (2 roles, 3 gold slots) of the last decision

    def reset_round(self, seat: int | None, role: int | None) -> None:
        if seat is not None or role is not None:
            raise ValueError(f"PolicyObserver is a public observer: reset_round(None, None), got ({seat}, {role})")
        super().reset_round(None, None)

    def observe(self, ev: Any) -> None:
        if ev.type == EventType.REVEAL:
            super().observe(ev)

    # -- one decision --
    def observe_decision(self, seat: int, public_obs: NDArray[np.floating], observable: int) -> None:
        like = self.likelihood(seat, public_obs, observable)
        self.last_likelihood = like
        role_j = self.sets[:, seat].astype(np.int64)
        with np.errstate(divide="ignore"):
            self.loglik += np.log(like)[role_j]

    def likelihood(self, seat: int, public_obs: NDArray[np.floating], observable: int) -> NDArray[np.float64]:
        """(2 roles, 3 gold slots): eps * U(o) + (1 - eps) * E_hand[pi_role(o)] at this decision."""
        p = self.config.num_players
        if not 0 <= seat < p:
            raise ValueError(f"seat={seat} out of range 0..{p - 1}")
        lay = self.layout
        if observable != DISCARD and not (0 <= observable < lay.num_actions
                                          and lay.type_arr[observable] != ActionType.DISCARD):  # fmt: skip
            raise ValueError(f"observable={observable} must be DISCARD ({DISCARD}) or a non-discard action id in "
                             f"0..{lay.num_actions - 1}")  # fmt: skip
        obs = np.asarray(public_obs, dtype=np.float32)
        olay = bobs.observation_layout(self.config)
        if obs.shape != (olay.size,):
            raise ValueError(f"public_obs has shape {obs.shape}; expected ({olay.size},)")
        if obs[olay.slices["hand"]].any() or obs[olay.slices["role"]].any():
            raise ValueError("public_obs holds a hand or a role: pass public_observation(obs, config), not the "
                             "seat's own observation")  # fmt: skip
        det = self.determinizers[seat]
        view = det.observe(obs)
        if view.to_act != 0:
            raise ValueError(f"public_obs is not seat {seat}'s observation at its own decision (to_act offset "
                             f"{view.to_act})")  # fmt: skip
        rng = np.random.default_rng([self.seed, seat, view.event_count])
        state = det.sample_reference(rng)
        golds = [g for g in range(3) if not (state.goal_revealed[g] and state.goal_kind[g] != KIND_GOAL_GOLD)]
        if any(state.goal_revealed[g] and state.goal_kind[g] == KIND_GOAL_GOLD for g in range(3)):
            golds = [g for g in range(3) if state.goal_revealed[g] and state.goal_kind[g] == KIND_GOAL_GOLD]
        distinct = golds if view.peeked[0].any() else golds[:1]  # without own map results g cannot matter
        hyps = [(r, g) for r in ROLES for g in golds]
        for r, g in hyps:  # every shadow follows the game, even when its decision is not evaluated
            self._set_hypothesis(state, seat, r, g)
            o = bobs.encode_observation(state, seat)
            self.policy.follow(seat, r, g, PlayerView.from_observation(o, self.config))
        hands, weights = self._hands(seat, view, observable, rng)
        pi = np.zeros((2, 3))
        u = 0.0
        for hand, w in zip(hands, weights, strict=True):
            state.hands[seat] = hand
            bobs.refresh_seat_table(state)
            state._cache.clear()
            mask = legal_action_mask(self.config.variant.adopt(state))  # the core decides legality
            legal = np.flatnonzero(mask)
            u += w * self._mass({int(a): 1.0 / legal.size for a in legal}, observable)
            for r in ROLES:
                for g in distinct:
                    self._set_hypothesis(state, seat, r, g)
                    o = bobs.encode_observation(state, seat)
                    v = PlayerView.from_observation(o, self.config)
                    pi[r, g] += w * self._mass(self.policy.distribution(seat, r, g, o, v, mask), observable)
        total = float(np.sum(weights))
        pi /= total
        u /= total
        for g in golds:
            if g not in distinct:
                pi[:, g] = pi[:, distinct[0]]
        eps = self.policy_epsilon
        like = np.ones((2, 3))  # gold slots already ruled out keep 1 (their hypotheses are at -inf)
        like[:, golds] = eps * u + (1 - eps) * pi[:, golds]
        return like

    def _mass(self, dist: dict[int, float], observable: int) -> float:
        if observable != DISCARD:
            return dist.get(observable, 0.0)
        is_discard = self.layout.type_arr == ActionType.DISCARD
        return float(sum(q for a, q in dist.items() if is_discard[a]))

    def _set_hypothesis(self, state: GameState, seat: int, role: int, gold: int) -> None:
        state.roles[seat] = role
        kinds = state.goal_kind
        if kinds[gold] != KIND_GOAL_GOLD:
            hidden = [k for k in range(3) if not state.goal_revealed[k]]
            stones = [KIND_GOAL_STONE_A, KIND_GOAL_STONE_B]
            for k in range(3):
                if state.goal_revealed[k] and kinds[k] in stones:
                    stones.remove(int(kinds[k]))
            for k in hidden:
                kinds[k] = KIND_GOAL_GOLD if k == gold else stones.pop()

    def _hands(self, seat: int, view: PlayerView, observable: int,
               rng: np.random.Generator) -> tuple[list[NDArray[np.int64]], list[float]]:  # fmt: skip
        """``samples`` hands (counts per kind) of the actor's size from the unseen cards, holding the played card,
        with importance weights 1 / (copies of it held) (see the module docstring)."""
        det_rows, _ = self.determinizers[seat].log.round_rows(view.round)
        out = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
        for t, _actor, kind, *_ in det_rows:
            if t in _PLAYED and kind >= 0:
                out[kind] += 1
        unseen = np.maximum(self.full - out, 0)
        size = int(view.hand_size[0])
        need = -1 if observable == DISCARD else int(self.layout.kind_arr[observable])
        hands, weights = [], []
        for _ in range(self.samples):
            pool = unseen.copy()
            hand = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
            if need >= 0:
                hand[need] += 1
                pool[need] = max(pool[need] - 1, 0)
            rest = size - int(hand.sum())
            if rest > 0:
                cards = np.repeat(np.arange(NUM_DECK_KINDS), pool)
                pick = rng.choice(cards.size, size=min(rest, cards.size), replace=False)
                hand += np.bincount(cards[pick], minlength=NUM_DECK_KINDS)
            hands.append(hand)
            weights.append(1.0 / hand[need] if need >= 0 else 1.0)
        return hands, weights
