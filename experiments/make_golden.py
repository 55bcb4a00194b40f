"""Write the golden replay files of tests/data (regenerate ONLY when a behaviour change is intended).

    python -m experiments.make_golden

Each file holds one game: a header line (rules version, config, seed), then one line per decision with the acting
seat, the action, a digest of the acting seat's observation before the action, the state fingerprint after it and
any rewards. ``tests/test_golden.py`` replays the actions and fails on any difference.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from agents import RoleDispatch, make_agent
from saboteur_env import (
    GameConfig,
    action_to_string,
    apply_action,
    encode_observation,
    legal_action_mask,
    new_game,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
GAMES = (("golden_4p_scripted.jsonl", 4, "scripted", 11), ("golden_7p_random.jsonl", 7, "random", 12))


def observation_digest(obs: np.ndarray) -> str:
    return hashlib.sha256(obs.tobytes()).hexdigest()[:16]


def record(num_players: int, agent: str, seed: int) -> list[dict]:
    cfg = GameConfig(num_players=num_players)
    state = new_game(cfg, np.random.default_rng(seed))
    agents = [RoleDispatch(cfg, make_agent(agent, cfg), make_agent(agent, cfg)) for _ in range(num_players)]
    for i, a in enumerate(agents):
        a.reset(i, num_players, seed * 100 + i)
    lines: list[dict] = [{"rules_version": cfg.rules_version, "config": dataclasses.asdict(cfg), "seed": seed}]
    step = 0
    while not state.game_over:
        seat = state.current
        obs = encode_observation(state, seat)
        action = agents[seat].act(obs, legal_action_mask(state).astype(np.int8))
        state = apply_action(state, action)
        line = {
            "step": step,
            "seat": seat,
            "action": action,
            "move": action_to_string(cfg, action),
            "obs": observation_digest(obs),
            "state": state.fingerprint(),
        }
        if state.last_rewards.any():
            line["rewards"] = state.last_rewards.tolist()
        lines.append(line)
        step += 1
    return lines


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, n, agent, seed in GAMES:
        lines = record(n, agent, seed)
        with (DATA / name).open("w") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        print(f"wrote {DATA / name}: {len(lines) - 1} decisions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
