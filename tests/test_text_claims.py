"""The text interface with claims (``GameConfig(claims=True)``): lossless JSON with the claims block, claim move
names and parsing, the text lines, refused descriptions, and the leak test (truth labels and resampled hidden
state never change a seat's JSON or text)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from saboteur_env import raw_env
from saboteur_env.base.positions import make_state
from saboteur_env.claims import ACCUSE, GOAL, layout
from saboteur_env.text import (
    DescriptionError,
    IllegalMoveError,
    describe,
    move_id,
    move_names,
    observation_from_description,
    parse_move,
    render,
)
from tests.hidden import RESAMPLERS

CASES = [("base", 5), ("sab2", 6), ("duel", 2)]


def _play(game: str, players: int, steps: int, seed: int = 2):  # type: ignore[no-untyped-def]
    e = raw_env(game=game, num_players=players, claims=True, claims_per_turn=2)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield e
        o = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))


@pytest.mark.parametrize(("game", "players"), CASES)
def test_text_claims__json_is_lossless_and_moves_parse(game, players):
    names = None
    seen_claims = False
    for e in _play(game, players, 50):
        cfg = e.config
        names = names or move_names(cfg)
        for s in range(players):
            agent = f"player_{s}"
            o = e.observe(agent)
            mask = o["action_mask"] if agent == e.agent_selection else None
            d = json.loads(json.dumps(describe(cfg, o["observation"], mask)))
            assert np.array_equal(observation_from_description(cfg, d), o["observation"])
            seen_claims |= bool(d["claims"]["recent"])
        o = e.observe(e.agent_selection)
        for a in np.flatnonzero(o["action_mask"]):
            assert parse_move(cfg, names[a], o["action_mask"]) == a
    assert seen_claims and len(set(names)) == len(names) == layout(cfg).num_actions


def test_text_claims__names_text_and_errors_on_a_hand_built_position():
    e = raw_env(num_players=4, claims=True)
    e.reset(options={"game": make_state(e.config.game_config, hands={0: {"map": 1}}, roles=(0, 1, 0, 0))})
    cfg, lay = e.config, layout(e.config)
    names = move_names(cfg)
    assert names[lay.encode(GOAL, 1, 0)] == "claim goal 1 stone" and names[lay.done_id] == "done claiming"
    assert names[lay.encode(ACCUSE, 2)] == "accuse seat+2" and move_id(cfg, "suspect seat+3") == lay.offsets[
        "suspect"] + 2
    mask = e.observe("player_0")["action_mask"]
    assert parse_move(cfg, "I accuse seat + 2!", mask) == lay.encode(ACCUSE, 2)
    with pytest.raises(IllegalMoveError, match="'done claiming' is not legal now"):
        parse_move(cfg, "done claiming", mask)
    e.step(lay.encode(ACCUSE, 2))
    text = render(describe(cfg, e.observe("player_2")["observation"]))
    assert "Claims you made this turn: 0." in text
    assert "  seat+2: you are a saboteur" in text  # seat 0 is seat+2 of seat 2
    assert "Latest claims about players this round: seat+2: you are a saboteur." in text
    e.step(1263)  # map on goal 0: seat 0's report window
    d = describe(cfg, e.observe("player_0")["observation"], e.observe("player_0")["action_mask"])
    assert d["claims"]["my_report_window"] and "done claiming" in d["legal_moves"]
    assert "You just used a map or an inspection" in render(d)
    assert "Another player is making claims" in render(describe(cfg, e.observe("player_1")["observation"]))


def test_text_claims__bad_descriptions_are_refused_by_key():
    e = raw_env(num_players=4, claims=True)
    e.reset(seed=0)
    cfg, lay = e.config, layout(e.config)
    e.step(lay.encode(GOAL, 0, 1))
    d = describe(cfg, e.observe("player_1")["observation"])
    for change, words in (
        (lambda x: x.pop("claims"), "key 'claims' is missing"),
        (lambda x: x["claims"].pop("recent"), "key 'recent' is missing"),
        (lambda x: x["claims"].update(made_this_turn=5), "made_this_turn: 5 out of range; valid: 0..1"),
        (lambda x: x["claims"]["recent"][0].update(by="seat+9"), "'seat\\+9' must be 'you' or 'seat\\+1'..'seat\\+3'"),
        (lambda x: x["claims"]["recent"][0].update(claim="bribe"), "claim 'bribe' is not a claim kind"),
        (lambda x: x["claims"]["latest_goal_claims"][0].update(says="silver"), "says gold/stone"),
    ):
        bad = copy.deepcopy(d)
        change(bad)
        with pytest.raises(DescriptionError, match=words):
            observation_from_description(cfg, bad)
    with pytest.raises(DescriptionError, match="with claims"):
        describe(cfg, np.zeros(3, dtype=np.float32))


@pytest.mark.parametrize(("game", "players"), CASES)
def test_text_claims__resampling_hidden_state_changes_no_text(game, players):
    """A seat's JSON and text (claims included) are the same under every resample of what it may not know, and
    the claims' truth labels, which do change, appear nowhere in them."""
    labels = set()
    checked = 0
    for e in _play(game, players, 40, seed=4):
        seat = e._to_act(e.game)
        agent = f"player_{seat}"
        o = e.observe(agent)
        d = describe(e.config, o["observation"], o["action_mask"])
        text = render(d)
        assert "truth" not in json.dumps(d) and "lie" not in json.dumps(d["claims"])
        for trial in range(2):
            other = copy.deepcopy(e)
            other.game = other.variant.adopt(RESAMPLERS[game](e.game.to_reference(), seat,
                                                              np.random.default_rng(trial)))  # fmt: skip
            o2 = other.observe(agent)
            assert describe(e.config, o2["observation"], o2["action_mask"]) == d
            assert render(describe(e.config, o2["observation"], o2["action_mask"])) == text
            claims_now = [a for a in np.flatnonzero(o["action_mask"]) if a >= layout(e.config).game_actions]
            if claims_now and claims_now[0] != layout(e.config).done_id:
                other.step(int(claims_now[0]))
                labels.add(other.claims_log()[-1]["truth"])
            checked += 1
    assert checked and labels == {True, False}


@pytest.mark.parametrize(("game", "players", "name", "limit"), [
    ("base", 4, "heuristic", 45),
    pytest.param("sab2", 5, "heuristic", 10_000, marks=pytest.mark.slow),
    pytest.param("duel", 2, "greedy", 10_000, marks=pytest.mark.slow),
])  # fmt: skip
def test_text_claims__text_agent_talks_like_its_tensor_twin(game, players, name, limit):
    """ClaimsAgent around NAME, and the same reading only the text (agents.text.TextAgent): identical games,
    claims included, with zero parse failures (the first ``limit`` decisions)."""
    from agents.claims import make_claims_agent
    from agents.text import TextAgent

    def play(text: bool) -> tuple[list[int], list]:
        e = raw_env(game=game, num_players=players, claims=True, rounds=1 if limit < 10_000 else 3)
        agents = [make_claims_agent(name, e.config) for _ in range(players)]
        if text:
            agents = [TextAgent(a, e.config) for a in agents]
        for s, a in enumerate(agents):
            a.reset(s, players, 100 + s)
        e.reset(seed=9)
        acts = []
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            acts.append(int(agents[int(agent.split("_")[1])].act(obs["observation"], obs["action_mask"])))
            e.step(acts[-1])
            if len(acts) >= limit:
                break
        return acts, agents

    tensor, _ = play(False)
    text, agents = play(True)
    assert text == tensor and any(a >= layout(agents[0].config).game_actions for a in text)
    assert sum(a.stats.total_failures for a in agents) == 0


def test_text_claims__llm_agent_claims_through_a_local_endpoint():
    """The llm agent with claims: the prompt explains claims and lists claim moves; a claim reply is a claim, a
    bad claim (over the bound) is re-asked with the parser's error."""
    from tests.test_llm import FakeEndpoint, agent_for

    e = raw_env(num_players=4, claims=True)
    e.reset(seed=0)
    lay = layout(e.config)
    with FakeEndpoint([("reply", "I claim: claim goal 2 gold"), ("reply", "accuse seat+1"), ("reply", "map goal 0"),
                       ("first_legal",)]) as fake:  # fmt: skip
        llm = agent_for(e.config, fake.url)
        o = e.observe("player_0")
        a = llm.act(o["observation"], o["action_mask"])
        assert a == lay.encode(GOAL, 2, 1)
        e.step(a)
        o = e.observe("player_0")
        a = llm.act(o["observation"], o["action_mask"])  # "accuse seat+1" is over the bound: asked again
        assert a == 1263 and llm.stats.failures["illegal"] == 1  # map goal 0
        system, prompt = fake.requests[0]["body"]["messages"][:2]
        assert "Claims are free public statements" in system["content"] and "claim goal 1 stone" in prompt["content"]
        assert "not legal now" in fake.requests[2]["body"]["messages"][-1]["content"]
