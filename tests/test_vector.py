"""saboteur_env.vector.VectorEnv: the lock-step API, seeding, same-step autoreset, errors, threads, formats."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from saboteur_env.base import observation
from saboteur_env.base import reference as rules
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ConfigError, IllegalActionError
from saboteur_env.vector import LegalSampler, VectorEnv, expand_compact


def _reference_games(cfg: GameConfig, seeds: list[int]):  # type: ignore[no-untyped-def]
    gens = [np.random.default_rng(s) for s in seeds]
    return gens, [rules.new_game(cfg, g) for g in gens]


def test_steps_match_the_reference_through_autoresets() -> None:
    cfg = GameConfig(num_players=4)
    env = VectorEnv(6, config=cfg)
    obs, info = env.reset(seed=40)
    gens, refs = _reference_games(cfg, [40 + b for b in range(6)])
    sampler = LegalSampler(1)
    finished = 0
    for _ in range(900):
        for b, ref in enumerate(refs):
            assert info["seat"][b] == ref.current
            assert np.array_equal(info["action_mask"][b].astype(bool), rules.legal_action_mask(ref))
            assert np.array_equal(obs[b], observation.encode_observation(ref, ref.current))
        actions = env.sample_actions(sampler)
        obs, rewards, term, trunc, info = env.step(actions)
        assert not trunc.any() and rewards.shape == (6, 4)
        for b in range(6):
            ref = refs[b]
            rules.apply_action(ref, int(actions[b]), inplace=True)
            expected = ref.last_rewards if ref.round_just_ended else np.zeros(4)
            assert np.array_equal(rewards[b], expected)
            assert term[b] == ref.game_over == info["_final_returns"][b]
            if ref.game_over:  # same-step reset: the final scores in info, the next game's first observation
                assert np.array_equal(info["final_returns"][b], ref.gold_nuggets)
                refs[b] = rules.new_game(cfg, gens[b])
                finished += 1
    assert finished >= 6


def test_spaces_shapes_and_formats() -> None:
    env = VectorEnv(5, num_players=3, obs_format="compact", mask_format="bits")
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.int16 and obs.shape == (5, env.batch.compact_size)
    assert env.observation_space.shape == obs.shape and env.single_action_space.n == env.num_actions
    assert info["action_mask"].dtype == np.uint8 and info["action_mask"].shape == (5, (env.num_actions + 7) // 8)
    ref = VectorEnv(5, num_players=3)
    fobs, finfo = ref.reset(seed=0)
    assert np.array_equal(expand_compact(obs, env.config), fobs)
    bits = np.unpackbits(info["action_mask"], axis=1, bitorder="little")[:, : env.num_actions]
    assert np.array_equal(bits, finfo["action_mask"])
    assert ref.single_observation_space.contains(fobs[0])
    none = VectorEnv(5, num_players=3, obs_format="none")
    nobs, _ = none.reset(seed=0)
    assert nobs.shape == (5, 0)
    assert np.array_equal(none.observe(), fobs)
    assert np.array_equal(none.observe(compact=True), obs)
    seat2 = none.observe([2] * 5)
    assert all(np.array_equal(seat2[b], observation.encode_observation(
        rules.new_game(none.config, np.random.default_rng(b)), 2)) for b in range(5))  # fmt: skip


def test_seeds() -> None:
    env = VectorEnv(3, num_players=5)
    a, _ = env.reset(seed=[7, 8, 9])
    b, _ = env.reset(seed=7)
    assert np.array_equal(a, b)
    c, _ = env.reset(seed=None)
    d, _ = env.reset(seed=None)
    assert not np.array_equal(c, d)
    for bad in (-1, 1.5, "x", [1, 2], True):
        with pytest.raises(ConfigError, match="seed"):
            env.reset(seed=bad)  # type: ignore[arg-type]


def test_illegal_actions_change_nothing() -> None:
    env = VectorEnv(4, num_players=4)
    _, info = env.reset(seed=3)
    before = {k: v.copy() for k, v in env.batch.arenas.items()}
    legal = env.sample_actions(LegalSampler(0))
    illegal = int(np.flatnonzero(info["action_mask"][2] == 0)[0])
    bad = legal.copy()
    bad[2] = illegal
    with pytest.raises(IllegalActionError, match=f"action {illegal} of game 2 is not legal"):
        env.step(bad)
    bad[2] = env.num_actions
    with pytest.raises(IllegalActionError, match=r"out of range; valid: 0\.\."):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="4 integer action ids"):
        env.step(legal[:3])
    with pytest.raises(IllegalActionError, match="integer"):
        env.step(legal.astype(np.float64))
    assert all(np.array_equal(before[k], env.batch.arenas[k]) for k in before)
    env.step(legal)  # still playable


def test_threads_give_identical_results_and_copies_are_fresh() -> None:
    one = VectorEnv(37, num_players=6)
    two = VectorEnv(37, num_players=6, num_threads=2, copy=False)
    o1, _ = one.reset(seed=5)
    o2, _ = two.reset(seed=5)
    s1, s2 = LegalSampler(2), LegalSampler(2)
    kept = o1
    for _ in range(400):
        a1, a2 = one.sample_actions(s1), two.sample_actions(s2)
        assert np.array_equal(a1, a2)
        o1, r1, t1, _, i1 = one.step(a1)
        o2, r2, t2, _, i2 = two.step(a2)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(t1, t2)
        assert np.array_equal(i1["action_mask"], i2["action_mask"])
    assert kept is not o1 and not np.shares_memory(kept, o1)
    o3, *_ = two.step(two.sample_actions(s2))
    assert np.shares_memory(o2, o3)  # copy=False: the buffers are reused
    two.close()


def test_sampler_is_uniform_over_legal_actions() -> None:
    env = VectorEnv(1, num_players=4)
    _, info = env.reset(seed=1)
    legal = np.flatnonzero(info["action_mask"][0])
    s = LegalSampler(9)
    draws = np.array([env.sample_actions(s)[0] for _ in range(4000)])
    counts = np.array([(draws == a).sum() for a in legal])
    assert set(draws.tolist()) == set(legal.tolist())
    expected = 4000 / len(legal)
    assert ((counts - expected) ** 2 / expected).sum() < 3 * len(legal)  # chi-square, far from the tail
    again = LegalSampler(9)
    assert env.sample_actions(again)[0] == draws[0]
    with pytest.raises(ConfigError):
        LegalSampler(-1)


@pytest.mark.parametrize(("game", "players"), [("base", 3), ("base", 4), ("base", 10), ("duel", 2), ("sab2", 3),
                                             ("sab2", 12)])
def test_lockstep_sampler_draws_what_the_generic_sampler_draws(game: str, players: int) -> None:
    """The lock-step's sampler draws from the sorted list of legal actions the mask kernel keeps (``mask_list``)
    instead of reading the mask row; with the same generator words it must pick exactly what ``common.sample``
    picks from the whole row: after reset() (list unknown), through automatic resets, with two threads."""
    from saboteur_env.core import common as kcommon

    env = VectorEnv(24, game=game, num_players=players, num_threads=2, copy=False)
    env.reset(seed=5)
    sampler = LegalSampler(17)
    env.sample_actions(sampler)  # builds the sampler's words
    assert sampler._words is not None
    known = 0
    for _ in range(400):
        words = sampler._words.copy()
        mask, num_legal = env._masks()
        generic = np.zeros(env.num_envs, dtype=np.int64)
        kcommon.sample(mask, num_legal, words, 0, env.num_envs, generic)
        fast = env.sample_actions(sampler)
        assert np.array_equal(fast, generic)
        assert np.array_equal(sampler._words, words)  # the same draws
        known += int((env.batch.field("mask_list")[:, 0] > 0).sum())
        env.step(fast)
    assert known > 20 * env.num_envs  # the fast path ran (a record was known) in most steps


def test_bad_configuration() -> None:
    for kwargs, match in (
        ({"obs_format": "png"}, "obs_format"),
        ({"mask_format": "bool"}, "mask_format"),
        ({"num_threads": 0}, "num_threads"),
        ({"num_players": 11}, "num_players"),
    ):
        with pytest.raises(ConfigError, match=match):
            VectorEnv(2, **kwargs)
    with pytest.raises(ConfigError, match="num_envs"):
        VectorEnv(0)
    no_core = GameConfig(num_players=4)
    object.__setattr__(no_core, "variant", type("NoCore", (), {"core": None})())  # a variant without a core
    with pytest.raises(ConfigError, match="no compiled core"):
        VectorEnv(2, config=no_core)
    with pytest.raises(ConfigError, match="reset"):
        VectorEnv(1).step([0])


def test_observations_hold_no_hidden_information() -> None:
    """Resampling what the acting seat cannot see (other hands of the same sizes, roles, the draw pile's order,
    goals it has not seen) never changes its float or compact observation."""
    env = VectorEnv(8, num_players=5, obs_format="none")
    env.reset(seed=21)
    s = LegalSampler(4)
    rng = np.random.default_rng(0)
    for _ in range(120):
        env.step(env.sample_actions(s))
    f, c = env.observe(), env.observe(compact=True)
    bt = env.batch
    sc = bt.field("sc")
    for b in range(8):
        seat, r, pos = int(sc[b, 1]), int(sc[b, 0]), int(sc[b, 4])
        others = [x for x in range(5) if x != seat]
        hands = bt.field("hands")[b]
        pool = np.concatenate([np.repeat(np.arange(27), hands[x]) for x in others]
                              + [np.repeat(bt.field("round_decks")[b, r, pos:], 1)])  # fmt: skip
        rng.shuffle(pool)
        sizes = [int(hands[x].sum()) for x in others]
        k = 0
        for x, n in zip(others, sizes, strict=True):
            hands[x] = np.bincount(pool[k : k + n], minlength=27)
            k += n
        bt.field("round_decks")[b, r, pos:] = pool[k:]
        roles = bt.field("roles")[b]
        roles[others] = rng.permutation(roles[others])
        unseen = [g for g in range(3) if not bt.field("goal_revealed")[b, g] and not bt.field("peeked")[b, seat, g]]
        goals = bt.field("goal_kind")[b]
        goals[unseen] = rng.permutation(goals[unseen])
    assert np.array_equal(env.observe(), f)
    assert np.array_equal(env.observe(compact=True), c)


def test_pack_bits_matches_numpy() -> None:
    from saboteur_env.core import common as kcommon

    rng = np.random.default_rng(0)
    for a in (1, 7, 8, 9, 63, 1293, 5701):
        width = (a + 7) // 8 * 8
        mask = np.zeros((20, width), np.int8)
        mask[:, :a] = rng.random((20, a)) < 0.3
        out = np.zeros((20, (a + 7) // 8), np.uint8)
        kcommon.pack_bits(mask, a, out)
        assert np.array_equal(out, np.packbits(mask[:, :a], axis=1, bitorder="little")), a


def test_sample_legal_is_uniform_and_checks_input() -> None:
    import saboteur_env as se

    rng = np.random.default_rng(0)
    mask = np.zeros(1293, np.int8)
    mask[[3, 700, 1292]] = 1
    counts = np.bincount([se.sample_legal(mask, rng) for _ in range(3000)], minlength=1293)
    assert counts.sum() == counts[[3, 700, 1292]].sum() and counts[[3, 700, 1292]].min() > 850
    assert se.sample_legal(mask.astype(bool), rng) in (3, 700, 1292)
    with pytest.raises(ValueError, match="no legal action"):
        se.sample_legal(np.zeros(5, np.int8), rng)
    with pytest.raises(ValueError, match="1-D"):
        se.sample_legal(np.zeros((2, 5), np.int8), rng)
    # Any non-zero int8 entry is legal; other dtypes are read as non-zero / zero.
    assert se.sample_legal(np.array([0, 0, 5], np.int8), rng) == 2
    assert se.sample_legal(np.array([0, 7, 0], np.int64), rng) == 1


class _Raw:
    """A generator stand-in whose bit generator returns the given raw 64-bit words in turn."""

    def __init__(self, *words: int) -> None:
        self.words = list(words)
        self.bit_generator = self

    def random_raw(self) -> int:
        return self.words.pop(0)


def test_sample_legal_reduces_63_raw_bits_and_draws_again_in_the_partial_top_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import saboteur_env as se
    from saboteur_env.core import common
    from saboteur_env.core.common import _pick

    mask = np.zeros(40, np.int8)
    mask[[3, 17, 39]] = 1
    top = (1 << 63) - 1  # 2**63 % 3 == 2: the two highest 63-bit values are the partial block
    assert [_pick(mask, r) for r in (0, 1, 2, 3, 4, top - 2)] == [3, 17, 39, 3, 17, [3, 17, 39][(top - 2) % 3]]
    assert _pick(mask, top - 1) == -2 and _pick(mask, top) == -2
    assert _pick(np.zeros(8, np.int8), 5) == -1
    one = np.zeros(8, np.int8)
    one[6] = 1
    assert _pick(one, top) == 6  # 2**63 % 1 == 0: nothing is rejected
    # The sampler reduces raw >> 1; a rejected word is followed by a fresh draw.
    rng = _Raw(2**64 - 1, 2**64 - 3, 5 << 1)
    monkeypatch.setattr(common, "RAW64", (*common.RAW64, _Raw))
    assert se.sample_legal(mask, rng) == 39  # type: ignore[arg-type]
    assert rng.words == []


def test_sample_legal_with_a_32_bit_generator_draws_with_integers() -> None:
    import saboteur_env as se

    mask = np.zeros(10, np.int8)
    mask[[1, 4, 8]] = 1
    rng = np.random.Generator(np.random.MT19937(5))  # random_raw() gives 32 bits: not reduced
    copy = np.random.Generator(np.random.MT19937(5))
    draws = [se.sample_legal(mask, rng) for _ in range(300)]
    assert draws == [[1, 4, 8][int(copy.integers(3))] for _ in range(300)]
    counts = np.bincount(draws, minlength=10)
    assert counts[[1, 4, 8]].min() > 70 and counts.sum() == 300
    with pytest.raises(ValueError, match="no legal action"):
        se.sample_legal(np.zeros(5, np.int8), rng)


def test_legal_indices_equal_numpy_nonzero_and_check_input() -> None:
    from saboteur_env.common.errors import ActionError
    from saboteur_env.vector import legal_indices

    rng = np.random.default_rng(1)
    for shape in ((256, 1293), (7, 13), (3, 8), (1, 1), (0, 5), (4, 0), (5, 5701)):
        mask = (rng.random(shape) < 0.02).astype(np.int8)
        for m in (mask, mask.astype(bool), mask.astype(np.uint8)):
            rows, cols = legal_indices(m)
            want_r, want_c = np.nonzero(m)
            assert rows.dtype == cols.dtype == np.int64
            assert np.array_equal(rows, want_r) and np.array_equal(cols, want_c), (shape, m.dtype)
    # a strided view (a padded mask buffer's first columns) and a mask with every entry legal
    padded = (rng.random((9, 16)) < 0.5).astype(np.int8)
    for m in (padded[:, :11], np.ones((3, 17), np.int8)):
        assert all(np.array_equal(a, b) for a, b in zip(legal_indices(m), np.nonzero(m), strict=True))
    # the env's own masks
    env = VectorEnv(16, num_players=5)
    _, info = env.reset(seed=3)
    rows, cols = legal_indices(info["action_mask"])
    assert np.array_equal(np.bincount(rows, minlength=16), info["num_legal"])
    assert info["action_mask"][rows, cols].all()
    with pytest.raises(ActionError, match="2-D"):
        legal_indices(np.zeros(5, np.int8))
    with pytest.raises(ActionError, match="dtype float32"):
        legal_indices(np.zeros((2, 5), np.float32))


# ---- claims (saboteur_env.claims) --------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_claims_slots_match_the_aec_environment_through_autoresets(game: str) -> None:
    """Every slot plays what raw_env(claims=True) plays with the same seed and actions: seats (report windows
    included), masks, observations (claims block included), rewards, ends and the claims log with its labels."""
    from saboteur_env import raw_env

    kw = {"game": game, "claims": True, "claims_per_turn": 2, "rounds": 1}
    venv = VectorEnv(3, **kw)
    obs, info = venv.reset(seed=20)
    envs = [raw_env(**kw) for _ in range(3)]
    for b, e in enumerate(envs):
        e.reset(seed=20 + b)
    sampler, ended, windows = LegalSampler(2), 0, 0
    for _ in range(400):
        for b, e in enumerate(envs):
            o = e.observe(e.agent_selection)
            assert e.agent_selection == f"player_{info['seat'][b]}"
            assert np.array_equal(o["observation"], obs[b]) and np.array_equal(o["action_mask"], info["action_mask"][b])
            windows += int(e.game.current != info["seat"][b])
        actions = venv.sample_actions(sampler)
        obs, rewards, term, _, info = venv.step(actions)
        for b, e in enumerate(envs):
            e.step(int(actions[b]))
            assert np.array_equal(rewards[b], [e.rewards[a] for a in e.possible_agents])
            assert term[b] == all(e.terminations.values())
            if term[b]:
                ended += 1
                assert np.array_equal(info["final_returns"][b], e.variant.returns(e.game))
                e.reset()
    assert ended and windows
    assert venv.claims is not None
    for b, e in enumerate(envs):  # every game's claims, in order, with the same truth labels
        mine = [dict(r, slot=0) for r in venv.claims.records(slot=b)]
        assert mine and mine == e._claims.records()  # type: ignore[union-attr]
        assert e.claims_log() == [r for r in mine if r["game"] == int(venv.claims.games[b])]


def test_claims_compact_observations_expand_to_the_float_ones() -> None:
    cfg = GameConfig(num_players=5, claims=True)
    fl, co = VectorEnv(4, config=cfg), VectorEnv(4, config=cfg, obs_format="compact", mask_format="bits")
    of, _ = fl.reset(seed=1)
    oc, ic = co.reset(seed=1)
    sampler_f, sampler_c = LegalSampler(5), LegalSampler(5)
    for _ in range(60):
        assert np.array_equal(expand_compact(oc, cfg), of)
        assert co.single_observation_space.contains(oc[0]) and fl.single_observation_space.contains(of[0])
        af, ac = fl.sample_actions(sampler_f), co.sample_actions(sampler_c)
        assert np.array_equal(af, ac)
        of, *_ = fl.step(af)
        oc, *_, ic = co.step(ac)
    assert ic["action_mask"].shape == (4, (fl.num_actions + 7) // 8)


def test_claims_illegal_claims_change_nothing() -> None:
    from saboteur_env.claims import GOAL, layout

    venv = VectorEnv(2, num_players=4, claims=True)
    _, info = venv.reset(seed=3)
    lay = layout(venv.config)
    claim = lay.encode(GOAL, 0, 1)
    legal = [int(np.flatnonzero(m)[0]) for m in info["action_mask"]]
    venv.step(np.array([claim, legal[1]]))  # slot 0 claims (K = 1), slot 1 plays
    fp = venv.batch.field("sc").copy()
    log = venv.claims_log()
    for bad, words in ((claim, "not legal"), (lay.done_id, "not legal"), (lay.num_actions, "out of range")):
        with pytest.raises(IllegalActionError, match=words):
            venv.step(np.array([bad, legal[1]]))
    assert np.array_equal(venv.batch.field("sc"), fp) and venv.claims_log() == log and len(log) == 1


@pytest.mark.parametrize(("game", "players"), [("base", 3), ("base", 10), ("sab2", 3), ("sab2", 12), ("duel", 2)])
def test_incremental_rows_equal_full_writes_through_resets_and_threads(game: str, players: int) -> None:
    """The lock-step rewrites only the changed cells of its own float observation rows (``obs_cells``) and clears
    only the legal actions of its last mask rows (``mask_list``); every step they must equal a full write into
    fresh arrays, through automatic resets, a re-seeded reset() in the middle of the games and two threads."""
    env = VectorEnv(9, game=game, num_players=players, num_threads=2, copy=False)
    obs, info = env.reset(seed=11)
    sampler = LegalSampler(3)
    fresh_mask = np.zeros_like(env._buf["mask"])
    fresh_num = np.zeros(env.num_envs, dtype=np.int64)
    done_games = 0
    for step in range(700):
        if step == 350:
            obs, info = env.reset(seed=99)
        assert np.array_equal(obs, env.observe())
        env.batch.masks(fresh_mask, fresh_num)
        assert np.array_equal(info["action_mask"], fresh_mask[:, : env.num_actions])
        assert np.array_equal(info["num_legal"], fresh_num)
        obs, _, term, _, info = env.step(env.sample_actions(sampler))
        done_games += int(term.sum())
    assert done_games >= 9
    env.close()


@pytest.mark.parametrize(("game", "planes"), [("base", 26), ("sab2", 31)])
def test_incremental_rows_detect_a_stale_record(game: str, planes: int) -> None:
    """The equality above is not vacuous: when the float row no longer holds what ``obs_cells`` records (here its
    board is wiped behind the record's back), the next step leaves it wrong; a new game in the slot (which marks
    the record unknown) makes it right again."""
    env = VectorEnv(4, game=game, num_players=4, copy=False)
    env.reset(seed=2)
    sampler = LegalSampler(0)
    for _ in range(5):
        env.step(env.sample_actions(sampler))
    hw = env.config.num_cells
    assert (env.batch.field("obs_cells")[:, hw] == 1).all()  # valid after a step
    env._buf["obs_f"][0, : planes * hw] = 0.0
    obs, *_ = env.step(env.sample_actions(sampler))
    assert not np.array_equal(obs[0], env.observe()[0])
    assert np.array_equal(obs[1:], env.observe()[1:])
    env.batch.field("obs_cells")[0, hw] = 0
    obs, *_ = env.step(env.sample_actions(sampler))
    assert np.array_equal(obs, env.observe())


@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_a_state_written_into_a_slot_resets_its_incremental_record(game: str) -> None:
    """Writing another game's state into a lock-step slot (``convert.from_reference``) marks the slot's records
    unknown: the next step rewrites its rows in full instead of clearing entries of a log that is not there."""
    from saboteur_env.base import convert as base_convert
    from saboteur_env.duel import convert as duel_convert
    from saboteur_env.sab2 import convert as sab2_convert

    conv = {"base": base_convert, "sab2": sab2_convert, "duel": duel_convert}[game]
    env = VectorEnv(3, game=game, num_players=2 if game == "duel" else 5, copy=False)
    env.reset(seed=4)
    sampler = LegalSampler(1)
    for _ in range(12):
        env.step(env.sample_actions(sampler))
    conv.from_reference(conv.to_reference(env.batch, 2), env.batch, 0)
    for _ in range(3):
        obs, _, _, _, info = env.step(env.sample_actions(sampler))
        assert np.array_equal(obs, env.observe())
        fresh = np.zeros_like(env._buf["mask"])
        env.batch.masks(fresh, np.zeros(env.num_envs, dtype=np.int64))
        assert np.array_equal(info["action_mask"], fresh[:, : env.num_actions])


def test_copy_false_outputs_refuse_writes() -> None:
    """With ``copy=False`` the observation and mask are views of rows that the next step updates incrementally: a
    trainer writing into them (e.g. normalising in place) would corrupt later observations, so they are read-only
    and the write fails loudly."""
    for obs_format in ("float", "compact"):
        env = VectorEnv(3, num_players=4, obs_format=obs_format, copy=False)
        obs, info = env.reset(seed=1)
        obs, _, _, _, info = env.step(env.sample_actions(LegalSampler(0)))
        with pytest.raises(ValueError, match="read-only"):
            obs[0, 0] = 7
        with pytest.raises(ValueError, match="read-only"):
            info["action_mask"][0, 0] = 1
        before = obs.copy()
        obs2, *_ = env.step(env.sample_actions(LegalSampler(1)))
        assert np.array_equal(obs2, env.observe(compact=obs_format == "compact"))  # the kernels still write
        assert not np.array_equal(before, obs2)
        env.close()


def _vector_equals_reference(cfg: GameConfig, num_envs: int, games: int, obs_format: str, threads: int,
                             seed: int) -> int:  # fmt: skip
    """Play ``VectorEnv`` (the fused lock-step with its incremental rows) against one numpy reference game per
    slot until ``games`` games have finished: seat, mask, observation (float, or compact expanded), rewards,
    terminations and final scores must agree after every decision. Returns the games finished."""
    from saboteur_env.base import reference as rb
    from saboteur_env.duel import reference as rd
    from saboteur_env.sab2 import reference as rs

    ref_variant = {"base": rb.REFERENCE, "sab2": rs.REFERENCE, "duel": rd.REFERENCE}[cfg.game]
    env = VectorEnv(num_envs, config=cfg, obs_format=obs_format, num_threads=threads, copy=False)
    obs, info = env.reset(seed=seed)
    gens = [np.random.default_rng(seed + b) for b in range(num_envs)]
    refs = [ref_variant.new_game(cfg, g) for g in gens]
    sampler = LegalSampler(seed)
    finished, p = 0, cfg.num_players
    while finished < games:
        full = obs if obs_format == "float" else expand_compact(obs, cfg)
        for b, ref in enumerate(refs):
            assert info["seat"][b] == ref.current
            assert np.array_equal(info["action_mask"][b].astype(bool), ref_variant.legal_action_mask(ref))
            assert np.array_equal(full[b], ref_variant.encode_observation(ref, ref.current)), (cfg, b)
        actions = env.sample_actions(sampler)
        obs, rewards, term, _, info = env.step(actions)
        for b in range(num_envs):
            ref = ref_variant.apply_action(refs[b], int(actions[b]), inplace=True)
            expected = ref.last_rewards if ref.round_just_ended else np.zeros(p)
            assert np.array_equal(rewards[b], np.asarray(expected, dtype=np.float32)), (cfg, b)
            assert term[b] == ref.game_over
            if ref.game_over:
                assert np.array_equal(info["final_returns"][b], ref_variant.returns(ref).astype(np.float32))
                refs[b] = ref_variant.new_game(cfg, gens[b])
                finished += 1
    env.close()
    return finished


VECTOR_EQUIVALENCE = [
    *(GameConfig(num_players=n) for n in range(3, 11)),
    *(GameConfig(game="sab2", num_players=n) for n in (2, 3, 5, 7, 9, 12)),
    GameConfig(game="sab2", num_players=6, rules="official"),
    GameConfig(game="duel"),
    GameConfig(game="duel", duel_layout="official_5x10"),
]


@pytest.mark.parametrize("cfg", VECTOR_EQUIVALENCE[::4], ids=repr)
def test_vector_env_equals_the_reference_engine(cfg: GameConfig) -> None:
    """A few games per variant in the default run (the slow tier below plays 2,000+ per game)."""
    assert _vector_equals_reference(cfg, 4, 4, "float", 1, 7) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_vector_env_equals_the_reference_engine_slow(game: str) -> None:
    """Issue 13's equivalence proof for the vector env: >= 2,000 games per game across its player counts and
    options, float and compact observations, one and two threads."""
    cfgs = [c for c in VECTOR_EQUIVALENCE if c.game == game]
    per = -(-2000 // len(cfgs))
    total = 0
    for i, cfg in enumerate(cfgs):
        total += _vector_equals_reference(cfg, 32, per, ("float", "compact")[i % 2], 1 + i % 2, 100 + i)
    assert total >= 2000


def test_actions_of_any_integer_dtype_or_layout_step_the_same_games() -> None:
    """The lock-step reads its actions from the env's own int64 buffer (its kernel call is bound once): int32, a
    strided view, uint16 and a list must step the games exactly as int64 does, and a refused step (illegal action,
    float dtype) must leave the next step unaffected."""
    a = VectorEnv(6, num_players=4, copy=True)
    b = VectorEnv(6, num_players=4, copy=True, num_threads=2)
    obs_a, _ = a.reset(seed=5)
    obs_b, _ = b.reset(seed=5)
    sampler = LegalSampler(2)
    kinds = ["int32", "strided", "uint16", "list"]
    for step in range(40):
        acts = a.sample_actions(sampler)
        kind = kinds[step % len(kinds)]
        if kind == "int32":
            given: Any = acts.astype(np.int32)
        elif kind == "strided":
            wide = np.zeros(2 * len(acts), dtype=np.int64)
            wide[::2] = acts
            given = wide[::2]
        elif kind == "uint16":
            given = acts.astype(np.uint16)
        else:
            given = acts.tolist()
        if step % 7 == 3:
            with pytest.raises(IllegalActionError):
                b.step(acts.astype(np.float64))
            bad = acts.copy()
            bad[4] = -1
            with pytest.raises(IllegalActionError, match="game 4 is out of range"):
                b.step(bad)
        obs_a, rew_a, done_a, _, info_a = a.step(acts)
        obs_b, rew_b, done_b, _, info_b = b.step(given)
        assert np.array_equal(obs_a, obs_b) and np.array_equal(rew_a, rew_b) and np.array_equal(done_a, done_b)
        assert np.array_equal(info_a["action_mask"], info_b["action_mask"])
    a.close()
    b.close()


def test_a_closed_threaded_env_still_steps_every_game() -> None:
    """``close()`` shuts the thread pool; the env then steps its shards one after another, all of them (each bound
    call covers one shard only), exactly as a one-thread env does. Its games cannot be swapped behind the bound
    calls: ``batch`` is read-only."""
    one = VectorEnv(7, num_players=5)
    two = VectorEnv(7, num_players=5, num_threads=3)
    one.reset(seed=8)
    two.reset(seed=8)
    sampler = LegalSampler(4)
    for step in range(60):
        if step == 5:
            two.close()
        acts = one.sample_actions(sampler)
        a, b = one.step(acts), two.step(acts)
        for x, y in zip(a[:4], b[:4], strict=True):
            assert np.array_equal(x, y)
        assert np.array_equal(a[4]["action_mask"], b[4]["action_mask"])
    with pytest.raises(AttributeError):
        two.batch = one.batch  # type: ignore[misc]
