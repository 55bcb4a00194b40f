"""Write the golden replay files of tests/data (regenerate ONLY when a behaviour change is intended).

    python -m experiments.make_golden                 # dry run: records the games, says which files would change
    python -m experiments.make_golden --write         # overwrite tests/data
    python -m experiments.make_golden --write --out /tmp/golden

Nothing is written without ``--write``.

Each file holds one game: a header line (rules version, config, seed), then one line per decision with the acting
seat, the action, a digest of the acting seat's observation before the action, the state fingerprint after it and
any rewards. ``tests/test_golden.py`` replays the actions and fails on any difference.
"""

from __future__ import annotations

import argparse
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
# (file, players, agent, deal seed, the seats' agent seeds). The golden games are regression fixtures, not a
# comparison of agents: their agents' seeds are part of the recorded data (the committed files were played with
# them), pinned here as constants; nothing seeds agents from a deal seed at run time (issue 34; every comparison
# seeds its agents from a secret, saboteur_env.common.seeding).
GAMES: tuple[tuple[str, int, str, int, tuple[int, ...]], ...] = (
    ("golden_4p_scripted.jsonl", 4, "scripted", 11, (1100, 1101, 1102, 1103)),
    ("golden_7p_random.jsonl", 7, "random", 12, (1200, 1201, 1202, 1203, 1204, 1205, 1206)),
)


def observation_digest(obs: np.ndarray) -> str:
    return hashlib.sha256(obs.tobytes()).hexdigest()[:16]


def record(num_players: int, agent: str, seed: int, agent_seeds: tuple[int, ...]) -> list[dict]:
    """One golden game: deal ``seed``, seat ``i`` reset with the pinned ``agent_seeds[i]``."""
    if len(agent_seeds) != num_players:
        raise ValueError(f"{len(agent_seeds)} agent seeds for {num_players} players: one per seat")
    cfg = GameConfig(num_players=num_players)
    state = new_game(cfg, np.random.default_rng(seed))
    agents = [RoleDispatch(cfg, make_agent(agent, cfg), make_agent(agent, cfg)) for _ in range(num_players)]
    for i, (a, agent_seed) in enumerate(zip(agents, agent_seeds, strict=True)):
        a.reset(i, num_players, agent_seed)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the files (default: dry run, nothing written)")
    parser.add_argument("--out", type=Path, default=DATA, help=f"directory for the files (default: {DATA})")
    args = parser.parse_args(argv)
    out: Path = args.out
    if out.exists() and not out.is_dir():
        parser.error(f"--out {out} exists and is not a directory")
    for name, n, agent, seed, agent_seeds in GAMES:
        lines = record(n, agent, seed, agent_seeds)
        text = "".join(json.dumps(line) + "\n" for line in lines)
        path = out / name
        if args.write:
            try:
                out.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            except OSError as err:
                parser.error(f"cannot write {path}: {err.strerror or err}")
            print(f"wrote {path}: {len(lines) - 1} decisions")
        else:
            same = path.is_file() and path.read_text() == text
            print(f"would write {path}: {len(lines) - 1} decisions ({'unchanged' if same else 'differs'})")
    if not args.write:
        print("dry run: nothing written (pass --write to write)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
