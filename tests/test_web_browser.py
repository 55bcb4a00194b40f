"""The web table in a real browser: headless Chromium driven by Selenium plays whole games through clicks.

Skipped (with the reason) where selenium, chromium or chromedriver is missing: Debian's ``chromium`` and
``chromium-driver`` packages provide the browser (see docs/web.md).
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")

from experiments.web.server import create_app  # noqa: E402
from experiments.web.table import TableStore  # noqa: E402
from experiments.web.words import card_info, hand_kinds  # noqa: E402
from saboteur_env import player_view  # noqa: E402
from tests.hidden import RESAMPLERS  # noqa: E402

TOKEN = "browser-test-token"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, TableStore]]:
    store = TableStore()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(create_app(store=store, token=TOKEN), log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(100):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/", store
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(server: tuple[str, TableStore]) -> Iterator[Any]:
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    try:
        driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    except Exception as err:  # a browser that cannot start here is an environment problem, not a test failure
        pytest.skip(f"headless Chromium did not start: {err}")
    driver.implicitly_wait(0)
    # The server's address as its command line prints it (with the token) sets the cookie and lands on the page;
    # every later address and every fetch of the page is served through that cookie.
    url = server[0]
    driver.get(url)
    assert "needs its token" in driver.page_source
    driver.get(url + "?token=" + TOKEN)
    assert driver.current_url == url
    _wait(driver, "return document.body.dataset.ready")
    yield driver
    driver.quit()


def _wait(driver: Any, script: str, *args: Any, timeout: float = 20.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script, *args)
        if value:
            return value
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for: {script}")


# The page once the animation is over: board, players, log and hand as shown, and the animation counters.
_FINAL_PAGE = """
const p = window.lastPayload, t = document.createElement('div'), d = document.body.dataset;
t.innerHTML = p.board;
return {board: t.innerHTML === document.getElementById('board').innerHTML,
        rows: [...document.querySelectorAll('#seats tbody tr')].map(tr => +tr.dataset.seat),
        log: document.querySelectorAll('#log li').length, animating: 'animating' in d, version: d.version,
        hand: [...document.querySelectorAll('#hand .card')].map(c => c.dataset.code),
        counts: [+(d.animated || 0), +(d.skipped || 0)]};
"""

# Wait for a payload newer than version V, pressing "continue" on a round's end panel (the animation waits there).
_NEWER = """
const panel = document.getElementById('round-over');
if (!panel.hidden) document.getElementById('ro-close').click();
const p = window.lastPayload;
return p && (arguments[0] === null || p.version > arguments[0] || p.final) && {version: p.version};
"""


def _counts(driver: Any) -> tuple[int, int]:
    """(agents' moves animated, skipped) since the page was loaded."""
    got = driver.execute_script("const d = document.body.dataset; return [+(d.animated || 0), +(d.skipped || 0)]")
    return int(got[0]), int(got[1])


def _check_page_shows_only_the_view(driver: Any, store: TableStore, counts: tuple[int, int] | None = None) -> dict:
    """The page's data is exactly the server's payload (built from the seat's view), the page shows it (board,
    players, log) once the animation is over, and the hand on screen is the seat's hand in its view; ``counts``:
    the agents' moves the page must have animated and skipped."""
    page = driver.execute_script("return window.lastPayload")
    table = store.get(page["table"])
    assert page == table.payload()
    shown = driver.execute_script(_FINAL_PAGE)
    assert shown["board"] and not shown["animating"] and shown["version"] == f"{page['table']}:{page['version']}"
    assert shown["rows"] == sorted(r["seat"] for r in page["seats"]) and shown["log"] == len(page["log"])
    view = player_view(table.state, table.seat)
    held = np.asarray(view.hand)[: hand_kinds(table.config)]
    assert sorted(shown["hand"]) == sorted(card_info(table.config, int(k))["code"] for k in np.flatnonzero(held))
    if counts is not None:
        assert tuple(shown["counts"]) == counts
    return page


def _one_move(driver: Any, page: dict) -> None:
    """Play one legal move of ``page`` (the payload shown) by clicking: a card, then a highlighted cell or a move
    button."""
    if driver.find_element("id", "round-over").is_displayed():
        driver.find_element("id", "ro-close").click()
    cards = driver.find_elements("css selector", "#hand .card:not(.unplayable)")
    if cards:
        kind = int(cards[0].get_attribute("data-kind"))
        cards[0].click()
        cells = driver.find_elements("css selector", "#board g.cell.legal")
        if cells:
            cell = int(cells[0].get_attribute("data-cell"))
            mine = [m for m in page["moves"] if m["card"] == kind or kind in m["cards"]]
            rot0 = not any(m["rot"] == 1 and m["cell"] is not None for m in mine)
            here = [m["id"] for m in mine if m["cell"] == cell and not m["discard"] and (rot0 or m["rot"] == 0)]
            cells[0].click()
            if len(here) > 1:  # several moves on that cell (e.g. place, or place and bribe the troll): pick one
                first = _wait(driver, "const b = document.querySelector('#choices button.move');"
                              "return b && b.dataset.action")  # fmt: skip
                assert int(first) in here
                driver.find_element("css selector", "#choices button.move").click()
            return
    driver.find_elements("css selector", "#choices button.move")[0].click()


# Seeds whose one-round game, played by this test's clicks, ends after about ten of the person's moves.
@pytest.mark.parametrize("game,players,seed", [("base", 3, 4), ("sab2", 4, 10), ("duel", 2, 5)])
def test_browser__a_whole_game_by_clicks_with_a_reload_and_a_screenshot(server, browser, game, players, seed,
                                                                        tmp_path):  # fmt: skip
    url, store = server
    driver = browser
    driver.get(url)
    _wait(driver, "return document.body.dataset.ready")
    driver.execute_script("localStorage.setItem('saboteur-anim-ms', '20')")  # the agents' moves, quickly
    _new_table(driver, game, players, seed=seed)
    _wait(driver, _NEWER, None)
    page = _check_page_shows_only_the_view(driver, store)
    theirs = sum(not s["mine"] for s in page["steps"])  # the agents' moves before the person's first turn
    assert theirs == len(store.get(page["table"]).actions)
    assert page["steps"][-1]["board"] == page["board"] if theirs else page["steps"] == []
    moves, reloaded = 0, False
    while True:
        # Every agent's move the server answered with was played on the page, one after the other, and then the
        # page is the server's payload, built from the seat's view.
        page = _check_page_shows_only_the_view(driver, store, (theirs, 0))
        if page["final"]:
            break
        assert moves < 400, "the game did not end"
        version = page["version"]
        if moves == 3 and not reloaded:  # a reload resumes the same table where it was
            driver.find_element("css selector", "#board svg").screenshot(str(tmp_path / "board.png"))
            driver.refresh()
            again = _wait(driver, "const p = window.lastPayload; return p && [p.table, p.version]")
            assert again == [page["table"], version]
            # The page never holds hidden information: with other hands, roles, the pile and unpeeked goals
            # redrawn on the server, a reload shows the very same page.
            shown = driver.find_element("id", "table").get_attribute("innerHTML")
            table = store.get(page["table"])
            live = table.state
            try:
                table.state = RESAMPLERS[game](live, table.seat, np.random.default_rng(moves))
                driver.refresh()
                _wait(driver, "return window.lastPayload && true")
                assert driver.find_element("id", "table").get_attribute("innerHTML") == shown
            finally:
                table.state = live
            driver.refresh()
            _wait(driver, "return window.lastPayload && true")
            theirs, reloaded = 0, True  # a reload shows the table as it is, with nothing to play again
            continue
        _one_move(driver, page)
        _wait(driver, _NEWER, version)
        error = driver.find_element("id", "error").text
        assert not error, error
        theirs += sum(not s["mine"] for s in store.get(page["table"]).payload()["steps"])
        moves += 1
    assert reloaded and (tmp_path / "board.png").stat().st_size > 2000
    assert driver.find_element("id", "final").is_displayed()
    assert "Final ranking" in driver.find_element("id", "final").text
    assert driver.find_elements("css selector", "#rounds details")


def _new_table(driver: Any, game: str, players: int, seat: int = 0, seed: int = 4) -> None:
    driver.execute_script("document.getElementById('f-game').value = arguments[0];"
                          "document.getElementById('f-game').onchange();", game)  # fmt: skip
    for field, value in (("f-players", players), ("f-seat", seat), ("f-seed", seed), ("f-rounds", 1)):
        el = driver.find_element("id", field)
        driver.execute_script("arguments[0].value = arguments[1]", el, str(value))
    driver.find_element("id", "f-start").click()


# While the page animates: a cell and a log line arrive, and the agent to move is marked.
_WATCH = """
const w = {animating: 'animating' in document.body.dataset,
           cells: document.querySelectorAll('#board g.cell.arrive').length,
           lines: document.querySelectorAll('#log li.arrive').length,
           acting: document.querySelectorAll('#seats tr.acting').length};
return w.animating && w.cells && w.lines && w;
"""


def test_browser__the_agents_moves_play_one_by_one_a_click_skips_and_reduced_motion_is_respected(server, browser):
    url, store = server
    driver = browser
    driver.get(url)
    _wait(driver, "return document.body.dataset.ready")
    driver.execute_script("localStorage.setItem('saboteur-anim-ms', '500')")  # the page's default speed
    start = time.monotonic()
    _new_table(driver, "base", 4, seat=3, seed=6)  # three agents move before the person's first turn
    seen = _wait(driver, _WATCH)
    assert seen["acting"] == 1
    _wait(driver, _NEWER, None)
    elapsed = time.monotonic() - start
    page = _check_page_shows_only_the_view(driver, store, (3, 0))
    assert [s["mine"] for s in page["steps"]] == [False] * 3 and 3 * 0.5 <= elapsed < 3 * 0.5 + 6
    # A click during the animation skips the rest (and plays no card): the page jumps to the server's view.
    version = page["version"]
    _one_move(driver, page)
    _wait(driver, "return 'animating' in document.body.dataset")
    driver.find_element("id", "t-title").click()
    _wait(driver, _NEWER, version)
    page = _check_page_shows_only_the_view(driver, store)
    animated, skipped = _counts(driver)
    assert skipped >= 1 and animated + skipped == 3 + sum(not s["mine"] for s in page["steps"])
    assert page["version"] == version + 1 and store.get(page["table"]).version == version + 1
    # prefers-reduced-motion: the steps change without motion (no CSS animation on an arriving cell).
    motion = "const g = document.querySelector('#board g.cell'); g.classList.add('arrive');" \
             "const name = getComputedStyle(g).animationName; g.classList.remove('arrive');" \
             "return [document.body.dataset.motion, name]"  # fmt: skip
    assert driver.execute_script(motion) == ["full", "arrive"]
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})  # fmt: skip
    try:
        _wait(driver, "return document.body.dataset.motion === 'reduced'")
        assert driver.execute_script(motion) == ["reduced", "none"]
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_browser__the_page_asks_for_the_agents_deferred_moves_until_its_turn(server, browser):
    """With the agents' time per request spent after one move, the table answers ``thinking`` and the page asks
    again (``/advance``) until it is the person's turn: three agents, three requests."""
    url, store = server
    driver = browser
    driver.get(url)
    _wait(driver, "return document.body.dataset.ready")
    before = driver.execute_script("return window.lastPayload && window.lastPayload.table")
    driver.execute_script("localStorage.setItem('saboteur-anim-ms', '0')")
    think = store.think_seconds
    store.think_seconds = 1e-6  # (read when a table is made) one agent's move per request
    try:
        _new_table(driver, "base", 4, seat=3, seed=6)
        page = _wait(driver, "const p = window.lastPayload; return p && p.table !== arguments[0] && p.my_turn && "
                     "!('animating' in document.body.dataset) && p", before)  # fmt: skip
    finally:
        store.think_seconds = think
        driver.execute_script("localStorage.removeItem('saboteur-anim-ms')")
    table = store.get(page["table"])
    assert len(table.actions) == 3 and page["version"] == 3 and not page["thinking"]
    _check_page_shows_only_the_view(driver, store)


def _load_sab2_replay(driver: Any, url: str, moves: int) -> None:
    """Open the replay viewer on a 3-player Saboteur 2 game (seed 2) of ``moves`` moves and wait for its frames."""
    from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game

    cfg = GameConfig(game="sab2", num_players=3, rounds=1)
    state, actions = new_game(cfg, np.random.default_rng(2)), []
    for _ in range(moves):
        actions.append(int(np.flatnonzero(legal_action_mask(state))[-1]))
        state = apply_action(state, actions[-1])
    # A fresh page: navigating to the same URL with a fragment keeps the document, and the previous test's frames
    # would satisfy the wait below before this replay's frames arrive.
    driver.get("about:blank")
    driver.get(url + "#replay")
    _wait(driver, "return document.body.dataset.ready")
    driver.execute_script("const g = document.getElementById('r-game'); g.value = 'sab2'; g.onchange();"
                          "document.getElementById('r-players').value = '3';"
                          "document.getElementById('r-seed').value = '2';"
                          "document.getElementById('r-actions').value = arguments[0];", " ".join(map(str, actions)))
    driver.find_element("id", "r-load").click()
    _wait(driver, "return !document.getElementById('viewer').hidden && document.getElementById('r-frame').innerHTML")


def test_browser__the_replay_viewer_steps_and_shows_the_truth_only_when_omniscient(server, browser):
    url, _ = server
    driver = browser
    _load_sab2_replay(driver, url, 8)
    assert driver.find_element("id", "r-pos").text == "0 / 8"
    driver.find_element("id", "r-next").click()
    assert driver.find_element("id", "r-pos").text.startswith("1 / 8")
    frame = "return document.getElementById('r-frame').innerHTML"
    for viewer, truth in (("public", 0), ("omniscient", 3), ("1", 0)):
        driver.execute_script("const v = document.getElementById('r-viewer'); v.value = arguments[0];"
                              "v.onchange();", viewer)  # fmt: skip
        shown = _wait(driver, f"const f = document.getElementById('r-frame').innerHTML;"
                      f"return f.split('(the true card)').length - 1 === {truth} && f")  # fmt: skip
        assert ("role: " in shown) == (viewer == "omniscient")
    assert driver.execute_script(frame).count("data-cell") == 0  # replay frames are pictures, not a playable board


def test_browser__a_late_answer_for_an_earlier_viewer_never_replaces_the_latest(server, browser):
    """Frames answers can arrive out of order (a slow public view requested before the omniscient one): the page
    shows the frames of the latest choice only. The test delays every public-view answer by 1.5 s."""
    url, _ = server
    driver = browser
    _load_sab2_replay(driver, url, 4)
    driver.execute_script(
        "const real = window.fetch; window.fetch = async (p, i) => {"
        " const r = await real(p, i); if (String(p).includes('viewer=public'))"
        " await new Promise(ok => setTimeout(ok, 1500)); return r; };"
        "const v = document.getElementById('r-viewer');"
        "v.value = 'public'; v.onchange(); v.value = 'omniscient'; v.onchange();"
    )
    _wait(driver, "return document.getElementById('r-frame').innerHTML.includes('(the true card)')")
    time.sleep(2.0)  # the delayed public answer has arrived by now
    assert "(the true card)" in driver.execute_script("return document.getElementById('r-frame').innerHTML")
