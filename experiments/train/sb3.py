"""Train a MaskablePPO policy for one seat against ladder opponents (sb3-contrib).

    pip install -e ".[train]"
    python -m experiments.train.sb3 --players 5 --opponents heuristic --steps 100000 --out runs/ppo5
    python -m experiments.tournament --miners ppo:runs/ppo5/final.zip --saboteurs covert --players 5 --games 500

The learner takes a random seat each episode (a whole 3-round game) and plays whatever role it is dealt; the
observation includes its role, so one policy learns both. Checkpoints are written every ``--checkpoint-every``
steps (``ppo_<steps>_steps.zip``); ``final.zip`` at the end.

Models are saved in the project's safe format (``agents.ppo``: ``meta.json`` + weights-only tensors, nothing
pickled); ``--init`` continues one with its saved hyperparameters and optimizer state. A stable-baselines3 native zip
(``model.save``) unpickles objects, which can run arbitrary code, so it is never loaded implicitly:
``--convert OLD.zip --trust-model-file --out DIR`` loads one you trust (running its code) and writes
``DIR/OLD.zip`` in the safe format.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from experiments._optional import require

MAX_SEED = 2**32 - 1  # numpy's legacy seeding, which SB3 uses, takes 32-bit seeds


def make_env(players: int, opponents: str, seed: int, shaping: float = 0.0, **config: Any) -> Any:
    from agents import make_agent
    from agents.base.shaping import GoldProgress
    from saboteur_env import GameConfig, SingleSeatEnv

    cfg = GameConfig(num_players=players, **config)
    potential = GoldProgress(shaping) if shaping > 0 else None
    env = SingleSeatEnv(lambda seat: make_agent(opponents, cfg), num_players=players, shaping=potential, **config)
    env.reset(seed=seed)
    return env


def load_for_training(path: Path, env: Any, seed: int, verbose: int = 0) -> Any:
    """A MaskablePPO on ``env`` rebuilt from a safe model file: architecture, hyperparameters, weights, Adam state."""
    from sb3_contrib import MaskablePPO

    from agents import ppo

    meta = ppo.read_meta(path)
    ppo.check_compatible(meta, env.config, path)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs=ppo.policy_kwargs(meta), seed=seed, verbose=verbose,
                        device="cpu", **meta.hyperparameters)  # fmt: skip
    ppo.load_state(model.policy, ppo.read_weights(path, ppo.POLICY), path)
    optimizer = ppo.read_weights(path, ppo.OPTIMIZER)
    try:
        model.policy.optimizer.load_state_dict(optimizer)
    except (ValueError, KeyError, TypeError, IndexError, RuntimeError) as err:
        raise ppo.ModelFileError(path, f"optimizer.pt does not fit the policy ({type(err).__name__}: {err})") from None
    model.num_timesteps = meta.num_timesteps
    return model


def _checkpoints(every: int, out: Path, config: Any, training: dict[str, Any]) -> Any:
    """A callback saving the model every ``every`` learner steps as ``out/ppo_<steps>_steps.zip`` (safe format)."""
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.ppo import save_model

    class SafeCheckpoints(BaseCallback):
        def _on_step(self) -> bool:
            if self.n_calls % every == 0:
                save_model(self.model, out / f"ppo_{self.num_timesteps}_steps.zip", config, training)
            return True

    return SafeCheckpoints()


def train(players: int, opponents: str, steps: int, seed: int, out: Path | None, checkpoint_every: int = 0,
          n_steps: int = 512, batch_size: int = 128, verbose: int = 0, shaping: float = 0.0,
          init: Path | None = None) -> Any:  # fmt: skip
    """Train and return the model (saved to ``out/final.zip`` when ``out`` is given).

    ``init`` continues a model saved by this script (its own ``n_steps``/``batch_size`` and other hyperparameters
    are kept, as stable-baselines3 does); it raises ``agents.ppo.ModelFileError`` for a file it does not load.
    """
    from sb3_contrib import MaskablePPO

    from agents.ppo import save_model

    env = make_env(players, opponents, seed, shaping)
    training = {"opponents": opponents, "shaping": shaping, "seed": seed, "init": None if init is None else str(init)}
    if init is not None:
        model = load_for_training(init, env, seed, verbose)
    else:
        model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, seed=seed, verbose=verbose,
                            device="cpu")  # fmt: skip
    callback = (
        _checkpoints(checkpoint_every, out, env.config, training) if out is not None and checkpoint_every > 0 else None
    )
    model.learn(total_timesteps=steps, callback=callback, reset_num_timesteps=init is None)
    if out is not None:
        save_model(model, out / "final.zip", env.config, training)
    return model


def convert(source: Path, players: int, out: Path) -> Path:
    """Load a stable-baselines3 native zip (RUNS THE CODE PICKLED IN IT) and write it to ``out/<name>`` safely."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import save_model
    from saboteur_env import GameConfig

    model = MaskablePPO.load(source, device="cpu")  # unpickles: only ever called behind --trust-model-file
    return save_model(model, out / source.name, GameConfig(num_players=players), {"converted_from": source.name})


def check_init(path: Path, players: int) -> None:
    """Read and check every part of a model file for ``--init`` (raises ``ModelFileError``), before any training."""
    from agents import ppo
    from saboteur_env import GameConfig

    meta = ppo.read_meta(path)
    ppo.check_compatible(meta, GameConfig(num_players=players), path)
    ppo.build_policy(meta, ppo.read_weights(path, ppo.POLICY), path)
    if not isinstance(ppo.read_weights(path, ppo.OPTIMIZER), dict):
        raise ppo.ModelFileError(path, "optimizer.pt is not an optimizer state")


def _check_opponents(parser: argparse.ArgumentParser, name: str, players: int) -> None:
    from agents import agent_names, make_agent
    from saboteur_env import GameConfig

    if name.startswith("ppo:"):
        try:
            make_agent(name, GameConfig(num_players=players))
        except (ValueError, OSError, ImportError) as err:
            parser.error(f"--opponents {name}: {err}")
        return
    # the oracles need the hidden state, which the seat env keeps
    valid = sorted(agent_names("base", kind="scripted", oracles=False))
    if name not in valid:
        parser.error(f"--opponents {name!r} is not valid; valid: {', '.join(valid)} or ppo:PATH")


def main(argv: list[str] | None = None) -> int:
    require("sb3_contrib", "train", "experiments.train.sb3")  # a message naming the extra, not a traceback
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--opponents", default="heuristic", help="ladder agent playing the other seats")
    parser.add_argument("--steps", type=int, default=100_000, help="learner decisions to train on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/ppo"))
    parser.add_argument(
        "--checkpoint-every", type=int, default=20_000, help="learner steps between checkpoints; 0 = none"
    )
    parser.add_argument("--init", type=Path, default=None, help="continue training a model saved by this script")
    parser.add_argument("--shaping", type=float, default=0.0,
                        help="dense reward per tile of progress to the gold for digger seats (0 = off)")  # fmt: skip
    parser.add_argument("--convert", type=Path, default=None, metavar="SB3_ZIP",
                        help="write a stable-baselines3 native zip as OUT/<name> in the safe format, then exit "
                             "(needs --trust-model-file)")  # fmt: skip
    parser.add_argument("--trust-model-file", action="store_true",
                        help="allow --convert to unpickle the file, which EXECUTES ANY CODE IT HOLDS: only for files "
                             "you made or trust")  # fmt: skip
    args = parser.parse_args(argv)
    if not 3 <= args.players <= 10:
        parser.error(f"--players {args.players} is out of range; valid: 3..10")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} exists and is not a directory")
    if args.trust_model_file and args.convert is None:
        parser.error("--trust-model-file only applies to --convert (safe model files need no trust)")
    if args.convert is not None:
        return _convert(parser, args)
    if args.steps < 1:
        parser.error(f"--steps {args.steps} must be >= 1")
    if not 0 <= args.seed <= MAX_SEED:
        parser.error(f"--seed {args.seed} is out of range; valid: 0..{MAX_SEED}")
    if args.checkpoint_every < 0:
        parser.error(f"--checkpoint-every {args.checkpoint_every} must be >= 0 (0 = no checkpoints)")
    if not (math.isfinite(args.shaping) and args.shaping >= 0):
        parser.error(f"--shaping {args.shaping} must be a finite number >= 0")
    _check_opponents(parser, args.opponents, args.players)
    if args.init is not None:
        from agents.ppo import ModelFileError

        if not args.init.is_file():
            parser.error(f"--init {args.init} does not exist or is not a file")
        try:
            check_init(args.init, args.players)
        except ModelFileError as err:
            parser.error(f"--init: {err}")
    train(args.players, args.opponents, args.steps, args.seed, args.out, args.checkpoint_every, verbose=1,
          shaping=args.shaping, init=args.init)  # fmt: skip
    print(f"saved {args.out / 'final.zip'}")
    return 0


def _convert(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from agents.ppo import is_sb3_native

    source: Path = args.convert
    if args.init is not None:
        parser.error("--convert and --init do not go together (convert first, then --init the converted file)")
    if not source.is_file():
        parser.error(f"--convert {source} does not exist or is not a file")
    if not is_sb3_native(source):
        parser.error(f"--convert {source} is not a stable-baselines3 native zip (no 'data' and 'policy.pth' entries, "
                     "or already a saboteur-env model file)")  # fmt: skip
    if not args.trust_model_file:
        parser.error(f"--convert {source} unpickles the file, which runs any code it holds; add --trust-model-file "
                     "if you trust where it came from")  # fmt: skip
    target = args.out / source.name
    if target.resolve() == source.resolve():
        parser.error(f"--convert would overwrite {source}; choose another --out")
    try:
        convert(source, args.players, args.out)
    except ValueError as err:
        parser.error(f"--convert {source}: {err} (is --players {args.players} the count it was trained for?)")
    print(f"saved {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
