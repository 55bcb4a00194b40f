"""``SingleSeatEnv``: a Gymnasium single-agent view of one seat of the PettingZoo environment (``saboteur_env.aec``),
the other seats played by agents. The environment card in ``saboteur_env/aec.py`` covers both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium import spaces

from saboteur_env.aec import raw_env
from saboteur_env.common.errors import ConfigError, GameOverError
from saboteur_env.common.seeding import SecretError, check_secret, draw_secret, seat_seeds


class RandomOpponent:
    """The default opponent of ``SingleSeatEnv``: a uniformly random legal action from its own (sealed) seed."""

    def __init__(self, seat: int = 0) -> None:
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))


class SingleSeatEnv(gymnasium.Env):
    """A Gymnasium single-agent view of one seat in an N-player game (for SB3's MaskablePPO and similar).

    Each episode the learner takes one seat drawn from ``learner_seats`` (default: any seat); every other seat is played
    by an agent from ``opponents`` (a callable ``seat -> agent`` with the ``agents`` protocol: ``reset``,
    ``act(observation, action_mask)``; default ``None`` or ``"random"``: uniformly random legal moves). A learner
    transition runs from one of its decisions to its next one (or to the end of the game), so the reward returned by
    ``step`` is everything the learner's seat earned in between, including round ends caused by other seats.
    ``action_masks()`` gives the legal actions (MaskablePPO's hook); an illegal action raises ``IllegalActionError``,
    or, with ``illegal_reward`` set, ends the episode with that reward (``terminated``, ``info["illegal"]``) like
    PettingZoo's ``TerminateIllegalWrapper``.

    Optional dense shaping (off by default): ``shaping`` is a potential ``(state, seat) -> float``; each learner
    step adds ``shaping(after) - shaping(before)`` measured around the learner's own action (not the opponents'),
    and nothing when that action ended the round (the round's real reward takes over). ``info["shaping"]`` holds
    the term. ``agents.base.shaping.GoldProgress`` is a ready potential (progress towards the gold for gold-diggers).

    Seeds: ``reset(seed=s)`` fixes the deal and the learner's seat (as Gymnasium's ``np_random``). The opponents'
    seeds are sealed (``saboteur_env.common.seeding.seat_seeds``): spawned from ``opponent_secret`` and the episode's
    deal, never from ``s`` alone, so no opponent can recover the deal from its seed. ``opponent_secret=None`` draws
    128 bits from ``os.urandom`` per env (one env repeats an episode for a repeated seed; two envs differ in their
    opponents' seeds); pass an int in ``0..2**128-1`` to reproduce episodes, opponents included, across envs.

    Multi-seat self-play with one shared policy is a multi-agent setting: use the PettingZoo environment for it.

    With ``claims=True`` the learner's observation has the claims block and its action space the claim ids, as in
    ``raw_env``; the learner acts at every decision of its seat (its report windows included), and the opponents
    decide their own claims: they must be agents of the claims config (``agents.claims.make_claims_agent``).

    Observation: the seat's observation vector (``Box``); action: ``Discrete(num_actions)``; ``info`` holds the
    seat and the mask.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012 - Gymnasium's own type

    def __init__(
        self,
        opponents: Callable[[int], Any] | str | None = None,
        learner_seats: Sequence[int] | None = None,
        render_mode: str | None = None,
        illegal_reward: float | None = None,
        shaping: Callable[[Any, int], float] | None = None,
        opponent_secret: int | None = None,
        **config: Any,
    ) -> None:
        super().__init__()
        try:  # the opponents' seeds come from this secret, never from the reset seed (the class docstring)
            self._opponent_secret = draw_secret() if opponent_secret is None else check_secret(
                opponent_secret, "opponent_secret")
        except SecretError as err:
            raise ConfigError(str(err)) from None
        self.illegal_reward = illegal_reward
        if shaping is not None and not callable(shaping):
            raise ConfigError(f"shaping={shaping!r} must be None or a callable (state, seat) -> float")
        self.shaping = shaping
        self._env = raw_env(render_mode=render_mode, **config)
        self.config = self._env.config
        n = self.config.num_players
        seats = tuple(range(n)) if learner_seats is None else tuple(learner_seats)
        if not seats or any(not isinstance(s, int) or not 0 <= s < n for s in seats):
            raise ConfigError(f"learner_seats={learner_seats!r} must be seats in 0..{n - 1}")
        if opponents is None or (isinstance(opponents, str) and opponents == "random"):
            if self.config.claims:  # a claims game's opponents must make their own claims: no library default
                raise ConfigError("claims=True needs opponents of the claims config, e.g. lambda s: "
                                  "make_claims_agent('heuristic', cfg) (agents.claims)")
            opponents = RandomOpponent
        if not callable(opponents):
            raise ConfigError(f"opponents={opponents!r} must be None / 'random' (uniformly random legal moves) or a "
                              "callable seat -> agent, e.g. lambda s: make_agent('heuristic', cfg)")
        self.learner_seats = seats
        self.opponents_factory = opponents
        self.render_mode = render_mode
        first = self._env.possible_agents[0]
        self.observation_space = cast(spaces.Dict, self._env.observation_space(first))["observation"]
        self.action_space = discrete = cast(spaces.Discrete, self._env.action_space(first))
        self._num_actions = int(discrete.n)
        self.seat = seats[0]
        self._opponents: dict[int, Any] = {}
        self._illegal = False

    @classmethod
    def for_sb3(cls, opponents: Callable[[int], Any] | str | None = None, **kwargs: Any) -> SingleSeatEnv:
        """The env Stable-Baselines3 expects: ``illegal_reward=-1.0`` unless given (SB3's ``check_env`` and unmasked
        PPO sample actions the mask forbids: such an action ends the episode with that reward instead of raising),
        opponents uniformly random unless given. ``check_env(SingleSeatEnv.for_sb3())`` passes; MaskablePPO reads
        ``action_masks()`` and never plays an illegal action."""
        kwargs.setdefault("illegal_reward", -1.0)
        return cls(opponents, **kwargs)

    @property
    def game(self) -> Any:
        return self._env._require_game()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        n = self.config.num_players
        deal = int(self.np_random.integers(2**62))
        self._env.reset(seed=deal, options=options)
        self.seat = self.learner_seats[int(self.np_random.integers(len(self.learner_seats)))]
        self._opponents = {}
        seeds = seat_seeds(n, ("single_seat", deal), self._opponent_secret)
        for s in range(n):
            if s != self.seat:
                agent = self.opponents_factory(s)
                agent.reset(s, n, seeds[s])
                self._opponents[s] = agent
        self._pending = 0.0
        self._illegal = False
        self._advance()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.game.game_over or self._illegal:
            raise GameOverError("the episode is over; call reset()")
        if self._env._to_act(self.game) != self.seat:
            raise RuntimeError("internal error: the learner is not to act")
        check = self._env._claim_layout.check if self.config.claims else self._env._layout.check
        if self.illegal_reward is not None and not self.action_masks()[check(action)]:
            self._illegal = True
            return self._observation(), float(self.illegal_reward), True, False, dict(self._info(), illegal=True)
        shaped = 0.0
        if self.shaping is not None:
            game, rnd = self.game, self.game.round
            before = self.shaping(game, self.seat)
            self._env.step(action)
            if not game.round_just_ended and game.round == rnd:
                shaped = float(self.shaping(game, self.seat)) - before
        else:
            self._env.step(action)
        self._collect()
        self._advance()
        reward, self._pending = self._pending + shaped, 0.0
        info = self._info()
        if self.shaping is not None:
            info["shaping"] = shaped
        return self._observation(), reward, self.game.game_over, False, info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions (all False once the game is over)."""
        if self.game.game_over:
            return np.zeros(self._num_actions, dtype=bool)
        if self.config.claims:  # the game's actions and the claims (or only claims / done in a report window)
            return self._env._observe_dict(self._env.possible_agents[self.seat])["action_mask"].astype(bool)
        return self._env.variant.legal_action_mask(self.game).copy()

    def render(self) -> Any:
        return self._env.render()

    def close(self) -> None:
        self._env.close()

    # ---- internals ----
    def _collect(self) -> None:
        self._pending += self._env.rewards[self._env.possible_agents[self.seat]]

    def _advance(self) -> None:
        """Let the opponents play until the learner is to act or the game is over."""
        env, game = self._env, self.game
        while not game.game_over and (seat := env._to_act(game)) != self.seat:  # a report window's seat with claims
            obs = env._observe_dict(env.possible_agents[seat])
            env.step(self._opponents[seat].act(obs["observation"], obs["action_mask"]))
            self._collect()

    def _observation(self) -> np.ndarray:
        if self.config.claims:  # the game's observation, then the claims block
            return self._env._observe_dict(self._env.possible_agents[self.seat])["observation"]
        return self._env.variant.encode_observation(self.game, self.seat)

    def _info(self) -> dict:
        return {"seat": self.seat, "action_mask": self.action_masks()}
