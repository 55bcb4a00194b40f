"""Agents for the claims rule (``GameConfig(claims=True)``; docs/claims.md): claim policies around existing agents
(their beliefs from claims are in ``agents.claims_beliefs``).

* The beliefs they read (:class:`HonestyModel`, :class:`ClaimsObserver`, :class:`ClaimsBayesModel`,
  :class:`ClaimsBeliefs`, :class:`PublicClaims`) are in ``agents.claims_beliefs``.
* :class:`ClaimsAgent` - wraps an agent of the game without claims (``make_claims_agent(name, config)``): it
  claims first (honest diggers claim the truth about a goal they saw; covert saboteurs lie when it pays: about a
  goal nobody else has claimed, "gold" is "stone" and "stone" is "gold"; in Saboteur 2 an inspector accuses or
  clears the seat it saw, a saboteur inverting it), then plays the wrapped agent's move on the game part of its
  observation, reacting to claims. A wrapped base-game digger with a belief model (``heuristic``, ``suspicious``,
  ``bayes``, ...) gets the claims in that model (``BayesModel`` becomes a :class:`ClaimsBayesModel`, any other is
  wrapped in :class:`ClaimsBeliefs`), so whom it repairs or breaks, where it digs and whether it maps follow the
  claims through its own logic. Other agents (no belief model; Saboteur 2, the Duel): a goal the observer is sure
  about is shown to the wrapped agent as if seen with a map, and a digger repairs nobody it thinks a saboteur and
  breaks a sure suspect's tools. ``ClaimPolicy(react=False)``: it talks but plays as without claims.

Agents read only their observation (the claims block holds public claims only, never truth labels).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.agent import Agent
from agents.base.beliefs import BayesModel
from agents.claims_beliefs import (
    ClaimsBayesModel,
    ClaimsBeliefs,
    ClaimsObserver,
    HonestyModel,
    PublicClaims,
    phase_of,
)
from saboteur_env import GameConfig
from saboteur_env.claims import ACCUSE, CLEAR, GOAL, SUSPECT, layout


# ---- observation reading -------------------------------------------------------------------------------------------
class _Reader:
    """What a claims agent reads from the game part of its observation: its role, the goals it knows."""

    def __init__(self, config: GameConfig) -> None:
        g = config.game_config
        self.config, self.game = config, g
        self.lay = layout(config)
        self.obs_layout = g.variant.observation_layout(g)
        self.game_size = self.obs_layout.size
        cells = [(r + g.margin, c + g.margin) for r, c in g.frame.goal_cells]
        self.goal_cells = cells
        if g.game == "duel":
            self.planes: dict[str, int] = {}
        else:
            from saboteur_env.base.observation import PLANES
            from saboteur_env.sab2.view import PLANE_NAMES

            names = list(PLANES if self.lay.facts.saboteur == 1 else PLANE_NAMES)
            self.planes = {k: names.index(k) for k in ("goal_gold", "goal_stone", "peeked_gold", "peeked_stone")}
        # Game actions that repair / break a seat offset (-1: none), for the reaction to suspects.
        la = g.variant.action_layout(g)
        self.repair_of = np.full(la.num_actions, -1, dtype=np.int64)
        self.break_of = np.full(la.num_actions, -1, dtype=np.int64)
        if self.lay.roles:
            for a in range(la.num_actions):
                d = la.decode(a)
                kind = str(getattr(d, "segment", getattr(getattr(d, "type", None), "name", ""))).lower()
                if kind in ("repair", "double_repair"):
                    self.repair_of[a] = d.target
                elif kind == "break":
                    self.break_of[a] = d.target

    def round_index(self, obs: NDArray[np.float32]) -> int:
        """The round being played (every game's observation has it one-hot: Saboteur 2 inside ``status``)."""
        sl = self.obs_layout.slices
        part = obs[sl["round"]] if "round" in sl else obs[sl["status"]][3:6]
        return int(np.argmax(part))

    def saboteur(self, obs: NDArray[np.float32]) -> bool:
        if not self.lay.roles:
            return False
        role = obs[self.obs_layout.slices["role"]]
        return bool(role.size and int(np.argmax(role)) == self.lay.facts.saboteur and role.max() > 0.5)

    def goals(self, obs: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
        """(what I know per goal: 1 gold / 0 stone / -1 unknown, of which face up: 1 gold / 0 stone / -1 down)."""
        g = self.lay.num_goals
        mine = np.full(g, -1, dtype=np.int8)
        up = np.full(g, -1, dtype=np.int8)
        if self.game.game == "duel":
            from saboteur_env.duel.cards import GOAL_NUGGETS

            peeks = obs[self.obs_layout.slices["my_peeks"]].reshape(g, -1)
            for i in range(g):
                if peeks[i].max() > 0.5:
                    mine[i] = int(GOAL_NUGGETS[int(np.argmax(peeks[i]))] > 0)
            return mine, up
        board = obs[self.obs_layout.slices["board"]].reshape(self.obs_layout.shapes["board"])
        p = self.planes
        for i, (r, c) in enumerate(self.goal_cells):
            if board[p["goal_gold"], r, c] > 0.5:
                up[i] = 1
            elif board[p["goal_stone"], r, c] > 0.5:
                up[i] = 0
            if board[p["peeked_gold"], r, c] > 0.5:
                mine[i] = 1
            elif board[p["peeked_stone"], r, c] > 0.5:
                mine[i] = 0
        mine = np.where(up >= 0, up, mine).astype(np.int8)
        return mine, up

    def inspected(self, obs: NDArray[np.float32]) -> dict[int, bool]:
        """Saboteur 2: seat offset -> whether the role I saw there is a saboteur."""
        if "inspected" not in self.obs_layout.slices:
            return {}
        ins = obs[self.obs_layout.slices["inspected"]].reshape(self.obs_layout.shapes["inspected"])
        return {t: int(np.argmax(ins[t])) == self.lay.facts.saboteur for t in range(1, ins.shape[0])
                if ins[t].max() > 0.5}  # fmt: skip

    def with_virtual_peeks(self, obs: NDArray[np.float32], p_gold: NDArray[np.float64], mine: NDArray[np.int8],
                           sure: float) -> NDArray[np.float32]:  # fmt: skip
        """The game observation with goals the observer is sure about marked as if seen with a map."""
        if self.game.game == "duel" or not (p_gold.max() >= sure or (p_gold <= 1 - sure).any()):
            return obs
        out = obs.copy()
        board = out[self.obs_layout.slices["board"]].reshape(self.obs_layout.shapes["board"])
        p = self.planes
        for i, (r, c) in enumerate(self.goal_cells):
            if mine[i] >= 0:
                continue
            if p_gold[i] >= sure:
                board[p["peeked_gold"], r, c] = 1
            elif p_gold[i] <= 1 - sure:
                board[p["peeked_stone"], r, c] = 1
        return out


@dataclass(frozen=True)
class ClaimPolicy:
    """How a :class:`ClaimsAgent` talks and reacts. ``honest``: claims the truth (else lies when it pays);
    ``talk``: claims at all; ``suspect_above`` / ``accuse_above``: a digger says "I suspect" / "is a saboteur" about
    a seat above this P(saboteur) (once per target and round); ``sure``: P(gold) above which a goal is shown to the
    wrapped agent as seen; ``distrust``: a digger repairs nobody above this P(saboteur); ``react``: a digger's
    decisions use the claims (off: it talks but plays as without claims)."""

    honest: bool = True
    talk: bool = True
    react: bool = True
    suspect_above: float = 0.75
    accuse_above: float = 0.9
    sure: float = 0.85
    distrust: float = 0.7


class ClaimsAgent:
    """A claim policy and a claims-aware observer around an agent of the game without claims (module docstring).

    ``miner`` / ``saboteur``: the claim policies by role (default: honest diggers, covert saboteurs who lie when it
    pays; the Duel uses ``miner``). ``model``: the observer's honesty model.

    Phases: a fitted honesty model's rates depend on the phase of the round a claim was made in
    (``agents.claims_beliefs.phase_of``: its lap). The agent sees the others' claims only at its own decisions, so it
    stamps each claim with its own count of game decisions this round when it first sees it: the lap it was made in,
    or the next one (the speaker may have spoken after this seat's turn in that lap).
    """

    def __init__(self, inner: Agent, config: GameConfig, *, miner: ClaimPolicy | None = None,
                 saboteur: ClaimPolicy | None = None, model: HonestyModel | None = None) -> None:  # fmt: skip
        if not config.claims:
            raise ValueError("ClaimsAgent needs a config with claims=True (it wraps an agent of config.game_config)")
        self.inner = inner
        self.config = config
        self.name = f"claims:{inner.name}"
        self.reader = config.cached("_claims_agent_reader", _Reader)  # per config: it decodes every action once
        self.lay = self.reader.lay
        self.observer = ClaimsObserver(config, model)
        self.miner_policy = miner or ClaimPolicy()
        self.saboteur_policy = saboteur or ClaimPolicy(honest=False, suspect_above=2.0, accuse_above=2.0)
        self.seat = 0
        self.rng = np.random.default_rng()
        self.last_beliefs: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        self.hooked: ClaimsBayesModel | ClaimsBeliefs | None = None
        self._round, self._laps = -1, 0
        self._stamps: dict[tuple[int, ...], int] = {}

    @property
    def oracle(self) -> bool:
        """An oracle exactly when the wrapped agent is (it is the one that gets the hidden state)."""
        from agents.agent import is_oracle

        return is_oracle(self.inner)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.seat = seat
        # The wrapped agent gets the seed itself, so that on paired deals it draws exactly what it draws without
        # claims: differences come from the claims alone.
        self.inner.reset(seat, num_players, seed)
        self.rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.last_beliefs = None
        self.hooked = self._hook() if self.miner_policy.react else None
        self._round, self._laps, self._stamps = -1, 0, {}

    def _stamped(self, claims: PublicClaims, game_obs: NDArray[np.float32]) -> PublicClaims:
        """``claims`` with the phase each was first seen in (class docstring)."""
        rnd = self.reader.round_index(game_obs)
        if rnd != self._round:
            self._round, self._laps, self._stamps = rnd, 0, {}
        now = phase_of(self._laps * self.config.num_players, self.config.num_players)
        goals = tuple(self._stamps.setdefault((0, s, g, int(v)), now) for s, g, v in claims.goals)
        seats = tuple(self._stamps.setdefault((1, s, k, t), now) for s, k, t in claims.seats)
        return dataclasses.replace(claims, goal_phases=goals, seat_phases=seats)

    def _hook(self) -> ClaimsBayesModel | ClaimsBeliefs | None:
        """Put the claims into the digger policy's own belief model (base-game ladder agents: ``beliefs`` with
        ``p_saboteur`` / ``p_gold``), so that whom it repairs or breaks, where it digs and whether it maps follow
        the claims through its own logic: an exact ``BayesModel`` becomes a :class:`ClaimsBayesModel` (same
        parameters; identical without claims), any other model is wrapped in :class:`ClaimsBeliefs`. ``None``: the
        wrapped agent has no such model (it reacts through virtual peeks and the mask instead)."""
        digger = getattr(self.inner, "miner", self.inner)  # a role-dispatching composite: its digger policy
        model = getattr(digger, "beliefs", None)
        if model is None or not (hasattr(model, "p_saboteur") and hasattr(model, "p_gold")):
            return None
        new: ClaimsBayesModel | ClaimsBeliefs
        if type(model) is BayesModel and len(model.goal_cells) == 3:
            new = ClaimsBayesModel(model.num_players, model.goal_cells, self.observer.model, epsilon=model.epsilon,
                                   tables=model.tables)  # fmt: skip
        else:
            new = ClaimsBeliefs(model, self.observer)
        digger.beliefs = new
        return new

    # ---- beliefs ----
    def beliefs(self, observation: NDArray[np.float32]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(P(gold) per goal, P(saboteur) per absolute seat) from this observation's claims and own knowledge."""
        game_obs = observation[: self.reader.game_size]
        claims = self._stamped(PublicClaims.from_block(self.lay, observation[self.reader.game_size:], self.seat),
                               game_obs)  # fmt: skip
        is_sab = self.reader.saboteur(game_obs)
        if self.hooked is not None:
            if isinstance(self.hooked, ClaimsBayesModel):
                self.hooked.set_claims(claims)
            else:
                self.hooked.set_claims(claims, self.seat, is_sab)
            if not is_sab:  # the digger's own model holds its events and knowledge, and now the claims
                return np.asarray(self.hooked.p_gold(), float), np.asarray(self.hooked.p_saboteur(), float)
        mine, _ = self.reader.goals(game_obs)
        prior = None
        fn = getattr(self.inner, "role_beliefs", None)
        with self._claims_off():  # the prior as without the hook: a saboteur seat plays the same with or without it
            rb = fn() if fn else None
        if rb:
            prior = np.array([rb.get(s, self.observer.prior_saboteur) for s in range(self.config.num_players)])
        return self.observer.posterior(claims, gold_known=mine, seat=self.seat,
                                       saboteur=self.reader.saboteur(game_obs), prior=prior)  # fmt: skip

    @contextlib.contextmanager
    def _claims_off(self) -> Iterator[None]:
        held = self.hooked.claims if self.hooked is not None else None
        if self.hooked is not None:
            self.hooked.claims = PublicClaims()
        try:
            yield
        finally:
            if self.hooked is not None and held is not None:
                self.hooked.claims = held

    def bind_state(self, state_fn: Any) -> None:
        """Pass the privileged state on to a declared oracle inside (``agents.agent.bind_oracle``; nobody else)."""
        from agents.agent import bind_oracle

        bind_oracle(self.inner, state_fn)

    def role_beliefs(self) -> dict[int, float] | None:
        if self.last_beliefs is None:
            return None
        return {s: float(p) for s, p in enumerate(self.last_beliefs[1])}

    def gold_beliefs(self) -> list[float] | None:
        return None if self.last_beliefs is None else [float(p) for p in self.last_beliefs[0]]

    # ---- decisions ----
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        action = self._act(observation, action_mask)
        if action < self.lay.game_actions:
            self._laps += 1  # this seat's game decisions this round: the lap its next observation is in
        return action

    def _act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        obs = np.asarray(observation, dtype=np.float32)
        mask = np.asarray(action_mask)
        a = self.lay.game_actions
        game_obs, game_mask, claim_mask = obs[: self.reader.game_size], mask[:a], mask[a:]
        p_gold, p_sab = self.beliefs(obs)
        self.last_beliefs = (p_gold, p_sab)
        is_sab = self.reader.saboteur(game_obs)
        policy = self.saboteur_policy if is_sab else self.miner_policy
        claim = self._claim(obs, claim_mask, policy, is_sab, p_sab) if policy.talk and claim_mask.any() else None
        if claim is not None:
            return claim
        if not game_mask.any():  # a report window with nothing to say
            return self.lay.done_id
        if not policy.react or (self.hooked is not None and not is_sab):  # not at all, or through its own beliefs
            act = int(self.inner.act(game_obs, game_mask))
            if self.hooked is not None and not is_sab:  # the model has followed this observation's events now
                self.last_beliefs = (np.asarray(self.hooked.p_gold(), float),
                                     np.asarray(self.hooked.p_saboteur(), float))  # fmt: skip
            return act
        mine, _ = self.reader.goals(game_obs)
        shown = self.reader.with_virtual_peeks(game_obs, p_gold, mine, policy.sure)
        gm = self._react(game_mask, p_sab, is_sab, policy)
        return int(self.inner.act(shown, gm))

    def _claim(self, obs: NDArray[np.float32], claim_mask: NDArray[np.int8], policy: ClaimPolicy, is_sab: bool,
               p_sab: NDArray[np.float64]) -> int | None:  # fmt: skip
        lay, n = self.lay, self.config.num_players
        a = lay.game_actions
        game_obs = obs[: self.reader.game_size]
        parts = lay.split(obs[self.reader.game_size:])
        mine, up = self.reader.goals(game_obs)
        claimed = parts["goals"].sum(axis=2) > 0.5  # (speaker offset, goal) this round
        for g in range(lay.num_goals):
            if mine[g] < 0 or up[g] >= 0 or claimed[0, g]:
                continue
            truth = bool(mine[g])
            says = truth
            if not policy.honest and not claimed[1:, g].any():
                says = not truth  # a lie pays while nobody else has spoken about that goal
            act = lay.encode(GOAL, g, int(says))
            if claim_mask[act - a]:
                return act
        if not lay.roles:
            return None
        said = parts["seats"].sum(axis=2) > 0.5 if parts["seats"].size else np.zeros((n, n), bool)
        for t, sab in sorted(self.reader.inspected(game_obs).items()):
            if said[0, t]:
                continue
            kind = ACCUSE if sab == policy.honest else CLEAR  # an honest inspector reports what it saw
            act = lay.encode(kind, t)
            if claim_mask[act - a]:
                return act
        if is_sab:
            return None
        for t in range(1, n):
            if said[0, t]:
                continue
            p = p_sab[(self.seat + t) % n]
            say = ACCUSE if p > policy.accuse_above else SUSPECT if p > policy.suspect_above else None
            if say is not None and claim_mask[lay.encode(say, t) - a]:
                return lay.encode(say, t)
        return None

    def _react(self, game_mask: NDArray[Any], p_sab: NDArray[np.float64], is_sab: bool, policy: ClaimPolicy
               ) -> NDArray[np.int8]:
        """The game mask a digger plays from: no repairs for suspects, only breaks on a sure suspect if it can."""
        gm = np.asarray(game_mask, dtype=np.int8).copy()
        if is_sab or not self.lay.roles:
            return gm
        n = self.config.num_players
        p_off = p_sab[(self.seat + np.arange(n)) % n]
        p_off[0] = 0.0
        rep = self.reader.repair_of
        no = (rep > 0) & (p_off[np.maximum(rep, 0)] > policy.distrust) & (gm > 0)
        if no.any() and (gm > 0).sum() > no.sum():
            gm[no] = 0
        brk = self.reader.break_of
        sure = (brk > 0) & (p_off[np.maximum(brk, 0)] > policy.accuse_above) & (gm > 0)
        if sure.any():
            gm = sure.astype(np.int8)
        return gm


CLAIMS_OPTIONS = ("deaf", "mute", "fit", "fit=PATH", "native")


def claims_kwargs(options: Iterable[str], config: GameConfig) -> dict[str, Any]:
    """:class:`ClaimsAgent` keyword arguments for the options of a name ``claims+OPTION...:NAME``: ``deaf`` - talks
    but plays as without claims in both roles (``react=False``: the listening arm of the bluffing benchmark);
    ``mute`` - never talks and plays as without claims (the wrapped agent's own moves, ``done`` in report windows);
    ``fit`` / ``fit=PATH`` - its beliefs use the fitted honesty model shipped for the game and player count / in
    PATH (``agents.honesty.honesty_model``; default: the hand-set ``handset``). ``ValueError`` naming an unknown
    option."""
    opts = list(options)
    for o in opts:
        if o not in ("deaf", "mute", "fit", "native") and not (o.startswith("fit=") and len(o) > 4):
            raise ValueError(f"claims option {o!r} is unknown; valid: {', '.join(CLAIMS_OPTIONS)}")
    if "native" in opts and any(o.startswith("fit") for o in opts):
        raise ValueError(f"claims options {opts}: a native talker has its own beliefs; fit applies to claims:NAME "
                         "around a scripted agent")  # fmt: skip
    miner, saboteur = ClaimPolicy(), ClaimPolicy(honest=False, suspect_above=2.0, accuse_above=2.0)
    if "deaf" in opts or "mute" in opts:
        talk = "mute" not in opts
        miner = dataclasses.replace(miner, react=False, talk=talk)
        saboteur = dataclasses.replace(saboteur, react=False, talk=talk)
    out: dict[str, Any] = {"miner": miner, "saboteur": saboteur}
    fits = [o for o in opts if o.startswith("fit")]
    if len(fits) > 1:
        raise ValueError(f"claims options {opts}: at most one honesty model (fit or fit=PATH)")
    if fits:
        from agents.honesty import honesty_model

        out["model"] = honesty_model("fit" if fits[0] == "fit" else fits[0][4:], config.game, config.num_players)
    return out


def make_claims_agent(name: str, config: GameConfig, role: str | None = None, options: Iterable[str] = (),
                      **kwargs: Any) -> ClaimsAgent:  # fmt: skip
    """``make_agent(name, config.game_config)`` wrapped in a :class:`ClaimsAgent` for a claims config
    (``options``: :func:`claims_kwargs`)."""
    from agents.registry import make_agent

    if not config.claims:
        raise ValueError(f"make_claims_agent needs claims=True in the config (got {config!r})")
    return ClaimsAgent(make_agent(name, config.game_config, role), config, **{**claims_kwargs(options, config),
                                                                              **kwargs})


class NativeTalker:
    """An agent that plays the claims game itself (``claims+native:NAME``): its actions include the claim ids and it
    reads the claims block, e.g. ``learned:PATH`` of a network trained with ``experiments.train.selfplay --claims``
    (built on the claims config, not around the game's agent as :class:`ClaimsAgent` is). The bluffing benchmark's
    arms apply to it as to a wrapped agent: ``deaf`` - it talks, but its observation's claims block shows nobody's
    claims (the ``status`` part, whose report window it must close, is kept); ``mute`` - never talks (the claim ids
    are masked out of its choices, a report window is closed at once) and deaf."""

    def __init__(self, inner: Agent, config: GameConfig, deaf: bool = False, mute: bool = False) -> None:
        if not config.claims:
            raise ValueError(f"a native talker plays a claims=True game (got {config!r})")
        self.inner, self.config = inner, config
        self.deaf, self.mute = deaf or mute, mute
        self.lay = layout(config)
        self.name = f"claims+native:{getattr(inner, 'name', type(inner).__name__)}"
        start = -self.lay.size
        # The block's parts a deaf talker does not hear: everything after ``status``.
        self._heard = slice(start + self.lay.slices["status"].stop, None) if self.lay.size else slice(0, 0)

    @property
    def oracle(self) -> bool:
        return bool(getattr(self.inner, "oracle", False))

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.inner.reset(seat, num_players, seed)

    def role_beliefs(self) -> dict[int, float] | None:
        fn = getattr(self.inner, "role_beliefs", None)  # a network exposes none
        return None if fn is None else fn()

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        mask = np.asarray(action_mask)
        a = self.lay.game_actions
        if self.mute:
            if not mask[:a].any():  # a report window: close it
                return int(self.lay.done_id)
            mask = mask.copy()
            mask[a:] = 0
        if self.deaf:
            observation = np.array(observation, dtype=np.float32, copy=True)
            observation[self._heard] = 0.0
        return int(self.inner.act(observation, mask))


def talks_natively(agent: object) -> bool:
    """Whether an agent built on a claims config chooses claims itself (a learned network trained with claims)."""
    return bool(getattr(agent, "talks", False))


def make_native_talker(name: str, config: GameConfig, role: str | None = None,
                       options: Iterable[str] = ()) -> NativeTalker:  # fmt: skip
    """``make_agent(name, config)`` on the claims config as a :class:`NativeTalker` (``options``: ``native`` and
    ``deaf`` / ``mute``); ``ValueError`` for an agent that does not talk by itself (use ``claims:NAME``)."""
    from agents.registry import make_agent

    opts = set(options) - {"native"}
    if opts - {"deaf", "mute"}:
        raise ValueError(f"claims+native options {sorted(opts)}: valid deaf, mute")
    if not config.claims:
        raise ValueError(f"make_native_talker needs claims=True in the config (got {config!r})")
    inner = make_agent(name, config, role)
    if not talks_natively(inner):
        raise ValueError(f"agent {name!r} does not play the claims game by itself (no claim ids in its actions); "
                         f"seat it as claims:{name}")  # fmt: skip
    return NativeTalker(inner, config, deaf="deaf" in opts, mute="mute" in opts)


__all__ = ["CLAIMS_OPTIONS", "ClaimPolicy", "ClaimsAgent", "NativeTalker", "claims_kwargs", "make_claims_agent",
           "make_native_talker", "talks_natively"]
