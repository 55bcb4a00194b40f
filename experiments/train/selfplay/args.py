"""The self-play trainer's options (``Args``) and their command line."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

from agents.base.belief_features import feature_size
from agents.learned import role_names
from experiments.workers import check_backend
from saboteur_env import GameConfig


@dataclass
class Args:
    """Command-line options (see ``--help``)."""

    game: str = "base"
    players: int | None = None
    num_envs: int = 256
    steps: int = 200_000  # learner decisions in all (every seat's decisions count)
    rollout: int = 32  # vector-env steps per rollout (decisions per iteration ~ rollout * num_envs)
    epochs: int = 2
    minibatches: int = 4
    lr: float = 3e-4
    anneal_lr: bool = False
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    embed: int = 0  # width of a linear bottleneck before the policy heads (0: none)
    role_heads: bool = False
    seed: int = 0
    threads: int = 1
    out: str = "runs/selfplay"
    checkpoint_every: int = 10  # iterations
    log_every: float = 2.0  # seconds between log lines
    resume: bool = False
    bench: bool = False
    league: float = 0.0  # fraction of new games whose other seats are league opponents
    league_agents: str = ""  # comma-separated scripted agents in the league (besides the snapshots)
    snapshot_every: int = 10  # iterations between snapshots of the learner added to the league (0: none)
    pool_size: int = 5  # snapshots kept in the league
    eval_every: int = 0  # iterations between ladder checks (0: none)
    eval_games: int = 60  # paired deals per ladder check
    eval_opponent: str = ""  # the ladder check's opponent ("": heuristic; the Duel: greedy)
    tensorboard: bool = True  # write OUT/tb (TensorBoard event files) when tensorboard is installed
    init: str = ""  # start from these weights (a policy.npz of the same shape, e.g. experiments.train.imitate's)
    features: str = ""  # belief features after the observation (agents.base.belief_features; "": none)
    train_role: str = ""  # train only the learner's decisions in this role ("": every role)
    freeze_trunk: bool = False  # train the heads only (the trunk keeps its --init weights)
    learner_seat: str = ""  # league games: "" any seat; "saboteur": a seat dealt the saboteur card most often
    net: str = "mlp"  # "mlp": dense layers over the float observation; "compact": tokens of the compact one
    device: str = "cpu"  # torch device of the network: "cpu" or "cuda" (training and the rollout's forward)
    shards: int = 1  # the games split into this many shards, each with its own seeds (collected in turn or apart)
    backend: str = "local"  # where shards are collected: "local" (this process, or a pool with --workers > 1), "ray"
    workers: int = 1  # processes or Ray actors collecting shards (1 and local: this process)
    address: str = ""  # an existing Ray cluster's address ("": a local cluster of --workers CPUs)
    claims: bool = False  # play the claims rule: claim ids in the action space, the claims block in the input
    claims_per_turn: int = 1  # with claims: at most this many claims per turn and per report window (1..8)
    # collect the next rollout in a thread beside the update (one iteration of policy lag; in-process shards only)
    overlap: bool = False
    # --overlap's loss: "decoupled" clips around the update-start policy and weights by its ratio to the behaviour
    # policy (Hilton et al. 2021); "behaviour": PPO's clip around the policy that collected the data
    overlap_objective: str = "decoupled"
    iw_max: float = 2.0  # decoupled: the importance weight (update-start over behaviour) truncated at this

    def check(self) -> None:
        positive = ("num_envs", "steps", "rollout", "epochs", "minibatches", "hidden", "threads", "checkpoint_every")
        for name in positive:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}={v!r} must be a positive integer")
        if isinstance(self.embed, bool) or not isinstance(self.embed, int) or not 0 <= self.embed <= self.hidden:
            raise ValueError(f"embed={self.embed!r} is out of range; valid: 0 (none) or 1..hidden={self.hidden}")
        if self.threads > 64:
            raise ValueError(f"threads={self.threads} is out of range; valid: 1..64")
        for name, lo, hi in (("lr", 0.0, 1.0), ("gamma", 0.0, 1.0), ("gae_lambda", 0.0, 1.0), ("clip", 0.0, 1.0)):
            v = getattr(self, name)
            if not lo < v <= hi:
                raise ValueError(f"{name}={v!r} is out of range; valid: ({lo}, {hi}]")
        for name in ("ent_coef", "vf_coef", "max_grad_norm"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}={getattr(self, name)!r} must be >= 0")
        if self.seed < 0:
            raise ValueError(f"seed={self.seed} must be >= 0")
        if not 0.0 <= self.league <= 1.0:
            raise ValueError(f"league={self.league!r} is out of range; valid: [0, 1]")
        for name in ("snapshot_every", "eval_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}={v!r} must be a non-negative integer")
        if not 1 <= self.eval_games <= 100_000:
            raise ValueError(f"eval_games={self.eval_games!r} is out of range; valid: 1..100000")
        if not self.claims and self.claims_per_turn != 1:
            raise ValueError(f"claims_per_turn={self.claims_per_turn!r} applies to the claims rule; give --claims")
        config = self.config()
        feature_size(self.features, config)  # names the valid sets and games
        if self.claims and (self.net != "mlp" or self.features):
            raise ValueError(f"claims=True trains the mlp on the observation and its claims block (got net="
                             f"{self.net!r}, features={self.features!r}: the compact reader and the belief "
                             "features do not read claims)")  # fmt: skip
        if self.train_role and self.train_role not in role_names(config):
            raise ValueError(f"train_role={self.train_role!r} is not a role of {config.game}; valid: '' (all), "
                             + ", ".join(map(repr, role_names(config))))  # fmt: skip
        if self.learner_seat not in ("", "saboteur"):
            raise ValueError(f"learner_seat={self.learner_seat!r} is unknown; valid: '' (any seat), 'saboteur'")
        if self.learner_seat and (config.game != "base" or self.league <= 0):
            raise ValueError("learner_seat='saboteur' seats the learner of league games in the base game; it needs "
                             f"game base and league > 0 (got game={config.game!r}, league={self.league})")  # fmt: skip
        if self.net not in ("mlp", "compact"):
            raise ValueError(f"net={self.net!r} is unknown; valid: 'mlp', 'compact'")
        if self.net == "compact" and (self.features or self.embed or self.freeze_trunk):
            raise ValueError("net='compact' takes no --features, --embed or --freeze-trunk (mlp options)")
        if self.net == "compact" and self.eval_every and config.game != "base":
            raise ValueError(
                f"net='compact' ladder checks (--eval-every) read float observations: the base game "
                f"only (got game={config.game!r}); check its policy.npz with the trainer's env"
            )
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or not 1 <= self.shards <= self.num_envs:
            raise ValueError(f"shards={self.shards!r} is out of range; valid: 1..num_envs={self.num_envs}")
        if self.num_envs % self.shards:
            raise ValueError(f"num_envs={self.num_envs} is not a multiple of shards={self.shards}: every shard holds "
                             "the same number of games")  # fmt: skip
        check_backend(self.backend, self.workers, self.address or None)
        if self.overlap_objective not in ("decoupled", "behaviour"):
            raise ValueError(f"overlap_objective={self.overlap_objective!r} is not one of: decoupled, behaviour")
        if isinstance(self.iw_max, bool) or not (isinstance(self.iw_max, (int, float)) and 1 <= self.iw_max <= 100):
            raise ValueError(f"iw_max={self.iw_max!r} is out of range; valid: a number in 1..100")
        if self.overlap and (self.backend != "local" or self.workers > 1):
            raise ValueError(f"overlap collects in a thread of this process; it cannot be combined with "
                             f"backend={self.backend!r}, workers={self.workers} (valid: backend 'local', workers 1)")
        if self.device not in ("cpu", "cuda") or (self.device == "cuda" and not _cuda()):
            raise ValueError(f"device={self.device!r} is not available; valid: 'cpu', 'cuda' (with a CUDA GPU)")
        if self.freeze_trunk and not self.init:
            raise ValueError("freeze_trunk keeps the trunk of an --init policy; give --init PATH")
        if self.league > 0 and not self.league_names() and not (self.snapshot_every and self.pool_size):
            raise ValueError("league > 0 needs opponents: --league-agents NAMES or snapshots (--snapshot-every, "
                             "--pool-size)")  # fmt: skip

    def league_names(self) -> list[str]:
        return [n.strip() for n in self.league_agents.split(",") if n.strip()]

    def opponent(self) -> str:
        return self.eval_opponent or ("greedy" if self.game == "duel" else "heuristic")

    def config(self) -> GameConfig:
        # GameConfig names bad games and player counts (and claims per turn); None: the game's default.
        if self.claims:
            return GameConfig(game=self.game, num_players=self.players, claims=True,  # type: ignore[arg-type]
                              claims_per_turn=self.claims_per_turn)
        return GameConfig(game=self.game, num_players=self.players)  # type: ignore[arg-type]


HELP = {
    "num_envs": "games stepped in lock-step",
    "steps": "learner decisions in all (every seat's decisions count)",
    "rollout": "vector steps per iteration",
    "epochs": "PPO epochs per iteration",
    "minibatches": "minibatches per epoch",
    "hidden": "width of the two tanh layers",
    "embed": "width of a linear bottleneck before the policy heads (0: none; fewer head weights)",
    "threads": "torch threads (1 is fastest on a small shared machine)",
    "out": "output folder: progress.csv, checkpoint.pt, policy.npz",
    "checkpoint_every": "iterations between checkpoints",
    "log_every": "seconds between log lines",
    "league": "fraction of new games where one seat is the learner and the others a league opponent",
    "league_agents": "comma-separated scripted agents in the league, e.g. heuristic,bayes",
    "snapshot_every": "iterations between snapshots of the learner joining the league (0: none)",
    "pool_size": "snapshots kept in the league",
    "eval_every": "iterations between paired ladder checks (0: none)",
    "eval_games": "paired deals per ladder check",
    "eval_opponent": "the ladder check's opponent (default: heuristic; the Duel: greedy)",
    "init": "start from this policy.npz (same game, players, width and heads; e.g. experiments.train.imitate's output; "
            "with --claims also one without claims: it plays that file's moves until it learns to talk and listen)",
    "features": "belief features after the observation: bayes (base game; the shipped 4, 7, 10-player files)",
    "train_role": "train only the learner's decisions in this role, e.g. saboteur (default: every role)",
    "learner_seat": "league games: saboteur seats the learner where the deal gives the saboteur card most often",
    "net": "mlp (dense layers over the float observation) or compact (token embeddings of the compact one)",
    "device": "torch device: cpu or cuda",
    "overlap_objective": "--overlap's loss: decoupled (clip around the update-start policy, importance-weighted "
                         "from the behaviour policy) or behaviour (PPO's clip around the collecting policy)",
    "iw_max": "decoupled: the importance weight (update-start over behaviour policy) truncated at this",
    "shards": "split the games into this many shards with their own seeds (what --workers collect in parallel)",
    "backend": "where shards are collected: local (this process; a process pool with --workers > 1) or ray",
    "workers": "processes or Ray actors collecting the shards (1 with --backend local: this process)",
    "address": "an existing Ray cluster (default: a local one of --workers CPUs)",
    "claims_per_turn": "with --claims: claims allowed per turn and per report window (1..8)",
}


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def parse_args(argv: list[str] | None = None) -> Args:
    d = Args()
    p = argparse.ArgumentParser(prog="python -m experiments.train.selfplay", description=__doc__.splitlines()[0])
    p.add_argument("--game", default=d.game, help="base, sab2 or duel")
    p.add_argument("--players", type=int, default=None, help="seats per game (default: the game's default)")
    for f in dataclasses.fields(Args):
        if f.name in ("game", "players", "anneal_lr", "role_heads", "resume", "bench", "tensorboard", "freeze_trunk",
                      "claims", "overlap"):
            continue
        default = getattr(d, f.name)
        text = HELP.get(f.name, f.name.replace("_", " "))
        p.add_argument("--" + f.name.replace("_", "-"), type=type(default), default=default,
                       help=f"{text} (default: {default})")  # fmt: skip
    p.add_argument("--anneal-lr", action="store_true", help="decay the learning rate linearly to 5%%")
    p.add_argument("--role-heads", action="store_true", help="one policy and value head per role")
    p.add_argument("--freeze-trunk", action="store_true", help="train the heads only (needs --init)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt if it exists")
    p.add_argument("--bench", action="store_true", help="print a throughput breakdown (env, policy, learning)")
    p.add_argument("--claims", action="store_true", help="the claims rule (saboteur_env.claims): the policy talks "
                   "(claim ids in its action space, the claims block in its input); league agents talk as claims:NAME")
    p.add_argument("--overlap", action="store_true", help="collect the next rollout in a thread while the update "
                   "runs (the two cores both busy; the data lag the weights by one iteration; drained at checkpoints)")
    p.add_argument("--no-tensorboard", dest="tensorboard", action="store_false", help="write progress.csv only")
    ns = p.parse_args(argv)
    return Args(**vars(ns))
