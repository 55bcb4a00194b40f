"""The web table against hostile input (issue 34 §2): every case a QA session found, through HTTP.

Who may ask (Host allow-list, token, same-origin JSON), bot names that are file paths, agents that think too long or
for a client that left, bodies too big or too deep, live tables, strict moves, replays of a deal in play, and the
agents' seeds. The server runs in-process (Starlette's TestClient) or, where a socket must close or the server must
stop mid-request, under uvicorn on 127.0.0.1 in a thread, stopped at the end of the test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 behind its TestClient; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from experiments.web import table as table_module  # noqa: E402
from experiments.web.server import StoppingServer, cookie_name, create_app  # noqa: E402
from experiments.web.table import TableStore  # noqa: E402

TOKEN = "s3cret-token-for-tests"
ORIGIN = "http://127.0.0.1:8765"


def _client(store: TableStore | None = None, **kw: Any) -> TestClient:
    app = create_app(store=store or TableStore(), token=TOKEN)
    return TestClient(app, base_url=ORIGIN, headers={"X-Saboteur-Token": TOKEN}, **kw)


def _play_out(client: TestClient, data: dict, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    for _ in range(10_000):
        if data["final"]:
            return data
        if data["thinking"]:
            r = client.post(f"/api/tables/{data['table']}/advance", json={"version": data["version"]})
        else:
            move = data["moves"][int(rng.integers(len(data["moves"])))]
            body = {"action": move["id"], "version": data["version"]}
            r = client.post(f"/api/tables/{data['table']}/move", json=body)
        assert r.status_code == 200, r.text
        data = r.json()
    raise AssertionError("the game did not end")


# ---- who may ask ---------------------------------------------------------------------------------------------------
def test_web__a_foreign_host_is_refused_everywhere_and_the_loopback_names_are_served():
    store = TableStore()
    client = _client(store)
    tid = client.post("/api/tables", json={"players": 3, "seed": 1}).json()["table"]
    for path in ("/", "/api/options", f"/api/tables/{tid}", "/static/app.js"):
        r = client.get(path, headers={"Host": "evil.example.com:8765"})  # DNS rebinding: the attacker's name
        assert r.status_code == 403 and "Host 'evil.example.com:8765' is not served" in r.json()["error"], path
    r = client.post("/api/tables", json={}, headers={"Host": "evil.example.com", "Origin": "http://evil.example.com"})
    assert r.status_code == 403 and len(store.tables) == 1
    for host in ("127.0.0.1:8765", "localhost:1", "[::1]:8765", "LOCALHOST"):
        assert client.get("/api/options", headers={"Host": host}).status_code == 200, host
    for host in ("127.0.0.1.evil.example.com", "127.0.0.1:x", "", "localhost:8765@evil"):
        assert client.get("/api/options", headers={"Host": host}).status_code == 403, host


def test_web__no_token_no_answer_and_the_printed_address_sets_a_strict_cookie():
    client = _client()
    bare = TestClient(client.app, base_url=ORIGIN)
    for method, path in [("GET", "/"), ("GET", "/api/options"), ("POST", "/api/tables"), ("GET", "/api/tables/x")]:
        r = bare.request(method, path, json={} if method == "POST" else None)
        assert r.status_code == 403 and "needs its token" in r.json()["error"], path
    assert bare.get("/", headers={"X-Saboteur-Token": TOKEN + "x"}).status_code == 403
    assert bare.get("/?token=" + TOKEN[:-1]).status_code == 403
    assert bare.get("/api/options?token=" + TOKEN).status_code == 403  # a token in the URL: the page's address only
    assert bare.get("/static/app.js").status_code == 200  # the page's code holds no secret
    r = bare.get("/?token=" + TOKEN, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"].lower()
    assert cookie.startswith(cookie_name(TOKEN) + "=") and "httponly" in cookie and "samesite=strict" in cookie
    # A browser with the cookie is served: the page and its fetches (same origin, JSON).
    assert TOKEN in r.cookies.get(cookie_name(TOKEN), "")
    browser = TestClient(client.app, base_url=ORIGIN, cookies={cookie_name(TOKEN): TOKEN})
    assert "app.js" in browser.get("/").text
    r = browser.post("/api/tables", json={"players": 3}, headers={"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200, r.text
    # Servers on other ports keep their own cookie (cookies ignore the port).
    assert cookie_name(TOKEN) != cookie_name("another server's token")


def test_web__cross_site_requests_change_nothing_even_with_the_token():
    """A foreign page's "simple" POST (text/plain, no preflight) or any cross-site POST is refused before the app;
    the token is sent too, the worst case (a browser that did send the cookie)."""
    store = TableStore()
    client = _client(store)
    body = json.dumps({"players": 3}).encode()
    for headers, status, words in [
        ({"Content-Type": "text/plain"}, 415, "Content-Type 'text/plain' is refused"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "send application/json"),
        ({}, 415, "Content-Type '' is refused"),
        ({"Content-Type": "application/json", "Origin": "http://evil.example.com"}, 403, "is not this server"),
        ({"Content-Type": "application/json", "Origin": "null"}, 403, "Origin 'null' is not this server"),
        ({"Content-Type": "application/json", "Origin": "http://127.0.0.1:9999"}, 403, "is not this server"),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, "a cross-site request"),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403, "a same-site request"),
        ({"Content-Type": "text/plain", "Origin": "http://evil.example.com"}, 403, "is not this server"),
    ]:
        r = client.post("/api/tables", content=body, headers=headers)
        assert r.status_code == status and words in r.json()["error"], (headers, r.text)
    assert store.tables == {}
    r = client.post("/api/tables", content=body, headers={"Content-Type": "Application/JSON; charset=utf-8",
                                                          "Origin": ORIGIN})  # fmt: skip
    assert r.status_code == 200, r.text
    # The same guard stands before a move, an advance and a replay.
    tid = r.json()["table"]
    for path in (f"/api/tables/{tid}/move", f"/api/tables/{tid}/advance", "/api/replays"):
        r = client.post(path, content=b'{"version": 0}', headers={"Content-Type": "text/plain"})
        assert r.status_code == 415, path
    assert store.get(tid).actions == [] or store.get(tid).version == 0


def test_web__unknown_routes_and_methods_answer_json():
    client = _client()
    r = client.get("/api/nothing")
    assert r.status_code == 404 and "Not Found" in r.json()["error"]
    r = client.put("/api/tables", json={})
    assert r.status_code == 405 and "error" in r.json()


# ---- bot names -----------------------------------------------------------------------------------------------------
def test_web__browser_bot_names_never_reach_a_file(tmp_path, monkeypatch):
    """Paths from a request are refused before any file is looked at, with the same message whether the path is a
    device, a FIFO, a readable file, a directory or nothing (it tells nothing about the machine)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    model = tmp_path / "model.npz"
    model.write_bytes(b"x")
    opened: list[str] = []
    real = table_module.make_bot

    def spy(name: str, config: Any) -> Any:
        if ":" in name and not name.startswith("ismcts:"):
            opened.append(name)
            raise AssertionError(f"a browser name reached the loader: {name}")
        return real(name, config)

    monkeypatch.setattr(table_module, "make_bot", spy)
    store = TableStore()
    client = _client(store)
    messages = set()
    for path in ("/dev/zero", "/etc/passwd", str(fifo), str(model), str(tmp_path), "/no/such/file", "~/x", ""):
        for kind in ("ppo", "learned"):
            name = f"{kind}:{path}"
            for bots in (name, ["heuristic", name, "heuristic"]):
                r = client.post("/api/tables", json={"players": 3, "bots": bots})
                assert r.status_code == 400, (name, r.text)
                error = r.json()["error"]
                assert ("is not offered: model files and language models sit only when the server's command line "
                        "names them") in error  # fmt: skip
                messages.add(error.partition(" is not offered")[2])  # (the name is quoted, cut when long)
    # Language models likewise: a page cannot make the server call an endpoint (any, with any options).
    for name in ("llm", "llm:base_url=http://127.0.0.1:1/v1", "llm:model=x,base_url=http://example.com/v1"):
        r = client.post("/api/tables", json={"players": 3, "bots": name})
        assert r.status_code == 400, (name, r.text)
        messages.add(r.json()["error"].partition(" is not offered")[2])
    assert len(messages) == 1 and opened == [] and store.tables == {}
    # The shipped policy ("learned", no path) sits: the server picks its file, not the request.
    r = client.post("/api/tables", json={"players": 5, "bots": "learned", "seat": 4})
    assert r.status_code == 200 and "learned" in r.json()["names"][0], r.text
    # The agents and the shipped policy remain: the page's list is what may sit.
    options = client.get("/api/options").json()["games"]["base"]["bots"]
    assert "heuristic" in options and not any(":" in b for b in options)
    for bots, words in [(7, "must be one agent name"), ([1, 2, 3], "must be an agent name (a string)"),
                        ("x" * 5000, "is unknown"), ("../heuristic", "is unknown")]:  # fmt: skip
        r = client.post("/api/tables", json={"players": 3, "bots": bots})
        assert r.status_code == 400 and words in r.json()["error"] and len(r.json()["error"]) < 600, bots


# ---- agents' time ----------------------------------------------------------------------------------------------
def test_web__is_mcts_5000_at_ten_players_answers_within_its_budget_and_the_page_advances_the_rest():
    pytest.importorskip("agents.ismcts")
    store = TableStore(think_seconds=0.3)
    client = _client(store)
    r = client.post("/api/tables", json={"players": 10, "seat": 9, "bots": "ismcts:5000", "seed": 3, "rounds": 1})
    assert r.status_code == 200, r.text
    data = r.json()
    table = store.get(data["table"])
    # The first agent's search was cut at its time (not 5000 simulations), and the rest of the agents wait.
    assert data["thinking"] and not data["my_turn"] and data["moves"] == []
    assert 1 <= len(table.actions) < 9 and len(data["steps"]) == len(table.actions)
    searched = [a.last_stats["simulations"] for a in table.agents.values() if a.last_stats]
    assert searched and all(1 <= n < 5000 for n in searched)
    r = client.post(f"/api/tables/{data['table']}/move", json={"action": 0, "version": data["version"]})
    assert r.status_code == 409 and "still thinking" in r.json()["error"]
    r = client.post(f"/api/tables/{data['table']}/advance", json={"version": data["version"] + 1})
    assert r.status_code == 409 and "stale" in r.json()["error"]
    r = client.post(f"/api/tables/{data['table']}/advance", json={"version": data["version"], "x": 1})
    assert r.status_code == 400 and "unknown field(s) ['x']" in r.json()["error"]
    done = len(table.actions)
    r = client.post(f"/api/tables/{data['table']}/advance", json={"version": data["version"]})
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["version"] == data["version"] + 1 and len(table.actions) > done
    assert len(after["steps"]) == len(table.actions) - done and all(not s["mine"] for s in after["steps"])


class Endless:
    """An agent that thinks until the table tells it to stop (the table's ``stop`` hook), then plays."""

    name = "endless"
    stop: Any = None

    def __init__(self) -> None:
        self.started, self.ended = threading.Event(), threading.Event()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        pass

    def act(self, observation: Any, mask: Any) -> int:
        self.started.set()
        while not self.stop():
            time.sleep(0.005)
        self.ended.set()
        return int(np.flatnonzero(mask)[0])


@contextmanager
def _serving(store: TableStore) -> Iterator[tuple[int, StoppingServer, threading.Thread]]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = StoppingServer(uvicorn.Config(create_app(store=store, token=TOKEN), log_level="warning"), store)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(600):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield sock.getsockname()[1], server, thread
    finally:
        store.stopping.set()
        server.should_exit = True
        thread.join(timeout=30)


def _send(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str | None] | None = None,
          ) -> socket.socket:  # fmt: skip
    """A request on a new connection (a header given as None is not sent); read its answer with ``_answer``."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = {"Host": f"127.0.0.1:{port}", "X-Saboteur-Token": TOKEN, "Connection": "close",
            "Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})}  # fmt: skip
    lines = "".join(f"{k}: {v}\r\n" for k, v in head.items() if v is not None)
    conn.sendall(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode() + body)
    return conn


def _answer(conn: socket.socket) -> tuple[int, dict]:
    raw = b""
    while chunk := conn.recv(65536):
        raw += chunk
    conn.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _endless_table(monkeypatch: pytest.MonkeyPatch, store: TableStore, port: int) -> tuple[dict, list[Endless]]:
    bots: list[Endless] = []

    def endless(name: str, config: Any) -> Endless:
        bots.append(Endless())
        return bots[-1]

    monkeypatch.setattr(table_module, "make_bot", endless)
    status, data = _answer(_send(port, "POST", "/api/tables", b'{"players": 3, "seat": 0, "bots": "random"}'))
    assert status == 200 and data["my_turn"], data  # the base game's seat 0 moves first: nobody thought yet
    return data, bots


def _move(data: dict) -> bytes:
    return json.dumps({"action": data["moves"][0]["id"], "version": data["version"]}).encode()


def test_web__an_agent_stops_thinking_when_its_client_leaves(monkeypatch):
    store = TableStore(think_seconds=600)  # only the client's leaving can stop the agent
    with _serving(store) as (port, _, _):
        data, bots = _endless_table(monkeypatch, store, port)
        conn = _send(port, "POST", f"/api/tables/{data['table']}/move", _move(data))
        assert bots[0].started.wait(60)
        conn.close()  # the client goes
        assert bots[0].ended.wait(60), "the agent kept thinking for a client that left"
        status, after = _answer(_send(port, "GET", f"/api/tables/{data['table']}"))
        # The move was played and the agent's move made; the next agent waits for the page's next request.
        assert status == 200 and after["thinking"] and len(store.get(data["table"]).actions) == 2
        assert not bots[1].started.is_set()


def test_web__sigterm_stops_the_server_while_an_agent_thinks_and_a_busy_server_still_answers(monkeypatch):
    store = TableStore(think_seconds=600, max_thinking=1)
    with _serving(store) as (port, server, thread):
        data, bots = _endless_table(monkeypatch, store, port)
        conn = _send(port, "POST", f"/api/tables/{data['table']}/move", _move(data))
        assert bots[0].started.wait(60)
        # Every thinking slot is taken: another table's move is answered at once, its agents deferred.
        other, other_bots = _endless_table(monkeypatch, store, port)
        status, answer = _answer(_send(port, "POST", f"/api/tables/{other['table']}/move", _move(other)))
        assert status == 200 and answer["thinking"] and answer["version"] == 1
        assert not other_bots[0].started.is_set()
        server.handle_exit(signal.SIGTERM, None)  # what uvicorn calls on SIGTERM
        thread.join(timeout=60)
        assert not thread.is_alive(), "the server did not stop while an agent was thinking"
        assert bots[0].ended.is_set()
        status, answer = _answer(conn)  # the request in flight was answered before the server went
        assert status == 200 and answer["thinking"]


# ---- bodies --------------------------------------------------------------------------------------------------------
def test_web__a_body_over_the_limit_is_refused_before_it_is_read():
    with _serving(TableStore()) as (port, _, _):
        # 300 MB announced, none sent: the answer comes at once (the server does not wait for the body).
        conn = _send(port, "POST", "/api/tables", headers={"Content-Length": str(300_000_000)})
        assert _answer(conn) == (413, {"error": "request body of 300000000 bytes is over the limit of 65536"})
        # A body without a length (chunked) is cut off at the limit: the client never sends its end.
        conn = _send(port, "POST", "/api/tables", headers={"Transfer-Encoding": "chunked", "Content-Length": None})
        chunk = b"[" * 8192
        for _ in range(9):
            conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, answer = _answer(conn)
        assert status == 413 and "over the limit of 65536" in answer["error"]
    bad = _client().post("/api/tables", content=b"1", headers={"Content-Type": "application/json",
                                                              "Content-Length": "-5"})  # fmt: skip
    assert bad.status_code == 400


def test_web__deeply_nested_json_is_a_clear_400():
    client = _client()
    for body in (b"[" * 30_000 + b"]" * 30_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000):
        r = client.post("/api/tables", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json() == {"error": "the body is not JSON this server reads: nested too "
                                                              "deeply"}  # fmt: skip
    r = client.post("/api/tables", content=b'{"seed": ' + b"9" * 5000 + b"}",
                    headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and "not JSON" in r.json()["error"] and len(r.json()["error"]) < 300


# ---- tables, moves, replays, seeds ---------------------------------------------------------------------------------
def test_web__games_in_play_are_never_evicted_for_new_tables():
    store = TableStore(limit=2)
    client = _client(store)
    first, second = (client.post("/api/tables", json={"game": "duel", "bots": "random", "seed": s, "rounds": 1})
                     .json() for s in (1, 2))  # fmt: skip
    r = client.post("/api/tables", json={"game": "duel", "seed": 3})
    assert r.status_code == 503 and "2 games in play (its limit is 2)" in r.json()["error"]
    assert set(store.tables) == {first["table"], second["table"]}
    assert client.get(f"/api/tables/{first['table']}").status_code == 200
    _play_out(client, second)  # a finished game makes room
    r = client.post("/api/tables", json={"game": "duel", "seed": 3})
    assert r.status_code == 200 and set(store.tables) == {first["table"], r.json()["table"]}


def test_web__a_deal_in_play_cannot_be_replayed(client_seed=5):
    store = TableStore()
    client = _client(store)
    early = client.post("/api/replays", json={"game": "duel", "players": 2, "seed": client_seed, "actions": []})
    assert early.status_code == 200  # no table was dealt from it yet
    data = client.post("/api/tables", json={"game": "duel", "bots": "random", "seed": client_seed,
                                            "rounds": 1}).json()  # fmt: skip
    for rounds in (1, 3):  # the first deal is the same whatever the rounds
        r = client.post("/api/replays", json={"game": "duel", "players": 2, "seed": client_seed, "rounds": rounds,
                                              "actions": []})  # fmt: skip
        assert r.status_code == 409 and "in play at a table" in r.json()["error"]
    for viewer in ("omniscient", "public", "0", "1"):  # the replay made before the table was dealt
        r = client.get(f"/api/replays/{early.json()['replay']}?viewer={viewer}")
        assert r.status_code == 409 and "replay it when it is over" in r.json()["error"]
    other = client.post("/api/replays", json={"game": "duel", "players": 2, "seed": client_seed + 1, "actions": []})
    assert other.status_code == 200  # another deal
    _play_out(client, data)
    r = client.get(f"/api/replays/{early.json()['replay']}?viewer=omniscient")
    assert r.status_code == 200 and r.json()["frames"]


def test_web__the_agents_seeds_are_secret_not_the_deal_seeds(monkeypatch):
    """Two tables dealt from the same explicit seed give their agents different seeds, and none of them is what the
    public seed would spawn (the agents' seeds are drawn from the OS: experiments.tournament.rounds.draw_secret)."""
    seeds: list[list[int]] = []
    real = table_module.make_bot

    def recording(name: str, config: Any) -> Any:
        agent = real(name, config)
        reset = agent.reset

        def record(seat: int, num_players: int, seed: int | None) -> None:
            seeds[-1].append(seed)
            reset(seat, num_players, seed)

        agent.reset = record
        return agent

    monkeypatch.setattr(table_module, "make_bot", recording)
    client = _client()
    for _ in range(2):
        seeds.append([])
        r = client.post("/api/tables", json={"players": 5, "seat": 0, "seed": 42})
        assert r.status_code == 200 and len(seeds[-1]) == 4
    assert not set(seeds[0]) & set(seeds[1])
    public = {int(s.generate_state(1)[0]) for s in np.random.SeedSequence(42).spawn(5)}
    public |= {int(s.generate_state(1)[0]) for s in np.random.SeedSequence(42).spawn(4)} | {42}
    assert not public & (set(seeds[0]) | set(seeds[1]))


def test_ismcts__the_stop_hook_ends_a_search_after_the_iteration_it_answers_true():
    pytest.importorskip("agents.ismcts")
    from agents.ismcts import ISMCTSAgent
    from saboteur_env import GameConfig, encode_observation, legal_action_mask, new_game

    config = GameConfig(game="duel")
    state = new_game(config, np.random.default_rng(0))
    seat = int(state.current)
    obs, mask = encode_observation(state, seat), legal_action_mask(state).view(np.int8).copy()
    agent = ISMCTSAgent(config, simulations=5000)
    assert agent.stop is None
    asked: list[int] = []
    agent.stop = lambda: asked.append(1) or len(asked) >= 7
    agent.reset(seat, 2, 1)
    assert mask[agent.act(obs, mask)] and agent.last_stats["simulations"] == 7
    plain, hooked = ISMCTSAgent(config, simulations=20), ISMCTSAgent(config, simulations=20)
    hooked.stop = lambda: False  # a hook that never stops changes nothing
    plain.reset(seat, 2, 3)
    hooked.reset(seat, 2, 3)
    assert plain.act(obs, mask) == hooked.act(obs, mask) and hooked.last_stats["simulations"] == 20
