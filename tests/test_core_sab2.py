"""The compiled Saboteur 2 core against the numpy reference engine: random games (masks, float and compact
observations, rewards, scalars, events, round results, fingerprints), hand-built positions with every legal move,
conversions, set-up draws and the vector environment. (The slow tier plays 2,000+ games.)"""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch, padded
from saboteur_env.sab2 import kernels as ks
from saboteur_env.sab2 import observation
from saboteur_env.sab2 import reference as rules
from saboteur_env.sab2.cards import Sab2Role
from saboteur_env.sab2.convert import from_reference, round_results, to_reference
from saboteur_env.sab2.positions import make_sab2_state
from saboteur_env.sab2.state import Phase, Sab2State
from saboteur_env.sab2.variant import Sab2Variant


def test_the_variant_names_this_core() -> None:
    assert Sab2Variant.core == "saboteur_env.sab2.kernels"
    assert Batch(GameConfig(game="sab2", num_players=2), 1).k is ks


def biased_action(mask: np.ndarray, segment_of: np.ndarray, rng: np.random.Generator) -> int:
    """Half the time uniform over legal ids, else uniform over the legal segments first, so rare moves (swap
    hats, thefts, option C, passes, stops) show up often."""
    legal = np.flatnonzero(mask)
    if rng.random() < 0.5:
        return int(rng.choice(legal))
    seg = segment_of[legal]
    t = rng.choice(np.unique(seg))
    return int(rng.choice(legal[seg == t]))


def play_equivalent(config: GameConfig, seeds: list[int], *, all_seats_every: int = 25, policy_seed: int = 0,
                    fingerprint_every: int = 0) -> tuple[int, int]:  # fmt: skip
    """Play ``len(seeds)`` games in a core batch and in the reference, comparing after every decision: masks,
    the acting seat's float and compact observations, every seat's observations every ``all_seats_every``
    decisions, rewards, gold, scalars, events; fingerprints every ``fingerprint_every`` decisions (0: never) and
    at each game's end with the round results. Returns (decisions, steals) compared."""
    n = len(seeds)
    batch = Batch(config, n)
    batch.seed(seeds)
    batch.setup()
    refs = [rules.new_game(config, np.random.default_rng(s)) for s in seeds]
    segment_of = rules.action_layout(config).segment_of
    a_n = batch.num_actions
    mask = np.zeros((n, padded(a_n)), np.int8)
    num_legal = np.zeros(n, np.int64)
    obs = np.zeros((n, batch.obs_size), np.float32)
    compact = np.zeros((n, batch.compact_size), np.int16)
    rng = np.random.default_rng(policy_seed)
    active = np.ones(n, dtype=bool)
    decisions = steals = step = 0
    acting = np.full(n, -1, np.int64)
    while active.any():
        batch.masks(mask, num_legal)
        batch.observe(acting, obs)
        batch.observe_compact(acting, compact)
        expanded = ks.expand_compact(compact, config)
        actions = np.full(n, -1, np.int64)
        for b in np.flatnonzero(active):
            ref = refs[b]
            m = rules.legal_action_mask(ref)
            assert np.array_equal(mask[b, :a_n].astype(bool), m), f"mask differs: game {b} decision {step}"
            assert num_legal[b] == m.sum()
            expected = observation.encode_observation(ref, ref.current)
            assert np.array_equal(obs[b], expected), f"observation differs: game {b} decision {step}"
            assert np.array_equal(expanded[b], expected), f"compact observation differs: game {b} decision {step}"
            actions[b] = biased_action(m, segment_of, rng)
            steals += ref.phase == Phase.THEFT
        if step % all_seats_every == 0:
            for seat in range(config.num_players):
                seats = np.full(n, seat, np.int64)
                batch.observe(seats, obs)
                batch.observe_compact(seats, compact)
                expanded = ks.expand_compact(compact, config)
                for b in np.flatnonzero(active):
                    expected = observation.encode_observation(refs[b], seat)
                    assert np.array_equal(obs[b], expected) and np.array_equal(expanded[b], expected)
        for b in np.flatnonzero(active):
            batch.apply(actions, int(b), int(b) + 1)  # finished games stay untouched
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            decisions += 1
            assert np.array_equal(batch.field("last_rewards")[b], ref.last_rewards.astype(np.float32))
            assert np.array_equal(batch.field("gold")[b], ref.gold)
            sc = batch.field("sc")[b]
            assert (sc[ks.SC_CURRENT], sc[ks.SC_ROUND], sc[ks.SC_DECK_POS], sc[ks.SC_NUM_EVENTS], sc[ks.SC_PHASE]) == (
                ref.current, ref.round, ref.deck_pos, len(ref.events), ref.phase,
            ), f"scalars differ: game {b} decision {step}"  # fmt: skip
            assert sc[ks.SC_ERROR] == 0
            if fingerprint_every and step % fingerprint_every == 0:
                assert to_reference(batch, int(b)).fingerprint() == ref.fingerprint(), f"game {b} decision {step}"
            if ref.game_over:
                assert sc[ks.SC_OVER] == 1
                assert round_results(batch, int(b)) == ref.round_results
                assert to_reference(batch, int(b)).fingerprint() == ref.fingerprint()
                active[b] = False
        step += 1
    return decisions, steals


CONFIGS = [
    (GameConfig(game="sab2", num_players=2), 6),
    (GameConfig(game="sab2", num_players=3), 6),
    (GameConfig(game="sab2", num_players=6), 8),
    (GameConfig(game="sab2", num_players=9, rules="official"), 5),
    (GameConfig(game="sab2", num_players=12), 4),
    (GameConfig(game="sab2", num_players=5, margin=1, reward="win", rules="official", history_length=40), 4),
    (GameConfig(game="sab2", num_players=4, rounds=1, history_length=0), 6),
]


@pytest.mark.parametrize(("config", "games"), CONFIGS, ids=lambda c: str(c) if isinstance(c, int) else None)
def test_random_games_equal_reference(config: GameConfig, games: int) -> None:
    seeds = [1000 * config.num_players + g for g in range(games)]
    decisions, _ = play_equivalent(config, seeds, policy_seed=config.num_players, fingerprint_every=16)
    assert decisions > games * 40


@pytest.mark.slow
@pytest.mark.parametrize("players", range(2, 13))
def test_random_games_equal_reference_slow(players: int) -> None:
    rules_reading = "official" if players % 2 else "seeds"
    cfg = GameConfig(game="sab2", num_players=players, rules=rules_reading)
    seeds = list(range(70_000 + 1000 * players, 70_000 + 1000 * players + 170))
    _, steals = play_equivalent(cfg, seeds, all_seats_every=60, policy_seed=players)
    assert steals > 0


@pytest.mark.slow
def test_random_games_equal_reference_options_slow() -> None:
    for cfg in (
        GameConfig(game="sab2", num_players=5, margin=3, reward="win"),
        GameConfig(game="sab2", num_players=8, margin=2, history_length=0, rounds=2, rules="official"),
        GameConfig(game="sab2", num_players=7, history_length=100),
    ):
        play_equivalent(cfg, list(range(60)), all_seats_every=50, fingerprint_every=40)


# ---- hand-built positions -------------------------------------------------------------------------------------
BOARD = """
. . . . . . . . ?
X15 . . . . . . X04 .
S T05 X08 T05 X11 T05 T05 . ?
. . X03 . . . . . .
. . . . . . . . ?
"""
ROLES = [Sab2Role.BLUE_DIGGER, Sab2Role.GREEN_DIGGER, Sab2Role.BOSS, Sab2Role.GEOLOGIST, Sab2Role.SABOTEUR]
ACTIONS = {"BROKEN_PICKAXE": 1, "REPAIR_LANTERN": 1, "REPAIR_PICKAXE_CART": 1, "ROCKFALL": 1, "ROCKFALL_2": 1,
           "MAP": 1, "THEFT": 1, "HANDS_OFF": 1, "SWAP_HAND": 1, "INSPECTION": 1, "SWAP_HATS": 1, "TRAPPED": 1,
           "FREE_AT_LAST": 1}  # fmt: skip


def _last_card(config: GameConfig) -> Sab2State:
    """The pile is empty and seat 0 holds the last card; seat 4 has a Theft in front of it."""
    s = make_sab2_state(config, BOARD, roles=ROLES, hands={0: {"MAP": 1}, 1: {}, 2: {}, 3: {}, 4: {}},
                        theft={4: 3}, gold=[2, 0, 1, 0, 0])  # fmt: skip
    s.deck_pos = s.round_decks.shape[1]
    return s


def _positions() -> list[Sab2State]:
    """Hand-built positions as reference states (``make_sab2_state`` gives the core's state; compare with the
    oracle)."""
    cfg = GameConfig(game="sab2", num_players=5)
    official = GameConfig(game="sab2", num_players=5, rules="official")
    paths = {"T05": 1, "T01": 1, "X03": 1, "X04": 1, "X05": 1, "X07": 1, "X10": 1, "X13": 1}
    out = [
        # placements (ladders under both readings, doors), reaching the gold next to a stone goal
        make_sab2_state(cfg, BOARD, roles=ROLES, hands={0: paths}, goals=("stone_a", "gold", "stone_b")),
        make_sab2_state(official, BOARD, roles=ROLES, hands={0: paths}, goals=("gold", "stone_a", "stone_b")),
        # every action card, against broken tools, Trapped! and Thefts in front of players
        make_sab2_state(cfg, BOARD, roles=ROLES, hands={2: ACTIONS}, broken={0: ["lantern"], 3: ["pickaxe", "cart"]},
                        trapped=[1], theft={0: 2, 4: 5}, current=2),
        # option C: a trapped player with a broken tool frees itself (then two discards)
        make_sab2_state(cfg, BOARD, roles=ROLES, hands={1: {"T05": 1, "MAP": 2, "THEFT": 1}}, broken={1: ["cart"]},
                        trapped=[1], current=1),
        _last_card(cfg),
    ]  # fmt: skip
    out = [s.to_reference() for s in out]
    # Follow-up positions in the other phases: a pass, option C's discards, the theft phase.
    layout = rules.action_layout(cfg)
    out.append(rules.apply_action(out[2], layout.offset["discard"] + 36 + 10))  # a pass: MAP discarded
    out.append(rules.apply_action(out[3], layout.offset["free"] + 3))  # FREE: two discards to make
    out.append(rules.apply_action(out[4], layout.offset["discard"] + 46))  # the round ends: the theft phase
    assert [s.phase for s in out[-3:]] == [Phase.PASS, Phase.FREE, Phase.THEFT]
    return out


@pytest.mark.parametrize("index", range(8))
def test_hand_built_positions_every_legal_move(index: int) -> None:
    """Each legal move of a hand-built position, applied in its own slot, gives the reference's next state: its
    fingerprint, mask and every seat's float and compact observation."""
    ref = _positions()[index]
    legal = np.flatnonzero(rules.legal_action_mask(ref))
    n = len(legal)
    batch = Batch(ref.config, n)
    for b in range(n):
        from_reference(ref, batch, b)
    assert to_reference(batch, 0).fingerprint() == ref.fingerprint()
    mask = np.zeros((n, padded(batch.num_actions)), np.int8)
    nl = np.zeros(n, np.int64)
    batch.masks(mask, nl)
    assert (mask[:, : batch.num_actions].astype(bool) == rules.legal_action_mask(ref)).all()
    batch.apply(legal.astype(np.int64))
    batch.masks(mask, nl)
    obs = np.zeros((n, batch.obs_size), np.float32)
    compact = np.zeros((n, batch.compact_size), np.int16)
    for seat in range(ref.config.num_players):
        batch.observe(np.full(n, seat, np.int64), obs)
        batch.observe_compact(np.full(n, seat, np.int64), compact)
        expanded = ks.expand_compact(compact, ref.config)
        for b, a in enumerate(legal):
            nxt = rules.apply_action(ref, int(a))
            expected = observation.encode_observation(nxt, seat)
            assert np.array_equal(obs[b], expected) and np.array_equal(expanded[b], expected), f"action {a}"
            if seat == 0:
                assert to_reference(batch, b).fingerprint() == nxt.fingerprint(), f"action {a}"
                assert np.array_equal(mask[b, : batch.num_actions].astype(bool), rules.legal_action_mask(nxt))


def test_gold_behind_a_blue_door_then_a_theft() -> None:
    """Exact outcome: seat 0 (blue digger) reaches the gold through a blue door only, so the blue team and the
    Boss win (2 winners: 4 gold, the Boss 4 - 1), the geologist shares the one crystal; then the saboteur's Theft
    takes 1 gold from seat 0, and round 2 starts with the seat after the finder."""
    cfg = GameConfig(game="sab2", num_players=5)
    board = BOARD.replace("X11", "T05")
    ref = make_sab2_state(cfg, board, roles=ROLES, hands={0: {"T05": 1}}, theft={4: 7},
                          goals=("stone_a", "gold", "stone_b")).to_reference()  # fmt: skip
    batch = Batch(cfg, 1)
    from_reference(ref, batch, 0)
    layout = rules.action_layout(cfg)
    place = layout.offset["place"] + cfg.cell_index(2, 7) * ks.NUM_O + ks.P_SHAPE.tolist().index(2 * 4)
    batch.apply(np.array([place], np.int64))
    f = batch.field
    sc = f("sc")[0]
    assert f("gold")[0].tolist() == [4, 0, 3, 1, 0]
    assert (sc[ks.SC_PHASE], sc[ks.SC_CURRENT], sc[ks.SC_FINDER]) == (ks.PH_THEFT, 4, 0)
    assert f("rr")[0, 0, :4].tolist() == [1, 0, 1, 0]  # gold reached by seat 0; blue route only
    mask = np.zeros((1, padded(batch.num_actions)), np.int8)
    nl = np.zeros(1, np.int64)
    batch.masks(mask, nl)
    steal = layout.offset["steal"]
    assert np.flatnonzero(mask[0]).tolist() == [steal + 1, steal + 3, steal + 4]  # seats 0, 2 and 3 hold gold
    batch.apply(np.array([steal + 1], np.int64))
    assert f("gold")[0].tolist() == [3, 0, 3, 1, 1]
    assert f("last_rewards")[0].tolist() == [3.0, 0.0, 3.0, 1.0, 1.0]
    assert (sc[ks.SC_ROUND], sc[ks.SC_CURRENT], sc[ks.SC_PHASE], sc[ks.SC_JUST_ENDED]) == (1, 1, ks.PH_TURN, 1)
    events = f("events")[0, : sc[ks.SC_NUM_EVENTS]].tolist()
    gold_cell = cfg.cell_index(2, 8)
    assert events[-6:] == [
        [ks.EV_REVEAL, -1, 56, -1, gold_cell, 0],
        [ks.EV_ROUND_END, 0, -1, -1, -1, 0],
        [ks.EV_PAYOUT, -1, -1, 0, -1, 4],
        [ks.EV_PAYOUT, -1, -1, 2, -1, 3],
        [ks.EV_PAYOUT, -1, -1, 3, -1, 1],
        [ks.EV_STEAL, 4, -1, 0, -1, -1],
    ]
    res = round_results(batch, 0)[0]
    assert (res["winners"], res["payouts"], res["gained"]) == ([1, 0, 1, 0, 0], [4, 0, 3, 1, 0], [3, 0, 3, 1, 1])


def test_conversion_round_trip_and_errors() -> None:
    cfg = GameConfig(game="sab2", num_players=6)
    rng = np.random.default_rng(3)
    ref = rules.new_game(cfg, rng)
    for _ in range(150):
        rules.apply_action(ref, int(rng.choice(np.flatnonzero(rules.legal_action_mask(ref)))), inplace=True)
    batch = Batch(cfg, 2)
    from_reference(ref, batch, 1)
    back = to_reference(batch, 1)
    assert back.fingerprint() == ref.fingerprint()
    assert back.round_results == ref.round_results and back.events == ref.events
    # In the theft phase: the thieves list, the summary not yet a round result, round_start_gold set.
    theft = _positions()[7]
    batch5 = Batch(theft.config, 1)
    from_reference(theft, batch5, 0)
    assert to_reference(batch5, 0).fingerprint() == theft.fingerprint()
    assert to_reference(batch5, 0).round_summary == theft.round_summary and theft.round_results == []
    assert theft.thieves == [] and theft.current == 4 and theft.round_start_gold is not None
    with pytest.raises(StateError, match="slot 2 is out of range"):
        to_reference(batch, 2)
    with pytest.raises(StateError, match="differs"):
        from_reference(rules.new_game(GameConfig(game="sab2", num_players=5), rng), batch, 0)
    base = Batch(GameConfig(num_players=4), 1)
    with pytest.raises(StateError, match="Saboteur 2's"):
        to_reference(base, 0)


def test_setup_draws_the_reference_game_and_counts_games() -> None:
    for cfg in (GameConfig(game="sab2", num_players=2), GameConfig(game="sab2", num_players=12, rounds=2)):
        batch = Batch(cfg, 3)
        batch.seed([11, 12, 13])
        batch.setup()
        for b, seed in enumerate((11, 12, 13)):
            expected = rules.new_game(cfg, np.random.default_rng(seed))
            assert to_reference(batch, b).fingerprint() == expected.fingerprint()
        batch.setup(1, 2)  # a second set-up from the advanced words deals the generator's next game
        gen = np.random.default_rng(12)
        rules.new_game(cfg, gen)
        assert to_reference(batch, 1).fingerprint() == rules.new_game(cfg, gen).fingerprint()
        assert batch.field("sc")[:, ks.SC_GAMES].tolist() == [1, 2, 1]


def test_views_match_the_field_spec() -> None:
    cfg = GameConfig(game="sab2", num_players=7, margin=1)
    batch = Batch(cfg, 3)
    # The kernels get these views through one ViewsRef (ks.kernel_args); ks.views builds the same from the arenas.
    arenas = tuple(batch.arenas[a] for a in ("i8", "i16", "i32", "u64", "f32"))
    assert isinstance(batch._args[0], ks.ViewsRef)
    for views in (batch.views, ks.views(*arenas, batch.cfg)):
        assert len(views) == len(batch.layout.fields)
    for f, v, w in zip(batch.layout.fields, batch.views, ks.views(*arenas, batch.cfg), strict=True):
        assert w.shape == v.shape and np.shares_memory(w, v), f.name
        assert v.shape == (3, *f.shape), f.name
        assert np.shares_memory(v, batch.field(f.name)), f.name


def test_vector_env_matches_the_reference_through_autoresets() -> None:
    """``VectorEnv(game="sab2")`` runs this core: seats, masks, observations (float, and compact expanded),
    per-seat rewards, terminations and final gold match reference games, through same-step automatic resets;
    two threads give the same outputs."""
    from saboteur_env.vector import LegalSampler, VectorEnv

    cfg = GameConfig(game="sab2", num_players=3, rounds=1, reward="win")
    n = 4
    env = VectorEnv(n, config=cfg)
    compact = VectorEnv(n, config=cfg, obs_format="compact", num_threads=2)
    obs, info = env.reset(seed=90)
    cobs, cinfo = compact.reset(seed=90)
    gens = [np.random.default_rng(90 + b) for b in range(n)]
    refs = [rules.new_game(cfg, g) for g in gens]
    sampler = LegalSampler(2)
    finished = 0
    for _ in range(700):
        assert np.array_equal(ks.expand_compact(cobs, cfg), obs)
        assert np.array_equal(cinfo["action_mask"], info["action_mask"])
        for b, ref in enumerate(refs):
            assert info["seat"][b] == ref.current
            assert np.array_equal(info["action_mask"][b].astype(bool), rules.legal_action_mask(ref))
            assert np.array_equal(obs[b], observation.encode_observation(ref, ref.current))
        actions = env.sample_actions(sampler)
        obs, rewards, term, trunc, info = env.step(actions)
        cobs, crew, cterm, _, cinfo = compact.step(actions)
        assert not trunc.any() and rewards.shape == (n, 3)
        assert np.array_equal(crew, rewards) and np.array_equal(cterm, term)
        for b in range(n):
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            assert np.array_equal(rewards[b], ref.last_rewards.astype(np.float32))
            assert term[b] == ref.game_over == info["_final_returns"][b]
            if ref.game_over:
                assert np.array_equal(info["final_returns"][b], ref.gold)
                refs[b] = rules.new_game(cfg, gens[b])
                finished += 1
    assert finished >= n


def test_compact_observation_and_mask_hide_what_the_seat_cannot_see() -> None:
    """Resampling everything a seat cannot see (tests/hidden.py) changes neither its compact observation nor, for
    the seat to act, its mask; resampling changes some other seat's compact observation (the check can fail)."""
    from tests.hidden import resample_sab2

    cfg = GameConfig(game="sab2", num_players=4)
    rng = np.random.default_rng(5)
    states = []
    ref = rules.new_game(cfg, np.random.default_rng(8))
    while not ref.game_over:
        if ref.num_decisions % 29 == 0 or (ref.phase != Phase.TURN and ref.num_decisions % 3 == 0):
            states.append(ref.clone())
        rules.apply_action(ref, biased_action(rules.legal_action_mask(ref), rules.action_layout(cfg).segment_of,
                                              rng), inplace=True)  # fmt: skip
    changed = 0
    batch = Batch(cfg, 2)
    mask = np.zeros((2, padded(batch.num_actions)), np.int8)
    nl = np.zeros(2, np.int64)
    out = np.zeros((2, batch.compact_size), np.int16)
    for s in states:
        for seat in range(cfg.num_players):
            from_reference(s, batch, 0)
            from_reference(resample_sab2(s, seat, rng), batch, 1)
            batch.observe_compact(np.full(2, seat, np.int64), out)
            assert np.array_equal(out[0], out[1])
            if seat == s.current:
                batch.masks(mask, nl)
                assert np.array_equal(mask[0], mask[1])
            batch.observe_compact(np.full(2, (seat + 1) % cfg.num_players, np.int64), out)
            changed += not np.array_equal(out[0], out[1])
    assert len(states) > 20 and changed > 0
