"""Equivalence driver: the compiled core (a batch of games) against the numpy reference engine, decision by
decision, on the same seeds and the same actions."""

from __future__ import annotations

import numpy as np

from saboteur_env.base import kernels as kb
from saboteur_env.base import observation
from saboteur_env.base import reference as rules
from saboteur_env.base.convert import round_results, to_reference
from saboteur_env.common.config import GameConfig
from saboteur_env.core.batch import Batch, padded


def biased_action(mask: np.ndarray, layout, rng: np.random.Generator) -> int:
    """Half the time uniform over legal ids, else uniform over the legal action *types* first: every kind of move
    (repairs, rockfalls, maps) shows up often, not only placements and discards."""
    legal = np.flatnonzero(mask)
    if rng.random() < 0.5:
        return int(rng.choice(legal))
    types = layout.type_arr[legal]
    t = rng.choice(np.unique(types))
    return int(rng.choice(legal[types == t]))


def play_equivalent(config: GameConfig, seeds: list[int], *, all_seats_every: int = 25, policy_seed: int = 0) -> int:
    """Play ``len(seeds)`` games to the end in a core batch and in the reference, comparing after every decision:
    masks, the acting seat's float and compact observations, every seat's observation every ``all_seats_every``
    decisions, rewards, nuggets, scalars, events; fingerprints and round results at each game's end. Returns the
    number of decisions compared."""
    n = len(seeds)
    batch = Batch(config, n)
    batch.seed(seeds)
    batch.setup()
    refs = [rules.new_game(config, np.random.default_rng(s)) for s in seeds]
    layout = refs[0].layout
    a_n = batch.num_actions
    mask = np.zeros((n, padded(a_n)), np.int8)
    num_legal = np.zeros(n, np.int64)
    obs = np.zeros((n, batch.obs_size), np.float32)
    compact = np.zeros((n, batch.compact_size), np.int16)
    rng = np.random.default_rng(policy_seed)
    active = np.ones(n, dtype=bool)
    decisions = 0
    step = 0
    from saboteur_env.vector import expand_compact

    while active.any():
        batch.masks(mask, num_legal)
        batch.observe(np.full(n, -1, np.int64), obs)
        batch.observe_compact(np.full(n, -1, np.int64), compact)
        expanded = expand_compact(compact, config)
        actions = np.zeros(n, np.int64)
        for b in np.flatnonzero(active):
            ref = refs[b]
            m = rules.legal_action_mask(ref)
            assert np.array_equal(mask[b, :a_n].astype(bool), m), f"mask differs: game {b} decision {step}"
            assert num_legal[b] == m.sum()
            expected = observation.encode_observation(ref, ref.current)
            assert np.array_equal(obs[b], expected), f"observation differs: game {b} decision {step}"
            assert np.array_equal(expanded[b], expected), f"compact observation differs: game {b} decision {step}"
            actions[b] = biased_action(m, layout, rng)
        if step % all_seats_every == 0:
            for seat in range(config.num_players):
                batch.observe(np.full(n, seat, np.int64), obs)
                for b in np.flatnonzero(active):
                    assert np.array_equal(obs[b], observation.encode_observation(refs[b], seat))
        for b in np.flatnonzero(~active):
            actions[b] = -1
        live = np.flatnonzero(active)
        # Finished games stay untouched: apply only the live slots (a contiguous run at a time).
        for b in live:
            batch.apply(actions, int(b), int(b) + 1)
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            decisions += 1
            assert np.array_equal(batch.field("last_rewards")[b], ref.last_rewards.astype(np.float32))
            assert np.array_equal(batch.field("gold_nuggets")[b], ref.gold_nuggets)
            sc = batch.field("sc")[b]
            assert (sc[kb.SC_CURRENT], sc[kb.SC_ROUND], sc[kb.SC_DECK_POS], sc[kb.SC_NUM_EVENTS]) == (
                ref.current,
                ref.round,
                ref.deck_pos,
                ref.num_events,
            )
            assert sc[kb.SC_ERROR] == 0
            if ref.game_over:
                assert sc[kb.SC_OVER] == 1
                assert round_results(batch, int(b)) == ref.round_results
                assert to_reference(batch, int(b)).fingerprint() == ref.fingerprint()
                active[b] = False
        step += 1
    return decisions
