"""The web table's server (Starlette TestClient): bad requests, concurrent tables, what a page may see, replays."""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 behind its TestClient; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from experiments.tournament import replay
from experiments.web.scene import to_png, to_svg
from experiments.web.server import create_app
from experiments.web.table import TableStore
from saboteur_env import GameConfig, legal_action_mask
from tests.hidden import RESAMPLERS

GAMES = [("base", 4), ("sab2", 5), ("duel", 2)]


TOKEN = "test-token"


def client_for(app: object) -> TestClient:
    """A client of the app as the page is one: on 127.0.0.1, with the server's token."""
    return TestClient(app, base_url="http://127.0.0.1:8765", headers={"X-Saboteur-Token": TOKEN})


@pytest.fixture()
def client_store() -> tuple[TestClient, TableStore]:
    store = TableStore()
    return client_for(create_app(store=store, token=TOKEN)), store


def _play_out(client: TestClient, data: dict, rng: np.random.Generator, limit: int = 10_000) -> dict:
    while not data["final"] and limit:
        if data["thinking"]:  # the agents' time ran out (or enough requests were thinking): ask for the rest
            r = client.post(f"/api/tables/{data['table']}/advance", json={"version": data["version"]})
            assert r.status_code == 200, r.text
            data = r.json()
            continue
        move = data["moves"][int(rng.integers(len(data["moves"])))]
        r = client.post(f"/api/tables/{data['table']}/move", json={"action": move["id"], "version": data["version"]})
        assert r.status_code == 200, r.text
        data = r.json()
        limit -= 1
    return data


@pytest.mark.parametrize("game,players", GAMES)
def test_web__a_whole_game_through_the_api_ends_with_a_ranking_and_every_round_end(client_store, game, players):
    client, _ = client_store
    r = client.post("/api/tables", json={"game": game, "players": players, "seed": 5, "rounds": 2})
    assert r.status_code == 200, r.text
    data = _play_out(client, r.json(), np.random.default_rng(1))
    assert [f["rank"] for f in data["final"]] == sorted(f["rank"] for f in data["final"])
    assert [e["round"] for e in data["round_ends"]] == [0, 1]
    assert all("<svg" in e["svg"] and "round" in e["lines"][0] for e in data["round_ends"])
    assert data["moves"] == [] and not data["my_turn"]


def _bad(client: TestClient, method: str, path: str, status: int, words: str, **kw) -> None:
    r = client.request(method, path, **kw)
    assert r.status_code == status, r.text
    assert words in r.json()["error"], r.json()


def test_web__bad_requests_get_clear_errors_and_change_nothing(client_store):
    client, store = client_store
    _bad(client, "POST", "/api/tables", 400, "game='chess' is unknown", json={"game": "chess"})
    _bad(client, "POST", "/api/tables", 400, "players=13 is out of range; valid: integers 2..12",
         json={"game": "sab2", "players": 13})  # fmt: skip
    _bad(client, "POST", "/api/tables", 400, "seat=4 is out of range", json={"players": 4, "seat": 4})
    _bad(client, "POST", "/api/tables", 400, "bots: 'alphago' is unknown", json={"bots": "alphago"})
    _bad(client, "POST", "/api/tables", 400, "bots: 'role_oracle' is unknown", json={"bots": "role_oracle"})
    _bad(client, "POST", "/api/tables", 400, "unknown field(s) ['colour']", json={"colour": 1})
    as_json = {"Content-Type": "application/json"}
    _bad(client, "POST", "/api/tables", 400, "not JSON", content=b"{nope", headers=as_json)
    _bad(client, "POST", "/api/tables", 400, "must be a JSON object", content=b"[1, 2]", headers=as_json)
    _bad(client, "POST", "/api/tables", 413, "over the limit", content=b" " * 70_000 + b"{}", headers=as_json)
    _bad(client, "POST", "/api/tables", 400, "seed=-1 is out of range", json={"seed": -1})
    _bad(client, "POST", "/api/tables", 400, "rounds=True", json={"rounds": True})
    _bad(client, "GET", "/api/tables/nope", 404, "no table 'nope'")
    data = client.post("/api/tables", json={"players": 3, "seed": 2}).json()
    tid, before = data["table"], data
    legal = {m["id"] for m in data["moves"]}
    illegal = next(a for a in range(5000) if a not in legal)
    for body, status, words in [
        ({"version": 0}, 400, "needs ['action']"),
        # Strict moves: the version is required and an integer, and no field is ignored.
        ({"action": data["moves"][0]["id"]}, 400, "needs ['version']"),
        ({"action": data["moves"][0]["id"], "version": 0.0}, 400, "version=0.0 must be an integer"),
        ({"action": data["moves"][0]["id"], "version": "0"}, 400, "version='0' must be an integer"),
        ({"action": data["moves"][0]["id"], "version": True}, 400, "version=True must be an integer"),
        ({"action": data["moves"][0]["id"], "version": 0, "seat": 1}, 400, "unknown field(s) ['seat']"),
        ({"action": "12", "version": 0}, 400, "must be an integer"),
        ({"action": 1.5, "version": 0}, 400, "must be an integer"),
        ({"action": True, "version": 0}, 400, "must be an integer"),
        ({"action": 10**30, "version": 0}, 400, "is not a legal move"),
        ({"action": -1, "version": 0}, 400, "is not a legal move"),
        ({"action": illegal, "version": 0}, 400, "is not a legal move"),
        ({"action": data["moves"][0]["id"], "version": 7}, 409, "is stale"),
    ]:
        _bad(client, "POST", f"/api/tables/{tid}/move", status, words, json=body)
    after = client.get(f"/api/tables/{tid}").json()
    assert after == before and store.get(tid).actions == []
    data = _play_out(client, after, np.random.default_rng(0))
    _bad(client, "POST", f"/api/tables/{tid}/move", 409, "game is over", json={"action": 0, "version": data["version"]})


def test_web__concurrent_tables_and_racing_moves_on_one_table(client_store):
    client, store = client_store
    tables = [client.post("/api/tables", json={"game": g, "players": p, "seed": 9, "rounds": 1}).json()
              for g, p in GAMES]  # fmt: skip
    results: dict[str, dict] = {}

    def run(data: dict, k: int) -> None:
        results[data["table"]] = _play_out(client, data, np.random.default_rng(k))

    threads = [threading.Thread(target=run, args=(t, k)) for k, t in enumerate(tables)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 3 and all(r["final"] for r in results.values())
    assert {r["game"] for r in results.values()} == {"base", "sab2", "duel"}
    # The same first move sent four times at once: exactly one is played, the others are stale.
    data = client.post("/api/tables", json={"players": 4, "seed": 3}).json()
    codes: list[int] = []
    barrier = threading.Barrier(4)

    def race() -> None:
        barrier.wait()
        body = {"action": data["moves"][0]["id"], "version": data["version"]}
        codes.append(client.post(f"/api/tables/{data['table']}/move", json=body).status_code)

    racers = [threading.Thread(target=race) for _ in range(4)]
    for t in racers:
        t.start()
    for t in racers:
        t.join(timeout=60)
    assert sorted(codes) == [200, 409, 409, 409]
    table = store.get(data["table"])
    assert table.version == 1 and table.actions[0] == data["moves"][0]["id"]


@pytest.mark.parametrize("game,players", GAMES)
def test_web__the_payload_is_the_same_whatever_the_hidden_state(game, players):
    """Everything sent to the page: other hands, roles, the pile and unpeeked goals resampled give the same bytes."""
    store = TableStore()
    table = store.create(game=game, players=players, seed=11, rounds=2)
    rng = np.random.default_rng(4)
    checked = 0
    while not table.state.game_over and checked < 12:
        payload = table.payload()
        live = table.state
        for _ in range(2):
            table.state = RESAMPLERS[game](live, table.seat, rng)
            assert table.payload() == payload
        table.state = live
        checked += 1
        moves = payload["moves"]
        table.play(moves[int(rng.integers(len(moves)))]["id"], payload["version"])
    assert checked >= 5


def test_web__replays_of_all_three_games_and_bad_replay_requests(client_store):
    client, _ = client_store
    for game, players in GAMES:
        cfg = GameConfig(game=game, num_players=players, rounds=1)
        actions = _random_game(cfg, 3)
        r = client.post("/api/replays", json={"game": game, "players": players, "seed": 3, "rounds": 1,
                                              "actions": actions})  # fmt: skip
        assert r.status_code == 200, r.text
        rid = r.json()["replay"]
        for viewer in ("public", "omniscient", "1"):
            frames = client.get(f"/api/replays/{rid}?viewer={viewer}").json()["frames"]
            assert len(frames) == len(actions) + 1 and frames[-1]["round_end"]
            # Only the omniscient replay names the true card of a face-down goal (every goal, peeked or not).
            truth = [f["svg"].count("(the true card)") for f in frames]
            assert (truth[0] == (6 if game == "duel" else 3)) if viewer == "omniscient" else not any(truth)
        _bad(client, "GET", f"/api/replays/{rid}?viewer=9", 400, "must be public, omniscient or a seat")
        _bad(client, "GET", f"/api/replays/{rid}?viewer=%D9%A1", 400, "must be public")
    _bad(client, "POST", "/api/replays", 400, "cannot replay", json={"seed": 1, "actions": [10**6]})
    _bad(client, "POST", "/api/replays", 400, "list of integer", json={"seed": 1, "actions": "1 2"})
    _bad(client, "POST", "/api/replays", 404, "no log", json={"log": True})
    _bad(client, "GET", "/api/replays/zzz", 404, "no replay")


def _random_game(cfg: GameConfig, seed: int) -> list[int]:
    from saboteur_env import apply_action, new_game

    state = new_game(cfg, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    actions = []
    while not state.game_over:
        a = int(rng.choice(np.flatnonzero(legal_action_mask(state))))
        actions.append(a)
        state = apply_action(state, a)
    return actions


@pytest.mark.parametrize("game,players", GAMES)
def test_replay__every_round_end_is_shown_before_the_next_deal(game, players):
    cfg = GameConfig(game=game, num_players=players, rounds=3)
    actions = _random_game(cfg, 8)
    shots = replay.steps(cfg, 8, actions, 0)
    ends = [i for i, f in enumerate(shots) if f.round_end]
    assert len(ends) == 3 and ends[-1] == len(shots) - 1
    assert len(shots) == len(actions) + 1 + 2  # one extra frame per round end before the last
    for i in ends[:-1]:
        assert shots[i + 1].caption.endswith("dealt")
        assert ("round" in shots[i].caption and "roles" in shots[i].caption) or game == "duel"
        # The end-of-round board is not the next deal's empty board.
        assert to_svg(shots[i].scene) != to_svg(shots[i + 1].scene)
        filled = sum(c["fill"] in ("card", "gold", "stone") for c in shots[i].scene["cells"])
        assert filled > sum(c["fill"] in ("card", "gold", "stone") for c in shots[i + 1].scene["cells"])


@pytest.mark.parametrize("game,players", GAMES)
def test_picture__svg_and_png_at_a_chosen_scale_with_legend_and_coordinates(game, players, tmp_path, capsys):
    from experiments.web import picture

    cfg = GameConfig(game=game, num_players=players)
    scene = replay.steps(cfg, 2, _random_game(cfg, 2)[:12], 0)[-1].scene
    svg = to_svg(scene, 2.0)
    assert 'width="' in svg and all(f">{c}</text>" in svg for c in scene["col_labels"])
    assert scene["legend"] and all(text in svg for _, text in scene["legend"][:3])
    small, big = to_png(scene, 1.0), to_png(scene, 3.0)
    assert abs(big.size[0] / small.size[0] - 3.0) < 0.05
    out = tmp_path / "board.png"
    assert picture.main(["--game", game, "--players", str(players), "--seed", "2", "--moves", "10",
                         "--scale", "2", "--out", str(out)]) == 0  # fmt: skip
    assert out.stat().st_size > 5000
    assert picture.main(["--game", game, "--seed", "2", "--out", str(tmp_path / "b.svg")]) == 0
    assert (tmp_path / "b.svg").read_text().startswith("<svg")
    for bad, words in [(["--scale", "50"], "--scale 50.0 is out of range"), (["--moves", "-1"], "--moves -1"),
                       (["--out", str(tmp_path / "b.gif")], "must end in .svg or .png"),
                       (["--actions", "999999"], "cannot play the actions")]:  # fmt: skip
        with pytest.raises(SystemExit):
            picture.main(["--game", game, "--out", str(tmp_path / "c.png"), *bad])
        assert words in capsys.readouterr().err


def test_web__the_command_line_serves_on_loopback_and_refuses_bad_options(tmp_path, capsys):
    import http.client
    import re
    import subprocess
    import sys
    import urllib.request

    from experiments.web.__main__ import main

    for argv, words in [(["--game", "chess"], "invalid choice"), (["--players", "11"], "--players 11 is out of range"),
                        (["--game", "duel", "--bots", "heuristic"], "--bots 'heuristic' is unknown"),
                        (["--port", "70000"], "--port 70000 is out of range"), (["--seed", "-3"], "--seed -3"),
                        (["--bots", "ppo:/no/model.zip"], "no model file '/no/model.zip'"),
                        (["--bots", "ppo:/dev/zero"], "no model file '/dev/zero'"),
                        (["--bot-seconds", "0"], "--bot-seconds 0.0 is out of range"),
                        (["--bots", "ismcts:x"], "ismcts:N with N an integer")]:
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--no-browser"])
        assert exc.value.code == 2 and words in capsys.readouterr().err
    proc = subprocess.Popen([sys.executable, "-m", "experiments.web", "--game", "sab2", "--players", "6",
                             "--no-browser", "--port", "0"], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        url = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]{20,})", proc.stdout.readline())
        assert url, "no address with a token printed"
        base, token = url.group(0).partition("?")[0], url.group(2)
        request = urllib.request.Request(base + "api/options", headers={"X-Saboteur-Token": token})
        with urllib.request.urlopen(request, timeout=20) as r:
            options = json.loads(r.read())
        assert options["defaults"]["game"] == "sab2" and options["defaults"]["players"] == 6
        # The printed address sets the token's cookie and sends the browser on to the page, without the token.
        conn = http.client.HTTPConnection("127.0.0.1", int(url.group(1)), timeout=20)
        conn.request("GET", "/?token=" + token)
        r = conn.getresponse()
        r.read()
        assert r.status == 303 and r.getheader("location") == "/"
        cookie = r.getheader("set-cookie")
        assert token in cookie and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        conn.request("GET", "/", headers={"Cookie": cookie.partition(";")[0]})
        assert b"<script src=\"/static/app.js\">" in conn.getresponse().read()
        for path, headers in [("/", {}), ("/api/options", {}), ("/?token=wrong", {}),
                              ("/api/options", {"X-Saboteur-Token": token, "Host": "evil.example.com"})]:
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            assert r.status == 403 and "error" in json.loads(r.read()), (path, headers)
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _cell_fragments(svg: str) -> dict[int, str]:
    import re

    return {int(m.group(1)): m.group(0) for m in re.finditer(r'<g class="cell" data-cell="(\d+)">.*?</g>', svg, re.S)}


@pytest.mark.parametrize("game,players", GAMES)
def test_web__the_steps_of_a_move_are_every_move_since_the_last_one_with_what_each_changed(game, players,
                                                                                           monkeypatch):  # fmt: skip
    """The payload's steps (what the page animates): the person's move then each agent's reply, in order, each with
    the person's board after it, the cells it changed, the goal a map looked at, the seats whose tools changed,
    and exactly its log lines."""
    # A table draws its agents' seed secret from the OS (sealed seeds); fixed here so the game (and whether a map
    # or a tool card is played in it) is the same in every run.
    monkeypatch.setattr("experiments.web.table.draw_secret", lambda: 0x5EED)
    store = TableStore()
    seat = players - 1
    table = store.create(game=game, players=players, seat=seat, seed=7, rounds=2)
    payload = table.payload()
    # The agents' moves before the person's first turn (the Duel's first player is drawn).
    first = [s["seat"] for s in payload["steps"]]
    assert first == (list(range(seat)) if game != "duel" else first[:1]) and len(first) == len(table.actions)
    assert all(not s["mine"] for s in payload["steps"])
    rng = np.random.default_rng(2)
    kinds = {"map": 0, "tool": 0, "end": 0}
    while not payload["final"]:
        done = len(table.actions)
        board = payload["board"]
        move = payload["moves"][int(rng.integers(len(payload["moves"])))]
        table.play(move["id"], payload["version"])
        payload = table.payload()
        steps = payload["steps"]
        assert steps[0]["mine"] and steps[0]["seat"] == seat and [s["step"] for s in steps] == list(
            range(done + 1, len(table.actions) + 1))  # fmt: skip
        assert all(not s["mine"] for s in steps[1:]) and all(s["seat"] != seat for s in steps[1:])
        for s in steps:
            assert s["lines"] == [e["text"] for e in payload["log"] if e["step"] == s["step"]]
            after = _cell_fragments(s["board"])
            if board is not None and not s["round_end"]:  # (a round's end is drawn from its rebuilt board)
                before = _cell_fragments(board)
                assert s["cells"] == sorted(c for c in after if after[c] != before[c])
            maps = [ln for ln in s["lines"] if "with a map" in ln]
            assert len(s["aim"]) == len(maps) and all(c in after for c in s["aim"])
            kinds["map"] += len(maps)
            if any(w in ln for ln in s["lines"] for w in (" broke ", " repaired ")) and game != "duel":
                assert s["hit"], s["lines"]
                kinds["tool"] += 1
            kinds["end"] += s["round_end"]
            # After a round's end the next move is laid on the new deal, which no step shows: its cells are not
            # checked against the end of the round.
            board = None if s["round_end"] else s["board"]
        if not steps[-1]["round_end"]:
            assert steps[-1]["board"] == payload["board"]
    assert kinds["end"] == 2 and kinds["map"] + kinds["tool"] > 0, kinds



def test_web__is_mcts_sits_at_a_table(client_store):
    pytest.importorskip("agents.ismcts")
    client, store = client_store
    r = client.post("/api/tables", json={"game": "duel", "bots": "ismcts:3", "seed": 1, "rounds": 1})
    assert r.status_code == 200, r.text
    data = _play_out(client, r.json(), np.random.default_rng(0), limit=6)
    assert "ismcts:3" in data["names"][1] and store.get(data["table"]).actions
    assert "ismcts" in client.get("/api/options").json()["games"]["sab2"]["bots"]
    for bots in ("ismcts:0", "ismcts:\u0663", "ismcts:" + "9" * 40):
        _bad(client, "POST", "/api/tables", 400, "ismcts:N with N an integer 1..5000", json={"bots": bots})


def test_web__agents_that_cannot_be_seated_and_unknown_replay_fields_are_clear_errors(tmp_path):
    # Model files sit only when the command line named them (TableStore.model_bots): one deleted since, one broken.
    bad = tmp_path / "model.zip"
    bad.write_bytes(b"not a model")
    gone = f"ppo:{tmp_path / 'gone.zip'}"
    store = TableStore(model_bots=[f"learned:{bad}", gone])
    client = client_for(create_app(store=store, token=TOKEN))
    _bad(client, "POST", "/api/tables", 400, "no model file", json={"bots": gone})
    _bad(client, "POST", "/api/tables", 400, "cannot be seated", json={"bots": f"learned:{bad}"})
    _bad(client, "POST", "/api/replays", 400, "unknown field(s) ['bogus']", json={"bogus": 1})
    assert store.tables == {}


def test_web__the_command_lines_log_game_is_replayed_from_any_seat():
    cfg = GameConfig(game="duel", rounds=2)
    actions = _random_game(cfg, 6)
    client = client_for(create_app(log_game=(cfg, 6, actions), token=TOKEN))
    assert client.get("/api/options").json()["log_replay"]
    r = client.post("/api/replays", json={"log": True})
    assert r.status_code == 200 and r.json()["game"] == "duel" and r.json()["actions"] == len(actions)
    frames = client.get(f"/api/replays/{r.json()['replay']}?viewer=1").json()["frames"]
    assert len(frames) == len(actions) + 2 and sum(f["round_end"] for f in frames) == 2


def test_web__llm_bots_sit_only_when_offered_and_keep_their_transcripts(tmp_path, monkeypatch):
    from tests.test_llm import FakeEndpoint

    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "fake-model")
    with FakeEndpoint([("first_legal",)]) as fake:
        monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", fake.url)
        # a request cannot seat a language model the server did not offer: no endpoint is called
        client, store = client_for(create_app(store=TableStore(), token=TOKEN)), None
        _bad(client, "POST", "/api/tables", 400, "is not offered", json={"bots": "llm:base_url=http://evil/v1"})
        assert fake.requests == []
        with pytest.raises(ValueError, match="transcripts=FOLDER"):
            TableStore(model_bots=["llm:constrain=none"])
        store = TableStore(model_bots=["llm:constrain=none"], transcripts=tmp_path)
        client = client_for(create_app(store=store, token=TOKEN))
        r = client.post("/api/tables", json={"game": "duel", "seat": 0, "bots": "llm:constrain=none", "seed": 3,
                                             "rounds": 1})  # fmt: skip
        assert r.status_code == 200, r.text
        # never written mid-game: the prompts hold the bot's hand and role, and the person can read the folder
        first = _play_out(client, r.json(), np.random.default_rng(0), limit=2)
        assert not first["final"] and not (tmp_path / f"table-{first['table']}.json").exists()
        data = _play_out(client, first, np.random.default_rng(0))
        assert data["final"]
        saved = json.loads((tmp_path / f"table-{data['table']}.json").read_text())
        assert saved["game_over"] and saved["bots"][1] == "llm:constrain=none"
        (log,) = saved["agent_logs"]["1"]
        assert len(log["transcript"]) == len(fake.requests) > 0 and log["failures"]["total_failures"] == 0
        # a game still in play when the server stops: its transcript is kept then
        r = client.post("/api/tables", json={"game": "duel", "seat": 1, "bots": "llm:constrain=none", "seed": 4})
        left = r.json()["table"]
        assert r.status_code == 200 and not (tmp_path / f"table-{left}.json").exists()
        store.save_transcripts()
        kept = json.loads((tmp_path / f"table-{left}.json").read_text())
        assert not kept["game_over"] and list(kept["agent_logs"]) == ["0"] and kept["table"] == left


def test_web__the_command_line_checks_llm_bots_and_their_transcripts_folder(tmp_path, monkeypatch, capsys):
    from experiments.web.__main__ import parse_args

    monkeypatch.delenv("SABOTEUR_LLM_BASE_URL", raising=False)
    for argv, words in [(["--bots", "llm"], "must be an http(s) URL"),
                        (["--transcripts", str(tmp_path)], "--transcripts keeps llm bots' transcripts")]:  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            parse_args(argv)
        assert exc.value.code == 2 and words in capsys.readouterr().err
    monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "m")
    args = parse_args(["--bots", "llm:prompt=compact", "--transcripts", str(tmp_path / "t")])
    assert args.model_bots == ["llm:prompt=compact"] and (tmp_path / "t").is_dir()
    monkeypatch.chdir(tmp_path)
    assert str(parse_args(["--bots", "llm"]).transcripts) == "web-llm-transcripts"
    assert (tmp_path / "web-llm-transcripts").is_dir()
