"""The llm agent end to end against a local fake chat-completions server (no real endpoint, no network).

The server runs in the test process (http.server on 127.0.0.1, port 0, in a thread) and answers each request with
the next scripted behaviour: a reply, an HTTP error, a body that is not a chat completion, or a slow reply.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from agents import make_agent
from agents.llm import LLMAgent, main, move_grammar
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.base.positions import make_state
from saboteur_env.text import RetryPolicy, describe, legal_moves, move_id, render


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """Requests to the local fake server must not go through a proxy configured on the machine."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


BOARD = """
. . . . . . . . ?
. . . . . . . . .
S T05 . . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


class FakeEndpoint:
    """Scripted answers, one per request: ("reply", text), ("status", code), ("body", bytes), ("slow", s, text),
    ("first_legal",) (reads the prompt's move list and answers with its first move; repeats forever) or ("fn", f)
    (answers f(request body) -> (status, text); repeats forever)."""

    def __init__(self, script: list[tuple]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                step = fake.script[0] if fake.script[0][0] in ("first_legal", "fn") else fake.script.pop(0)
                kind = step[0]
                if kind == "fn":  # a server that reads the request: fn(body) -> (status, reply text)
                    status, text = step[1](body)
                    if status != 200:  # a JSON error body, as the OpenAI API and llama.cpp's servers send
                        error = json.dumps({"error": {"message": text, "code": status}}).encode()
                        self.send_response(status)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(error)))
                        self.end_headers()
                        self.wfile.write(error)
                        return
                    step = ("reply", text)
                    kind = "reply"
                if kind == "status":
                    self.send_error(step[1])
                    return
                if kind == "body":
                    payload = step[1]
                else:
                    if kind == "slow":
                        time.sleep(step[1])
                    text = step[-1] if kind != "first_legal" else _first_legal(body)
                    payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                                          "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                                                    "total_tokens": 107}}).encode()  # fmt: skip
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _first_legal(body: dict) -> str:
    prompt = body["messages"][1]["content"].splitlines()
    i = next(i for i, line in enumerate(prompt) if line.startswith("Legal moves ("))
    return prompt[i + 1].strip()


def position():
    cfg = GameConfig(num_players=4)
    s = make_state(cfg, BOARD, hands={0: {"T05": 1, "MAP": 1}}, current=0)
    return cfg, s, encode_observation(s, 0), legal_action_mask(s).astype(np.int8)


def agent_for(cfg: GameConfig, url: str, **kw) -> LLMAgent:
    a = LLMAgent(cfg, base_url=url, model="fake-model", api_key="sk-test", timeout=kw.pop("timeout", 5.0),
                 backoff=0.0, **kw)  # fmt: skip
    a.reset(0, cfg.num_players, 0)
    return a


def test_llm__legal_reply_end_to_end():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("reply", "map goal 1")]) as fake:
        agent = agent_for(cfg, fake.url)
        assert agent.act(obs, mask) == move_id(cfg, "map goal 1")
    (req,) = fake.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["body"]["model"] == "fake-model" and req["body"]["temperature"] == 0.0
    system, user = req["body"]["messages"]
    assert system["role"] == "system" and "exactly one legal move" in system["content"]
    assert "  map goal 1" in user["content"].splitlines() and "Your hand: T05, MAP." in user["content"]
    assert agent.usage == {"requests": 1, "prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                           "max_prompt_tokens": 100}  # fmt: skip
    assert agent.stats.first_try == 1 and agent.stats.total_failures == 0
    (entry,) = agent.transcript
    assert entry["move"] == "map goal 1" and entry["tries"][0]["reply"] == "map goal 1"
    record = json.loads(json.dumps(agent.log_record()))
    assert record["failures"]["decisions"] == 1 and record["transcript"][0]["prompt"] == user["content"]


def test_llm__illegal_then_malformed_then_legal_reasks_with_feedback():
    cfg, _, obs, mask = position()
    script = [("reply", "rockfall r2c1"), ("reply", '{"move": "map goal'), ("reply", '{"move": "discard MAP"}')]
    with FakeEndpoint(script) as fake:
        agent = agent_for(cfg, fake.url)
        assert agent.act(obs, mask) == move_id(cfg, "discard MAP")
    assert len(fake.requests) == 3
    second = fake.requests[1]["body"]["messages"]
    assert second[2] == {"role": "assistant", "content": "rockfall r2c1"}
    assert second[3]["role"] == "user" and "not legal now" in second[3]["content"]
    third = fake.requests[2]["body"]["messages"]
    assert "does not parse" in third[5]["content"]
    assert agent.stats.failures["illegal"] == 1 and agent.stats.failures["malformed"] == 1
    assert agent.stats.first_try == 0 and agent.stats.fallbacks == 0 and agent.usage["total_tokens"] == 3 * 107


def test_llm__slow_reply_times_out_then_recovers():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("slow", 1.5, "map goal 0"), ("reply", "map goal 2")]) as fake:
        agent = agent_for(cfg, fake.url, timeout=0.3)
        t = time.monotonic()
        assert agent.act(obs, mask) == move_id(cfg, "map goal 2")
        assert time.monotonic() - t < 1.4  # the slow reply was not waited for
    assert agent.stats.failures["timeout"] == 1 and agent.stats.replies == 1
    assert agent.transcript[0]["tries"][0]["kind"] == "timeout"


def test_llm__move_time_limit_then_fallback():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("slow", 0.6, "map goal 0")] * 3) as fake:
        agent = agent_for(cfg, fake.url, timeout=0.4, move_timeout=0.5, policy=RetryPolicy(3, "first"))
        a = agent.act(obs, mask)
    assert a == int(np.flatnonzero(mask)[0])
    assert agent.stats.fallbacks == 1 and agent.stats.failures["timeout"] == 3
    assert len(fake.requests) <= 2  # the third try found the move's time used up without asking


def test_llm__server_errors_are_retried_and_bad_bodies_counted():
    cfg, _, obs, mask = position()
    script = [("status", 503), ("reply", "map goal 0"), ("body", b"<html>oops</html>"), ("status", 400),
              ("reply", "map goal 2")]  # fmt: skip
    with FakeEndpoint(script) as fake:
        agent = agent_for(cfg, fake.url, retries=1, constrain="none")  # a constrained 400 would be re-asked plainly
        assert agent.act(obs, mask) == move_id(cfg, "map goal 0")  # 503 re-sent once, then answered
        assert agent.stats.total_failures == 0 and agent.usage["requests"] == 2
        assert agent.act(obs, mask) == move_id(cfg, "map goal 2")
    assert agent.stats.failures["transport"] == 2  # a body that is no chat completion; HTTP 400 (not re-sent)
    assert len(fake.requests) == 5


def test_llm__unreachable_endpoint_falls_back_randomly():
    cfg, _, obs, mask = position()
    with FakeEndpoint([]) as fake:
        url = fake.url
    agent = agent_for(cfg, url, retries=0, policy=RetryPolicy(2, "random"))  # server closed: connection refused
    a = agent.act(obs, mask)
    assert mask[a] and agent.stats.failures["transport"] == 2 and agent.stats.fallbacks == 1


def test_llm__configuration_from_environment_and_errors(monkeypatch):
    cfg = GameConfig(num_players=4)
    monkeypatch.delenv("SABOTEUR_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("SABOTEUR_LLM_MODEL", raising=False)
    with pytest.raises(ValueError, match="SABOTEUR_LLM_BASE_URL"):
        make_agent("llm", cfg)
    monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", "http://127.0.0.1:9/v1/")
    with pytest.raises(ValueError, match="SABOTEUR_LLM_MODEL"):
        make_agent("llm", cfg)
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "m")
    monkeypatch.setenv("SABOTEUR_LLM_API_KEY", "k")
    agent = make_agent("llm", cfg)
    assert isinstance(agent, LLMAgent) and agent.url == "http://127.0.0.1:9/v1/chat/completions"
    assert agent.api_key == "k" and agent.model == "m"
    for bad in ({"base_url": "ftp://x"}, {"timeout": 0}, {"timeout": "5"}, {"retries": -1}, {"max_tokens": 0},
                {"move_timeout": -1.0}, {"backoff": -1}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(bad))):
            LLMAgent(cfg, **{"base_url": "http://h/v1", "model": "m", **bad})


@pytest.mark.parametrize(("game", "players"), [("duel", 2), ("base", 3), ("sab2", 4)])
def test_llm__whole_game_against_a_scripted_server(game, players):
    """Every decision of a one-round game through HTTP (the server copies the first listed legal move)."""
    cfg = GameConfig(game=game, num_players=players, rounds=1)
    with FakeEndpoint([("first_legal",)]) as fake:
        llm = agent_for(cfg, fake.url)
        agents = [llm] + [make_agent("random", cfg) for _ in range(players - 1)]
        for seat, a in enumerate(agents):
            a.reset(seat, players, seat)
        s = new_game(cfg, np.random.default_rng(4))
        mine = 0
        while not s.game_over:
            seat = int(s.current)
            mask = legal_action_mask(s)
            a = agents[seat].act(encode_observation(s, seat), mask.astype(np.int8))
            if seat == 0:
                assert a == int(np.flatnonzero(mask)[0])
                mine += 1
            s = apply_action(s, a, inplace=True)
    assert mine > 0 and llm.stats.decisions == mine == len(llm.transcript) == len(fake.requests)
    assert llm.stats.total_failures == 0 and llm.usage["total_tokens"] == 107 * mine


def test_llm__cli_plays_a_game(tmp_path, capsys):
    out = tmp_path / "t.json"
    with FakeEndpoint([("first_legal",)]) as fake:
        assert main(["--game", "duel", "--opponent", "random", "--base-url", fake.url, "--model", "m",
                     "--transcript", str(out)]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert printed["failures"]["total_failures"] == 0 and len(printed["results"][0]["returns"]) == 2
    assert printed["valid"] == printed["decisions"] == printed["first_try"] > 0
    (game,) = json.loads(out.read_text())["games"]
    assert len(game["transcript"]) == game["decisions"] == printed["decisions"]
    with pytest.raises(SystemExit):
        main(["--game", "duel", "--seat", "5", "--base-url", "http://h/v1", "--model", "m"])


# ---- constrained answers, the compact prompt, options -------------------------------------------------------------
def _grammar_names(grammar: str) -> list[str]:
    """The sentences of a grammar written by move_grammar (one rule of quoted alternatives)."""
    assert grammar.startswith("root ::= ") and grammar.endswith("\n")
    return [json.loads(q) for q in grammar[len("root ::= ") : -1].split(" | ")]


def _llama_cpp_like(body: dict) -> tuple[int, str]:
    """Like llama-cpp-python 0.3.36's server: response_format type json_schema fails validation, answered as HTTP 500
    naming the field; a grammar is obeyed (this fake answers its last sentence, never the prompt's example)."""
    if "response_format" in body:
        return 500, "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type')}"
    if "grammar" in body:
        return 200, _grammar_names(body["grammar"])[-1]
    return 200, "I would like to dig."


def test_llm__schema_is_an_enum_of_the_legal_moves():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("reply", '{"move": "map goal 2"}')]) as fake:
        agent = agent_for(cfg, fake.url)  # constrain="auto": the schema first
        assert agent.act(obs, mask) == move_id(cfg, "map goal 2")
    (req,) = fake.requests
    fmt = req["body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True and "grammar" not in req["body"]
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["move"] and schema["additionalProperties"] is False
    assert schema["properties"]["move"]["enum"] == legal_moves(cfg, mask)
    assert agent.constraint == {"mode": "auto", "sent": {"json_schema": 1}, "rejected": {}}
    assert agent.transcript[0]["tries"][0]["constraint"] == "json_schema"


def test_llm__rejected_schema_falls_back_to_the_grammar_once_and_is_counted():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("fn", _llama_cpp_like)]) as fake:
        agent = agent_for(cfg, fake.url)
        for _ in range(3):
            assert agent.act(obs, mask) == int(np.flatnonzero(mask)[-1])  # the grammar's last sentence
    bodies = [r["body"] for r in fake.requests]
    assert len(bodies) == 4 and "response_format" in bodies[0]  # rejected once, then never sent again
    legal = legal_moves(cfg, mask)
    assert all("response_format" not in b and _grammar_names(b["grammar"]) == legal for b in bodies[1:])
    assert agent.constraint["sent"] == {"grammar": 3} and list(agent.constraint["rejected"]) == ["json_schema"]
    assert "HTTP 500" in agent.constraint["rejected"]["json_schema"]  # not re-sent as a server error would be
    assert agent.stats.first_try == 3 and agent.stats.total_failures == 0  # a rejected constraint is no failure
    assert agent.usage["requests"] == 4


def test_llm__server_without_constraints_is_asked_plainly():
    cfg, _, obs, mask = position()

    def plain(body: dict) -> tuple[int, str]:
        if "response_format" in body or "grammar" in body:
            return 400, "Unrecognized request argument supplied"
        return 200, "map goal 0"

    with FakeEndpoint([("fn", plain)]) as fake:
        agent = agent_for(cfg, fake.url)
        assert agent.act(obs, mask) == agent.act(obs, mask) == move_id(cfg, "map goal 0")
    assert len(fake.requests) == 4  # schema, grammar, plain; then plain only
    assert set(agent.constraint["rejected"]) == {"json_schema", "grammar"} and agent.constraint["sent"] == {"none": 2}


def test_llm__a_validation_error_rejects_the_schema():
    cfg, _, obs, mask = position()
    script = [("status", 422), ("reply", '{"move": "map goal 1"}'), ("reply", "map goal 2")]
    with FakeEndpoint(script) as fake:
        agent = agent_for(cfg, fake.url, constrain="json_schema")
        assert agent.act(obs, mask) == move_id(cfg, "map goal 1")  # asked again without the schema
        assert agent.act(obs, mask) == move_id(cfg, "map goal 2")
    assert ["response_format" in r["body"] for r in fake.requests] == [True, False, False]
    assert list(agent.constraint["rejected"]) == ["json_schema"] and agent.constraint["sent"] == {"none": 2}


def test_llm__a_server_error_is_retried_with_the_constraint():
    """A 5xx that does not name the constraint is the server's trouble: re-sent as it was, the constraint kept."""
    cfg, _, obs, mask = position()
    with FakeEndpoint([("status", 503), ("reply", '{"move": "map goal 1"}')]) as fake:
        agent = agent_for(cfg, fake.url, retries=1)
        assert agent.act(obs, mask) == move_id(cfg, "map goal 1")
    assert all("response_format" in r["body"] for r in fake.requests) and len(fake.requests) == 2
    assert agent.constraint["rejected"] == {} and agent.constraint["sent"] == {"json_schema": 1}


def test_llm__a_bad_request_is_not_taken_for_a_rejected_constraint():
    """A 400 that the plain request gets too (say, a prompt over the context window) is a transport failure: the
    constraints stay on."""
    cfg, _, obs, mask = position()
    with FakeEndpoint([("fn", lambda body: (400, "context window exceeded"))]) as fake:
        agent = agent_for(cfg, fake.url, policy=RetryPolicy(2, "first"))
        assert agent.act(obs, mask) == int(np.flatnonzero(mask)[0])
    assert len(fake.requests) == 6 and agent.stats.failures["transport"] == 2 and agent.stats.fallbacks == 1
    assert agent.constraint["rejected"] == {} and agent.constraints() == ("json_schema", "grammar")
    assert [t.get("constraint") for t in agent.transcript[0]["tries"][:2]] == [None, None]


def test_llm__a_slow_constrained_reply_is_a_timeout_not_a_rejection():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("slow", 1.0, "map goal 0"), ("reply", '{"move": "map goal 1"}')]) as fake:
        agent = agent_for(cfg, fake.url, timeout=0.3, constrain="json_schema")
        assert agent.act(obs, mask) == move_id(cfg, "map goal 1")
    assert agent.stats.failures["timeout"] == 1 and agent.constraint["rejected"] == {}
    assert all("response_format" in r["body"] for r in fake.requests)


def test_llm__unconstrained_agent_sends_no_constraint():
    cfg, _, obs, mask = position()
    with FakeEndpoint([("reply", "map goal 1")]) as fake:
        agent = agent_for(cfg, fake.url, constrain="none")
        assert agent.act(obs, mask) == move_id(cfg, "map goal 1")
    body = fake.requests[0]["body"]
    assert "response_format" not in body and "grammar" not in body and agent.constraint["sent"] == {"none": 1}


def test_move_grammar_quotes_and_refuses():
    assert move_grammar(["a b", 'say "x" \\ y']) == 'root ::= "a b" | "say \\"x\\" \\\\ y"\n'
    assert _grammar_names(move_grammar(["a b", 'say "x" \\ y'])) == ["a b", 'say "x" \\ y']
    with pytest.raises(ValueError, match="at least one"):
        move_grammar([])
    with pytest.raises(ValueError, match="cannot hold"):
        move_grammar(["bad\nname"])


@pytest.mark.parametrize(("game", "players"), [("base", 5), ("sab2", 5), ("duel", 2)])
def test_compact_prompt_is_short_and_loses_no_move(game, players):
    """Over a whole game: the compact text with its system prompt is at most 3,000 characters (SmolLM2's tokenizer
    counts at most ~1,300 tokens for such prompts, docs/text.md) and well under the full text, and its grouped move
    list names exactly the legal moves."""
    cfg = GameConfig(game=game, num_players=players)
    agents = [make_agent("expert", cfg) for _ in range(players)]
    for seat, a in enumerate(agents):
        a.reset(seat, players, seat)
    s = new_game(cfg, np.random.default_rng(1))
    system = LLMAgent(cfg, base_url="http://h/v1", model="m", prompt="compact").system_prompt
    ratios = []
    while not s.game_over:
        seat = int(s.current)
        obs, mask = encode_observation(s, seat), legal_action_mask(s).astype(np.int8)
        d = describe(cfg, obs, mask, seat=seat)
        text = render(d, compact=True)
        assert len(system) + len(text) <= 3000
        ratios.append(len(text) / len(render(d)))
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Legal moves (")) + 1
        named = [f"{head} {end}".strip() if ":" in line else end
                 for line in lines[start:-1] for head, _, ends in [line.strip().rpartition(": ")]
                 for end in ends.split(" | ")]  # fmt: skip
        assert sorted(named) == sorted(d["legal_moves"])  # grouped, so in another order
        s = apply_action(s, agents[seat].act(obs, mask), inplace=True)
    assert max(ratios) < 0.8 and np.mean(ratios) < 0.6


def test_llm__options_by_name(monkeypatch):
    cfg = GameConfig(num_players=4)
    monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "m")
    agent = make_agent("llm:prompt=compact,constrain=grammar,max_tokens=16,move_timeout=2.5,max_tries=2,"
                       "fallback=random,model=other", cfg)  # fmt: skip
    assert isinstance(agent, LLMAgent) and agent.prompt == "compact" and agent.constrain == "grammar"
    assert (agent.max_tokens, agent.move_timeout, agent.model) == (16, 2.5, "other")
    assert agent.policy == RetryPolicy(2, "random") and agent.system_prompt.startswith("You are playing")
    bad = {"llm:max_tokens=0": r"agent 'llm:max_tokens=0': max_tokens=0 is out of range; valid: 1\.\.32768",
           "llm:move_timeout=0": r"move_timeout=0.0 is out of range; valid: > 0 and <= 86400",
           "llm:max_tokens=lots": r"max_tokens='lots' is not a whole number; valid: 1\.\.32768",
           "llm:constrain=regex": r"constrain='regex' is not valid; valid: auto, json_schema, grammar, none",
           "llm:api_key=x": r"'api_key=x' is not KEY=VALUE with KEY one of prompt, constrain",
           "llm:prompt=full,prompt=compact": r"'prompt' is given twice",
           "llm:": r"'' is not KEY=VALUE"}  # fmt: skip
    for name, message in bad.items():
        with pytest.raises(ValueError, match=message):
            make_agent(name, cfg)


@pytest.mark.parametrize(("args", "message"), [
    (["--max-tokens", "0"], "argument --max-tokens: max_tokens=0 is out of range; valid: 1..32768"),
    (["--max-tokens", "x"], "max_tokens='x' is not a whole number; valid: 1..32768"),
    (["--move-timeout", "-1"], "argument --move-timeout: move_timeout=-1.0 is out of range; valid: > 0 and <= 86400"),
    (["--timeout", "nan"], "timeout=nan is out of range"),
    (["--rounds", "4"], "argument --rounds: rounds='4' is out of range; valid: 1..3"),
    (["--games", "0"], "argument --games: games='0' is out of range; valid: 1..100000"),
    (["--seat", "2"], "--seat 2 is out of range; valid: 0..1"),
    (["--prompt", "tiny"], "argument --prompt: invalid choice: 'tiny'"),
    (["--opponent", "nobody"], "unknown agent 'nobody'"),
])  # fmt: skip
def test_llm__cli_rejects_bad_values(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--game", "duel", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", *args])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_tournament_accepts_llm_names(monkeypatch, capsys):
    from experiments.tournament.cli import _known
    from experiments.tournament.cli import main as tournament

    assert _known("llm", "base") and _known("llm:prompt=compact", "duel") and not _known("llmx", "sab2")
    monkeypatch.delenv("SABOTEUR_LLM_BASE_URL", raising=False)
    with pytest.raises(SystemExit):
        tournament(["--miners", "expert", "--saboteurs", "expert", "--insert", "expert", "llm:max_tokens=0"])
    assert "max_tokens=0 is out of range" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tournament(["--game", "duel", "--agents", "greedy", "llm"])
    assert "SABOTEUR_LLM_BASE_URL" in capsys.readouterr().err


def test_tournament_logs_the_llm_seat(monkeypatch):
    """A tournament game with an llm seat: its transcript, usage and failure counts go into the game's last round."""
    from experiments.tournament.loop import play
    from experiments.tournament.rounds import GameSpec

    with FakeEndpoint([("fn", lambda body: (200, _grammar_names(body["grammar"])[0]))]) as fake:
        monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", fake.url)
        monkeypatch.setenv("SABOTEUR_LLM_MODEL", "fake-model")
        records = play(GameSpec("duel", 2, ("greedy", "llm:constrain=grammar,prompt=compact"), seed=3))
    assert all("agent_logs" not in r for r in records[:-1]) and list(records[-1]["agent_logs"]) == ["1"]
    (log,) = records[-1]["agent_logs"]["1"]
    n = len(log["transcript"])
    assert n == log["failures"]["decisions"] == log["failures"]["first_try"] == len(fake.requests) > 0
    assert log["prompt"] == "compact" and log["constraint"]["sent"] == {"grammar": n}
    json.dumps(records)  # the log writer's format


def test_valid_move_measurement_against_a_fake_llama_cpp_server(capsys):
    """experiments.llm.moves on the same deals with and without constraints: a server that obeys grammars and
    otherwise answers prose gives 100% and 0% valid moves, with the counts the table prints."""
    from experiments.llm.moves import main as measure

    with FakeEndpoint([("fn", _llama_cpp_like)]) as fake:
        assert measure(["--base-url", fake.url, "--model", "m", "--game", "duel", "--games", "2", "--rounds", "1",
                        "--opponent", "random", "--constrain", "auto", "none", "--max-tries", "2"]) == 0  # fmt: skip
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    (auto, none) = rows
    assert auto[1].startswith("auto (grammar ") and "rejected json_schema" in auto[1]
    assert auto[4].startswith("100.0% [100.0, 100.0]") and auto[5] == "100.0%" and auto[6] == "none"
    assert none[1].startswith("none (none ") and none[4].startswith("0.0% [0.0, 0.0]") and none[5] == "0.0%"
    assert none[6] == f"unknown {2 * int(none[3])}"  # two prose replies per decision, then the fallback
    assert int(auto[3]) > 0 and int(none[3]) > 0


def test_llm_logs_summarise_the_llm_seats_of_a_tournament_log(monkeypatch, tmp_path, capsys):
    """experiments.llm.logs reads the transcripts a tournament logged: every decision here fails once (prose), then
    the second reply names a legal move."""
    from experiments.llm.logs import main as summarise
    from experiments.llm.logs import summary
    from experiments.tournament.run import run_tasks

    calls = []

    def every_other(body: dict) -> tuple[int, str]:
        calls.append(1)
        return 200, ("I think I will dig." if len(calls) % 2 else _first_legal(body))

    with FakeEndpoint([("fn", every_other)]) as fake:
        monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", fake.url)
        monkeypatch.setenv("SABOTEUR_LLM_MODEL", "fake-model")
        tasks = [("duel", "greedy", "llm:constrain=none", seed, "seed_5x9") for seed in (3, 4)]
        list(run_tasks(tasks, workers=1, out=tmp_path / "log", secret=5))
    s = summary(tmp_path / "log")
    n = len(fake.requests) // 2
    assert s["games"] == 2 and s["decisions"] == n > 0 and s["valid"] == n and s["first_try"] == 0
    assert s["failures"] == {"unknown": n} and s["fallbacks"] == 0 and s["sent"] == {"none": 2 * n}
    assert summarise([str(tmp_path / "log")]) == 0
    row = capsys.readouterr().out.splitlines()[2].split(" | ")
    assert row[1:8] == ["2", str(n), "100.0%", "0.0%", f"unknown {n}", "0", f"none {2 * n}"]
    with pytest.raises(SystemExit):
        summarise([str(tmp_path / "nothing")])
