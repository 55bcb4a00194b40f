"""The claims rule (``GameConfig(claims=True)``, saboteur_env.claims): hand-built positions with exact outcomes, the
bound, truth labels, API conformance, the leak test by resampling, and claims=False unchanged."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test

from saboteur_env import GameConfig, env, raw_env
from saboteur_env.base.positions import make_state
from saboteur_env.claims import ACCUSE, CLEAR, DONE, GOAL, SUSPECT, ClaimLayout, layout
from saboteur_env.common.errors import ActionError, ConfigError, IllegalActionError
from tests.hidden import RESAMPLERS

MAP_GOAL_0 = 1263  # "map on goal 0", base game, 4 players, margin 0


def _base_env(k: int = 1, roles: tuple[int, ...] = (0, 1, 0, 0)) -> tuple[raw_env, ClaimLayout]:
    e = raw_env(num_players=4, claims=True, claims_per_turn=k)
    state = make_state(e.config.game_config, hands={0: {"map": 1, "T05": 2}, 1: {"T05": 3}},
                       goals=("gold", "stone_a", "stone_b"), roles=roles)  # fmt: skip
    e.reset(options={"game": state})
    return e, layout(e.config)


def _legal(e: raw_env) -> np.ndarray:
    return np.flatnonzero(e.observe(e.agent_selection)["action_mask"])


# ---- config ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "words"), [
    ({"claims": "yes"}, "claims='yes' must be a bool"),
    ({"claims": True, "claims_per_turn": 0}, "claims_per_turn=0 is out of range; valid: 1..8"),
    ({"claims": True, "claims_per_turn": 9}, "claims_per_turn=9 is out of range; valid: 1..8"),
    ({"claims": True, "claims_per_turn": 1.5}, "claims_per_turn=1.5 must be an int"),
    ({"claims_per_turn": 2}, "claims_per_turn=2 only applies with claims=True"),
])  # fmt: skip
def test_claims__config_errors_name_value_and_range(kwargs, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(".", r"\.")):
        GameConfig(**kwargs)


def test_claims__config_without_claims_is_unchanged():
    c = GameConfig(game="sab2", num_players=6)
    assert "claims" not in repr(c) and "claims" not in c.__getstate__()
    assert c.game_config is c
    assert pickle.loads(pickle.dumps(c)) == c
    on = GameConfig(game="sab2", num_players=6, claims=True, claims_per_turn=2)
    assert on != c and hash(on) != hash(c) and on.game_config == c and hash(on.game_config) == hash(c)
    assert pickle.loads(pickle.dumps(on)) == on
    assert on.max_game_length == c.max_game_length * 6  # (2K + 2) per game decision, K = 2
    # Serialisers (golden files, model files) see only the old fields without claims, and carry them with claims.
    assert "claims" not in dataclasses.asdict(c) and dataclasses.asdict(on)["claims_per_turn"] == 2
    assert dataclasses.replace(on, rounds=1).claims and GameConfig(**dataclasses.asdict(on)) == on


def test_claims__claims_false_env_is_the_plain_env():
    a, b = raw_env(num_players=5), raw_env(num_players=5, claims=False)
    a.reset(seed=3)
    b.reset(seed=3)
    assert a.action_space("player_0") == b.action_space("player_0")
    assert a.observation_space("player_0") == b.observation_space("player_0")
    rng = np.random.default_rng(0)
    for _ in range(40):
        oa, ob = a.observe(a.agent_selection), b.observe(b.agent_selection)
        assert np.array_equal(oa["observation"], ob["observation"]) and np.array_equal(oa["action_mask"],
                                                                                         ob["action_mask"])
        act = int(rng.choice(np.flatnonzero(oa["action_mask"])))
        a.step(act)
        b.step(act)
        assert a.game.fingerprint() == b.game.fingerprint()
    assert b.claims_log() == []


# ---- the codec ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_claims__codec_round_trips_and_rejects_bad_fields(game):
    cfg = GameConfig(game=game, claims=True)
    lay = layout(cfg)
    a, n, g = lay.game_actions, cfg.num_players, lay.num_goals
    assert lay.num_actions == a + 2 * g + (3 * (n - 1) if game != "duel" else 0) + 1
    for act in range(a, lay.num_actions):
        c = lay.decode(act)
        assert lay.encode(c.kind, c.target, c.value) == act
        assert lay.to_string(act).startswith("claim: ")
    assert lay.to_string(a) == "claim: goal 0 is gold" and lay.to_string(a + 1) == "claim: goal 0 is stone"
    assert lay.decode(lay.done_id).kind == DONE
    with pytest.raises(IllegalActionError, match="is a game action"):
        lay.decode(0)
    with pytest.raises(ActionError, match=f"valid goals 0..{g - 1}"):
        lay.encode(GOAL, g, 1)
    if game == "duel":
        with pytest.raises(ActionError, match="valid: goal, done"):
            lay.encode(ACCUSE, 1)
    else:
        with pytest.raises(ActionError, match=f"valid 1..{n - 1}"):
            lay.encode(SUSPECT, 0)


def test_claims__a_variant_built_on_a_game_plays_its_claims():
    lay = layout(GameConfig(game="base-lite", claims=True))  # tests/toy_variant.py, registered by conftest
    assert lay.roles and lay.num_goals == 3 and lay.facts.saboteur == 1


# ---- hand-built positions -------------------------------------------------------------------------------------
def test_claims__claim_at_own_turn_is_legal_free_and_bounded():
    e, lay = _base_env()
    a = lay.game_actions
    legal = _legal(e)
    assert e.agent_selection == "player_0"
    assert {a, a + 1, a + 5, lay.offsets["accuse"], lay.offsets["suspect"] + 2} <= set(legal.tolist())
    assert lay.done_id not in legal  # no report window is open
    before = e.game.fingerprint()
    e.step(lay.encode(GOAL, 0, 0))  # "goal 0 is stone": false (gold), not known (no map yet) -> not a lie
    assert e.game.fingerprint() == before and e.agent_selection == "player_0"
    [rec] = e.claims_log()
    assert (rec["speaker"], rec["kind"], rec["target"], rec["value"]) == (0, "goal", 0, 0)
    assert (rec["truth"], rec["known"], rec["lie"]) == (False, False, False)
    assert all(info == {"claim": {"round": 0, "speaker": 0, "kind": "goal", "target": 0, "value": 0}}
               for info in e.infos.values())  # fmt: skip
    legal = _legal(e)
    assert legal.max() < a and MAP_GOAL_0 in legal  # K = 1: every claim is masked now, the game moves are not
    with pytest.raises(IllegalActionError, match="claim bound of this turn is reached"):
        e.step(lay.encode(GOAL, 1, 1))
    with pytest.raises(IllegalActionError, match="no report window is open"):
        e.step(lay.done_id)
    assert e.game.fingerprint() == before and len(e.claims_log()) == 1


def test_claims__report_window_after_a_map_and_the_lie_label():
    e, lay = _base_env(k=2)
    e.step(MAP_GOAL_0)  # seat 0 now knows goal 0 is gold
    assert e.game.current == 1 and e.agent_selection == "player_0"  # the report window keeps the mapper
    legal = _legal(e)
    assert legal.min() >= lay.game_actions and lay.done_id in legal
    with pytest.raises(IllegalActionError, match="report window open"):
        e.step(int(np.flatnonzero(e.variant.legal_action_mask(e.game))[0]))
    fp = e.game.fingerprint()
    e.step(lay.encode(GOAL, 0, 0))  # the lie: "goal 0 is stone" after seeing gold
    e.step(lay.encode(GOAL, 0, 1))  # and the truth
    assert e.game.fingerprint() == fp
    lie, truth = e.claims_log()
    assert (lie["truth"], lie["known"], lie["lie"]) == (False, True, True)
    assert (truth["truth"], truth["known"], truth["lie"]) == (True, True, False)
    assert e.agent_selection == "player_1"  # K = 2 claims closed the window
    assert lay.done_id not in _legal(e) and lay.game_actions in _legal(e)  # seat 1's own fresh count


def test_claims__done_closes_the_window_and_a_claim_can_follow_at_the_next_turn():
    e, lay = _base_env(k=1)
    e.step(MAP_GOAL_0)
    e.step(lay.done_id)
    assert e.agent_selection == "player_1" and e.claims_log() == []
    e.step(lay.encode(CLEAR, 1))  # seat 1: "seat +1 (seat 2) is not a saboteur"
    [rec] = e.claims_log()
    assert (rec["speaker"], rec["kind"], rec["target"], rec["truth"], rec["known"]) == (1, "clear", 2, True, False)


@pytest.mark.parametrize(("kind", "offset", "target", "truth"), [
    (ACCUSE, 1, 1, True), (ACCUSE, 2, 2, False), (CLEAR, 1, 1, False), (CLEAR, 3, 3, True), (SUSPECT, 1, 1, True),
])  # fmt: skip
def test_claims__seat_claims_truth_from_the_hidden_roles(kind, offset, target, truth):
    e, lay = _base_env(roles=(0, 1, 0, 0))
    e.step(lay.encode(kind, offset))
    [rec] = e.claims_log()
    assert (rec["target"], rec["truth"], rec["known"], rec["lie"]) == (target, truth, False, False)


def test_claims__observation_block_is_public_and_after_the_game_observation():
    e, lay = _base_env()
    e.step(lay.encode(ACCUSE, 1))  # seat 0 accuses seat 1
    for seat in range(4):
        obs = e.observe(f"player_{seat}")["observation"]
        game_obs = e.variant.encode_observation(e.game, seat)
        assert obs.shape == (game_obs.size + lay.size,) and np.array_equal(obs[: game_obs.size], game_obs)
        [claim] = lay.decode_history(obs)
        speaker = (0 - seat) % 4
        assert claim == {"speaker": speaker, "kind": ACCUSE, "target": (1 - seat) % 4, "value": 1, "this_round": 1}
        seats = lay.split(obs)["seats"]
        assert seats[speaker, (1 - seat) % 4, 0] == 1 and seats.sum() == 1
        assert e.observation_space(f"player_{seat}").contains(e.observe(f"player_{seat}"))


def test_claims__duel_has_goal_claims_only():
    e = raw_env(game="duel", claims=True)
    e.reset(seed=0)
    lay = layout(e.config)
    legal = _legal(e)
    claim_ids = legal[legal >= lay.game_actions]
    assert set(claim_ids.tolist()) == set(range(lay.game_actions, lay.game_actions + 2 * lay.num_goals))
    assert not lay.roles and lay.split(e.observe("player_0")["observation"])["seats"].size == 0


# ---- whole games, the bound, conformance ----------------------------------------------------------------------
def _random_game(e: raw_env, seed: int) -> tuple[int, list[str], int]:
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    steps, fps, dones = 0, [], 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        act = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        fp = e.game.fingerprint()
        e.step(act)
        if act >= layout(e.config).game_actions:
            assert e.game.fingerprint() == fp  # a claim never changes the game
            fps.append(fp)
            dones += act == layout(e.config).done_id
        steps += 1
    return steps, fps, dones


@pytest.mark.parametrize(("game", "players"), [("base", 5), ("sab2", 6), ("duel", 2)])
def test_claims__random_games_end_within_the_bound_with_claims_made(game, players):
    e = raw_env(game=game, num_players=players, claims=True, claims_per_turn=2, rounds=1)
    steps, fps, dones = _random_game(e, 7)
    assert fps and steps <= e.config.max_game_length
    log = e.claims_log()
    assert len(log) == len(fps) - dones > 0
    assert all(r["lie"] == (r["known"] and not r["truth"]) for r in log)


@pytest.mark.parametrize("game", ["base", "sab2", "duel"])
def test_claims__pettingzoo_api(game):
    api_test(env(game=game, claims=True), num_cycles=150)


def test_claims__clone_pickle_deepcopy_keep_the_claims():
    e, lay = _base_env()
    e.step(lay.encode(GOAL, 2, 1))
    for other in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert other.claims_log() == e.claims_log()
        assert np.array_equal(other.observe("player_1")["observation"], e.observe("player_1")["observation"])
        other.step(MAP_GOAL_0)
        assert len(e.claims_log()) == 1 and e.game.current == 0  # the copy is independent


# ---- hidden information ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("game", "players"), [("base", 5), ("sab2", 6), ("duel", 2)])
def test_claims__truth_labels_never_reach_observations(game, players):
    """Resample everything a seat may not know (tests/hidden.py): its observation (claims block included) and its
    mask stay byte-identical, while the truth labels of the same claims change for some resample."""
    e = raw_env(game=game, num_players=players, claims=True, claims_per_turn=2)
    lay = layout(e.config)
    rng = np.random.default_rng(11)
    e.reset(seed=5)
    labels_changed = False
    for _ in range(24):
        seat = e._to_act(e.game)
        obs = e.observe(f"player_{seat}")
        claims_now = [a for a in np.flatnonzero(obs["action_mask"]) if a >= lay.game_actions and a != lay.done_id]
        for trial in range(2):
            hidden = RESAMPLERS[game](e.game.to_reference(), seat, np.random.default_rng(trial))
            other = copy.deepcopy(e)
            other.game = other.variant.adopt(hidden)
            o2 = other.observe(f"player_{seat}")
            assert np.array_equal(obs["observation"], o2["observation"])
            assert np.array_equal(obs["action_mask"], o2["action_mask"])
            if claims_now:
                e2, o3 = copy.deepcopy(e), copy.deepcopy(other)
                e2.step(int(claims_now[0]))
                o3.step(int(claims_now[0]))
                labels_changed |= e2.claims_log()[-1]["truth"] != o3.claims_log()[-1]["truth"]
                after = f"player_{e2._to_act(e2.game)}"  # after the claim too: the seat's view and mask
                assert np.array_equal(e2.observe(f"player_{seat}")["observation"],
                                      o3.observe(f"player_{seat}")["observation"])
                assert np.array_equal(e2.observe(after)["action_mask"], o3.observe(after)["action_mask"])
        mask = obs["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
        if e.game.game_over:
            break
    assert labels_changed


# ---- agents and the observer (agents/claims.py) ---------------------------------------------------------------
def test_claims__observer_exact_posterior_from_a_contradicted_claim():
    from agents.claims_beliefs import ClaimsObserver, PublicClaims

    obs = ClaimsObserver(GameConfig(num_players=5, claims=True))  # 2 saboteur cards in 6: prior 1/3
    p_gold, p_sab = obs.posterior(PublicClaims(goals=((1, 0, True),)), gold_known=np.array([0, -1, -1]))
    # "goal 0 is gold" is false under every remaining hypothesis: (1/3 * 0.7) / (1/3 * 0.7 + 2/3 * 0.1)
    assert np.allclose(p_gold, [0, 0.5, 0.5]) and p_sab[1] == pytest.approx(0.7 / 0.9)
    assert np.allclose(np.delete(p_sab, 1), 1 / 3)
    p_gold, p_sab = obs.posterior(PublicClaims(goals=((1, 2, True), (2, 2, True), (3, 0, True))), seat=0,
                                  saboteur=False)  # fmt: skip
    assert p_gold.argmax() == 2 and p_gold.sum() == pytest.approx(1) and p_sab[0] == 0
    assert p_sab[3] > p_sab[1] == pytest.approx(p_sab[2])  # the lone dissenter looks like the saboteur
    _, p_sab = obs.posterior(PublicClaims(seats=((1, ACCUSE, 3), (2, CLEAR, 4))))
    assert p_sab[3] > 1 / 3 > p_sab[4]


def test_claims__bayes_model_with_claims_raises_the_liars_posterior():
    from agents.base.beliefs import BayesModel
    from agents.claims_beliefs import ClaimsBayesModel

    plain, talk = BayesModel(5, (8, 26, 44)), ClaimsBayesModel(5, (8, 26, 44))
    talk.observe_claim(1, GOAL, 0, 1)  # seat 1: "goal 0 is gold"
    for m in (plain, talk):
        m.observe_peek(0, False)
    assert talk.p_saboteur()[1] > plain.p_saboteur()[1] + 0.2
    assert talk.p_saboteur().sum() == pytest.approx(plain.p_saboteur().sum(), abs=0.15)


@pytest.mark.parametrize(("role", "says_gold"), [(0, True), (1, False)])
def test_claims__agents_claim_the_truth_or_lie_when_it_pays(role, says_gold):
    from agents.claims import make_claims_agent

    e = raw_env(num_players=4, claims=True)
    roles = (role, 0, 0, 1) if role else (0, 1, 0, 0)
    e.reset(options={"game": make_state(e.config.game_config, goals=("gold", "stone_a", "stone_b"), roles=roles,
                                        peeked={0: [0]})})  # fmt: skip
    agent = make_claims_agent("heuristic", e.config)
    agent.reset(0, 4, 1)
    o = e.observe("player_0")
    a = agent.act(o["observation"], o["action_mask"])
    assert a == layout(e.config).encode(GOAL, 0, int(says_gold))  # seat 0 saw gold at goal 0
    e.step(a)
    o = e.observe("player_0")
    assert agent.act(o["observation"], o["action_mask"]) < layout(e.config).game_actions  # then its card play


def test_claims__tournament_logs_claims_with_labels_and_replays():
    from experiments.tournament.logs.format import _schema_problem
    from experiments.tournament.loop import play
    from experiments.tournament.rounds import GameSpec
    from experiments.tournament.tasks import replay_records

    records = play(GameSpec("base", 4, ("claims:honest", "claims:covert"), 5, beliefs=False, secret=7))
    assert all(_schema_problem(r) is None for r in records) and any(r["claims"] for r in records)
    assert all(r["header"]["claims_per_turn"] == 1 for r in records)
    replay_records(records, full=True)  # the game's actions alone replay it; the agents re-run to the same claims
    bad = copy.deepcopy(records[0])
    claim = next(r for r in records if r["claims"])["claims"][0]
    bad["claims"] = [dict(claim, lie=not claim["lie"])]
    assert "lie must be known and not truth" in _schema_problem(bad)
    with pytest.raises(ValueError, match="every agent of a cell"):
        play(GameSpec("base", 4, ("claims:honest", "covert"), 5))


def test_claims__report_runs_on_paired_deals():
    from experiments.analysis.claims_report import main, render, report

    r = report(GameConfig(num_players=4, rounds=1, claims=True), "heuristic", deals=2)
    assert set(r) >= {"lie_rate", "detection", "win_rate", "claims_per_game"}
    assert "paired difference" in render(r) and "reacting minus not reacting" in render(r)
    assert set(r["reaction"]) >= {"claims_not_reacting", "reacting_minus_not_reacting"}
    with pytest.raises(SystemExit):
        main(["--deals", "1"])


def test_claims__wrapped_env_punishes_an_illegal_claim():
    e = env(num_players=4, claims=True)
    e.reset(seed=1)
    lay = layout(e.unwrapped.config)
    e.step(lay.encode(GOAL, 0, 1))
    offender = e.agent_selection
    e.step(lay.encode(GOAL, 1, 1))  # over the bound: the wrapper ends the game with -1 for the offender
    assert all(e.terminations.values()) and e.rewards[offender] == -1


# ---- agents react to claims through their own belief model -----------------------------------------------------
_TUNNEL = """. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?"""


def _after_a_claim(claim: int | None, name: str = "bayes", **policy):
    """Seat 0 makes ``claim`` (or none) and discards; then seat 1 (a digger, a ClaimsAgent around ``name``) acts."""
    from agents.claims import ClaimPolicy, make_claims_agent
    from saboteur_env import ActionType, action_layout

    e = raw_env(num_players=4, claims=True)
    e.reset(options={"game": make_state(e.config.game_config, _TUNNEL, hands={0: {"T05": 3}, 1: {"T02": 1, "T05": 1}},
                                        goals=("stone_a", "stone_b", "gold"), roles=(0, 0, 0, 1))})  # fmt: skip
    lay, al = layout(e.config), action_layout(e.config.game_config)
    if claim is not None:
        e.step(claim)
    legal = np.flatnonzero(e.observe("player_0")["action_mask"][: lay.game_actions])
    e.step(int(next(a for a in legal if al.type_arr[a] == ActionType.DISCARD)))
    agent = make_claims_agent(name, e.config, miner=ClaimPolicy(**policy))
    agent.reset(1, 4, 3)
    o = e.observe("player_1")
    return agent.act(o["observation"], o["action_mask"]), agent


@pytest.mark.parametrize("name", ["bayes", "heuristic"])
def test_claims__a_trusted_gold_claim_changes_the_diggers_target(name):
    lay = layout(GameConfig(num_players=4, claims=True))
    plain, _ = _after_a_claim(None, name)
    told, agent = _after_a_claim(lay.encode(GOAL, 2, 1), name)  # seat 0: "goal 2 (bottom) is gold"
    deaf, _ = _after_a_claim(lay.encode(GOAL, 2, 1), name, react=False)
    assert plain == deaf == 1270  # uniform over the goals: the straight tile or the curve gain too little: discard
    assert told == 652  # the curve T02 at (2, 7) turned down, towards the claimed goal
    # Uniform over (saboteur set, gold slot) with seat 1 a digger: sets {0}, {2}, {3}, {} x 3 slots; the claim weighs
    # slot 2 by 0.9 (speaker digger) or 0.3 (saboteur), the other slots by 0.1 / 0.7: 3.0 : 1.0 : 1.0.
    assert np.allclose(agent.gold_beliefs(), [0.2, 0.2, 0.6])
    assert agent.role_beliefs()[0] == pytest.approx((0.3 + 0.7 + 0.7) / 5)  # the speaker
    assert agent.role_beliefs()[1] == 0


def test_claims__an_accusation_moves_the_bayes_posterior_exactly_as_the_honesty_model_says():
    lay = layout(GameConfig(num_players=4, claims=True))
    _, agent = _after_a_claim(lay.encode(ACCUSE, 2))  # seat 0: "seat 2 is a saboteur"
    # Sets {0}, {2}, {3}, {} (seat 1 is a digger), weighted by the accuse table [speaker role][target role]:
    # {0}: 0.6 (saboteur accuses a digger), {2}: 0.7 (digger accuses a saboteur), {3}, {}: 0.3 each; sum 1.9.
    p = agent.role_beliefs()
    assert [p[s] for s in range(4)] == pytest.approx([0.6 / 1.9, 0, 0.7 / 1.9, 0.3 / 1.9])
    assert np.allclose(agent.gold_beliefs(), 1 / 3)  # seat claims say nothing about the gold
    _, deaf = _after_a_claim(lay.encode(ACCUSE, 2), react=False)
    assert deaf.hooked is None and deaf.inner.miner.beliefs.p_saboteur() == pytest.approx([0.25, 0, 0.25, 0.25])


def test_claims__hooked_models_equal_the_plain_ones_without_claims():
    from agents.base.beliefs import BayesModel, SuspicionModel
    from agents.claims_beliefs import ClaimsBayesModel, ClaimsBeliefs, ClaimsObserver, PublicClaims

    cells = (8, 26, 44)
    plain, hooked = SuspicionModel(4, cells), ClaimsBeliefs(SuspicionModel(4, cells), ClaimsObserver(GameConfig()))
    for m in (plain, hooked):
        m.reset_round(1, 0)
        m.observe_peek(0, False)
    assert np.array_equal(plain.p_saboteur(), hooked.p_saboteur()) and np.array_equal(plain.p_gold(), hooked.p_gold())
    hooked.set_claims(PublicClaims(goals=((0, 2, True),)), 1, False)
    assert hooked.p_gold()[0] == 0 and hooked.p_gold()[2] > plain.p_gold()[2]  # the peek still holds
    b, cb = BayesModel(4, cells), ClaimsBayesModel(4, cells)
    assert np.array_equal(b.posterior(), cb.posterior())
    cb.set_claims(PublicClaims(goals=((0, 2, True),)))
    cb.reset_round(1, 0)  # the claims are the block's (per round): kept
    assert cb.p_gold() == pytest.approx([0.2, 0.2, 0.6])


@pytest.mark.parametrize("game", ["base", "sab2"])
def test_claims__vector_env_threads_give_identical_results(game):
    from saboteur_env.vector import LegalSampler, VectorEnv

    cfg = GameConfig(game=game, num_players=5, claims=True, claims_per_turn=2)
    runs = []
    for threads in (1, 3):
        v = VectorEnv(7, config=cfg, num_threads=threads)
        assert v.num_threads == threads
        obs, info = v.reset(seed=11)
        rng, trace = LegalSampler(4), [obs, info["action_mask"]]
        for _ in range(120):
            obs, rew, done, _, info = v.step(v.sample_actions(rng))
            trace += [obs, rew, done, info["action_mask"], info["seat"]]
        runs.append((trace, v.claims_log()))
        v.close()
    (t1, log1), (t3, log3) = runs
    assert len(log1) > 20 and log1 == log3  # claims were made, with the same labels
    assert all(np.array_equal(x, y) for x, y in zip(t1, t3, strict=True))


def test_claims__single_seat_env_plays_claims_with_claims_agents_as_opponents():
    from agents.claims import make_claims_agent
    from saboteur_env import SingleSeatEnv

    cfg = GameConfig(num_players=4, claims=True)
    lay = layout(cfg)
    e = SingleSeatEnv(lambda s: make_claims_agent("heuristic", cfg), learner_seats=[0], illegal_reward=-1.0,
                      num_players=4, claims=True)  # fmt: skip
    assert e.action_space.n == lay.num_actions and e.observation_space.shape == (
        raw_env(num_players=4).observation_space("player_0")["observation"].shape[0] + lay.size,)
    obs, info = e.reset(seed=3)
    assert obs.shape == e.observation_space.shape and info["action_mask"].shape == (lay.num_actions,)
    assert info["action_mask"][lay.encode(GOAL, 0, 1)]  # the learner may claim
    obs, reward, done, _, info = e.step(lay.encode(GOAL, 0, 1))  # a claim: the learner acts again, reward 0
    assert reward == 0 and not done and not info["action_mask"][lay.encode(GOAL, 1, 1)]  # K = 1 used up
    assert e._env.claims_log()[-1]["speaker"] == 0
    me = make_claims_agent("heuristic", cfg)
    me.reset(0, 4, 5)
    steps, total = 0, 0.0
    while not done:
        obs, reward, done, _, info = e.step(me.act(obs, info["action_mask"].astype(np.int8)))
        total, steps = total + reward, steps + 1
    assert steps > 10 and "illegal" not in info
    log = e._env.claims_log()
    assert {r["speaker"] for r in log} - {0}  # the opponents claimed too
    obs, _ = e.reset(seed=3)
    _, reward, done, _, info = e.step(lay.encode(GOAL, 0, 1))
    _, reward, done, _, info = e.step(lay.encode(GOAL, 1, 1))  # over the bound: illegal
    assert done and reward == -1.0 and info["illegal"]


# ---- oracles behind the claims wrapper (issue 34 §4) ------------------------------------------------------------
def test_claims__the_oracle_flag_comes_from_the_wrapped_agent_object():
    from agents import make_agent
    from agents.agent import RoleDispatch, bind_oracle, is_oracle
    from agents.claims import ClaimsAgent
    from agents.text import TextAgent
    from experiments.tournament.rounds import oracle_name

    cfg = GameConfig(num_players=4, claims=True)
    plain = cfg.game_config
    wrapped = make_agent("claims:role_oracle", cfg)
    assert is_oracle(wrapped) and not is_oracle(make_agent("claims:random", cfg))
    # The flag is asked of what is wrapped now, not copied when the wrapper was built.
    pair = RoleDispatch(plain, make_agent("random", plain, "miner"), make_agent("random", plain, "saboteur"))
    outer = ClaimsAgent(pair, cfg)
    assert not is_oracle(outer)
    pair.saboteur = make_agent("role_oracle", plain, "saboteur")
    assert is_oracle(pair) and is_oracle(outer)
    # The state reaches the oracle inside, through the wrapper (the one plumbing path).
    assert bind_oracle(outer, lambda: "state") and pair.saboteur._state_fn() == "state"
    text = TextAgent(make_agent("gold_oracle", plain), plain)  # hand-built: make_agent refuses text:ORACLE
    assert is_oracle(text) and bind_oracle(text, lambda: "s") and text.inner._state_fn() == "s"
    # Table names: every wrapper answers for what it wraps, in every game with claims.
    for name in ("claims:role_oracle", "claims:gold_oracle", "claims@3:role_oracle"):
        assert oracle_name(name) and oracle_name(name, "sab2"), name
    for name in ("claims:random", "claims:heuristic", "claims@2:bayes", "text:role_oracle", "claims:nobody"):
        assert not oracle_name(name), name
    assert not oracle_name("claims:greedy", "duel")


def test_claims__an_oracle_claims_cell_is_flagged_in_tables_and_left_out_of_ratings(tmp_path):
    from experiments.tournament.report import build as report
    from experiments.tournament.run import run
    from experiments.tournament.summary import Summary

    out = tmp_path / "o"
    games = list(run([4], ["claims:role_oracle", "claims:random"], ["claims:random"], 1, seed=0, beliefs=False,
                     out=out, secret=5))  # fmt: skip
    summary = Summary()
    for records in games:
        summary.add(records)
    rows = {line.split()[1]: line for line in summary.table().splitlines()[2:] if line.strip()[:1].isdigit()}
    assert rows["claims:role_oracle"].endswith(" *") and not rows["claims:random"].endswith("*")
    assert "* oracle: reads the hidden state" in summary.table()
    tables = report.build_report(out, with_plots=False)
    assert {r["miners"] for r in tables["T1_balance"]} == {"claims:role_oracle*", "claims:random"}
    assert not any("oracle" in r["agent_role"] for r in tables["ratings"])
    assert "\\* oracle: reads the hidden state" in (out / "report" / "summary.md").read_text()
    from experiments.analysis.claims_report import render
    from experiments.analysis.claims_report import report as claims_report

    r = claims_report(GameConfig(num_players=4, rounds=1, claims=True), "role_oracle", deals=2, reaction=False)
    assert r["oracle"] and "agent role_oracle*," in render(r) and "* oracle: reads the hidden state" in render(r)


# ---- the claims state from a seat's block; a vector env from given games (search under the claims rule) -------------
def _claims_steps(cfg: GameConfig, steps: int, seed: int = 3):  # type: ignore[no-untyped-def]
    """A claims vector env after ``steps`` random steps that favour claims, and the generator that chose them."""
    from saboteur_env.vector import VectorEnv

    venv = VectorEnv(32, config=cfg)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    a = layout(cfg).game_actions
    for _ in range(steps):
        r = rng.random(info["action_mask"].shape) * info["action_mask"]
        r[:, a:] *= 3
        obs, _, _, _, info = venv.step(r.argmax(axis=1))
    return venv, obs, info, rng


@pytest.mark.parametrize("game,players", [("base", 5), ("base", 7), ("sab2", 6), ("duel", 2)])
def test_claims_state_from_blocks_gives_the_same_blocks_again(game: str, players: int) -> None:
    from saboteur_env.claims import ClaimsBatch

    cfg = GameConfig(game=game, num_players=players, claims=True)
    lay = layout(cfg)
    venv, obs, info, _ = _claims_steps(cfg, 0)
    a = lay.game_actions
    rng = np.random.default_rng(1)
    heard = 0
    for _ in range(120):
        k = venv.batch.k
        rounds = venv.batch.scalar(k.SC_ROUND).astype(np.int64)
        seats = info["seat"]
        blocks = obs[:, -lay.size :]
        cb = ClaimsBatch.from_blocks(cfg, seats, rounds, blocks)
        again = cb.encode(seats, rounds, venv.batch.scalar(k.SC_CURRENT).astype(np.int64))
        np.testing.assert_array_equal(again, blocks)
        heard += int(blocks[:, lay.slices["history"]].any(axis=1).sum())
        r = rng.random(info["action_mask"].shape) * info["action_mask"]
        r[:, a:] *= 3
        obs, _, _, _, info = venv.step(r.argmax(axis=1))
    assert heard > 100  # claims were in the blocks checked
    with pytest.raises(ConfigError, match="claims blocks must be"):
        ClaimsBatch.from_blocks(cfg, seats, rounds, blocks[:, 1:])


def test_vector_env_set_games_plays_on_exactly_as_the_games_it_copied() -> None:
    from saboteur_env.vector import VectorEnv

    cfg = GameConfig(num_players=5, claims=True)
    venv, obs, info, rng = _claims_steps(cfg, 40)
    other = VectorEnv(32, config=cfg)
    assert venv.claims is not None
    obs2, info2 = other.set_games(venv.batch.take(np.arange(32)), venv.claims.clone())
    for _ in range(60):
        np.testing.assert_array_equal(obs2, obs)
        np.testing.assert_array_equal(info2["action_mask"], info["action_mask"])
        np.testing.assert_array_equal(info2["seat"], info["seat"])
        acts = (rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1)
        obs, rew, term, _, info = venv.step(acts)
        obs2, rew2, term2, _, info2 = other.step(acts)
        np.testing.assert_array_equal(rew2, rew)
        np.testing.assert_array_equal(term2, term)
    with pytest.raises(ConfigError, match="games must be a Batch of 32"):
        other.set_games(venv.batch.take(np.arange(8)))
    with pytest.raises(ConfigError, match="without the claims rule"):
        VectorEnv(32, config=cfg.game_config).set_games(venv.batch.take(np.arange(32)), venv.claims.clone())
