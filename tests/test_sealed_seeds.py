"""Issue 34 §4: at every entry point that seats agents, the seeds the agents receive are sealed: not a function of the
public (deal) seed. For each entry point: the same public seed played twice without a given secret (as two processes
would: a fresh session secret each) gives different agent seeds; none of them is what the old derivation from the
public seed gave; and a given secret reproduces them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from gymnasium.utils import seeding as gym_seeding

from agents.agent import RandomAgent, RoleDispatch
from agents.claims import ClaimsAgent
from agents.ismcts import ISMCTSAgent
from agents.text import TextAgent
from saboteur_env import GameConfig, SingleSeatEnv
from saboteur_env.common import seeding
from saboteur_env.text import FailureStats

PUBLIC = 7  # the public seed every run below shares


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every seed an agent (or a wrapper around one) is reset with, in order."""
    log: list[int] = []
    for cls in (RandomAgent, RoleDispatch, ClaimsAgent, TextAgent, ISMCTSAgent):

        def reset(self: object, seat: int, n: int, seed: int | None, _orig: Callable = cls.reset) -> None:
            log.append(seed)
            _orig(self, seat, n, seed)

        monkeypatch.setattr(cls, "reset", reset)
    yield log
    seeding.session_secret.cache_clear()  # later tests get a fresh session secret, as a new process would


def _twice(seen: list[int], play: Callable[[], object]) -> tuple[list[int], list[int]]:
    """The agent seeds of ``play()`` run twice, each as a new process would (a fresh session secret)."""
    runs = []
    for _ in range(2):
        seeding.session_secret.cache_clear()
        seen.clear()
        play()
        runs.append(list(seen))
    assert runs[0], "the entry point seated no agent"
    return runs[0], runs[1]


def _spawned(entropy: object, n: int) -> set[int]:
    return {int(s.generate_state(1)[0]) for s in np.random.SeedSequence(entropy).spawn(n)}  # type: ignore[arg-type]


def _sealed(a: list[int], b: list[int], old: set[int]) -> None:
    assert a != b, "two runs on the same public seed gave the agents the same seeds"
    assert None not in a and not set(a) & old, "an agent got the seed the old scheme derived from the public seed"


def test_tournament__agent_seeds_are_sealed(seen: list[int]) -> None:
    from experiments.tournament.loop import play
    from experiments.tournament.rounds import GameSpec, game_secret, seat_agents

    a, b = _twice(seen, lambda: play(GameSpec("base", 4, ("random", "random"), PUBLIC, beliefs=False)))
    _sealed(a, b, _spawned(PUBLIC, 4))
    seen.clear()
    play(GameSpec("base", 4, ("random", "random"), PUBLIC, beliefs=False, secret=game_secret(3, ("k",))))
    again = list(seen)
    seen.clear()
    play(GameSpec("base", 4, ("random", "random"), PUBLIC, beliefs=False, secret=game_secret(3, ("k",))))
    assert seen == again  # a given secret reproduces them
    seen.clear()
    seat_agents([RandomAgent(GameConfig(num_players=3)) for _ in range(3)], game_secret(3, ("k",)), PUBLIC)
    assert seen == seeding.sealed_seeds(game_secret(3, ("k",)), 3)  # the tournament's seeds are the library's


def test_ismcts_experiment__agent_seeds_are_sealed(seen: list[int], tmp_path) -> None:
    from experiments.analysis import ismcts as exp

    runs = iter(range(10))

    def play(*extra: str) -> None:
        out = tmp_path / f"run{next(runs)}.jsonl"
        exp.main(["--players", "3", "--games", "1", "--start", str(PUBLIC), "--sims", "1", "--lineup", "random",
                  "--out", str(out), *extra])  # fmt: skip

    a, b = _twice(seen, play)
    _sealed(a, b, _spawned(PUBLIC, 3))
    assert a[:3] == a[3:6]  # both games of the pair: the same seats' seeds
    seen.clear()
    play("--secret", "abc")
    first = list(seen)
    seen.clear()
    play("--secret", "abc")
    assert seen == first
    rec = json.loads((tmp_path / "run3.jsonl").read_text())
    assert rec["seeds"]["scheme"] == "sealed-v1"  # the game's secret is logged with it, after the game
    with pytest.raises(SystemExit):
        exp.main(["--secret", "nope", "--out", str(tmp_path / "bad.jsonl")])


def test_claims_report__agent_seeds_are_sealed(seen: list[int]) -> None:
    from experiments.analysis.claims_report import render, report

    cfg = GameConfig(num_players=3, rounds=1, claims=True)
    a, b = _twice(seen, lambda: report(cfg, "random", deals=2, seed=PUBLIC, reaction=False))
    _sealed(a, b, {(PUBLIC + g) * 1000 + s for g in range(2) for s in range(3)})
    seen.clear()
    r = report(cfg, "random", deals=2, seed=PUBLIC, reaction=False, secret=11)
    first = list(seen)
    seen.clear()
    report(cfg, "random", deals=2, seed=PUBLIC, reaction=False, secret=11)
    assert seen == first and r["secret"] == seeding.format_secret(11) and seeding.format_secret(11) in render(r)


def test_league_evaluation__agent_seeds_are_sealed(seen: list[int]) -> None:
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train.league import evaluate

    cfg = GameConfig(num_players=3, rounds=1)

    def role_of(obs: np.ndarray) -> np.ndarray:
        return np.zeros(len(obs), dtype=np.int64)

    def play(secret: int | None = None) -> None:
        evaluate(cfg, "random", "random", 2, PUBLIC, ("miner", "saboteur"), role_of, secret=secret)

    a, b = _twice(seen, play)
    old = {int(x) for x in np.random.SeedSequence([PUBLIC, 0xE7A1]).generate_state(2 * 3)}
    _sealed(a, b, old | {int(x) for x in np.random.SeedSequence([PUBLIC, 0x1EA2]).generate_state(2)})
    seen.clear()
    play(secret=5)
    first = list(seen)
    seen.clear()
    play(secret=5)
    assert seen == first


def test_policy_observer__agent_seeds_are_sealed(seen: list[int]) -> None:
    from experiments.analysis.policy_observer import evaluate

    a, b = _twice(seen, lambda: evaluate("random", 4, 3, 1, 0.05, PUBLIC, boot=5))
    old = {int(np.random.SeedSequence([g, s, 0x0B5]).generate_state(1)[0]) for g in range(PUBLIC, PUBLIC + 4)
           for s in range(3)}  # fmt: skip
    _sealed(a, b, old)


def _old_single_seat(seed: int, env: SingleSeatEnv) -> set[int]:
    """The opponents' seeds the old SingleSeatEnv drew: from the generator that drew the deal."""
    rng, _ = gym_seeding.np_random(seed)
    rng.integers(2**62)
    rng.integers(len(env.learner_seats))
    return {int(rng.integers(2**62)) for _ in range(env.config.num_players - 1)}


def test_single_seat_env__opponents_seeds_are_sealed(seen: list[int]) -> None:
    def make(**kw: object) -> SingleSeatEnv:
        return SingleSeatEnv(lambda s: RandomAgent(GameConfig(num_players=4)), num_players=4, **kw)

    a, b = _twice(seen, lambda: make().reset(seed=PUBLIC))
    _sealed(a, b, _old_single_seat(PUBLIC, make()))
    # One env repeats an episode for a repeated seed (Gymnasium's promise), and the deal is the seed's.
    env = make()
    seen.clear()
    obs1, info1 = env.reset(seed=PUBLIC)
    first = list(seen)
    seen.clear()
    obs2, info2 = env.reset(seed=PUBLIC)
    assert seen == first and info1["seat"] == info2["seat"] and np.array_equal(obs1, obs2)
    # A given opponent_secret reproduces the opponents across envs.
    seen.clear()
    make(opponent_secret=9).reset(seed=PUBLIC)
    first = list(seen)
    seen.clear()
    make(opponent_secret=9).reset(seed=PUBLIC)
    assert seen == first
    from saboteur_env import ConfigError

    for bad in (-1, 1 << 128, "9", True, 1.5):
        with pytest.raises(ConfigError, match=r"opponent_secret=.* must be an int in 0\.\.2\*\*128-1"):
            make(opponent_secret=bad)


def test_demo_helpers__agent_seeds_are_sealed(seen: list[int], monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from agents import llm
    from agents.duel import expert as expert_duel
    from agents.sab2 import expert as expert_sab2
    from agents.text import compare

    cfg = GameConfig(num_players=3, rounds=1)
    a, b = _twice(seen, lambda: compare(cfg, "random", range(PUBLIC, PUBLIC + 1)))
    _sealed(a, b, {PUBLIC * 100 + s for s in range(3)})

    a, b = _twice(seen, lambda: expert_duel.bench(games=1, base="random", seed=PUBLIC))
    _sealed(a, b, {PUBLIC})
    a, b = _twice(seen, lambda: expert_sab2.bench(3, games=1, base="random", seed=PUBLIC))
    _sealed(a, b, {PUBLIC})

    class Stub(RandomAgent):  # the llm seat without a chat endpoint (what agents.llm.main reads of it)
        def __init__(self, config: GameConfig, **_: object) -> None:
            super().__init__(config)
            self.stats, self.transcript = FailureStats(), []

        def log_record(self) -> dict:
            return {"usage": {}, "failures": {}, "constraint": {}, "transcript": []}

    monkeypatch.setattr(llm, "LLMAgent", Stub)
    a, b = _twice(seen, lambda: llm.main(["--game", "duel", "--seed", str(PUBLIC), "--opponent", "random"]))
    _sealed(a, b, {PUBLIC, PUBLIC + 1})
    capsys.readouterr()


def test_seeding__bad_input_is_named() -> None:
    with pytest.raises(seeding.SecretError, match=r"secret=-1 must be an int in 0\.\.2\*\*128-1"):
        seeding.game_secret(-1, ("k",))
    with pytest.raises(seeding.SecretError, match="only strings and numbers"):
        seeding.game_secret(1, (object(),))
    with pytest.raises(ValueError, match="n=-1 seats"):
        seeding.sealed_seeds(1, -1)
    # The key separates games: the same secret, different keys, different seeds.
    assert seeding.seat_seeds(3, ("a", 1), 5) != seeding.seat_seeds(3, ("a", 2), 5)
    assert seeding.seat_seeds(3, ("a", 1), 5) == seeding.sealed_seeds(seeding.game_secret(5, ("a", 1)), 3)
