"""``text:NAME``: scripted agent NAME playing through the text interface only.

At each decision the observation and mask are turned into the JSON description (``saboteur_env.text.describe``)
and serialised; the wrapped agent is then given only what it reads back from that string (the observation
rebuilt by ``observation_from_description``, the mask rebuilt from the legal move names), and its choice is
answered as a move name and parsed back by ``parse_move``. So the wrapped agent sees nothing but the text, and it
plays the same moves as its tensor twin exactly when the description is lossless (tests/test_text.py).

Seat it whole (``make_agent("text:NAME", config)``): with a ``role`` it wraps that role's policy, and a
``RoleDispatch`` of two text agents cannot share their memory of the other role's turns through text.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from agents.agent import bind_oracle, is_oracle
from saboteur_env import GameConfig
from saboteur_env.common.seeding import seat_seeds
from saboteur_env.text import (
    FailureStats,
    RetryPolicy,
    choose,
    describe,
    move_id,
    move_name,
    move_names,
    observation_from_description,
)


class TextAgent:
    """Wraps an agent so that it reads only the JSON text of its view and answers only with a move name."""

    def __init__(self, inner, config: GameConfig, policy: RetryPolicy | None = None) -> None:
        self.inner = inner
        self.config = config
        self.name = f"text:{inner.name}"
        # A scripted answer is never wrong unless the text lost something: fail loudly instead of falling back.
        self.policy = policy or RetryPolicy(max_tries=1, fallback="raise")
        self.stats = FailureStats()
        self.seat: int | None = None
        self.last_text = ""

    @property
    def oracle(self) -> bool:
        """An oracle exactly when the wrapped agent is (``make_agent`` refuses ``text:`` around the oracles, but a
        hand-built wrapper must not hide one)."""
        return is_oracle(self.inner)

    def bind_state(self, state_fn: Callable[[], NDArray[np.float32]]) -> None:
        """Pass the privileged state on to a declared oracle inside (``agents.agent.bind_oracle``; nobody else)."""
        bind_oracle(self.inner, state_fn)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.seat = seat
        self.inner.reset(seat, num_players, seed)

    def read(self, text: str) -> str:
        """The wrapped agent's move name for a JSON description (the only input it gets)."""
        d = json.loads(text)
        obs = observation_from_description(self.config, d)
        mask = np.zeros(len(move_names(self.config)), dtype=np.int8)  # claim ids included with claims=True
        for name in d["legal_moves"]:
            mask[move_id(self.config, name)] = 1
        return move_name(self.config, int(self.inner.act(obs, mask)))

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        self.last_text = json.dumps(describe(self.config, observation, action_mask, seat=self.seat))
        return choose(self.config, action_mask, lambda _feedback: self.read(self.last_text), self.policy, self.stats)

    def role_beliefs(self) -> dict[int, float] | None:
        fn = getattr(self.inner, "role_beliefs", None)
        return fn() if fn else None

    def gold_beliefs(self) -> list[float] | None:
        fn = getattr(self.inner, "gold_beliefs", None)
        return fn() if fn else None


def compare(config: GameConfig, name: str, seeds: range, secret: int | None = None) -> dict[str, int]:
    """Play each seed twice, all seats ``name`` then all seats ``text:name`` (same agent seeds); count the games
    whose action sequences are identical, the decisions and the text agents' parse failures. The agents' seeds are
    sealed (``saboteur_env.common.seeding``): from ``secret`` (default this process's session secret) and the game,
    never from the deal seed."""
    from agents.registry import make_agent
    from saboteur_env import apply_action, encode_observation, legal_action_mask, new_game

    def play(agent_name: str, seed: int) -> tuple[list[int], list]:
        agents = [make_agent(agent_name, config) for _ in range(config.num_players)]
        n = config.num_players
        for seat, (agent, agent_seed) in enumerate(zip(agents, seat_seeds(n, ("text", name, n, seed), secret),
                                                        strict=True)):  # fmt: skip
            agent.reset(seat, n, agent_seed)
        state = new_game(config, np.random.default_rng(seed))
        actions = []
        while not state.game_over:
            seat = int(state.current)
            a = int(agents[seat].act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8)))
            actions.append(a)
            state = apply_action(state, a, inplace=True)
        return actions, agents

    out = {"games": 0, "identical": 0, "decisions": 0, "parse_failures": 0}
    for seed in seeds:
        tensor, _ = play(name, seed)
        text, agents = play(f"text:{name}", seed)
        out["games"] += 1
        out["identical"] += int(text == tensor)
        out["decisions"] += len(text)
        out["parse_failures"] += sum(a.stats.total_failures for a in agents)
    return out


def main(argv: list[str] | None = None) -> int:
    """Check text:NAME against NAME on seeded games (identical actions, zero parse failures)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m agents.text", description=main.__doc__)
    ap.add_argument("--game", default="base", choices=("base", "sab2", "duel"))
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--agent", default="heuristic")
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games {args.games} must be >= 1")
    try:
        config = GameConfig(game=args.game, num_players=args.players)
        result = compare(config, args.agent, range(args.seed, args.seed + args.games))
    except ValueError as e:
        ap.error(str(e))
    print(json.dumps({"game": args.game, "players": config.num_players, "agent": args.agent, **result}))
    return 0 if result["identical"] == result["games"] and result["parse_failures"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
