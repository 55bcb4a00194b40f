"""Regression tests for defects found while making the games peers (each failed before its fix)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import saboteur_env
from saboteur_env import (
    ActionError,
    ConfigError,
    GameConfig,
    IllegalActionError,
    SeatError,
    StateError,
    action_layout,
    apply_action,
    encode_observation,
    legal_action_mask,
    new_game,
    player_view,
    render_image,
    render_text,
)


def test_defect__no_submodule_shadows_a_public_name():
    """``saboteur_env.env`` was replaced by the submodule of the same name on first use: importing a submodule sets
    the package attribute of its name, so no submodule may be named like a public (or lazily provided) name."""
    import importlib
    import pkgutil

    submodules = {m.name for m in pkgutil.iter_modules(saboteur_env.__path__)}
    assert not submodules & (set(saboteur_env.__all__) - {"variants"})  # ``variants`` is the module itself
    for name in submodules:
        try:
            importlib.import_module(f"saboteur_env.{name}")
        except ImportError as err:  # a binding whose optional extra is missing (saboteur_env.puffer) says so
            assert "extra" in str(err), err
    assert callable(saboteur_env.env) and callable(saboteur_env.new_game)


def test_defect__env_factories_survive_importing_the_env_module():
    import saboteur_env.aec  # the import that used to shadow the factory

    for _ in range(2):
        saboteur_env.env().reset(seed=0)
        saboteur_env.raw_env().reset(seed=0)
    assert callable(saboteur_env.env) and isinstance(saboteur_env.raw_env(), saboteur_env.aec.raw_env)


def _play_to_round_end(e, rng: np.random.Generator) -> None:
    while not any("round_result" in e.infos[a] for a in e.agents):
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("game,players", [("base", 4), ("sab2", 5), ("duel", 2)])
def test_defect__round_result_infos_are_fresh_copies(game, players):
    """Sorting one agent's info list changed other seats' infos, observations and the engine's round results."""
    e = saboteur_env.raw_env(game=game, num_players=players)
    e.reset(seed=3)
    _play_to_round_end(e, np.random.default_rng(0))
    game_state = e.unwrapped.game
    before_results = copy.deepcopy(game_state.round_results)
    before_obs = [encode_observation(game_state, s).copy() for s in range(players)]
    first = e.agents[0]
    others = {a: repr(e.infos[a]) for a in e.agents[1:]}
    for value in e.infos[first]["round_result"].values():
        if isinstance(value, list):
            value.sort(key=lambda v: -1 if v is None else v)
            value.append(99)
    assert game_state.round_results == before_results
    assert {a: repr(e.infos[a]) for a in e.agents[1:]} == others
    for s in range(players):
        assert np.array_equal(encode_observation(game_state, s), before_obs[s])


def test_defect__sab2_illegal_theft_is_an_illegal_action_error():
    """An illegal Theft id raised IndexError while building the message."""
    cfg = GameConfig(game="sab2", num_players=5)
    layout = action_layout(cfg)
    theft = [a for a in range(layout.num_actions) if layout.decode(a).segment == "theft"]
    rng = np.random.default_rng(0)
    state = new_game(cfg, rng)
    checked = 0
    while not state.game_over and checked < 20:
        mask = legal_action_mask(state)
        for a in theft:
            if not mask[a]:
                with pytest.raises(IllegalActionError, match="illegal action"):
                    apply_action(state, a)
                checked += 1
        state = apply_action(state, int(rng.choice(np.flatnonzero(mask))))
    assert checked >= 20


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"game": ["base"]}, "game=\\['base'\\] must be a str"),
        ({"game": {}}, "game={} must be a str"),
        ({"game": "duel", "duel_layout": ["seed_5x9"]}, "duel_layout=\\['seed_5x9'\\] must be a str"),
        ({"duel_layout": {}}, "duel_layout={} must be a str"),
        ({"game": "chess"}, "game='chess' is not supported; valid: 'base', 'sab2', 'duel'"),
    ],
)
def test_defect__unhashable_or_unknown_config_values_are_config_errors(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        GameConfig(**kwargs)


@pytest.mark.parametrize("viewer", [True, False, np.bool_(True), -1, 4, "spectator", 1.0])
def test_defect__bad_render_viewer_is_refused_at_construction(viewer):
    with pytest.raises(ConfigError, match="render_viewer"):
        saboteur_env.raw_env(render_mode="ansi", render_viewer=viewer)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_defect__numpy_integer_render_viewer_renders(mode):
    e = saboteur_env.raw_env(game="sab2", num_players=4, render_mode=mode, render_viewer=np.int64(1))
    e.reset(seed=0)
    assert e.render_viewer == 1 and type(e.render_viewer) is int
    assert e.render() is not None


@pytest.mark.parametrize("game,players", [("base", 4), ("sab2", 5), ("duel", 2)])
def test_defect__zero_dimensional_integer_actions_are_accepted(game, players):
    """The action space contains ``np.array(a)``; raw_env rejected it."""
    e = saboteur_env.raw_env(game=game, num_players=players)
    e.reset(seed=1)
    a = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    assert e.action_space(e.agent_selection).contains(np.array(a))
    before = e.unwrapped.game.num_decisions
    e.step(np.array(a))
    assert e.unwrapped.game.num_decisions == before + 1
    with pytest.raises(ActionError, match="must be an int"):
        e.step(np.array([a]))
    with pytest.raises(ActionError, match="must be an int"):
        e.step(np.array(1.0))


@pytest.mark.parametrize(
    "game,players,field",
    [("base", 4, "hands"), ("base", 4, "gold_nuggets"), ("sab2", 5, "hands"), ("sab2", 5, "gold"),
     ("duel", 2, "hands")],
)
def test_defect__reset_from_a_state_with_negative_counts_is_refused(game, players, field):
    e = saboteur_env.raw_env(game=game, num_players=players)
    e.reset(seed=0)
    bad = e.unwrapped.game.clone()
    getattr(bad, field).flat[0] = -1
    with pytest.raises(StateError, match=f"{field} holds a negative entry"):
        e.reset(options={"game": bad})
    e.reset(options={"game": e.unwrapped.game})  # a valid state is still accepted


def test_defect__reset_refuses_a_state_of_another_game_or_config():
    e = saboteur_env.raw_env(num_players=4)
    with pytest.raises(ConfigError, match="GameState"):
        e.reset(options={"game": new_game(GameConfig(game="duel"), np.random.default_rng(0))})
    with pytest.raises(ConfigError, match="config"):
        e.reset(options={"game": new_game(GameConfig(num_players=5), np.random.default_rng(0))})


def test_defect__reset_refuses_a_state_whose_observation_leaves_the_space():
    e = saboteur_env.raw_env(num_players=4)
    e.reset(seed=0)
    bad = e.unwrapped.game.clone()
    bad.gold_nuggets[0] = 10_000  # above the observation bound of my_nuggets
    with pytest.raises(StateError, match="leaves the observation space"):
        e.reset(options={"game": bad})


@pytest.mark.parametrize("game,players", [("base", 4), ("sab2", 5), ("duel", 2)])
@pytest.mark.parametrize("seat", [-1, 99, True, 1.5, "0"])
def test_defect__engine_helpers_name_a_bad_seat(game, players, seat):
    state = new_game(GameConfig(game=game, num_players=players), np.random.default_rng(0))
    for helper in (encode_observation, player_view):
        with pytest.raises(SeatError, match="seat"):
            helper(state, seat)
    if seat != "0":
        for picture in (render_text, render_image):
            with pytest.raises(SeatError, match="viewer"):
                picture(state, seat)


@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_defect__max_game_length_is_a_true_bound(game):
    """Saboteur 2 claimed 201 decisions although its games run to ~370."""
    cfg = GameConfig(game=game, num_players=12 if game == "sab2" else None)
    rng = np.random.default_rng(5)
    for _ in range(3):
        state = new_game(cfg, rng)
        per_round = [0]
        while not state.game_over:
            state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
            per_round[-1] += 1
            if state.round_just_ended:
                per_round.append(0)
        assert max(per_round) <= cfg.max_decisions_per_round
        assert state.num_decisions <= cfg.max_game_length
    if game == "sab2":
        assert cfg.max_game_length > 370


def test_defect__a_base_variant_with_a_bigger_deck_plays_to_the_end():
    """Event capacity and observation bounds follow the variant's deck (they were fixed at 67 cards)."""
    from saboteur_env import variants
    from saboteur_env.base.cards import DECK_COUNTS
    from saboteur_env.variants import BaseGame

    class DoubleDeck(BaseGame):
        name = "base-double-test"
        rules_version = "base-double-1"
        deck_counts = DECK_COUNTS * 2

    variants.register(DoubleDeck(), replace=True)
    try:
        cfg = GameConfig(game="base-double-test", num_players=3)
        assert cfg.max_decisions_per_round == 134
        rng = np.random.default_rng(0)
        state = new_game(cfg, rng)
        high = saboteur_env.observation_layout(cfg).high
        while not state.game_over:
            obs = encode_observation(state, state.current)
            assert (obs <= high).all()
            state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
        assert state.num_decisions > 3 * 67  # more decisions than the rulebook deck allows
    finally:
        variants.unregister("base-double-test")
