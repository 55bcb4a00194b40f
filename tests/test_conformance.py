"""One conformance suite for every registered variant (``saboteur_env.variants.names()`` at collection time).

Each variant is played at its smallest, a middle and its largest player count (plus one case per game-specific
option it declares), through the engine API and the PettingZoo environment, which know no game:

* PettingZoo ``api_test`` / ``seed_test`` / ``render_test`` on ``env(...)`` and ``raw_env(...)``;
* random-play invariants: a legal action while the game runs, illegal ids refused with the state unchanged,
  observations inside the space, the declared bounds on decisions, summed rewards equal to ``returns``,
  ``variant.check_state`` at every step, purity of ``apply_action``;
* ``clone`` / ``pickle`` / ``copy.deepcopy`` mid-game continue identically; the same seed gives the same game in
  processes with different ``PYTHONHASHSEED`` and global RNG noise;
* no leak: resampling what a seat cannot know (``tests/hidden.py``) changes nothing it sees.

Game-specific checks (reference reachability, card conservation, ...) stay in the games' own test files.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import pickle
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hidden import RESAMPLERS
from pettingzoo import AECEnv
from pettingzoo.test import api_test, render_test, seed_test
from toy_variant import LITE_DECK_COUNTS, LiteVariant

from saboteur_env import (
    ActionError,
    GameConfig,
    GameOverError,
    IllegalActionError,
    api,
    env,
    raw_env,
    variants,
)
from saboteur_env.base.cards import DECK_COUNTS, KIND_MAP, KIND_ROCKFALL
from saboteur_env.base.scoring import card_conservation
from saboteur_env.common.config import GAME_OPTIONS, Variant

# A value other than the default for every game-specific option: each variant declaring the option gets one more
# case (at its middle player count) playing with it.
OPTION_VALUES: dict[str, tuple[Any, ...]] = {
    "broken_tool_penalty": (True,), "duel_layout": ("official_5x10",), "rules": ("official",)
}

# Defects of saboteur_env that a check meets, by check and variant (each one reported). Strict xfail: once fixed,
# the test passes and the xfail fails, asking for the entry to go.
KNOWN_DEFECTS: dict[str, dict[str, str]] = {}  # check -> {variant: reason}: a strict xfail until fixed

SEEDS = (0, 1)  # random-play games per case in the default run
SLOW_SEEDS = tuple(range(2, 8))


@dataclass(frozen=True)
class Case:
    """One configuration the suite plays: a variant, a player count and game-specific options."""

    game: str
    num_players: int
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"game": self.game, "num_players": self.num_players, **dict(self.options)}

    def config(self, **overrides: Any) -> GameConfig:
        return GameConfig(**{**self.kwargs, **overrides})

    @property
    def id(self) -> str:
        return "-".join([self.game, f"{self.num_players}p", *(f"{k}={v}" for k, v in self.options)])


def player_counts(variant: Variant) -> tuple[int, ...]:
    """Smallest, a middle and largest player count of a variant (fewer when the range is short)."""
    lo, hi = variant.min_players, variant.max_players
    return tuple(sorted({lo, (lo + hi) // 2, hi}))


def middle_count(variant: Variant) -> int:
    counts = player_counts(variant)
    return counts[len(counts) // 2]


def option_cases(name: str) -> list[Case]:
    """One case per non-default value of each game-specific option the variant declares (the middle player
    count)."""
    variant = variants.get(name)
    middle = middle_count(variant)
    return [
        Case(name, middle, ((option, value),)) for option in variant.options for value in OPTION_VALUES.get(option, ())
    ]


def build_cases(every_count: bool = False) -> list[Case]:
    """Smallest, middle and largest player count of every registered variant (``every_count``: all of them), plus
    the option cases."""
    cases: list[Case] = []
    for name in variants.names():
        variant = variants.get(name)
        counts = range(variant.min_players, variant.max_players + 1) if every_count else player_counts(variant)
        cases += [Case(name, n) for n in counts] + option_cases(name)
    return cases


NAMES: tuple[str, ...] = variants.names()
CASES: list[Case] = build_cases()
FULL_CASES: list[Case] = build_cases(every_count=True)  # the slow tier
MIDDLE: dict[str, Case] = {name: Case(name, middle_count(variants.get(name))) for name in NAMES}
by_case = pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
by_full_case = pytest.mark.parametrize("case", FULL_CASES, ids=lambda c: c.id)
by_variant = pytest.mark.parametrize("name", NAMES)


# ---- helpers ------------------------------------------------------------------------------------------------------
def random_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def random_states(config: GameConfig, seed: int, every: int = 1) -> Iterator[Any]:
    """States along one random game (every ``every`` decisions), played by the engine API."""
    rng = np.random.default_rng(seed)
    state = api.new_game(config, rng)
    k = 0
    while not state.game_over:
        if k % every == 0:
            yield state
        state = api.apply_action(state, random_action(rng, api.legal_action_mask(state)))
        k += 1


def mid_game(config: GameConfig, seed: int) -> Any:
    """A state some way into round 1 (a few decisions per seat played)."""
    steps = 3 * config.num_players + 4
    for k, state in enumerate(random_states(config, seed)):
        if k == steps or state.round > 0:
            return state
    raise AssertionError("the game ended before the middle of round 1")


def continuation(state: Any, seed: int, steps: int = 80) -> list[str]:
    """Fingerprints of a random continuation (actions from a generator seeded with ``seed``; ``state`` mutated)."""
    rng = np.random.default_rng(seed)
    out = [state.fingerprint()]
    for _ in range(steps):
        if state.game_over:
            break
        api.apply_action(state, random_action(rng, api.legal_action_mask(state)), inplace=True)
        out.append(state.fingerprint())
    return out


def env_rollout(e: AECEnv, seed: int, steps: int = 80) -> list[tuple[str, int, bytes, float]]:
    """A random-legal continuation of an environment: (agent, action, observation bytes, reward) per step."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        if all(e.terminations.values()):
            break
        agent = e.agent_selection
        obs = e.observe(agent)
        a = random_action(rng, obs["action_mask"])
        out.append((agent, a, obs["observation"].tobytes(), float(e.rewards[agent])))
        e.step(a)
    return out


def trajectory(kwargs: dict[str, Any], seed: int, noise: bool = False, episodes: int = 2) -> str:
    """Digest of one engine game (state fingerprints) and ``episodes`` environment episodes (observations, rewards,
    actions) from ``seed``; ``noise`` draws from the global ``random`` and ``np.random`` between decisions."""
    h = hashlib.sha256()
    config = GameConfig(**kwargs)
    rng = np.random.default_rng(seed)
    state = api.new_game(config, rng)
    while not state.game_over:
        h.update(state.fingerprint().encode())
        if noise:
            random.random()
            np.random.random()
        state = api.apply_action(state, random_action(rng, api.legal_action_mask(state)))
    h.update(state.fingerprint().encode())
    e = env(**kwargs)
    actions = np.random.default_rng(seed + 1)
    for episode in range(episodes):
        e.reset(seed=seed if episode == 0 else None)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            h.update(obs["observation"].tobytes())
            h.update(np.float64(reward).tobytes())
            if noise:
                random.random()
                np.random.random()
            action = None if term or trunc else random_action(actions, obs["action_mask"])
            h.update(repr((agent, action)).encode())
            e.step(action)
    return h.hexdigest()


# ---- the registry and the cases -----------------------------------------------------------------------------------
def test_conformance__cases_cover_every_variant_and_option():
    assert set(NAMES) >= {"base", "sab2", "duel"}
    for name in NAMES:
        variant = variants.get(name)
        assert isinstance(variant, Variant)
        counts = {c.num_players for c in CASES if c.game == name}
        assert {variant.min_players, variant.max_players} <= counts
        assert set(variant.options) <= set(GAME_OPTIONS)
    assert set(GAME_OPTIONS) <= set(OPTION_VALUES), "give every game-specific option a value to test"


# ---- PettingZoo -----------------------------------------------------------------------------------------------------
@by_case
def test_conformance__pettingzoo_api(case):
    api_test(env(**case.kwargs), num_cycles=300)
    api_test(raw_env(**case.kwargs, reward="win"), num_cycles=300)


@by_case
def test_conformance__pettingzoo_seed(case):
    seed_test(functools.partial(env, **case.kwargs), num_cycles=150)
    seed_test(functools.partial(raw_env, **case.kwargs), num_cycles=60)


@pytest.mark.slow
@by_full_case
def test_conformance__pettingzoo_api_and_seed_every_player_count(case):
    api_test(env(**case.kwargs), num_cycles=500)
    seed_test(functools.partial(env, **case.kwargs), num_cycles=500)


@by_case
def test_conformance__pettingzoo_render(case):
    render_test(
        functools.partial(env, **case.kwargs),
        custom_tests={"ansi": lambda r: len(r) > 0, "rgb_array": lambda r: r.size > 0 and r.any()},
    )
    for viewer in (None, 0, "omniscient"):
        text = raw_env(**case.kwargs, render_mode="ansi", render_viewer=viewer)
        text.reset(seed=1)
        assert isinstance(text.render(), str) and text.render()
        image = raw_env(**case.kwargs, render_mode="rgb_array", render_viewer=viewer)
        image.reset(seed=1)
        picture = image.render()
        assert isinstance(picture, np.ndarray) and picture.dtype == np.uint8
        assert picture.ndim == 3 and picture.shape[2] == 3


# ---- random-play invariants ---------------------------------------------------------------------------------------
def play_checked(case: Case, seed: int, reward: str = "gold", fuzz: int = 2) -> None:
    """One random game through ``raw_env``, checking the engine state before every decision."""
    e = raw_env(**case.kwargs, reward=reward)
    e.reset(seed=seed)
    variant, config = e.variant, e.config
    layout = variant.observation_layout(config)
    num_actions = variant.action_layout(config).num_actions
    rng = np.random.default_rng(seed + 10_000)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    decisions = round_decisions = rounds_ended = 0

    state = e.game
    before = state.fingerprint()
    for bad in (-1, num_actions, 2.5, "1"):
        with pytest.raises(ActionError):
            api.apply_action(state, bad)  # type: ignore[arg-type]
    assert state.fingerprint() == before

    for agent in e.agent_iter():
        obs, step_reward, term, trunc, _ = e.last()
        totals[agent] += step_reward
        if term or trunc:
            assert term and not trunc, "games end by termination, never truncation"
            e.step(None)
            continue
        state = e.game
        assert e.possible_agents[state.current] == agent
        variant.check_state(state)
        o = obs["observation"]
        assert o.dtype == np.float32 and o.shape == (layout.size,)
        assert np.isfinite(o).all() and (o >= 0).all() and (o <= layout.high).all()
        assert np.array_equal(o, api.encode_observation(state, state.current))
        watcher = (state.current + 1 + decisions) % config.num_players  # a seat not to act, in turn
        w = api.encode_observation(state, watcher)
        assert w.shape == (layout.size,) and (w >= 0).all() and (w <= layout.high).all()
        mask = api.legal_action_mask(state)
        assert mask.shape == (num_actions,) and np.array_equal(obs["action_mask"], mask.view(np.int8))
        legal = np.flatnonzero(mask)
        assert legal.size > 0, "the seat to act always has a legal action"

        before = state.fingerprint()
        illegal = np.flatnonzero(~mask)
        for k, a in enumerate(rng.choice(illegal, size=min(fuzz, illegal.size), replace=False)):
            with pytest.raises(IllegalActionError):
                api.apply_action(state, int(a), inplace=k % 2 == 1)
            assert state.fingerprint() == before, "a refused action leaves the state unchanged"
        a = int(rng.choice(legal))
        pure = api.apply_action(state, a)
        assert state.fingerprint() == before, "apply_action without inplace leaves its input unchanged"
        e.step(a)
        assert e.game.fingerprint() == pure.fingerprint(), "inplace and pure transitions agree"

        decisions += 1
        round_decisions += 1
        if e.game.round_just_ended:
            rounds_ended += 1
            assert round_decisions <= config.max_decisions_per_round
            round_decisions = 0
    state = e.game
    assert state.game_over and e.agents == []
    assert rounds_ended == len(state.round_results) == config.rounds
    assert decisions <= config.max_game_length
    assert not api.legal_action_mask(state).any()
    with pytest.raises(GameOverError):
        api.apply_action(state, 0)
    summed = np.array([totals[a] for a in e.possible_agents])
    if reward == "gold":
        assert np.array_equal(summed, api.returns(state)), "summed rewards equal the final score"


@by_case
def test_conformance__random_play_invariants(case):
    for seed in SEEDS[:1] if case.options else SEEDS:  # an option case adds one option to a default case
        play_checked(case, seed)


def with_known_defect(check: str) -> list[Any]:
    """``CASES`` with a strict xfail on the variants where ``check`` meets a defect listed in ``KNOWN_DEFECTS``."""
    defects = KNOWN_DEFECTS.get(check, {})
    return [
        pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=defects[c.game]))
        if c.game in defects
        else pytest.param(c, id=c.id)
        for c in CASES
    ]


@pytest.mark.parametrize("case", with_known_defect("reward_range"))
def test_conformance__summed_rewards_inside_reward_range(case):
    for reward in ("gold", "win"):
        config = case.config(reward=reward)
        lo, hi = api.reward_range(config)
        for seed in range(3):
            total = np.zeros(config.num_players)
            rng = np.random.default_rng(seed)
            state = api.new_game(config, rng)
            while not state.game_over:
                state = api.apply_action(state, random_action(rng, api.legal_action_mask(state)), inplace=True)
                total += state.last_rewards
            assert (lo <= total).all() and (total <= hi).all(), (reward, seed, total.tolist(), (lo, hi))


@pytest.mark.slow
@by_full_case
def test_conformance__random_play_invariants_many(case):
    for seed in SLOW_SEEDS:
        play_checked(case, seed, reward="win" if seed % 2 == 0 else "gold", fuzz=4)


# ---- copies and determinism ---------------------------------------------------------------------------------------
@by_case
def test_conformance__clone_pickle_deepcopy_continue_identically(case):
    state = mid_game(case.config(), seed=5)
    fp = state.fingerprint()
    copies = [state.clone(), pickle.loads(pickle.dumps(state)), copy.deepcopy(state)]
    assert all(c.fingerprint() == fp for c in copies)
    reference = continuation(state.clone(), seed=9)
    assert len(reference) > 10
    for c in copies:
        assert continuation(c, seed=9) == reference
    assert state.fingerprint() == fp, "advancing a copy leaves the original alone"
    assert continuation(state.clone(), seed=10) != reference


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
@by_variant
def test_conformance__env_pickle_deepcopy_and_clone_game(name, wrapped):
    case = MIDDLE[name]
    e = (env if wrapped else raw_env)(**case.kwargs)
    e.reset(seed=5)
    env_rollout(e, seed=0, steps=3 * case.num_players + 4)
    copies = [pickle.loads(pickle.dumps(e)), copy.deepcopy(e)]
    snapshot = e.unwrapped.clone_game()
    fp = snapshot.fingerprint()
    reference = env_rollout(e, seed=9)
    assert len(reference) > 10
    for c in copies:
        assert env_rollout(c, seed=9) == reference
    assert snapshot.fingerprint() == fp != e.unwrapped.game.fingerprint()


_SCRIPT = """
import json, random, sys
sys.path.insert(0, {tests!r})
import numpy as np
random.seed({noise}); np.random.seed({noise})
import conftest  # registers the toy variant
from test_conformance import MIDDLE, trajectory
print(json.dumps({{name: trajectory(case.kwargs, seed=21, noise=True) for name, case in MIDDLE.items()}}))
"""


@pytest.fixture(scope="module")
def digests_by_process() -> list[dict[str, str]]:
    """Trajectory digests per variant from two fresh processes (different hash seeds and global RNG states)."""
    runs = []
    for hashseed in ("1", "12345"):  # both at once
        script = _SCRIPT.format(tests=os.path.dirname(__file__), noise=int(hashseed))
        envvars = dict(os.environ, PYTHONHASHSEED=hashseed)
        runs.append(subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=envvars))
    out = []
    for run in runs:
        stdout, _ = run.communicate(timeout=300)
        assert run.returncode == 0, stdout
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@by_variant
def test_conformance__same_seed_same_game_across_processes(name, digests_by_process):
    kwargs = MIDDLE[name].kwargs
    here = trajectory(kwargs, seed=21)
    assert [d[name] for d in digests_by_process] == [here, here]
    assert trajectory(kwargs, seed=22, episodes=0) != trajectory(kwargs, seed=21, episodes=0)


# ---- information leaks --------------------------------------------------------------------------------------------
def check_no_leak(state: Any, seat: int, resample: Any, rng: np.random.Generator, image: bool) -> None:
    other = resample(state, seat, rng)
    assert np.array_equal(api.encode_observation(state, seat), api.encode_observation(other, seat)), "observation"
    assert api.render_text(state, seat) == api.render_text(other, seat), "seat's text rendering"
    assert api.render_text(state, None) == api.render_text(other, None), "spectator's text rendering"
    if seat == state.current:
        assert np.array_equal(api.legal_action_mask(state), api.legal_action_mask(other)), "mask"
    if image:
        assert np.array_equal(api.render_image(state, seat), api.render_image(other, seat)), "seat's image"


def leak_test(case: Case, seeds: tuple[int, ...], states_per_game: int | None) -> int:
    """Resample for seats of states spread over random games (``None``: every state); returns the checks made."""
    resample = RESAMPLERS.get(case.game)
    assert resample is not None, f"variant {case.game!r} has no resampler in tests/hidden.py RESAMPLERS"
    config = case.config()
    p = config.num_players
    rng = np.random.default_rng(1000 + p)
    checked = 0
    for seed in seeds:
        states = list(random_states(config, seed))
        if states_per_game is not None:
            picks = np.linspace(0, len(states) - 1, states_per_game).round().astype(int)
            states = [states[i] for i in sorted(set(picks.tolist()))]
        for k, state in enumerate(states):
            # Every seat; with many players every seat on every third state, else the seat to act and two more.
            seats = set(range(p)) if p <= 6 or k % 3 == 0 else {state.current, k % p, (state.current + 1) % p}
            for seat in sorted(seats):
                check_no_leak(state, seat, resample, rng, image=seat == state.current or k % 4 == 0)
                checked += 1
    return checked


@by_case
def test_conformance__resampled_hidden_information_is_invisible(case):
    assert leak_test(case, seeds=(case.num_players,), states_per_game=10 if case.options else 16) >= 20


@pytest.mark.slow
@by_case
def test_conformance__resampled_hidden_information_is_invisible_many(case):
    assert leak_test(case, seeds=tuple(range(20, 24)), states_per_game=40) >= 150


@by_variant
def test_conformance__resampling_changes_hidden_state(name):
    """The resampler redraws hidden information (so the leak test can fail): the full state vector and what the
    other seats see change, while the seat's own view does not."""
    resample = RESAMPLERS.get(name)
    assert resample is not None, f"variant {name!r} has no resampler in tests/hidden.py RESAMPLERS"
    config = MIDDLE[name].config()
    state = mid_game(config, seed=1)
    rng = np.random.default_rng(0)
    tries = 10
    changed_state = changed_others = 0
    for _ in range(tries):
        other = resample(state, 0, rng)
        assert np.array_equal(api.encode_observation(state, 0), api.encode_observation(other, 0))
        changed_state += not np.array_equal(api.encode_state(state), api.encode_state(other))
        changed_others += any(
            not np.array_equal(api.encode_observation(state, q), api.encode_observation(other, q))
            for q in range(1, config.num_players)
        )
    assert changed_state >= tries // 2 and changed_others >= tries // 2
    assert state.fingerprint() == mid_game(config, seed=1).fingerprint(), "the resampler leaves its input alone"


# ---- the toy fourth game (tests/toy_variant.py, registered by tests/conftest.py) ---------------------------------
def test_toy__base_lite_plays_a_different_game():
    lite, base = variants.get("base-lite"), variants.get("base")
    assert isinstance(lite, LiteVariant) and lite.rules_version == "base-lite-1" != base.rules_version
    assert int(LITE_DECK_COUNTS.sum()) == 58 and int(DECK_COUNTS.sum()) == 67
    assert LITE_DECK_COUNTS[KIND_ROCKFALL] == LITE_DECK_COUNTS[KIND_MAP] == 0
    no_shows = [KIND_ROCKFALL, KIND_MAP]
    for n in player_counts(lite):
        config = GameConfig(game="base-lite", num_players=n)
        assert config.max_decisions_per_round == 58 and config.max_game_length == 3 * 58
        assert GameConfig(num_players=n).max_decisions_per_round == 67
        state = api.new_game(config, np.random.default_rng(n))
        assert state.round_decks.shape == (3, 58)
        for deck in state.round_decks:
            assert np.array_equal(np.bincount(deck, minlength=len(DECK_COUNTS)), LITE_DECK_COUNTS)
        held = {"base-lite": 0, "base": 0}
        for game in held:
            for seed in range(2):
                for s in random_states(GameConfig(game=game, num_players=n), seed):
                    held[game] += int(s.hands[:, no_shows].sum())
                    if game == "base-lite":
                        assert card_conservation(s).tolist() == LITE_DECK_COUNTS.tolist()
        assert held["base-lite"] == 0 and held["base"] > 0, held  # the same drivers do deal them in the base game


def parametrised_games(function: Any) -> set[str] | None:
    """The variants a test of this module is parametrised over (``None`` when it takes no case or name)."""
    games: set[str] = set()
    found = False
    for mark in getattr(function, "pytestmark", []):
        if mark.name != "parametrize" or mark.args[0] not in ("case", "name"):
            continue
        found = True
        for value in mark.args[1]:
            value = value.values[0] if hasattr(value, "values") else value
            games.add(value.game if isinstance(value, Case) else value)
    return games if found else None


def test_toy__base_lite_goes_through_the_whole_conformance_suite():
    suite = {name: fn for name, fn in globals().items() if name.startswith("test_conformance__")}
    assert len(suite) >= 12
    for name, fn in suite.items():
        games = parametrised_games(fn)
        if name == "test_conformance__cases_cover_every_variant_and_option":
            assert games is None  # it loops over the registry itself
            continue
        assert games == set(NAMES), (name, games)
    assert "base-lite" in NAMES and "base-lite" in RESAMPLERS
    assert {c.num_players for c in CASES if c.game == "base-lite"} == {3, 6, 10}
