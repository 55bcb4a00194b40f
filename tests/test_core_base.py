"""The compiled base-game core against the numpy reference engine: random games, hand-built positions with
every legal move, conversions. (The slow tier plays 2,000+ games.)"""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env.base import kernels as kb
from saboteur_env.base import observation
from saboteur_env.base import reference as rules
from saboteur_env.base.convert import from_reference, to_reference
from saboteur_env.base.positions import make_state
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import StateError
from saboteur_env.core.batch import Batch, padded
from tests.core_play import play_equivalent

CONFIGS = [
    (GameConfig(num_players=3), 16),
    (GameConfig(num_players=4), 32),
    (GameConfig(num_players=5), 16),
    (GameConfig(num_players=7), 12),
    (GameConfig(num_players=10), 12),
    (GameConfig(num_players=5, margin=2, reward="win", broken_tool_penalty=True, history_length=5), 10),
    (GameConfig(num_players=4, rounds=1, history_length=0), 16),
    (GameConfig(num_players=6, margin=1, history_length=64), 8),
    (GameConfig(game="base-lite", num_players=4), 16),
]


@pytest.mark.parametrize(("config", "games"), CONFIGS, ids=lambda c: str(c) if isinstance(c, int) else None)
def test_random_games_equal_reference(config: GameConfig, games: int) -> None:
    seeds = [1000 * config.num_players + g for g in range(games)]
    assert play_equivalent(config, seeds, policy_seed=config.num_players) > games * 50


@pytest.mark.slow
@pytest.mark.parametrize("players", range(3, 11))
def test_random_games_equal_reference_slow(players: int) -> None:
    cfg = GameConfig(num_players=players)
    seeds = list(range(50_000 + 1000 * players, 50_000 + 1000 * players + 250))
    play_equivalent(cfg, seeds, all_seats_every=40, policy_seed=players)


@pytest.mark.slow
def test_random_games_equal_reference_options_slow() -> None:
    for cfg in (
        GameConfig(num_players=5, margin=3, reward="win", broken_tool_penalty=True),
        GameConfig(num_players=8, margin=10, history_length=0, rounds=2),
        GameConfig(game="base-lite", num_players=9),
    ):
        play_equivalent(cfg, list(range(100)), all_seats_every=50)


BOARD = """
. . . . . . . . ?
. . . . . . . T04 .
S T05 T05 T05 T05 T05 T05 T01 ?
. . . . . . . . .
. . . . . . . . ?
"""


def _positions() -> list:
    """Hand-built positions as reference states (``make_state`` gives the core's state; compare with the oracle)."""
    return [s.to_reference() for s in _core_positions()]


def _core_positions() -> list:
    cfg = GameConfig(num_players=4)
    return [
        # placing next to two goals at once: reveals, rotations, the gold and the gold hand-out
        make_state(cfg, BOARD, goals=("stone_a", "gold", "stone_b"),
                   hands={0: {"T01": 1, "T06": 1, "T07": 1, "T16": 1, "ROCKFALL": 1, "MAP": 1}}),
        make_state(cfg, BOARD, goals=("gold", "stone_a", "stone_b"), roles=[1, 1, 0, 0],
                   hands={2: {"T03": 1, "T02": 1, "REPAIR_PICKAXE_LANTERN": 1, "BROKEN_CART": 1}},
                   broken={0: ["lantern"], 2: ["pickaxe"]}, current=2),
        # the last card of the round: an exhausted draw pile, the saboteurs' payout
        make_state(cfg, BOARD, roles=[0, 1, 0, 0], hands={0: {"T15": 1}, 1: {}, 2: {}, 3: {}}, deck=[]),
        make_state(GameConfig(num_players=5, margin=1), None, hands={3: {"T01": 2, "MAP": 1}}, peeked={3: [0]},
                   current=3, roles=[1, 0, 0, 1, 0]),
    ]  # fmt: skip


@pytest.mark.parametrize("index", range(4))
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
        for seat in range(ref.config.num_players):
            batch.observe(np.full(len(legal), seat, np.int64), obs, b, b + 1)
            assert np.array_equal(obs[b], observation.encode_observation(nxt, seat))


def test_gold_found_by_a_placement() -> None:
    """Exact outcome: seat 0 closes the route to the gold; the round ends, the finder draws no card, the top four
    gold cards (3, 2, 1, 1 after sorting) go counter-clockwise from the finder to the gold-diggers only (seats 0,
    3, 2; seat 1 is the saboteur), and round 2 starts with the seat after the finder."""
    cfg = GameConfig(num_players=4)
    route = BOARD.replace("T05 T01 ?", "T05 . ?")
    ref = make_state(cfg, route, goals=("stone_a", "gold", "stone_b"), roles=[0, 1, 0, 0],
                     hands={0: {"T05": 1, "MAP": 1}}).to_reference()  # fmt: skip
    batch = Batch(cfg, 1)
    from_reference(ref, batch, 0)
    batch.field("gold_deck")[0] = [1, 3, 2, 1] + [1] * 14 + [2] * 7 + [3] * 3  # the box: 16 ones, 8 twos, 4 threes
    cell = cfg.cell_index(2, 7)
    batch.apply(np.array([cell * kb.NUM_O + kb.P_SHAPE.tolist().index(8)], np.int64))  # T05 (kind 4) at 0°
    f = batch.field
    assert f("gold_nuggets")[0].tolist() == [4, 0, 1, 2]
    assert f("gold_cards")[0].tolist() == [2, 0, 1, 1]
    assert f("last_rewards")[0].tolist() == [4.0, 0.0, 1.0, 2.0]
    assert f("gold_left")[0].tolist()[:5] == [0, 0, 0, 0, 1]
    sc = f("sc")[0]
    assert (sc[kb.SC_ROUND], sc[kb.SC_CURRENT], sc[kb.SC_GOLD_DECK], sc[kb.SC_JUST_ENDED]) == (1, 1, 24, 1)
    events = f("events")[0, : sc[kb.SC_NUM_EVENTS]].tolist()
    assert events[-3:] == [
        [kb.EV_PLACE, 0, 4, -1, cell, 0],
        [kb.EV_REVEAL, 0, 28, -1, cfg.cell_index(2, 8), 0],
        [kb.EV_ROUND_END, 0, -1, -1, -1, 0],
    ]
    assert f("rr")[0, 0, :4].tolist() == [0, 0, 0, sc[kb.SC_DECISIONS]]


def test_conversion_round_trip_and_errors() -> None:
    cfg = GameConfig(num_players=6)
    rng = np.random.default_rng(3)
    ref = rules.new_game(cfg, rng)
    for _ in range(150):
        rules.apply_action(ref, int(rng.choice(np.flatnonzero(rules.legal_action_mask(ref)))), inplace=True)
    batch = Batch(cfg, 2)
    from_reference(ref, batch, 1)
    back = to_reference(batch, 1)
    assert back.fingerprint() == ref.fingerprint()
    assert back.round_results == ref.round_results
    assert np.array_equal(back.planes, ref.planes) and np.array_equal(back.seat_table, ref.seat_table)
    with pytest.raises(StateError, match="slot 2 is out of range"):
        to_reference(batch, 2)
    with pytest.raises(StateError, match="differs"):
        from_reference(rules.new_game(GameConfig(num_players=5), rng), batch, 0)


def test_setup_draws_the_reference_game_and_counts_games() -> None:
    cfg = GameConfig(num_players=5)
    batch = Batch(cfg, 3)
    batch.seed([11, 12, 13])
    batch.setup()
    for b, seed in enumerate((11, 12, 13)):
        assert to_reference(batch, b).fingerprint() == rules.new_game(cfg, np.random.default_rng(seed)).fingerprint()
    # A second set-up from the advanced words deals the generator's next game.
    batch.setup(1, 2)
    gen = np.random.default_rng(12)
    rules.new_game(cfg, gen)
    assert to_reference(batch, 1).fingerprint() == rules.new_game(cfg, gen).fingerprint()
    assert batch.field("sc")[:, kb.SC_GAMES].tolist() == [1, 2, 1]
