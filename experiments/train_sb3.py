"""Train a MaskablePPO policy for one seat against ladder opponents (sb3-contrib).

    pip install -e ".[train]"
    python -m experiments.train_sb3 --players 5 --opponents heuristic --steps 100000 --out runs/ppo5
    python -m experiments.tournament --miners ppo:runs/ppo5/final.zip --saboteurs covert --players 5 --games 500

The learner takes a random seat each episode (a whole 3-round game) and plays whatever role it is dealt; the
observation includes its role, so one policy learns both. Checkpoints are written every ``--checkpoint-every``
steps; ``final.zip`` at the end.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def make_env(players: int, opponents: str, seed: int, shaping: float = 0.0, **config):
    from agents import make_agent
    from agents.shaping import GoldProgress
    from saboteur_env import GameConfig, SingleSeatEnv

    cfg = GameConfig(num_players=players, **config)
    potential = GoldProgress(shaping) if shaping > 0 else None
    env = SingleSeatEnv(lambda seat: make_agent(opponents, cfg), num_players=players, shaping=potential, **config)
    env.reset(seed=seed)
    return env


def train(players: int, opponents: str, steps: int, seed: int, out: Path | None, checkpoint_every: int = 0,
          n_steps: int = 512, batch_size: int = 128, verbose: int = 0, shaping: float = 0.0,
          init: Path | None = None):  # fmt: skip
    """Train and return the model (saved to ``out/final.zip`` when ``out`` is given); ``init`` continues a saved one."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CheckpointCallback

    env = make_env(players, opponents, seed, shaping)
    if init is not None:
        model = MaskablePPO.load(init, env=env, device="cpu", seed=seed, verbose=verbose)
    else:
        model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, seed=seed, verbose=verbose,
                            device="cpu")  # fmt: skip
    callbacks = []
    if out is not None and checkpoint_every > 0:
        callbacks.append(CheckpointCallback(checkpoint_every, str(out), name_prefix="ppo"))
    model.learn(total_timesteps=steps, callback=callbacks or None, reset_num_timesteps=init is None)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        model.save(out / "final.zip")
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--opponents", default="heuristic", help="ladder agent playing the other seats")
    parser.add_argument("--steps", type=int, default=100_000, help="learner decisions to train on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/ppo"))
    parser.add_argument("--checkpoint-every", type=int, default=20_000)
    parser.add_argument("--init", type=Path, default=None, help="continue training a saved model (.zip)")
    parser.add_argument("--shaping", type=float, default=0.0,
                        help="dense reward per tile of progress to the gold for digger seats (0 = off)")  # fmt: skip
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 10:
        parser.error(f"--players {args.players} is out of range; valid: 3..10")
    if args.shaping < 0:
        parser.error(f"--shaping {args.shaping} must be >= 0")
    if args.init is not None and not args.init.exists():
        parser.error(f"--init {args.init} does not exist")
    train(args.players, args.opponents, args.steps, args.seed, args.out, args.checkpoint_every, verbose=1,
          shaping=args.shaping, init=args.init)  # fmt: skip
    print(f"saved {args.out / 'final.zip'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
