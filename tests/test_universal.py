"""One network for every player count (agents.universal, NumpyPolicy.for_config, experiments.train.universal)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import make_agent
from agents.blueprint import NetworkBlueprint, load_network
from agents.learned import FORMAT, FORMAT_VERSION, LAYOUT_FIELDS, NumpyPolicy, PolicyMismatchError, load_policy
from agents.universal import universal_layout, variant_configs, variant_name
from saboteur_env import (
    GameConfig,
    action_to_string,
    apply_action,
    encode_observation,
    legal_action_mask,
    new_game,
    num_actions,
    observation_layout,
)


def _played(config: GameConfig, seed: int, steps: int):
    rng = np.random.default_rng(seed)
    s = new_game(config, rng)
    for _ in range(steps):
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
    return s


@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_layout__every_variant_maps_one_to_one_and_actions_keep_their_names(game):
    lay = universal_layout(game)
    flags = set()
    for c in variant_configs(game):
        m = lay.variant(c)
        assert m.obs_index.size == observation_layout(c).size
        assert np.unique(m.obs_index).size == m.obs_index.size and m.obs_index.max() < lay.obs_size - len(lay.names)
        flags.add(m.flag)
        assert m.action_index.size == num_actions(c) and np.unique(m.action_index).size == m.action_index.size
        some = np.random.default_rng(0).choice(num_actions(c), size=200, replace=False)
        assert all(lay.action_names[m.action_index[a]] == action_to_string(c, int(a)) for a in some)
    assert len(flags) == len(lay.names) and min(flags) == lay.obs_size - len(lay.names)


@pytest.mark.parametrize(("game", "n"), [("base", 4), ("base", 10), ("sab2", 3), ("sab2", 7)])
def test_layout__seat_rows_and_event_one_hots_line_up_in_the_frame(game, n):
    """A real observation at n players read back through the frame's layout: seat rows, the seat to act and every
    history row's actor and target offsets are where the n-player layout had them; the rest of the frame is 0."""
    c = GameConfig(game=game, num_players=n)
    s = _played(c, 7, 25)
    obs = encode_observation(s, 1)
    lay = universal_layout(game)
    u = lay.observations(c, obs)[0]
    frame = observation_layout(lay.frame_config)
    small, big = observation_layout(c).split(obs), frame.split(u[: frame.size])
    np.testing.assert_array_equal(big["seats"][:n], small["seats"])
    assert not big["seats"][n:].any()
    np.testing.assert_array_equal(big["board"], small["board"])
    parts_s, parts_b = observation_layout(c).row_parts["history"], frame.row_parts["history"]
    cs, cb = np.cumsum((0, *parts_s)), np.cumsum((0, *parts_b))
    big_n = lay.frame_config.num_players
    seat_parts = [i for i, (a, b) in enumerate(zip(parts_s, parts_b, strict=True)) if (a, b) == (n, big_n)]
    assert seat_parts  # the actor and target one-hots
    for i in range(len(parts_s)):
        got = big["history"][:, cb[i] : cb[i] + parts_s[i]]
        np.testing.assert_array_equal(got, small["history"][:, cs[i] : cs[i + 1]])
        assert not big["history"][:, cb[i] + parts_s[i] : cb[i + 1]].any()
    assert small["history"][:, cs[seat_parts[0]] : cs[seat_parts[0] + 1]].any()  # the game had events with actors
    flag = lay.variant(c).flag
    assert u[flag] == 1 and u[frame.size :].sum() == 1


def _universal_file(path, game: str, hidden: int = 8, heads: int = 2, seed: int = 0, features: str = "") -> str:
    """A random universal network file written the way export_npz writes one (no torch needed)."""
    lay = universal_layout(game)
    rng = np.random.default_rng(seed)
    rs = lay.role_slice
    heads = heads if rs is not None else 1
    size = lay.obs_size + lay.feature_size(features)
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "universal": game,
            "config": {f: getattr(lay.frame_config, f) for f in LAYOUT_FIELDS}, "obs_size": size,
            "num_actions": lay.num_actions, "hidden": hidden, "embed": 0, "num_heads": heads,
            "role_slice": [rs.start, rs.start + heads] if rs is not None else [0, 0], "activation": "tanh"}  # fmt: skip
    if features:
        meta["features"] = features
    high = np.concatenate([lay.high, np.ones(size - lay.obs_size, dtype=np.float32)])
    w = {"scale": (1.0 / high).astype(np.float32), "w0": rng.normal(0, 0.3, (size, hidden)),
         "b0": rng.normal(0, 0.1, hidden), "w1": rng.normal(0, 0.3, (hidden, hidden)),
         "b1": np.zeros(hidden)}  # fmt: skip
    for r in range(heads):
        w |= {f"pi_w{r}": rng.normal(0, 1, (hidden, lay.num_actions)), f"pi_b{r}": rng.normal(0, 1, lay.num_actions),
              f"v_w{r}": rng.normal(0, 1, (hidden, 1)), f"v_b{r}": np.zeros(1)}  # fmt: skip
    out = path / f"universal-{game}{'-' + features if features else ''}.npz"
    np.savez(out, meta=np.array(json.dumps(meta)), **{k: np.asarray(v, dtype=np.float32) for k, v in w.items()})
    return str(out)


@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_policy__specialized_network_equals_the_universal_one_on_universal_input(game, tmp_path):
    path = _universal_file(tmp_path, game, heads=2 if game == "base" else 6)
    whole = NumpyPolicy(path)
    lay = universal_layout(game)
    for c in variant_configs(game)[:: 3 if game != "duel" else 1]:
        pol = load_policy(path, c)
        assert (pol.obs_size, pol.num_actions) == (observation_layout(c).size, num_actions(c))
        obs = np.stack([encode_observation(_played(c, seed, 12), seed % c.num_players) for seed in range(4)])
        lg, v = pol.forward(obs)
        lg_u, v_u = whole.forward(lay.observations(c, obs))
        np.testing.assert_allclose(lg, lg_u[:, lay.variant(c).action_index], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(v, v_u, rtol=1e-5, atol=1e-5)
        assert load_policy(path, c) is pol  # specialized once per configuration
        agent = make_agent(f"learned:{path}", c)  # the learned agent plays it at this count
        agent.reset(0, c.num_players, 3)
        s = _played(c, 11, 5)
        seat = int(s.current_player) if hasattr(s, "current_player") else 0
        mask = legal_action_mask(s)
        assert mask[agent.act(encode_observation(s, seat), mask)]
        NetworkBlueprint(load_network(path, c), c)  # and it is a rollout blueprint (no belief features)


def test_policy__a_universal_belief_feature_network_reads_each_counts_features_by_seat_offset(tmp_path):
    """Belief features line up by seat offset in the universal block: the specialized network on (observation,
    features) equals the universal one on the scattered vector; the learned agent, the search prior and the
    belief-reading rollout blueprint play it at every count."""
    from agents.base.belief_features import features_of_sequence
    from agents.blueprint import BeliefBlueprint
    from agents.search import SearchAgent

    path = _universal_file(tmp_path, "base", features="bayes")
    whole = NumpyPolicy(path)
    lay = universal_layout("base")
    assert whole.obs_size == lay.obs_size + 26
    for c in variant_configs("base")[::2]:
        n = c.num_players
        pol = load_policy(path, c)
        assert pol.features == "bayes" and pol.obs_size == observation_layout(c).size + 2 * n + 6
        states = [_played(c, seed, 9) for seed in range(3)]
        obs = np.stack([encode_observation(s, s.current) for s in states])
        feats = np.concatenate([features_of_sequence(c, s.current, o[None]) for s, o in zip(states, obs, strict=True)])
        lg, _ = pol.forward(np.concatenate([obs, feats], axis=1))
        u_feats = np.zeros((3, 26), dtype=np.float32)
        u_feats[:, :n], u_feats[:, 10 : 10 + n], u_feats[:, 20:] = feats[:, :n], feats[:, n : 2 * n], feats[:, 2 * n :]
        lg_u, _ = whole.forward(np.concatenate([lay.observations(c, obs), u_feats], axis=1))
        np.testing.assert_allclose(lg, lg_u[:, lay.variant(c).action_index], rtol=1e-5, atol=1e-5)
        agent = make_agent(f"learned:{path}", c)
        agent.reset(0, n, 3)
        s = _played(c, 11, 5)
        mask = legal_action_mask(s)
        assert mask[agent.act(encode_observation(s, int(s.current)), mask)]
        BeliefBlueprint(load_network(path, c), c)
        SearchAgent(c, blueprint=path, beliefs=True)
    with pytest.raises(ValueError, match="features='belief' is unknown"):
        lay.feature_size("belief")


def test_policy__a_variant_the_file_does_not_play_is_refused_by_name(tmp_path):
    path = _universal_file(tmp_path, "base")
    with pytest.raises(PolicyMismatchError, match="plays 10, 9, 8, 7, 6, 5, 4, 3"):
        load_policy(path, GameConfig(num_players=5, margin=1))
    with pytest.raises(PolicyMismatchError, match="cannot play game 'sab2'"):
        load_policy(path, GameConfig(game="sab2", num_players=5))


def test_variant_names():
    assert [variant_name(c) for c in variant_configs("duel")] == ["official_5x10", "seed_5x9"]
    with pytest.raises(ValueError, match="game 'chess' is unknown"):
        variant_configs("chess")


def test_to_universal__dense_rows_equal_the_layouts_scatter():
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train.imitate import Options, collect_all
    from experiments.train.universal import to_universal

    c = GameConfig(num_players=4)
    data = collect_all(Options(players=4, decisions=150, workers=1, num_envs=4, seed=5))
    u = to_universal(data, c)
    rows = np.arange(len(data))
    lay = universal_layout("base")
    np.testing.assert_array_equal(u.dense(rows), lay.observations(c, data.dense(rows)))
    m = lay.variant(c)
    np.testing.assert_array_equal(u.action, m.action_index[data.action])
    assert u.finals.shape == (len(data.finals), 10)
    np.testing.assert_array_equal(u.finals[:, :4], data.finals)
    # with belief features: each row's features in the universal feature block, by seat offset
    from experiments.train.imitate_data import concat, with_features

    featured = with_features(data, c, "bayes")
    u = to_universal(featured, c, "bayes")
    assert u.feat is not None and u.feat.shape == (len(data), 26)
    np.testing.assert_array_equal(u.feat[:, lay.feature_index(c, "bayes")], featured.feat)
    np.testing.assert_array_equal(u.feat[:, 4:10], 0)
    np.testing.assert_array_equal(u.dense(rows)[:, lay.obs_size :], u.feat)
    assert concat([u, u]).feat.shape == (2 * len(data), 26)
    with pytest.raises(ValueError, match="carry no belief features"):
        to_universal(data, c, "bayes")
    with pytest.raises(ValueError, match="all carry belief features of one size, or none"):
        concat([u, to_universal(data, c)])


def test_ship__a_universal_entry_trains_ships_evaluates_and_tabulates(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train import ship as sp
    from experiments.train import ship_entries

    monkeypatch.setattr(sp, "POLICY_DIR", tmp_path / "policies")
    monkeypatch.setattr(ship_entries, "IMITATE", ("--workers", "1", "--num-envs", "4", "--temperature", "0.5"))
    entry = sp.Entry("base", 0, seed=3, decisions=0, imitate=40, teacher="heuristic", partners="random", epochs=1,
                     hidden=16, universal=True)  # fmt: skip
    assert (entry.name, entry.key) == ("base-all", "base:all")
    rec = sp.train(entry, tmp_path / "runs")
    assert rec["players"] == list(range(3, 11)) and rec["universal"] and rec["file"] == "base-all.npz"
    im = rec["training"]["imitate"]
    assert set(im["held_out_agreement_per_variant"]) == {str(n) for n in range(3, 11)}
    assert "experiments.train.universal" in rec["training"]["command"]
    assert sp.is_done(entry, {"policies": {"base-all": rec}})
    for n in (3, 10):
        c = GameConfig(num_players=n)
        assert load_policy(tmp_path / "policies" / "base-all.npz", c).num_actions == num_actions(c)
    ev = sp.evaluate_entry(entry, pairs=2, opponents=("random",))
    assert set(ev) == {str(n) for n in range(3, 11)} and ev["5"]["random"]["pairs"] == 2
    monkeypatch.setattr(sp, "ENTRIES", (entry,))
    text = sp.table({"policies": {"base-all": {**rec, "evaluation": ev}}})
    assert text.count("universal imitation") == 8 and "| base | 3 |" in text
    with pytest.raises(ValueError, match="a universal entry has players=0"):
        sp.Entry("base", 5, seed=3, decisions=0, imitate=40, universal=True)
    # a universal entry may read belief features (the base game's): the trainer gets --features
    featured = sp.Entry("base", 0, seed=3, decisions=0, imitate=40, universal=True, features="bayes")
    argv = featured.imitate_argv("out")
    assert argv[argv.index("--features") + 1] == "bayes"
    with pytest.raises(ValueError, match="base game only"):
        sp.Entry("sab2", 0, seed=3, decisions=0, imitate=40, universal=True, features="bayes")


def test_train__a_universal_belief_feature_network_end_to_end(tmp_path):
    """experiments.train.universal --features bayes: two counts collected, their features replayed and lined up,
    one network fitted; the file reads the features at both counts and its held-out agreement is reported per
    count. Refused: a feature set of another game."""
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train.universal import UniversalOptions, main, run

    opt = UniversalOptions(game="base", variants="4,6", decisions=300, workers=1, num_envs=4, hidden=16, epochs=1,
                           features="bayes", out=str(tmp_path / "u"))  # fmt: skip
    meta = run(opt, quiet=True)
    assert set(meta["held_out_agreement"]) == {"4", "6"} and meta["decisions"] >= 600
    for n in (4, 6):
        c = GameConfig(num_players=n)
        pol = load_policy(tmp_path / "u" / "policy.npz", c)
        assert pol.features == "bayes" and pol.obs_size == observation_layout(c).size + 2 * n + 6
    assert main(["--game", "sab2", "--features", "bayes", "--out", str(tmp_path / "x")]) == 2
