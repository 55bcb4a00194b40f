"""RLlib multi-agent PPO self-play: one shared, action-masked policy plays every seat.

    pip install -e ".[train,ray]"
    python -m experiments.train.rllib --players 5 --iterations 20 --out runs/rllib5          # local, 2 cores
    python -m experiments.train.rllib --address auto --env-runners 32 --iterations 500 ...   # on a Ray cluster

On a cluster, start Ray on the head node (``ray start --head``) and on each worker (``ray start --address
HEAD:6379``), then run the command on the head node with ``--address auto`` (or from elsewhere with
``--address ray://HEAD:10001``); this checkout is shipped to the workers as the job's working directory.

Environment glue (:class:`SaboteurMultiAgentEnv`, an RLlib ``MultiAgentEnv`` over the engine): only the seat to act
receives an observation, a dict ``{"observations": vector, "action_mask": 0/1 floats}`` that RLlib's
``ActionMaskingTorchRLModule`` reads; round-end rewards are paid to every seat when they happen (RLlib adds a
reward that arrives without an observation to that agent's last transition, so a seat earns the round it lost
while another seat was acting); at the end of the game every seat gets its final observation. RLlib's own
``PettingZooEnv`` wrapper pays only the acting agent, which is wrong for this game.

Playing a trained policy: ``--export-npz PATH`` (after training, or with ``--export-only`` from an existing ``--out``
checkpoint) writes the policy network as an ``agents.learned`` ``.npz`` file, so ``make_agent("learned:PATH")``
plays it in tournaments, the terminal and the browser with numpy alone (no Ray, no torch, no pickles). RLlib's
checkpoints are pickles, so export only checkpoints you made yourself; the ``.npz`` is the file to share.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from experiments._optional import require
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game, variants

MultiAgentEnv = require("ray.rllib.env.multi_agent_env", "ray", "experiments.train.rllib").MultiAgentEnv


class SaboteurMultiAgentEnv(MultiAgentEnv):
    """Turn-based RLlib view of one game; agents ``player_0`` ... ``player_{N-1}``.

    ``config`` is passed to :class:`GameConfig` (``num_players``, ``reward``, ...) plus an optional ``seed``.
    """

    def __init__(self, config: dict | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        seed = config.pop("seed", None)
        self.game_config = GameConfig(**config)
        n = self.game_config.num_players
        self.agents = self.possible_agents = [f"player_{i}" for i in range(n)]
        probe = new_game(self.game_config, np.random.default_rng(0))
        size = encode_observation(probe, 0).shape[0]
        num_actions = legal_action_mask(probe).shape[0]
        space = gym.spaces.Dict(
            {
                "observations": gym.spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "action_mask": gym.spaces.Box(0.0, 1.0, (num_actions,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = dict.fromkeys(self.agents, gym.spaces.Discrete(num_actions))
        self.rng = np.random.default_rng(seed)
        self.game = probe

    def _obs(self, seat: int) -> dict[str, np.ndarray]:
        mask = legal_action_mask(self.game) if seat == self.game.current and not self.game.game_over else None
        return {
            "observations": encode_observation(self.game, seat),
            "action_mask": np.zeros(self.action_spaces[self.agents[0]].n, np.float32)
            if mask is None
            else mask.astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.game = new_game(self.game_config, self.rng)
        agent = self.agents[self.game.current]
        return {agent: self._obs(self.game.current)}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        game = self.game
        seat = game.current
        apply_action(game, int(action_dict[self.agents[seat]]), inplace=True)
        rewards: dict[str, float] = {}
        if game.round_just_ended:
            rewards = {a: float(r) for a, r in zip(self.agents, game.last_rewards.tolist(), strict=True)}
        if game.game_over:
            obs = {a: self._obs(i) for i, a in enumerate(self.agents)}
            return obs, rewards, {"__all__": True}, {"__all__": False}, {}
        nxt = self.agents[game.current]
        return {nxt: self._obs(game.current)}, rewards, {"__all__": False}, {"__all__": False}, {}


def build_config(players: int, env_runners: int, batch: int, minibatch: int, epochs: int, lr: float, hidden: int):
    """The PPO config: one shared policy ``shared`` for every seat, masked by ``ActionMaskingTorchRLModule``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return (
        PPOConfig()
        .environment(SaboteurMultiAgentEnv, env_config={"num_players": players}, disable_env_checking=True)  # its
        # checker steps random (mostly illegal) actions
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": []},
                    )
                }
            )
        )
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1, num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr)
    )


def train(
    players: int = 5,
    iterations: int = 10,
    address: str | None = None,
    env_runners: int = 1,
    batch: int = 2000,
    minibatch: int = 250,
    epochs: int = 4,
    lr: float = 3e-4,
    hidden: int = 256,
    seed: int = 0,
    out: Path | None = None,
) -> list[dict]:
    """Train; returns one summary per iteration (and saves a checkpoint to ``out`` when given)."""
    import ray

    if not ray.is_initialized():
        kwargs: dict = {"include_dashboard": False, "log_to_driver": False}
        if address:
            root = Path(__file__).resolve().parents[2]
            kwargs["runtime_env"] = {"working_dir": str(root), "excludes": ["runs/", ".git/", ".venv*/", "*.gz"]}
        ray.init(address=address, **kwargs)
    config = build_config(players, env_runners, batch, minibatch, epochs, lr, hidden).debugging(seed=seed)
    algo = config.build_algo()
    history = []
    try:
        for i in range(iterations):
            start = time.perf_counter()
            result = algo.train()
            runners = result.get("env_runners", {})
            row = {
                "iteration": i + 1,
                "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                "episodes": int(runners.get("num_episodes_lifetime", 0)),
                "episode_return_mean": float(runners.get("episode_return_mean", float("nan"))),
                "episode_len_mean": float(runners.get("episode_len_mean", float("nan"))),
                "seconds": round(time.perf_counter() - start, 2),
            }
            history.append(row)
            print(json.dumps(row), flush=True)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            algo.save_to_path(str(out.resolve()))
    finally:
        algo.stop()
    return history


MODULE_DIR = ("learner_group", "learner", "rl_module", "shared")  # where save_to_path puts the shared policy


def export_npz(checkpoint: Path, path: Path, players: int) -> Path:
    """The policy of an RLlib checkpoint (``--out`` of :func:`train`) as an ``agents.learned`` ``.npz`` file.

    RLlib's default PPO module for this config is ``obs -> tanh(W0) -> tanh(W1) -> pi`` for the policy (masked by
    adding ``log(mask)``) with a separate critic trunk; the file holds the policy exactly (scale 1) and a zero value
    head, because the critic's own trunk has no place in the format (playing needs only the policy). A module built
    with ``vf_share_layers`` has one trunk, and its value head is exported exactly."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    from agents.learned import FORMAT, FORMAT_VERSION, LAYOUT_FIELDS, role_slice
    from saboteur_env import num_actions, observation_layout

    module_dir = Path(checkpoint).joinpath(*MODULE_DIR)
    if not module_dir.is_dir():
        raise ValueError(f"{checkpoint} is not an RLlib checkpoint of this script (no {'/'.join(MODULE_DIR)})")
    module = RLModule.from_checkpoint(str(module_dir))  # unpickles: a checkpoint you trust (see the docstring)
    sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in module.state_dict().items()}
    # PPO's default has a separate critic ("actor_encoder"); a module built with vf_share_layers has one "encoder".
    shared = "encoder.encoder.net.mlp.0.weight" in sd
    prefix, head = ("encoder.encoder.net.mlp." if shared else "encoder.actor_encoder.net.mlp."), "pi.net.mlp.0."
    names = [f"{prefix}0.weight", f"{prefix}0.bias", f"{prefix}2.weight", f"{prefix}2.bias", f"{head}weight",
             f"{head}bias"]  # fmt: skip
    extra = [k for k in sd if k.startswith(prefix) and k not in names]
    if any(n not in sd for n in names) or extra:
        raise ValueError(f"{checkpoint}: the module is not a two-layer MLP policy ({sorted(sd)})")
    config = GameConfig(num_players=players)
    obs_size, n_act = observation_layout(config).size, num_actions(config)
    hidden = sd[names[0]].shape[0]
    if sd[names[0]].shape != (hidden, obs_size) or sd[names[4]].shape != (n_act, hidden):
        raise ValueError(f"{checkpoint}: shapes {sd[names[0]].shape} / {sd[names[4]].shape} do not fit the "
                         f"{players}-player game ({obs_size} observations, {n_act} actions)")  # fmt: skip
    sl = role_slice(config)
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "config": {f: getattr(config, f) for f in LAYOUT_FIELDS},
            "rules_version": config.rules_version, "obs_size": obs_size, "num_actions": n_act, "hidden": hidden,
            "num_heads": 1, "role_slice": [sl.start, sl.stop] if sl else [0, 0], "activation": "tanh",
            "decisions": 0, "source": "rllib", "value_head": "zeros (RLlib's critic has its own trunk)"}  # fmt: skip
    arrays = {"meta": np.array(json.dumps(meta, sort_keys=True)), "scale": np.ones(obs_size, dtype=np.float32),
              "w0": sd[names[0]].T.copy(), "b0": sd[names[1]], "w1": sd[names[2]].T.copy(), "b1": sd[names[3]],
              "pi_w0": sd[names[4]].T.copy(), "pi_b0": sd[names[5]], "v_w0": np.zeros((hidden, 1), np.float32),
              "v_b0": np.zeros(1, np.float32)}  # fmt: skip
    if shared and "vf.net.mlp.0.weight" in sd:  # the critic sits on the same trunk: its head is exact too
        arrays["v_w0"], arrays["v_b0"] = sd["vf.net.mlp.0.weight"].T.copy(), sd["vf.net.mlp.0.bias"]
        meta["value_head"] = "exact (shared trunk)"
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=5, help="3-10 (the base game)")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--address", default=None, help="Ray cluster ('auto', 'ray://HEAD:10001')")
    parser.add_argument("--env-runners", type=int, default=1, help="parallel sampling actors")
    parser.add_argument("--batch", type=int, default=2000, help="env steps per training iteration")
    parser.add_argument("--minibatch", type=int, default=250)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4, help="learning rate, > 0")
    parser.add_argument("--hidden", type=int, default=256, help="width of the two hidden layers")
    parser.add_argument("--seed", type=int, default=0, help="a non-negative integer")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint directory")
    parser.add_argument("--export-npz", type=Path, default=None, help="write the policy as a learned:PATH .npz file")
    parser.add_argument("--export-only", action="store_true", help="export the --out checkpoint without training")
    args = parser.parse_args(argv)
    base = variants.get("base")
    if not base.min_players <= args.players <= base.max_players:
        parser.error(f"--players {args.players} is out of range; valid: {base.min_players}..{base.max_players}")
    for name in ("iterations", "batch", "minibatch", "epochs", "hidden"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.minibatch > args.batch:
        parser.error(f"--minibatch {args.minibatch} must not exceed --batch {args.batch}")
    if args.env_runners < 0:
        parser.error(f"--env-runners must be >= 0, got {args.env_runners}")
    if not (math.isfinite(args.lr) and args.lr > 0):
        parser.error(f"--lr must be a positive number, got {args.lr}")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be >= 0")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} exists and is not a directory")
    if args.export_npz is not None and args.out is None:
        parser.error("--export-npz needs --out (the checkpoint to export)")
    if args.export_only and args.export_npz is None:
        parser.error("--export-only needs --export-npz PATH")
    if not args.export_only:
        train(args.players, args.iterations, args.address, args.env_runners, args.batch, args.minibatch, args.epochs,
              args.lr, args.hidden, args.seed, args.out)  # fmt: skip
    if args.export_npz is not None:
        try:
            print(f"wrote {export_npz(args.out, args.export_npz, args.players)}")
        except ValueError as e:
            parser.error(str(e))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
