"""The policies shipped in ``agents/policies/``, as data: each entry's game, player count, seed, budget and training
settings, and its evaluation pairs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EVAL_SEED = 1_000_000_000  # training deals use seeds seed .. seed + num_envs - 1 (small): these never met them


# Settings shared by every entry: the league run of docs/selfplay.md that reached parity with heuristic (smaller
# trunk, to keep the files small), without in-training ladder checks (the evaluation is separate).
COMMON = ("--num-envs", "128", "--rollout", "64", "--epochs", "4", "--minibatches", "4", "--lr", "5e-4",
          "--league", "0.7", "--snapshot-every", "10", "--pool-size", "4", "--checkpoint-every", "10",
          "--log-every", "30", "--no-tensorboard")  # fmt: skip


# PPO of the saboteur head alone after an imitation start (base 4 players): the learner is one seat of every game,
# the one the deal makes a saboteur most often, and only its saboteur decisions are trained; gentle steps on the
# sharpened imitation policy, no entropy bonus.
SABOTEUR_HEAD = ("--train-role", "saboteur", "--freeze-trunk", "--learner-seat", "saboteur", "--league", "1.0",
                 "--snapshot-every", "0", "--num-envs", "128", "--rollout", "64", "--epochs", "2", "--minibatches",
                 "2", "--lr", "3e-4", "--ent-coef", "0.0", "--checkpoint-every", "5", "--log-every", "30",
                 "--no-tensorboard")  # fmt: skip


# The imitation warm start's fitting settings shared by every entry that has one.
IMITATE = ("--workers", "2", "--temperature", "0.3")


@dataclass(frozen=True)
class Entry:
    """One shipped policy: its configuration, seed and budget."""

    game: str
    players: int
    seed: int
    decisions: int
    hidden: int = 64
    embed: int = 0  # linear bottleneck before the policy heads (0: none)
    role_heads: bool = True
    league_agents: str = "heuristic"
    imitate: int = 0  # teacher decisions of the imitation warm start (0: PPO from scratch)
    teacher: str = "expert"
    partners: str = "heuristic,expert"
    ppo: tuple[str, ...] = ()  # PPO settings after an imitation start (empty: COMMON)
    epochs: int = 10  # imitation fitting epochs
    dagger: int = 0  # teacher decisions of one DAgger round after the imitation (0: none)
    dagger_share: float = 0.5  # share of the teacher seats the round-0 policy plays in that round
    features: str = ""  # belief features the imitation network reads ("bayes"; agents.base.belief_features)
    # PPO continues from this entry's file as shipped at this commit (its imitation and DAgger stages are that
    # file's, recorded in that commit's manifest) instead of redoing them: the collection replays scripted agents
    # whose float ties can break differently on another processor, so a redo need not give the file users had.
    start: str = ""
    # One network for every player count (or Duel geometry) of the game (experiments.train.universal): ``imitate``
    # teacher decisions per variant, no PPO, no DAgger; ``players`` is 0.
    universal: bool = False
    # Expert iteration after the warm start (or after the file shipped at ``start``): the arguments of
    # ``python -m experiments.train.exit`` but ``--start`` and ``--out``; the last iteration's network is shipped.
    exit: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from agents.base.belief_features import feature_size
        from saboteur_env import GameConfig

        if self.universal:
            if self.players or not self.imitate or self.decisions or self.dagger or (self.start and not self.exit):
                raise ValueError(f"{self.name}: a universal entry has players=0, imitate > 0 and no PPO, DAgger "
                                 "or start (but a start for its expert iteration)")  # fmt: skip
            self._check_exit()
            from agents.universal import universal_layout

            universal_layout(self.game).feature_size(self.features)  # a clear ValueError (bayes: base game only)
            return
        feature_size(self.features, GameConfig(game=self.game, num_players=self.players))  # a clear ValueError
        if self.features and not self.imitate:
            raise ValueError(f"{self.name}: features={self.features!r} needs an imitation entry (PPO from scratch "
                             "starts without the features' teacher)")  # fmt: skip
        if self.start and not (self.imitate and (self.decisions or self.exit)):
            raise ValueError(f"{self.name}: start={self.start!r} continues a shipped imitation file with PPO or "
                             f"expert iteration; it needs imitate > 0 and decisions > 0 or exit (got {self.imitate}, "
                             f"{self.decisions}, {self.exit})")  # fmt: skip
        if self.exit and self.decisions:
            raise ValueError(f"{self.name}: expert iteration (exit) and PPO (decisions > 0) in one entry")
        self._check_exit()

    def _check_exit(self) -> None:
        if not self.exit:
            return
        if not self.imitate:
            raise ValueError(f"{self.name}: exit needs the imitation warm start it iterates from (imitate > 0)")
        for flag in ("--start", "--out"):
            if flag in self.exit:
                raise ValueError(f"{self.name}: exit sets {flag} itself; leave it out of the entry's arguments")
        for word in self.exit:  # one spelling per option, so the shipped iteration is the one the run ends at
            if word.startswith("--") and ("=" in word or (word.startswith("--iter") and word != "--iterations")):
                raise ValueError(f"{self.name}: exit argument {word!r}: write options in full, the value as the "
                                 "next word (e.g. '--iterations', '2')")  # fmt: skip
        self.exit_iterations()  # the rest is checked by the command itself (importing it here would need torch)

    def exit_iterations(self) -> int:
        """``--iterations`` of the expert iteration (the exit command's default, 2, without it)."""
        if "--iterations" not in self.exit:
            return 2
        i = self.exit.index("--iterations")
        value = self.exit[i + 1] if i + 1 < len(self.exit) else ""
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{self.name}: exit --iterations {value!r} is not a positive integer")
        return int(value)

    @property
    def name(self) -> str:
        return f"{self.game}-all" if self.universal else f"{self.game}-{self.players}p"

    @property
    def key(self) -> str:
        return f"{self.game}:{'all' if self.universal else self.players}"

    def imitate_argv(self, out: Path | str) -> list[str]:
        """``python -m experiments.train.imitate`` arguments of the warm start (empty without one); for a universal
        entry ``python -m experiments.train.universal``'s."""
        if not self.imitate:
            return []
        if self.universal:
            argv = ["--game", self.game, "--decisions", str(self.imitate), "--teacher", self.teacher, "--partners",
                    self.partners, "--seed", str(self.seed), "--hidden", str(self.hidden), "--epochs",
                    str(self.epochs), *IMITATE, "--threads", "2", "--out", str(out)]  # fmt: skip
            argv += ["--embed", str(self.embed)] if self.embed else []
            argv += ["--features", self.features] if self.features else []
            return argv + ([] if self.role_heads else ["--no-role-heads"])
        argv = ["--game", self.game, "--players", str(self.players), "--decisions", str(self.imitate),
                "--teacher", self.teacher, "--partners", self.partners, "--seed", str(self.seed),
                "--hidden", str(self.hidden), "--epochs", str(self.epochs), *IMITATE, "--out", str(out)]  # fmt: skip
        argv += ["--embed", str(self.embed)] if self.embed else []
        argv += ["--features", self.features] if self.features else []
        return argv + ([] if self.role_heads else ["--no-role-heads"])

    def dagger_argv(self, out: Path | str) -> list[str]:
        """``python -m experiments.train.imitate`` arguments of the DAgger round (empty without one): the imitation's
        policy as shipped (float16, ``OUT/imitate/policy-f16.npz``) plays a share of the teacher seats, the new
        data are fitted together with the imitation's, seeds offset by 100 from the imitation's."""
        if not (self.imitate and self.dagger):
            return []
        im = Path(out) / "imitate"
        argv = self.imitate_argv(im)
        argv[argv.index("--decisions") + 1] = str(self.dagger)
        argv[argv.index("--seed") + 1] = str(self.seed + 100)
        argv[argv.index("--out") + 1] = str(Path(out) / "dagger")
        return [*argv, "--student", str(im / "policy-f16.npz"), "--student-share", str(self.dagger_share),
                "--extra", str(im / "data.npz")]  # fmt: skip

    def train_argv(self, out: Path | str) -> list[str]:
        """``python -m experiments.train.selfplay`` arguments (empty: the imitation policy is shipped as it is)."""
        if self.imitate and not self.decisions:
            return []
        argv = ["--game", self.game, "--players", str(self.players), "--steps", str(self.decisions),
                "--seed", str(self.seed), "--hidden", str(self.hidden), "--league-agents", self.league_agents,
                *(self.ppo or COMMON), "--out", str(out)]  # fmt: skip
        argv += ["--embed", str(self.embed)] if self.embed else []
        argv += ["--features", self.features] if self.features else []
        if self.imitate:  # PPO continues from the warm start as it would be (or was) shipped (float16)
            argv += ["--init", str(self.init_file(out))]
        return argv + (["--role-heads"] if self.role_heads else [])

    def exit_argv(self, out: Path | str) -> list[str]:
        """``python -m experiments.train.exit`` arguments (empty without expert iteration)."""
        if not self.exit:
            return []
        return [*self.exit, "--start", str(self.init_file(out)), "--out", str(Path(out) / "exit")]

    def exit_result(self, out: Path | str) -> Path:
        """The last iteration's network (the one shipped)."""
        return Path(out) / "exit" / f"it{self.exit_iterations()}" / "policy.npz"

    def warm_start(self, out: Path | str) -> Path:
        """The policy the imitation stages end with (the DAgger round's, else the imitation's)."""
        return Path(out) / ("dagger" if self.dagger else "imitate") / "policy.npz"

    def init_file(self, out: Path | str) -> Path:
        """PPO's ``--init`` or expert iteration's ``--start``: the file shipped at :attr:`start`, else the warm start in
        float16."""
        if self.start:
            return Path(out) / "start-f16.npz"
        return self.warm_start(out).with_name("policy-f16.npz")

    def opponents(self) -> tuple[str, ...]:
        return tuple(self.eval_pairs())

    def eval_pairs(self) -> dict[str, int]:
        """Paired deals per evaluation opponent (the scripted agents cost up to ~1.6 s a 10-player game here)."""
        return EVAL_PAIRS.get(self.name, DEFAULT_PAIRS[self.game])


# The budget (learner decisions) is what fixes a run; base 5 players gets the largest. Saboteur 2 has no role heads:
# six heads of its 2,949 actions would triple the file. Measured wall times are in the manifest.
# The evidence player counts (4, 5, 7, 10) get a wider network fitted longer: at 5 players width 128 and
# 15 epochs raise the held-out agreement with the teacher from 0.645 to 0.691 (docs/training.md).
ENTRIES: tuple[Entry, ...] = (
    # Base 5 players: one DAgger round on the imitation (100k decisions; docs/training.md).
    Entry("base", 5, seed=1405, decisions=0, imitate=300_000, hidden=128, epochs=15, dagger=100_000),
    # Base 4, 7 and 10 players: the network also reads the belief features (agents.base.belief_features;
    # docs/training.md).
    # Base 4 players then trains its saboteur head alone with PPO (trunk and gold-digger head frozen) in games
    # where the deal makes the learner's seat a saboteur, among heuristic and bayes agents (docs/training.md),
    # starting from that file as shipped at 419ca64 (imitation + DAgger, trained at d7f9504).
    Entry("base", 4, seed=1404, decisions=2_400_000, imitate=300_000, hidden=128, epochs=15, dagger=100_000,
          features="bayes", league_agents="heuristic,bayes", ppo=SABOTEUR_HEAD,
          start="419ca643a16914b925e7bf23ed44daef9d68a5cd"),
    Entry("base", 7, seed=1407, decisions=0, imitate=300_000, hidden=128, epochs=15, dagger=100_000,
          features="bayes"),
    Entry("base", 10, seed=1410, decisions=0, imitate=200_000, hidden=128, epochs=15, dagger=100_000,
          features="bayes"),
    # Every other base count (3, 6, 8, 9 players; 64-wide per-count files until 2026-12-05, held-out agreement
    # 0.58-0.62) is played by one network for every count (experiments.train.universal; agreement 0.70-0.74 at every
    # count), which the search also rolls out where a count's own network reads belief features.
    Entry("base", 0, seed=1600, decisions=0, imitate=100_000, hidden=128, epochs=15, universal=True),
    # Every Saboteur 2 count, 2-12 players, 60k teacher decisions each (until 2026-12-06 a 5-player file of its own,
    # seed 1425, 300k decisions, held-out agreement 0.777; the universal one's is higher at 5), and both Duel
    # layouts: one universal network each (experiments.train.universal).
    Entry("sab2", 0, seed=1700, decisions=0, imitate=60_000, hidden=128, epochs=15, role_heads=False,
          universal=True),
    # The Duel's 5,701 actions: a 24-wide bottleneck before the head keeps the 128-wide trunk at the 64-wide size.
    # Both layouts in one file (until 2026-12-06 a seed_5x9 file of its own, seed 1402, 400k decisions, held-out
    # agreement 0.622; the universal one's is 0.603 over both layouts and plays official_5x10 too).
    # Then two rounds of expert iteration in the official layout (40,000 searched decisions each, docs/search.md),
    # from that file as shipped at 965f719 (imitation only, trained at f924ed0): 23.8% -> 35.8% of the points
    # against expert there, 17.6% -> 22.1% in seed_5x9 (tuning deals).
    Entry("duel", 0, seed=1800, decisions=0, imitate=200_000, hidden=128, embed=24, epochs=15,
          partners="greedy,expert", universal=True, start="965f719ddcf0293fd921589fd75f1728ef82750f",
          exit=("--game", "duel", "--duel-layout", "official_5x10", "--iterations", "2", "--decisions", "40000",
                "--chunk", "2000", "--epochs", "6", "--workers", "2", "--seed", "35")),
)


# The evaluation: the best scripted agent of the game in the same seat, and random; paired deals per opponent.
DEFAULT_PAIRS: dict[str, dict[str, int]] = {
    "base": {"heuristic": 50, "expert": 16, "random": 100},
    "sab2": {"heuristic": 120, "random": 150},
    "duel": {"greedy": 150, "random": 150},
}


# Per-entry overrides (the 1,000-game evidence: experiments/evidence.sh). A universal Saboteur 2 file is checked at
# eleven counts (up to 12 players a game): fewer pairs per count keep its check near an hour on 2 cores.
EVAL_PAIRS: dict[str, dict[str, int]] = {"sab2-all": {"heuristic": 40, "random": 40}}


class ShipError(ValueError):
    """A bad ``--only`` selection or an unusable manifest."""


def find_entry(key: str) -> Entry:
    """The entry for ``game:players``; ShipError naming the valid keys otherwise."""
    for e in ENTRIES:
        if e.key == key:
            return e
    raise ShipError(f"no shipped entry {key!r}; valid: {', '.join(e.key for e in ENTRIES)}")
