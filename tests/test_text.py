"""The text interface (saboteur_env.text): exact descriptions of hand-built positions, lossless and leak-free JSON,
move names that round-trip, the reply parser, the re-ask policy, and text:NAME playing like its tensor twin."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import make_agent
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game, num_actions
from saboteur_env.base.positions import make_state
from saboteur_env.duel.positions import make_duel_state
from saboteur_env.sab2.positions import make_sab2_state
from saboteur_env.text import (
    AmbiguousMoveError,
    DescriptionError,
    FailureStats,
    IllegalMoveError,
    MalformedReplyError,
    MoveError,
    RequestError,
    RetriesExhaustedError,
    RetryPolicy,
    UnknownMoveError,
    choose,
    describe,
    describe_state,
    legal_moves,
    move_id,
    move_name,
    move_names,
    normalize,
    observation_from_description,
    parse_move,
    render,
    seat_text,
)
from tests.hidden import RESAMPLERS

CONFIGS = {
    "base4": GameConfig(num_players=4),
    "base10m1": GameConfig(num_players=10, margin=1, history_length=8),
    "sab2_5": GameConfig(game="sab2", num_players=5),
    "sab2_12": GameConfig(game="sab2", num_players=12, history_length=0),
    "duel": GameConfig(game="duel"),
    "duel10": GameConfig(game="duel", duel_layout="official_5x10"),
    "lite": GameConfig(game="base-lite", num_players=3),  # a variant on the base rules (tests/conftest.py)
}


def random_states(config: GameConfig, seed: int, every: int = 3, games: int = 1):
    """States along random games (every ``every``-th decision, and the final state)."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        s = new_game(config, np.random.default_rng(seed * 1000 + g))
        t = 0
        while not s.game_over:
            if t % every == 0:
                yield s
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))))
            t += 1
        yield s


# ---- hand-built positions: exact text ---------------------------------------------------------------------------
BOARD = """
. . . . . . . . ?
. . . . . . . . .
S T05 T12 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


@pytest.fixture
def base_position():
    cfg = GameConfig(num_players=4)
    return make_state(cfg, BOARD, goals=("stone_a", "gold", "stone_b"),
                      hands={0: {"T05": 2, "MAP": 1, "BROKEN_CART": 1}}, roles=(0, 1, 0, 0),
                      broken={2: ["lantern"]}, peeked={0: [1]}, current=0)  # fmt: skip


def test_text__base_position_exact_lines(base_position):
    lines = seat_text(base_position, 0).splitlines()
    expected = [
        "Saboteur, 4 players, round 1 of 3. You are seat+0 (absolute seat 0).",
        "It is your turn.",
        "Your role: gold-digger. Your gold: 0 nuggets.",
        "Your hand: T05 x2, BROKEN_CART, MAP.",
        "  goal 0 at (0,8): face down; unknown",
        "  goal 1 at (2,8): face down; you saw gold",
        "  goal 2 at (4,8): face down; unknown",
        "       0    1    2    3    4    5    6    7    8",
        "  0    .    .    .    .    .    .    .    .    ?",
        "  2    S    T05  T12  .    .    .    .    .    ?",
        "  (2,1); T05; open EW; connected EW; tunnels EW; [path]",
        # T12 is a dead end: its E arm is open but not connected to the start
        "  (2,2); T12; open EW; connected W; dead ends EW; [path]",
        "  (2,8); [goal facedown, peeked gold]",
        "  you: 4 cards, broken none, 0 gold cards, maps on goals 1, discarded 0 face down this round",
        "  seat+2: 6 cards, broken lantern, 0 gold cards, maps on goals none, discarded 0 face down this round",
        "Draw pile: 43 cards. Gold cards left: 28.",
        "Legal moves (10):",
        "  break cart seat+0",
        "  map goal 2",
        "  discard MAP",
    ]
    for line in expected:
        assert line in lines, line
    # the dead end blocks every placement: no 'place' move is legal
    assert not any(line.startswith("  place ") for line in lines)
    # the seat not to act gets no move list, and sees its own role and no peek of seat 0
    other = seat_text(base_position, 1).splitlines()
    assert "It is seat+3's turn." in other and "Your role: saboteur. Your gold: 0 nuggets." in other
    assert "  goal 1 at (2,8): face down; unknown" in other
    assert not any(line.startswith("Legal moves") for line in other)


def test_text__base_position_json(base_position):
    d = describe_state(base_position, 0)
    assert d["hand"] == {"T05": 2, "BROKEN_CART": 1, "MAP": 1}
    assert d["seats"][2] == {"offset": 2, "broken": ["lantern"], "hand_size": 6, "gold_cards": 0,
                             "maps_on_goals": [], "last_round_role": None, "discarded": 0}  # fmt: skip
    assert d["seats"][0]["maps_on_goals"] == [1]
    cells = {c["at"]: c for c in d["board"]["cells"]}
    assert set(cells) == {"(0,8)", "(2,0)", "(2,1)", "(2,2)", "(2,8)", "(4,8)"}
    assert cells["(2,8)"] == {"at": "(2,8)", "is": ["goal_facedown", "peeked_gold"]}
    assert cells["(2,1)"] == {"at": "(2,1)", "card": "T05", "open": "EW", "connected": "EW", "tunnels": ["EW"],
                             "is": ["path"]}  # fmt: skip
    assert d["to_act"] == 0 and d["round"] == 1 and d["role"] == "gold-digger" and d["events"] == []
    assert d["legal_moves"] == ["break cart seat+0", "break cart seat+1", "break cart seat+2", "break cart seat+3",
                                "map goal 0", "map goal 1", "map goal 2", "discard T05", "discard BROKEN_CART",
                                "discard MAP"]  # fmt: skip


def test_text__rotated_card_and_events():
    cfg = GameConfig(num_players=3)
    s = make_state(cfg, BOARD.replace("T12", "."), hands={0: {"T06": 1}}, current=0)
    a = move_id(cfg, "place T06 rot180 at (2,2)")  # curve N-E turned: S-W
    assert a == move_id(cfg, "play T06 at r2c2 rot180")  # the older spelling (storage cell) names the same move
    assert legal_action_mask(s)[a]
    s = apply_action(s, a)
    lines = seat_text(s, 1).splitlines()
    assert "  2    S    T05  T06' .    .    .    .    .    ?" in lines
    # both arms of the turned curve reach the start through its tunnel
    assert "  (2,2); T06 rot180; open SW; connected SW; tunnels SW; [path]" in lines
    assert "  seat+2: 1 cards, broken none, 0 gold cards, maps on goals none, discarded 0 face down this round" in lines
    assert "  seat+2: place T06 rot180 at (2,2)" in lines  # seat 0 is seat+2 from seat 1
    assert "It is your turn." in lines


def test_text__sab2_position_exact_lines():
    cfg = GameConfig(game="sab2", num_players=4)
    s = make_sab2_state(cfg, BOARD, roles=(5, 0, 1, 4), hands={0: {"X07": 1, "INSPECTION": 1}}, trapped=(3,),
                        gold=(2, 0, 5, 0), current=0)  # fmt: skip
    lines = seat_text(s, 0).splitlines()
    for line in ("Saboteur 2, 4 players, round 1 of 3. You are seat+0 (absolute seat 0).",
                 "It is your turn. Phase: turn.", "Your role: saboteur.", "Your hand: X07, INSPECTION.",
                 "  seat+3: 6 cards, broken none, 0 gold, maps on goals none, discarded 0 face down this round, "
                 "trapped", "  you: 2 cards, broken none, 2 gold, maps on goals none, discarded 0 face down this round",
                 "  seat+2: 6 cards, broken none, 5 gold, maps on goals none, discarded 0 face down this round",
                 "  inspect seat+1", "  discard INSPECTION"):  # fmt: skip
        assert line in lines, line
    assert "  inspect seat+0" not in lines  # not yourself


def test_text__duel_position_exact_lines():
    s = make_duel_state(hands={1: {"U06": 2, "KEY": 1}}, broken={0: ["cart"]}, current=1)
    d = describe_state(s, 1)
    assert d["status"] == {"your_turn": True, "your_colour": "green"}
    assert d["hand"] == {"U06": 2, "KEY": 1} and d["broken"] == {"you": [], "opponent": ["cart"]}
    lines = render(d).splitlines()
    for line in ("Saboteur: The Duel, 2 players, round 1 of 3. You are seat+0 (absolute seat 1).",
                 "It is your turn.", "Your hand: U06 x2, KEY.", "Broken tools: you none; opponent cart.",
                 "  goal 0 at (0,4): face down"):  # fmt: skip
        assert line in lines, line
    cells = {c["at"]: c for c in d["board"]["cells"]}
    starts = [c for c in cells.values() if c.get("card", "").startswith("START")]
    assert {c["card"] for c in starts} == {"START_BLUE", "START_GREEN"}
    mine = next(c for c in starts if "start_me" in c["is"])
    assert mine["card"] == "START_GREEN" and mine["reached_by_you"] == "NESW"
    assert any(m.startswith("place U06 at ") for m in d["legal_moves"])


# ---- lossless and leak-free -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_text__json_is_lossless(name):
    """The JSON (through json.dumps) reads back into the exact observation of every seat, in all three games."""
    cfg = CONFIGS[name]
    n = 0
    for s in random_states(cfg, seed=7, every=7):
        for seat in range(cfg.num_players):
            obs = encode_observation(s, seat)
            d = json.loads(json.dumps(describe(cfg, obs)))
            back = observation_from_description(cfg, d)
            assert back.dtype == np.float32 and np.array_equal(back, obs), (name, seat, np.flatnonzero(back != obs))
            n += 1
    assert n > 20


@pytest.mark.parametrize("name", ["base4", "sab2_5", "duel"])
def test_text__resampling_hidden_state_changes_no_text(name):
    cfg = CONFIGS[name]
    resample = RESAMPLERS[cfg.game]
    rng = np.random.default_rng(3)
    checked = 0
    for s in random_states(cfg, seed=11, every=20 if cfg.game == "sab2" else 9):
        if s.game_over:
            continue
        for seat in range(cfg.num_players):
            d, text = describe_state(s, seat), seat_text(s, seat)
            for _ in range(2):
                t = resample(s, seat, rng)
                assert describe_state(t, seat) == d
                assert seat_text(t, seat) == text
                checked += 1
    assert checked > 20


def test_text__description_holds_private_information():
    """The leak test could not pass vacuously: a seat's own hand and role are in its text."""
    cfg = GameConfig(num_players=4)
    s = new_game(cfg, np.random.default_rng(0))
    texts = {seat_text(s, seat) for seat in range(4)}
    assert len(texts) == 4


# ---- move names and the parser ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_text__move_names_unique_and_round_trip(name):
    cfg = CONFIGS[name]
    names = move_names(cfg)
    assert len(names) == num_actions(cfg) == len(set(names)) == len({normalize(n) for n in names})
    for a in range(0, len(names), 97):
        assert move_id(cfg, names[a]) == a and move_name(cfg, a) == names[a]
    seen = 0
    for s in random_states(cfg, seed=5, every=5):
        mask = legal_action_mask(s)
        for a in np.flatnonzero(mask):
            assert parse_move(cfg, names[a], mask) == a
            assert parse_move(cfg, names[a].upper().replace(" ", "  "), mask) == a
            seen += 1
    assert seen > 50


def _state_with(cfg: GameConfig, seed: int = 0):
    return make_state(cfg, BOARD.replace("T12", "."), hands={0: {"T05": 1, "T06": 1, "MAP": 1}}, current=0, seed=seed)


def test_text__parser_soft_matching():
    cfg = GameConfig(num_players=4)
    s = _state_with(cfg)
    mask = legal_action_mask(s)
    a = move_id(cfg, "play T06 at r2c2 rot180")
    assert mask[a]
    for reply in ("play T06 at r2c2 rot180", "PLAY t06 AT R2C2 ROT180", "  play  T06 at r2 c2 rot 180. ",
                  "Play T06 at r2c2, rot-180!", '{"move": "play T06 at r2c2 rot180"}',
                  '```json\n{"move": "play t06 at r2c2 rot180"}\n```', {"move": "play T06 at r2c2 rot180"},
                  "I will play T06 at r2c2 rot180 to extend the tunnel.", {"action": a}):  # fmt: skip
        assert parse_move(cfg, reply, mask) == a, reply
    assert parse_move(cfg, "map goal 1", mask) == move_id(cfg, "map goal 1")
    assert parse_move(cfg, '{"move": "map goal 1",}', mask) == move_id(cfg, "map goal 1")  # bad JSON, clear move
    assert parse_move(cfg, "map goal 1 please", mask) == move_id(cfg, "map goal 1")  # free text, one name
    assert parse_move(cfg, "discard m", mask) == move_id(cfg, "discard MAP")  # unique prefix
    # the longer name wins over the shorter name inside it
    cfg5 = GameConfig(num_players=3)
    s5 = make_state(cfg5, BOARD, hands={0: {"REPAIR_PICKAXE_LANTERN": 1, "REPAIR_PICKAXE": 1}}, broken={0: ["pickaxe"]})
    m5 = legal_action_mask(s5)
    long = move_id(cfg5, "repair pickaxe seat+0 with REPAIR_PICKAXE_LANTERN")
    assert m5[long] and parse_move(cfg5, "ok: repair pickaxe seat+0 with REPAIR_PICKAXE_LANTERN", m5) == long
    assert parse_move(cfg5, "repair pickaxe seat + 0", m5) == move_id(cfg5, "repair pickaxe seat+0")


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        ("", MalformedReplyError, "empty"),
        ("   ...  ", MalformedReplyError, "empty"),
        (None, MalformedReplyError, "must be text"),
        (3.5, MalformedReplyError, "must be text"),
        ('{"move": "play T06 at', MalformedReplyError, "does not parse"),
        ('{"thought": "hmm"}', MalformedReplyError, "no 'move' key"),
        ({"move": ["map goal 1"]}, MalformedReplyError, "must be a move name"),
        ("play T06", AmbiguousMoveError, "fits"),
        ("map goal 0 or map goal 2", AmbiguousMoveError, "names 2 legal moves"),
        ("rockfall r2c1", IllegalMoveError, "not legal now"),
        ("I would rockfall r2c1 now", IllegalMoveError, "not legal now"),
        ({"move": 99999}, UnknownMoveError, "out of range"),
        ({"move": 0}, IllegalMoveError, "not legal now"),
        ("fly to the moon", UnknownMoveError, "names no legal move"),
        ("map goal 7", UnknownMoveError, "names no legal move"),
    ],
)
def test_text__parser_errors(reply, error, words):
    cfg = GameConfig(num_players=4)
    mask = legal_action_mask(_state_with(cfg))
    with pytest.raises(error) as info:
        parse_move(cfg, reply, mask)
    assert isinstance(info.value, ValueError) and isinstance(info.value, MoveError)
    assert words in str(info.value)
    assert info.value.reply == reply
    # every message says what would be valid: the legal moves, or the candidates that fit
    assert "legal moves" in str(info.value)


def test_text__bad_masks_and_names():
    cfg = GameConfig(num_players=4)
    with pytest.raises(ValueError, match="shape"):
        parse_move(cfg, "map goal 1", np.ones(5, dtype=bool))
    with pytest.raises(IllegalMoveError, match="mask is all False"):
        parse_move(cfg, "map goal 1", np.zeros(num_actions(cfg), dtype=bool))
    with pytest.raises(UnknownMoveError):
        move_id(cfg, "map goal 3")
    with pytest.raises(ValueError, match="out of range"):
        move_name(cfg, num_actions(cfg))
    assert legal_moves(cfg, np.zeros(num_actions(cfg), dtype=bool)) == []


def test_text__bad_descriptions_are_refused_by_key():
    cfg = GameConfig(num_players=4)
    s = _state_with(cfg)
    d = describe_state(s, 0)
    cases = [
        ({**d, "hand": {"T99": 1}}, "unknown card 'T99'"),
        ({**d, "hand": {"T05": -1}}, "hand.T05"),
        ({**d, "hand": {"T05": 1.5}}, "must be an integer"),
        ({**d, "role": "wizard"}, "role: 'wizard'"),
        ({**d, "board": {"cells": [{"at": "r9c9", "is": ["path"]}]}}, "off the board"),
        ({**d, "board": {"cells": [{"at": "r1c1", "open": "NX"}]}}, "arm letters"),
        ({**d, "board": {"cells": [{"at": "r1c1", "is": ["lava"]}]}}, "'lava'"),
        ({**d, "seats": d["seats"][:2]}, "list of 4 entries"),
        ({k: v for k, v in d.items() if k != "deck_size"}, "'deck_size' is missing"),
        ({**d, "game": "duel"}, "expected 'base'"),
        ({**d, "events": [{"type": "teleport"}]}, "teleport"),
    ]
    for bad, words in cases:
        with pytest.raises(DescriptionError, match=None) as info:
            observation_from_description(cfg, bad)
        assert isinstance(info.value, ValueError) and words in str(info.value), (words, str(info.value))
    with pytest.raises(DescriptionError, match="shape"):
        describe(cfg, np.zeros(3, dtype=np.float32))
    with pytest.raises(DescriptionError, match="not one-hot"):  # an observation the engine never makes
        obs = encode_observation(s, 0)
        obs[cfg.variant.observation_layout(cfg).slices["role"]] = 1.0
        describe(cfg, obs)


# ---- the re-ask policy ------------------------------------------------------------------------------------------
def _scripted(replies):
    it = iter(replies)
    seen = []

    def ask(feedback):
        seen.append(feedback)
        r = next(it)
        if isinstance(r, Exception):
            raise r
        return r

    return ask, seen


def test_text__choose_reasks_with_feedback_and_counts_failures():
    cfg = GameConfig(num_players=4)
    mask = legal_action_mask(_state_with(cfg))
    stats = FailureStats()
    ask, seen = _scripted(["rockfall r2c1", "", RequestError("slow", "timeout"), "map goal 2"])
    log: list[dict] = []
    a = choose(cfg, mask, ask, RetryPolicy(max_tries=4), stats, log=log.append)
    assert a == move_id(cfg, "map goal 2")
    assert seen[0] is None and "not legal now" in seen[1] and "empty" in seen[2] and seen[3] is None
    assert stats.failures == {"unknown": 0, "ambiguous": 0, "illegal": 1, "malformed": 1, "timeout": 1,
                              "transport": 0}  # fmt: skip
    assert (stats.decisions, stats.first_try, stats.replies, stats.fallbacks, stats.total_failures) == (1, 0, 3, 0, 3)
    assert [e["ok"] for e in log] == [False, False, False, True]


@pytest.mark.parametrize("fallback", ["first", "random", "raise"])
def test_text__choose_fallbacks(fallback):
    cfg = GameConfig(num_players=4)
    mask = legal_action_mask(_state_with(cfg))
    stats = FailureStats()
    ask, _ = _scripted(["nonsense"] * 2)
    policy = RetryPolicy(max_tries=2, fallback=fallback)
    if fallback == "raise":
        with pytest.raises(RetriesExhaustedError, match="2 replies"):
            choose(cfg, mask, ask, policy, stats)
        return
    a = choose(cfg, mask, ask, policy, stats, np.random.default_rng(0))
    assert mask[a] and stats.fallbacks == 1 and stats.failures["unknown"] == 2
    if fallback == "first":
        assert a == int(np.flatnonzero(mask)[0])


def test_text__policy_validation():
    for bad in ({"max_tries": 0}, {"max_tries": 21}, {"max_tries": True}, {"fallback": "pray"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            RetryPolicy(**bad)
    with pytest.raises(ValueError, match="kind"):
        RequestError("x", "gremlins")


# ---- text:NAME plays like its tensor twin -----------------------------------------------------------------------
def play(cfg: GameConfig, name: str, seed: int):
    agents = [make_agent(name, cfg) for _ in range(cfg.num_players)]
    for seat, agent in enumerate(agents):
        agent.reset(seat, cfg.num_players, seed * 100 + seat)
    s = new_game(cfg, np.random.default_rng(seed))
    actions = []
    while not s.game_over:
        seat = int(s.current)
        a = agents[seat].act(encode_observation(s, seat), legal_action_mask(s).astype(np.int8))
        actions.append(int(a))
        s = apply_action(s, a, inplace=True)
    return actions, agents


TWINS = [("base", 5, "heuristic"), ("base", 4, "bayes"), ("sab2", 6, "heuristic"), ("duel", 2, "greedy")]


@pytest.mark.parametrize(("game", "players", "name"), TWINS)
def test_text__text_agent_plays_like_its_tensor_twin(game, players, name):
    cfg = GameConfig(game=game, num_players=players, rounds=1)
    for seed in (1, 2):
        tensor, _ = play(cfg, name, seed)
        text, agents = play(cfg, f"text:{name}", seed)
        assert text == tensor
        assert all(a.stats.total_failures == 0 and a.stats.decisions > 0 for a in agents)
        assert sum(a.stats.decisions for a in agents) == len(text)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players", "name"),
                         [*TWINS, ("base", 7, "covert"), ("base", 3, "scripted"), ("sab2", 9, "greedy"),
                          ("sab2", 4, "bayes"), ("duel", 2, "random"), ("base", 6, "random")])  # fmt: skip
def test_text__text_agent_twin_whole_games(game, players, name):
    cfg = GameConfig(game=game, num_players=players)
    for seed in range(4):
        tensor, _ = play(cfg, name, seed)
        text, agents = play(cfg, f"text:{name}", seed)
        assert text == tensor and all(a.stats.total_failures == 0 for a in agents)


def test_text__compare_command():
    from agents.text import main

    assert main(["--game", "duel", "--agent", "random", "--games", "1"]) == 0
    with pytest.raises(SystemExit):
        main(["--game", "duel", "--agent", "random", "--games", "0"])


def test_text__text_agent_reads_only_the_text():
    """The wrapped agent gets exactly the observation rebuilt from the JSON string, and refuses cheating agents."""
    cfg = GameConfig(num_players=4)
    agent = make_agent("text:random", cfg)
    agent.reset(0, 4, 0)
    s = new_game(cfg, np.random.default_rng(0))
    got = []
    inner_act = agent.inner.act
    agent.inner.act = lambda obs, mask: got.append((obs, mask)) or inner_act(obs, mask)
    a = agent.act(encode_observation(s, 0), legal_action_mask(s).astype(np.int8))
    obs, mask = got[0]
    d = json.loads(agent.last_text)
    assert np.array_equal(obs, observation_from_description(cfg, d))
    assert np.array_equal(mask.astype(bool), legal_action_mask(s)) and legal_action_mask(s)[a]
    for bad in ("text:role_oracle", "text:gold_oracle", "text:llm", "text:text:random"):
        with pytest.raises(ValueError, match="not allowed"):
            make_agent(bad, cfg)
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("text:nobody", cfg)
