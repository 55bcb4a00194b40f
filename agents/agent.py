"""The agent protocol shared by every baseline.

An agent is created for one configuration, then ``reset(seat, num_players, seed)`` before each game and
``act(observation, action_mask) -> int`` at each decision. Agents read only the observation vector (decoded with
``saboteur_env.PlayerView``) and the mask - never the hidden state - and own their random generator.

Oracles. A class that declares ``oracle = True`` (the cheating upper bounds in ``agents.base.ladder`` and
``agents.sab2.ladder``) may read the hidden state through ``bind_state(env.state)``; :func:`bind_oracle` is the one way
the experiments hand it out, and it refuses every class without the declaration (a ``bind_state`` method alone gets
nothing). Tables flag oracles and ratings leave them out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig, PlayerView, observation_layout


def is_oracle(agent: object) -> bool:
    """Whether ``agent`` is declared an oracle (``oracle = True`` on its class). Every wrapper (``RoleDispatch``,
    ``agents.claims.ClaimsAgent``, ``agents.text.TextAgent``) forwards an ``oracle`` property from what it wraps, so
    this is the one question to ask of any seated agent."""
    return getattr(agent, "oracle", False) is True


def bind_oracle(agent: object, state_fn: Callable[[], NDArray[np.float32]]) -> bool:
    """Give ``state_fn`` (the environment's privileged ``state``) to ``agent`` only if it is declared an oracle;
    returns whether it was given. An undeclared agent with a ``bind_state`` method is not called."""
    if not is_oracle(agent):
        return False
    agent.bind_state(state_fn)  # type: ignore[attr-defined]
    return True


@runtime_checkable
class Agent(Protocol):
    name: str

    def reset(self, seat: int, num_players: int, seed: int | None) -> None: ...

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int: ...


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        return int(legal[self.rng.integers(legal.size)])


class RoleDispatch:
    """Plays ``miner`` while dealt a gold-digger role and ``saboteur`` while dealt a saboteur (per round)."""

    def __init__(self, config: GameConfig, miner: Agent, saboteur: Agent) -> None:
        self.config = config
        self.miner, self.saboteur = miner, saboteur
        self.name = f"{miner.name}/{saboteur.name}"
        self.active: Agent = miner
        self._role = observation_layout(config).slices["role"]

    @property
    def oracle(self) -> bool:
        """An oracle exactly when one of its two policies is (asked of them now, not copied when built)."""
        return is_oracle(self.miner) or is_oracle(self.saboteur)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        seeds = np.random.SeedSequence(seed).spawn(2)
        self.miner.reset(seat, num_players, int(seeds[0].generate_state(1)[0]))
        self.saboteur.reset(seat, num_players, int(seeds[1].generate_state(1)[0]))

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        is_saboteur = observation[self._role][1] > 0.5
        self.active, idle = (self.saboteur, self.miner) if is_saboteur else (self.miner, self.saboteur)
        if hasattr(idle, "observe_view") and hasattr(self.active, "act_view"):
            # Decode once; keep the idle policy's memory of public events up to date too.
            view = PlayerView.from_observation(observation, self.config)
            idle.observe_view(view)
            return self.active.act_view(view, action_mask)
        follow = getattr(idle, "follow", None)
        if follow is not None:  # e.g. a learned policy with belief features follows the rounds it does not play
            follow(observation)
        return self.active.act(observation, action_mask)

    def played_instead(self, chosen: int, played: int) -> None:
        """Tell the policy that chose ``chosen`` that its seat played ``played`` (see ``ExpertAgent``)."""
        fn = getattr(self.active, "played_instead", None)
        if fn is not None:
            fn(chosen, played)

    def role_beliefs(self) -> dict[int, float] | None:
        fn = getattr(self.active, "role_beliefs", None)
        return fn() if fn else None

    def gold_beliefs(self) -> list[float] | None:
        fn = getattr(self.active, "gold_beliefs", None)
        return fn() if fn else None

    def bind_state(self, state_fn: Callable[[], NDArray[np.float32]]) -> None:
        """Pass the privileged state on to the declared oracles among the two policies (and nobody else)."""
        for agent in (self.miner, self.saboteur):
            bind_oracle(agent, state_fn)
