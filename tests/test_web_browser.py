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

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, TableStore]]:
    store = TableStore()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(create_app(store=store), log_level="warning"))
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
def browser() -> Iterator[Any]:
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
    yield driver
    driver.quit()


def _wait(driver: Any, script: str, timeout: float = 20.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for: {script}")


def _check_page_shows_only_the_view(driver: Any, store: TableStore) -> dict:
    """The page's data is exactly the server's payload (built from the seat's view), and the hand on screen is the
    seat's hand in its view."""
    page = driver.execute_script("return window.lastPayload")
    table = store.get(page["table"])
    assert page == table.payload()
    view = player_view(table.state, table.seat)
    counts = np.asarray(view.hand)[: hand_kinds(table.config)]
    want = sorted(card_info(table.config, int(k))["code"] for k in np.flatnonzero(counts))
    shown = sorted(e.get_attribute("data-code") for e in driver.find_elements("css selector", "#hand .card"))
    assert shown == want
    return page


def _one_move(driver: Any) -> None:
    """Play one legal move by clicking: a card, then a highlighted cell or a move button."""
    driver.execute_script("document.getElementById('round-over').hidden = true")
    cards = driver.find_elements("css selector", "#hand .card:not(.unplayable)")
    if cards:
        kind = int(cards[0].get_attribute("data-kind"))
        cards[0].click()
        cells = driver.find_elements("css selector", "#board g.cell.legal")
        if cells:
            cell = int(cells[0].get_attribute("data-cell"))
            page = driver.execute_script("return window.lastPayload")
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


@pytest.mark.parametrize("game,players", [("base", 3), ("sab2", 4), ("duel", 2)])
def test_browser__a_whole_game_by_clicks_with_a_reload_and_a_screenshot(server, browser, game, players, tmp_path):
    url, store = server
    driver = browser
    driver.get(url)
    _wait(driver, "return document.body.dataset.ready")
    driver.execute_script("document.getElementById('f-game').value = arguments[0];"
                          "document.getElementById('f-game').onchange();", game)  # fmt: skip
    for field, value in (("f-players", players), ("f-seed", 4), ("f-rounds", 1)):
        el = driver.find_element("id", field)
        driver.execute_script("arguments[0].value = arguments[1]", el, str(value))
    driver.find_element("id", "f-start").click()
    page = _wait(driver, "return window.lastPayload")
    moves, reloaded = 0, False
    while not page["final"]:
        assert moves < 400, "the game did not end"
        page = _check_page_shows_only_the_view(driver, store)
        if page["final"]:
            break
        version = page["version"]
        if moves == 3 and not reloaded:  # a reload resumes the same table where it was
            driver.find_element("css selector", "#board svg").screenshot(str(tmp_path / "board.png"))
            driver.refresh()
            again = _wait(driver, "return window.lastPayload")
            assert again["table"] == page["table"] and again["version"] == version
            # The page never holds hidden information: with other hands, roles, the pile and unpeeked goals
            # redrawn on the server, a reload shows the very same page.
            shown = driver.find_element("id", "table").get_attribute("innerHTML")
            table = store.get(page["table"])
            live = table.state
            try:
                table.state = RESAMPLERS[game](live, table.seat, np.random.default_rng(moves))
                driver.refresh()
                _wait(driver, "return window.lastPayload")
                assert driver.find_element("id", "table").get_attribute("innerHTML") == shown
            finally:
                table.state = live
            driver.refresh()
            _wait(driver, "return window.lastPayload")
            reloaded = True
            continue
        _one_move(driver)
        page = _wait(driver, f"const p = window.lastPayload; return p && (p.version > {version} || p.final) && p")
        error = driver.find_element("id", "error").text
        assert not error, error
        moves += 1
    assert reloaded and (tmp_path / "board.png").stat().st_size > 2000
    assert driver.find_element("id", "final").is_displayed()
    assert "Final ranking" in driver.find_element("id", "final").text
    assert driver.find_elements("css selector", "#rounds details")
