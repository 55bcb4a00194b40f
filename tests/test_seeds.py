"""Sealed agent seeds and declared oracles: an agent's seed carries no information about the deal, and only
agents declared ``oracle = True`` receive the privileged state."""

from __future__ import annotations

import pytest

from agents import agent_names, make_agent, oracle_names
from agents.agent import RandomAgent, RoleDispatch, bind_oracle, is_oracle
from experiments.tournament.cli import main
from experiments.tournament.logs.format import game_key
from experiments.tournament.logs.read import read_rounds
from experiments.tournament.loop import play
from experiments.tournament.rounds import (
    LEGACY_SECRET,
    GameSpec,
    SecretError,
    agent_seeds,
    draw_secret,
    format_secret,
    game_secret,
    logged_secret,
    oracle_name,
    parse_secret,
    session_secret,
)
from experiments.tournament.run import run
from experiments.tournament.tasks import replay_records
from saboteur_env import raw_env


def _deal(n: int, seed: int) -> tuple:
    """Everything hidden at the start of game ``seed``: roles, hands, goals, deck."""
    env = raw_env(num_players=n)
    env.reset(seed=seed)
    g = env.unwrapped.game
    return g.roles.tolist(), g.goal_kind.tolist(), env.state().tobytes()


def test_secret__hex_round_trip_and_bad_input():
    s = draw_secret()
    assert 0 <= s < 1 << 128 and parse_secret(format_secret(s)) == s and parse_secret("0x1F") == 31
    for bad in ("", "xyz", "1" * 33, "-5"):
        with pytest.raises(SecretError, match="hex digits"):
            parse_secret(bad)
    with pytest.raises(SecretError, match=r"0\.\.2\*\*128-1"):
        game_secret(1 << 128, ("base", 5, "random", "random", "", 0))


def test_seeds__independent_of_the_deal():
    n = 5
    # Same agent seeds (same game secret), different deals: the seeds cannot determine the deal.
    g = draw_secret()
    assert agent_seeds(g, 3, n) == agent_seeds(g, 4, n)
    assert _deal(n, 3) != _deal(n, 4)
    # Same deal, different secrets: different seeds, and the deal does not move.
    key = ("base", n, "random", "random", "", 3)
    a, b = game_secret(1, key), game_secret(2, key)
    assert agent_seeds(a, 3, n) != agent_seeds(b, 3, n)
    # The game secret depends on every part of the key (another cell or seed gets another secret).
    others = [("base", n, "random", "covert", "", 3), ("base", n, "random", "random", "", 4), ("sab2", n, "random", 3)]
    assert len({game_secret(1, k) for k in [key, *others]}) == 4
    # Seats get distinct seeds.
    assert len(set(agent_seeds(a, 3, n))) == n


def _attack(seat_seed: int, seat: int, n: int, cell: tuple, candidates: range) -> int | None:
    """The attack of the audit: re-derive the seat's seed for every candidate public seed (legacy derivation) and,
    in case the secret were guessable, for small secrets too; return the public seed found, if any."""
    for seed in candidates:
        if agent_seeds(LEGACY_SECRET, seed, n)[seat] == seat_seed:
            return seed
        for secret in range(64):
            if agent_seeds(game_secret(secret, (*cell, seed)), seed, n)[seat] == seat_seed:
                return seed
    return None


def test_seeds__brute_force_over_public_seeds_recovers_nothing():
    n, seed, seat = 4, 37, 2
    cell = ("base", n, "random", "random", "")
    # Legacy seeding (before this change) falls to the attack: the agent finds its game and so the whole deal.
    legacy = agent_seeds(LEGACY_SECRET, seed, n)[seat]
    found = _attack(legacy, seat, n, cell, range(60))
    assert found == seed and _deal(n, found) == _deal(n, seed)
    # Sealed seeding: a tournament game's seat seed matches no candidate.
    records = next(iter(run([n], ["random"], ["random"], 1, seed=seed)))
    sealed = agent_seeds(logged_secret(records), seed, n)[seat]
    assert _attack(sealed, seat, n, cell, range(60)) is None


def test_seeds__logged_after_the_game_and_replayable(tmp_path):
    records = play(GameSpec("base", 4, ("random", "random"), seed=5, beliefs=False))
    secret = logged_secret(records)
    assert secret != LEGACY_SECRET and all(r["seeds"]["secret"] == format_secret(secret) for r in records)
    assert "seeds" not in records[0]["header"]  # the header is built while the game is played
    replay_records(records, full=True)  # the logged secret reproduces the agents exactly
    tampered = [dict(r, seeds=dict(r["seeds"], secret=format_secret(secret ^ 1))) for r in records]
    with pytest.raises(AssertionError, match="agents re-run"):
        replay_records(tampered, full=True)
    # Two plays of the same deal without a secret: same deal, different agent randomness.
    again = play(GameSpec("base", 4, ("random", "random"), seed=5, beliefs=False))
    assert again[0]["header"]["roles"] == records[0]["header"]["roles"]
    assert [r["actions"] for r in again] != [r["actions"] for r in records]


def test_run__session_secret_repeats_in_a_process_and_a_given_secret_overrides_it():
    args = ([4], ["random"], ["random"], 1)
    a, b = (next(iter(run(*args, seed=2, beliefs=False))) for _ in range(2))
    c = next(iter(run(*args, seed=2, beliefs=False, secret=session_secret() ^ 1)))
    assert a == b and logged_secret(a) == game_secret(session_secret(), game_key(a[0]["header"]))
    assert [r["actions"] for r in c] != [r["actions"] for r in a] and c[0]["header"]["roles"] == a[0]["header"]["roles"]


def test_tournament__secret_option_reproduces_and_is_printed_at_the_end(tmp_path, capsys):
    args = ["--players", "4", "--games", "1", "--miners", "random", "--saboteurs", "random", "--no-beliefs"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    printed = err.split("agent-seed secret: ")[1].split()[0]
    assert main([*args, "--out", str(tmp_path / "b"), "--secret", printed]) == 0
    a, b = list(read_rounds(tmp_path / "a")), list(read_rounds(tmp_path / "b"))
    assert [r["actions"] for r in a] == [r["actions"] for r in b] and a[0]["seeds"] == b[0]["seeds"]
    assert logged_secret(a) == game_secret(parse_secret(printed), game_key(a[0]["header"]))
    with pytest.raises(SystemExit):
        main([*args, "--secret", "not-hex"])
    assert "--secret: secret 'not-hex' must be 1 to 32 hex digits" in capsys.readouterr().err


class _Sneaky(RandomAgent):
    """Has a bind_state method but does not declare itself an oracle."""

    got: object = None

    def bind_state(self, state_fn) -> None:
        self.got = state_fn


def test_oracles__only_declared_agents_get_the_state():
    cfg = raw_env(num_players=4).config
    sneaky = _Sneaky(cfg)
    assert not bind_oracle(sneaky, lambda: None) and sneaky.got is None
    composite = RoleDispatch(cfg, _Sneaky(cfg), make_agent("role_oracle", cfg, "saboteur"))
    assert is_oracle(composite)
    composite.bind_state(lambda: "state")
    assert composite.miner.got is None and composite.saboteur._state_fn() == "state"
    assert not is_oracle(RoleDispatch(cfg, _Sneaky(cfg), _Sneaky(cfg)))
    # The declarations are what the tables flag, and they agree with the registry's (agents.oracle_names).
    for game in ("base", "sab2", "duel"):
        assert {name for name in agent_names(game, kind="scripted") if oracle_name(name, game)} == oracle_names(game)
    assert not oracle_name("ppo:model.zip") and not oracle_name("greedy", "duel")
    # Declared oracles still play (they receive the state through the one plumbing path).
    assert play(GameSpec("base", 4, ("role_oracle", "gold_oracle"), seed=1, beliefs=False))
    assert play(GameSpec("sab2", 4, ("role_oracle",), seed=1))
