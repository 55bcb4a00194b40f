"""The compiled Duel core against the numpy reference engine: random games, hand-built positions with every legal
move, conversions, set-up and the vector env. (The slow tier plays 2,000+ games.)"""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch, padded
from saboteur_env.duel import kernels as kd
from saboteur_env.duel import observation
from saboteur_env.duel import reference as rules
from saboteur_env.duel.actions import duel_action_layout
from saboteur_env.duel.convert import from_reference, round_results, to_reference
from saboteur_env.duel.positions import make_duel_state
from saboteur_env.duel.state import DuelState


def _biased_action(mask: np.ndarray, segment_of: np.ndarray, rng: np.random.Generator) -> int:
    """Half the time uniform over legal ids, else uniform over the legal segments first: bribes, keys, rockfalls,
    maps and two-card discards show up often, not only placements and passes."""
    legal = np.flatnonzero(mask)
    if rng.random() < 0.5:
        return int(rng.choice(legal))
    seg = segment_of[legal]
    t = rng.choice(np.unique(seg))
    return int(rng.choice(legal[seg == t]))


def _expand(compact: np.ndarray, config: GameConfig) -> np.ndarray:
    return kd.expand_compact(compact, config)


def play_equivalent(config: GameConfig, seeds: list[int], *, all_seats_every: int = 10, policy_seed: int = 0) -> int:
    """Play ``len(seeds)`` games in a core batch and in the reference, comparing after every decision: masks, the
    acting seat's float and compact observations, both seats' observations every ``all_seats_every`` decisions,
    rewards, scalars, events; fingerprints every 16 decisions and at the end; round results. Returns decisions."""
    n = len(seeds)
    batch = Batch(config, n)
    batch.seed(seeds)
    batch.setup()
    refs = [rules.new_game(config, np.random.default_rng(s)) for s in seeds]
    segment_of = duel_action_layout(config).segment_of
    a_n = batch.num_actions
    mask = np.zeros((n, padded(a_n)), np.int8)
    num_legal = np.zeros(n, np.int64)
    obs = np.zeros((n, batch.obs_size), np.float32)
    compact = np.zeros((n, batch.compact_size), np.int16)
    rng = np.random.default_rng(policy_seed)
    active = np.ones(n, dtype=bool)
    decisions = 0
    step = 0
    while active.any():
        batch.masks(mask, num_legal)
        batch.observe(np.full(n, -1, np.int64), obs)
        batch.observe_compact(np.full(n, -1, np.int64), compact)
        expanded = _expand(compact, config)
        actions = np.full(n, -1, np.int64)
        for b in np.flatnonzero(active):
            ref = refs[b]
            m = rules.legal_action_mask(ref)
            assert np.array_equal(mask[b, :a_n].astype(bool), m), f"mask differs: game {b} decision {step}"
            assert num_legal[b] == m.sum()
            expected = observation.encode_observation(ref, ref.current)
            assert np.array_equal(obs[b], expected), f"observation differs: game {b} decision {step}"
            assert np.array_equal(expanded[b], expected), f"compact observation differs: game {b} decision {step}"
            actions[b] = _biased_action(m, segment_of, rng)
        if step % all_seats_every == 0:
            for seat in (0, 1):
                batch.observe(np.full(n, seat, np.int64), obs)
                batch.observe_compact(np.full(n, seat, np.int64), compact)
                expanded = _expand(compact, config)
                for b in np.flatnonzero(active):
                    expected = observation.encode_observation(refs[b], seat)
                    assert np.array_equal(obs[b], expected) and np.array_equal(expanded[b], expected)
        for b in np.flatnonzero(active):
            batch.apply(actions, int(b), int(b) + 1)
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            decisions += 1
            assert np.array_equal(batch.field("last_rewards")[b], ref.last_rewards.astype(np.float32))
            sc = batch.field("sc")[b]
            assert (sc[kd.SC_CURRENT], sc[kd.SC_ROUND], sc[kd.SC_DECK_POS], sc[kd.SC_NUM_EVENTS]) == (
                ref.current, ref.round, ref.deck_pos, len(ref.events))  # fmt: skip
            assert sc[kd.SC_ERROR] == 0
            if ref.game_over or step % 16 == 0:
                assert to_reference(batch, int(b)).fingerprint() == ref.fingerprint(), f"game {b} decision {step}"
            if ref.game_over:
                assert sc[kd.SC_OVER] == 1
                assert round_results(batch, int(b)) == ref.round_results
                active[b] = False
        step += 1
    return decisions


CONFIGS = [
    (GameConfig(game="duel"), 48),
    (GameConfig(game="duel", duel_layout="official_5x10"), 40),
    (GameConfig(game="duel", reward="win", history_length=5, margin=1), 24),
    (GameConfig(game="duel", duel_layout="official_5x10", rounds=1, history_length=0), 24),
    (GameConfig(game="duel", rounds=2, history_length=40, margin=2), 16),
]


@pytest.mark.parametrize(("config", "games"), CONFIGS, ids=lambda c: str(c) if isinstance(c, int) else None)
def test_random_games_equal_reference(config: GameConfig, games: int) -> None:
    seeds = [500 + 7 * g + config.rounds for g in range(games)]
    assert play_equivalent(config, seeds, policy_seed=games) > games * 30


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    [
        GameConfig(game="duel"),
        GameConfig(game="duel", duel_layout="official_5x10"),
        GameConfig(game="duel", reward="win", margin=1),
        GameConfig(game="duel", duel_layout="official_5x10", history_length=0, margin=3),
    ],
    ids=str,
)
def test_random_games_equal_reference_slow(config: GameConfig) -> None:
    for chunk in range(5):  # 5 x 100 games per configuration, 2,000 in all
        seeds = list(range(70_000 + 1000 * chunk, 70_000 + 1000 * chunk + 100))
        play_equivalent(config, seeds, all_seats_every=40, policy_seed=chunk)


SEED_5X9 = """
. . . . ? . . . .
B U06 U02 U06 . . ? . .
. . . . ? . . . ?
R U06 U06 U01 . . ? . .
. . . . ? . . . .
"""


LAST_GOAL = """
. . . . G02 . . . .
B U06 U06 U06 U06 U06 G01 U06 .
. . . . G03 . . . ?
R . . . . . G09 . .
. . . . G04 . . . .
"""


def _positions() -> list[DuelState]:
    goals = ("G10", "G06", "G15", "G18", "G14", "G02")
    states = [
        # next to two goals, a troll to bribe, keys, rockfalls, ladders
        make_duel_state(SEED_5X9, goals=goals,
                        hands={0: {"U07": 1, "U14": 1, "U15": 1, "U17": 1, "ROCKFALL": 1, "KEY": 1, "MAP": 1},
                               1: {"U01": 1, "U10": 1, "U06": 2}}),
        make_duel_state(SEED_5X9, goals=goals, current=1, scores={0: [2, 1], 1: [3]},
                        hands={1: {"U10": 1, "U13": 1, "U06": 2, "REPAIR_PICKAXE_LANTERN": 1}},
                        broken={1: ["pickaxe", "cart"]}),
        # the last cards: an exhausted pile and an empty hand (pass without a card)
        make_duel_state(SEED_5X9.replace("U06 U01", "U06 U06"), goals=goals, hands={0: {}, 1: {"U06": 1}},
                        deck=[]),
        make_duel_state(None, config=GameConfig(game="duel", duel_layout="official_5x10", margin=1),
                        hands={0: {"U17": 1, "U15": 1, "U05": 1, "BROKEN_CART": 2}}),
        # the sixth goal: its reveal ends the round (all goals revealed) after blue secures its 3 nuggets
        make_duel_state(LAST_GOAL, goals=("G02", "G03", "G04", "G01", "G09", "G10"), scores={1: [1, 2]},
                        hands={0: {"U16": 1, "U08": 1, "KEY": 1}}),
    ]  # fmt: skip
    return [s.to_reference() for s in states]  # positions are core states (the game users play); the oracle's copy


@pytest.mark.parametrize("index", range(5))
def test_hand_built_positions_every_legal_move(index: int) -> None:
    """Each legal move of a hand-built position, applied in its own slot, gives the reference's next state."""
    ref = _positions()[index]
    legal = np.flatnonzero(rules.legal_action_mask(ref))
    batch = Batch(ref.config, len(legal))
    for b in range(len(legal)):
        from_reference(ref, batch, b)
    mask = np.zeros((len(legal), padded(batch.num_actions)), np.int8)
    nl = np.zeros(len(legal), np.int64)
    batch.masks(mask, nl)
    assert (mask[:, : batch.num_actions].astype(bool) == rules.legal_action_mask(ref)).all()
    batch.apply(legal.astype(np.int64))
    batch.masks(mask, nl)
    obs = np.zeros((len(legal), batch.obs_size), np.float32)
    for b, a in enumerate(legal):
        nxt = rules.apply_action(ref, int(a))
        assert to_reference(batch, b).fingerprint() == nxt.fingerprint(), f"action {a}"
        assert np.array_equal(mask[b, : batch.num_actions].astype(bool), rules.legal_action_mask(nxt))
        for seat in (0, 1):
            batch.observe(np.full(len(legal), seat, np.int64), obs, b, b + 1)
            assert np.array_equal(obs[b], observation.encode_observation(nxt, seat))


def test_securing_troll_payment_and_round_end() -> None:
    """Exact outcome: green places its troll crossroads between two goals and bribes it; both goals turn face up
    (each rotated to open towards the card just placed), green secures both 2-gold goals (equal nuggets: by cell)
    and uses the last counter, which ends the round; the bribed troll costs green its smallest card (the 1), and
    blue, with fewer nuggets, starts round 2."""
    cfg = GameConfig(game="duel")
    text = """
. . . . ? . . . .
B . . . . . ? . .
. . . . ? . . . ?
R U06 U06 U06 . . ? . .
. . . . ? . . . .
"""
    goals = ("G10", "G06", "G08", "G18", "G14", "G02")
    ref = make_duel_state(text, goals=goals, current=1, hands={1: {"U01": 1}}, scores={1: [1]}).to_reference()
    ref.counters_left = 3
    batch = Batch(cfg, 1)
    from_reference(ref, batch, 0)
    n0 = len(ref.events)
    cell, up, down = cfg.cell_index(3, 4), cfg.cell_index(2, 4), cfg.cell_index(4, 4)
    o = kd.TROLL_O.tolist().index(kd.P_SHAPE.tolist().index(0))  # U01 (troll crossroads) at 0 degrees
    action = cfg.num_cells * kd.NUM_O + cell * kd.NUM_TROLL_O + o
    batch.apply(np.array([action], np.int64))
    f = batch.field
    sc = f("sc")[0]
    events = [tuple(e) for e in f("events")[0, n0 : sc[kd.SC_NUM_EVENTS]].tolist()]
    g06, g08 = 41 + 5, 41 + 7
    assert events == [
        (kd.EV_PLACE, 1, 0, cell, 0),
        (kd.EV_BRIBE, 1, -1, cell, 1),
        (kd.EV_REVEAL, 1, g06, up, 1),
        (kd.EV_REVEAL, 1, g08, down, 0),
        (kd.EV_SECURE, 1, g06, up, 2),
        (kd.EV_SECURE, 1, g08, down, 2),
        (kd.EV_ROUND_END, 1, -1, -1, 1),
        (kd.EV_PAY, 1, -1, cell, 1),
    ]
    assert to_reference(batch, 0).score == [[], [2, 2]]
    assert f("last_rewards")[0].tolist() == [0.0, 3.0]
    assert (sc[kd.SC_ROUND], sc[kd.SC_CURRENT], sc[kd.SC_JUST_ENDED], sc[kd.SC_COUNTERS]) == (1, 0, 1, 8)
    assert round_results(batch, 0) == [
        {"round": 0, "reason": "all counters used", "gained": [0, 3], "nuggets": [0, 4], "decisions": 1}
    ]
    assert to_reference(batch, 0).fingerprint() == rules.apply_action(ref, action).fingerprint()


def test_securing_takes_the_most_nuggets_first_when_counters_run_out() -> None:
    """Exact outcome: the same troll crossroads reveals a 1-nugget goal (the earlier cell) and a 3-nugget goal; with
    one counter left after the bribe, green secures the 3 nuggets (high first, not cell order), which ends the
    round, and the troll costs green its smallest card (the 1 it held)."""
    cfg = GameConfig(game="duel")
    text = """
. . . . ? . . . .
B . . . . . ? . .
. . . . ? . . . ?
R U06 U06 U06 . . ? . .
. . . . ? . . . .
"""
    goals = ("G10", "G05", "G15", "G18", "G14", "G02")
    ref = make_duel_state(text, goals=goals, current=1, hands={1: {"U01": 1}}, scores={1: [1]}).to_reference()
    ref.counters_left = 2
    batch = Batch(cfg, 1)
    from_reference(ref, batch, 0)
    n0 = len(ref.events)
    cell, up, down = cfg.cell_index(3, 4), cfg.cell_index(2, 4), cfg.cell_index(4, 4)
    o = kd.TROLL_O.tolist().index(kd.P_SHAPE.tolist().index(0))  # U01 (troll crossroads) at 0 degrees
    action = cfg.num_cells * kd.NUM_O + cell * kd.NUM_TROLL_O + o
    batch.apply(np.array([action], np.int64))
    f = batch.field
    sc = f("sc")[0]
    events = [tuple(e) for e in f("events")[0, n0 : sc[kd.SC_NUM_EVENTS]].tolist()]
    g05, g15 = 41 + 4, 41 + 14
    assert [e[:4] for e in events if e[0] == kd.EV_REVEAL] == [(kd.EV_REVEAL, 1, g05, up), (kd.EV_REVEAL, 1, g15, down)]
    assert [e for e in events if e[0] == kd.EV_SECURE] == [(kd.EV_SECURE, 1, g15, down, 3)]
    assert events[-2:] == [(kd.EV_ROUND_END, 1, -1, -1, 1), (kd.EV_PAY, 1, -1, cell, 1)]
    assert to_reference(batch, 0).score == [[], [3]]
    assert to_reference(batch, 0).fingerprint() == rules.apply_action(ref, action).fingerprint()


def test_conversion_round_trip_and_errors() -> None:
    cfg = GameConfig(game="duel", duel_layout="official_5x10")
    rng = np.random.default_rng(3)
    ref = rules.new_game(cfg, rng)
    for _ in range(100):
        if ref.game_over:
            break
        rules.apply_action(ref, int(rng.choice(np.flatnonzero(rules.legal_action_mask(ref)))), inplace=True)
    batch = Batch(cfg, 2)
    from_reference(ref, batch, 1)
    back = to_reference(batch, 1)
    assert back.fingerprint() == ref.fingerprint()
    assert back.round_results == ref.round_results and back.score == ref.score and back.events == ref.events
    with pytest.raises(StateError, match="slot 2 is out of range"):
        to_reference(batch, 2)
    with pytest.raises(StateError, match="differs"):
        from_reference(rules.new_game(GameConfig(game="duel"), rng), batch, 0)
    bad = ref.clone()
    bad.card_rank[0, 0] = bad.card_rank[0, 1]
    with pytest.raises(StateError, match="card_rank"):
        from_reference(bad, batch, 0)
    bad = ref.clone()
    bad.score[0] = [1] * (kd.SCORE_CAP + 1)
    with pytest.raises(StateError, match="score pile 0"):
        from_reference(bad, batch, 0)


def test_setup_draws_the_reference_game_and_counts_games() -> None:
    cfg = GameConfig(game="duel")
    batch = Batch(cfg, 3)
    batch.seed([11, 12, 13])
    batch.setup()
    for b, seed in enumerate((11, 12, 13)):
        assert to_reference(batch, b).fingerprint() == rules.new_game(cfg, np.random.default_rng(seed)).fingerprint()
    batch.setup(1, 2)
    gen = np.random.default_rng(12)
    rules.new_game(cfg, gen)
    assert to_reference(batch, 1).fingerprint() == rules.new_game(cfg, gen).fingerprint()
    assert batch.field("sc")[:, kd.SC_GAMES].tolist() == [1, 2, 1]


def test_compact_layout_size_and_doc() -> None:
    for cfg in (GameConfig(game="duel"), GameConfig(game="duel", duel_layout="official_5x10", history_length=3)):
        assert kd.compact_size(cfg) == 2 * cfg.num_cells + 62 + 5 * cfg.history_length
        assert kd.num_actions(cfg) == duel_action_layout(cfg).size
        assert kd.obs_size(cfg) == observation.duel_observation_layout(cfg).size
    assert "history" in kd.COMPACT_DOC


def test_vector_env_matches_the_reference_through_autoresets() -> None:
    from saboteur_env.vector import LegalSampler, VectorEnv

    cfg = GameConfig(game="duel", duel_layout="official_5x10", history_length=8)
    env = VectorEnv(5, config=cfg)
    compact = VectorEnv(5, config=cfg, obs_format="compact")
    obs, info = env.reset(seed=90)
    cobs, _ = compact.reset(seed=90)
    gens = [np.random.default_rng(90 + b) for b in range(5)]
    refs = [rules.new_game(cfg, g) for g in gens]
    sampler = LegalSampler(4)
    finished = 0
    for _ in range(700):
        expanded = kd.expand_compact(cobs, cfg)
        for b, ref in enumerate(refs):
            assert info["seat"][b] == ref.current
            assert np.array_equal(info["action_mask"][b].astype(bool), rules.legal_action_mask(ref))
            expected = observation.encode_observation(ref, ref.current)
            assert np.array_equal(obs[b], expected) and np.array_equal(expanded[b], expected)
        actions = env.sample_actions(sampler)
        obs, rewards, term, trunc, info = env.step(actions)
        cobs, crew, cterm, _, _ = compact.step(actions)
        assert not trunc.any() and rewards.shape == (5, 2)
        assert np.array_equal(rewards, crew) and np.array_equal(term, cterm)
        for b in range(5):
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            expected_rewards = ref.last_rewards if ref.round_just_ended else np.zeros(2)
            assert np.array_equal(rewards[b], expected_rewards)
            assert term[b] == ref.game_over == info["_final_returns"][b]
            if ref.game_over:  # same-step reset: the final scores in info, the next game's first observation
                assert info["final_returns"][b].tolist() == ref.nuggets
                refs[b] = rules.new_game(cfg, gens[b])
                finished += 1
    assert finished >= 5


def test_observations_do_not_leak_hidden_state() -> None:
    """Resampling what the seat to act cannot see (the opponent's hand, the pile order, unseen goals, later
    shuffles) changes neither its float nor its compact observation nor its mask in the core."""
    from tests.hidden import resample_duel

    cfg = GameConfig(game="duel")
    rng = np.random.default_rng(8)
    checked = 0
    for seed in range(6):
        ref = rules.new_game(cfg, np.random.default_rng(seed))
        for step in range(200):
            if ref.game_over:
                break
            if step % 9 == 0:
                seat = ref.current
                batch = Batch(cfg, 4)
                from_reference(ref, batch, 0)
                for b in range(1, 4):
                    from_reference(resample_duel(ref, seat, rng), batch, b)
                seats = np.full(4, seat, np.int64)
                obs = np.zeros((4, batch.obs_size), np.float32)
                comp = np.zeros((4, batch.compact_size), np.int16)
                mask = np.zeros((4, padded(batch.num_actions)), np.int8)
                batch.observe(seats, obs)
                batch.observe_compact(seats, comp)
                batch.masks(mask, np.zeros(4, np.int64))
                assert (obs == obs[0]).all() and (comp == comp[0]).all() and (mask == mask[0]).all()
                checked += 1
            rules.apply_action(ref, int(rng.choice(np.flatnonzero(rules.legal_action_mask(ref)))), inplace=True)
    assert checked >= 30
