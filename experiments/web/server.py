"""The web app: a Starlette application serving the page (plain HTML/JS/CSS, no build step) and a small JSON API.

==========================================  ========================================================================
request                                     answer
==========================================  ========================================================================
``GET /?token=T``                           sets the server's cookie (the token) and redirects to ``/``
``GET /``                                   the page (``static/index.html``)
``GET /api/options``                        games, agents per game, player ranges, the command line's defaults
``POST /api/tables`` ``{game, players,      a new table (agents play until it is your turn or their time is up);
seat, bots, seed, rounds}``                 its payload
``GET /api/tables/{id}``                    the table's payload (a reload resumes here)
``POST /api/tables/{id}/move``              your move ``{action, version}``; the payload after the agents' replies
``POST /api/tables/{id}/advance``           ``{version}``: the agents' deferred moves (payload ``thinking``)
``POST /api/replays`` ``{game, players,     a replay of a seed and actions (or ``{"log": true}``: the game the
seed, rounds, actions}``                    command line loaded); its id and frame count
``GET /api/replays/{id}?viewer=V``          the frames (SVG and caption) from seat V, ``public`` or ``omniscient``
==========================================  ========================================================================

Who may ask (:class:`Guard`, every request; see docs/web.md): the ``Host`` must be a loopback name (DNS rebinding);
everything but ``/static/`` needs the per-launch token, as the cookie ``GET /?token=T`` sets (``HttpOnly``,
``SameSite=Strict``) or the header ``X-Saboteur-Token``; a request that changes something is a ``POST`` of
``application/json`` whose ``Origin`` (when sent) is this server and whose ``Sec-Fetch-Site`` (when sent) is
``same-origin``; a declared body over 64 KiB is refused before it is read, and a streamed one as soon as it passes.

Errors are JSON ``{"error": message}`` with status 400 (bad value, named with its valid range), 403 (a foreign host
or origin, no token), 404 (no such table), 409 (not your turn, stale version, game over, a replay of a game in
play), 413 (body over 64 KiB), 415 (not JSON) or 503 (every table is a game in play); a refused request changes
nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from experiments.web.table import BOTS, TableError, TableStore, bot_names, check_settings
from saboteur_env import GameConfig, variants

STATIC = Path(__file__).with_name("static")
MAX_BODY = 64 * 1024
MAX_REPLAYS = 16
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
TOKEN_HEADER = "x-saboteur-token"
_SAFE = ("GET", "HEAD")
T = TypeVar("T")


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def cookie_name(token: str) -> str:
    """The token's cookie: named after the token, so that servers on other ports of 127.0.0.1 (cookies ignore the
    port) keep their own."""
    return "saboteur-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def _hostname(host: str) -> str | None:
    """The name of a ``Host`` header (``name`` or ``name:port``; ``[v6]:port``), lower case; None if malformed."""
    name, port = (host[: host.index("]") + 1], host[host.index("]") + 1 :]) if host.startswith("[") and "]" in host \
        else (host.partition(":")[0], host[len(host.partition(":")[0]) :])  # fmt: skip
    if port and not (port[0] == ":" and port[1:].isascii() and port[1:].isdigit() and len(port) <= 6):
        return None
    return name.lower()


class Guard:
    """ASGI middleware that decides who may ask anything (see the module docstring). A refusal is answered before
    the application (or the body) is touched."""

    def __init__(self, app: ASGIApp, token: str, hosts: Collection[str] = LOOPBACK) -> None:
        self.app, self.token, self.hosts = app, token, tuple(hosts)
        self.cookie = cookie_name(token)

    def _has_token(self, request: Request) -> bool:
        given = [request.cookies.get(self.cookie), request.headers.get(TOKEN_HEADER)]
        if request.method in _SAFE and request.url.path == "/":  # the address the command line prints
            given.append(request.query_params.get("token"))
        return any(g is not None and secrets.compare_digest(g.encode(), self.token.encode()) for g in given)

    def refusal(self, request: Request) -> Response | None:
        host = request.headers.get("host", "")
        if _hostname(host) not in self.hosts:
            return _error(f"Host {host[:80]!r} is not served; this server answers to {', '.join(self.hosts)} only "
                          "(a foreign name pointing at 127.0.0.1 is DNS rebinding)", 403)  # fmt: skip
        length = request.headers.get("content-length")
        if length is not None and not (length.isascii() and length.isdigit()):
            return _error(f"Content-Length {length[:20]!r} is not a byte count")
        if length is not None and int(length) > MAX_BODY:
            return _error(f"request body of {length} bytes is over the limit of {MAX_BODY}", 413)
        if request.method not in _SAFE:
            site = request.headers.get("sec-fetch-site")
            if site is not None and site not in ("same-origin", "none"):
                return _error(f"a {site} request may not change anything here (Sec-Fetch-Site)", 403)
            origin = request.headers.get("origin")
            if origin is not None and origin.lower() != f"http://{host.lower()}":
                return _error(f"Origin {origin[:80]!r} is not this server (http://{host[:80]})", 403)
            kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != "application/json":
                return _error(f"Content-Type {kind[:60]!r} is refused; send application/json", 415)
        if request.url.path.startswith("/static/"):  # the page's own code and style: nothing secret
            return None
        if not self._has_token(request):
            return _error("this server needs its token: open the address its command line printed "
                          "(http://127.0.0.1:PORT/?token=...), or send the X-Saboteur-Token header", 403)  # fmt: skip
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(Request(scope))
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _body(request: Request) -> dict[str, Any]:
    raw = bytearray()
    async for chunk in request.stream():  # a body without Content-Length is cut off at the limit, not read
        raw += chunk
        if len(raw) > MAX_BODY:
            raise TableError(f"request body over the limit of {MAX_BODY} bytes", 413)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except RecursionError:
        raise TableError("the body is not JSON this server reads: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise TableError(f"the body is not JSON: {str(err)[:200]}") from None
    if not isinstance(data, dict):
        raise TableError(f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _fields(body: dict[str, Any], allowed: Collection[str], required: Collection[str] = ()) -> None:
    extra = sorted(k[:40] for k in set(body) - set(allowed))
    if extra:
        raise TableError(f"unknown field(s) {extra[:10]}; valid: {sorted(allowed)}")
    missing = sorted(set(required) - set(body))
    if missing:
        raise TableError(f"the body needs {missing}; valid: {sorted(allowed)}")


async def _thinking(request: Request, work: Callable[[threading.Event], T]) -> T:
    """``work(cancel)`` in a worker thread (other requests are served meanwhile); ``cancel`` is set as soon as the
    client goes away, so agents stop thinking for nobody."""
    cancel = threading.Event()
    result: list[T] = []
    failure: list[Exception] = []  # raised after the task group: inside, anyio would wrap it in an ExceptionGroup

    async def watch() -> None:
        while not await request.is_disconnected():
            await anyio.sleep(0.05)
        cancel.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            result.append(await run_in_threadpool(work, cancel))
        except Exception as err:
            failure.append(err)
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return result[0]


class Replays:
    """Replays built on request (seed + actions) or from the command line's log, each kept as its config, seed and
    actions; frames are drawn per viewer when asked for."""

    def __init__(self) -> None:
        self.games: dict[str, tuple[GameConfig, int, list[int]]] = {}
        self.lock = threading.Lock()

    def add(self, config: GameConfig, seed: int, actions: list[int]) -> str:
        key = secrets.token_urlsafe(9)
        with self.lock:
            if len(self.games) >= MAX_REPLAYS:
                del self.games[next(iter(self.games))]
            self.games[key] = (config, seed, actions)
        return key


def create_app(defaults: dict[str, Any] | None = None, log_game: tuple[GameConfig, int, list[int]] | None = None,
               store: TableStore | None = None, token: str | None = None,
               hosts: Collection[str] = LOOPBACK) -> Starlette:  # fmt: skip
    """The application; ``defaults`` prefill the page's form (game, players, seat, bots, seed, rounds). ``token``:
    the secret every request must carry (default: a fresh one, ``app.state.token``); ``hosts``: the ``Host`` names
    served."""
    tables = store or TableStore()
    replays = Replays()
    log_id = replays.add(*log_game) if log_game else None
    defaults = dict(defaults or {})
    token = token or secrets.token_urlsafe(24)

    async def index(request: Request) -> Response:
        if "token" in request.query_params:  # the printed address: keep the token in a cookie, not in the URL bar
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(cookie_name(token), token, httponly=True, samesite="strict", path="/")
            return response
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def options(_: Request) -> Response:
        games = {}
        for name in BOTS:
            v = variants.get(name)
            games[name] = {"title": v.title, "min_players": v.min_players, "max_players": v.max_players,
                           "default_players": v.default_players, "bots": list(bot_names(name)),
                           "default_bot": BOTS[name]}  # fmt: skip
        return JSONResponse({"games": games, "defaults": defaults, "log_replay": log_id})

    async def new_table(request: Request) -> Response:
        body = await _body(request)
        _fields(body, ("game", "players", "seat", "bots", "seed", "rounds"))
        try:
            table = await _thinking(request, functools.partial(tables.create, **body))
        except TableError:
            raise
        except ValueError as err:  # an agent name the registry refuses, a config error
            raise TableError(str(err)) from None
        return JSONResponse(await run_in_threadpool(table.payload))

    async def get_table(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(tables.get(request.path_params["table"]).payload))

    async def move(request: Request) -> Response:
        table = tables.get(request.path_params["table"])
        body = await _body(request)
        _fields(body, ("action", "version"), ("action", "version"))
        await _thinking(request, functools.partial(table.play, body["action"], body["version"]))
        return JSONResponse(await run_in_threadpool(table.payload))

    async def advance(request: Request) -> Response:
        table = tables.get(request.path_params["table"])
        body = await _body(request)
        _fields(body, ("version",), ("version",))
        await _thinking(request, functools.partial(table.advance, body["version"]))
        return JSONResponse(await run_in_threadpool(table.payload))

    def not_in_play(config: GameConfig, seed: int) -> None:
        if tables.in_play(config.game, config.num_players, seed):
            raise TableError(f"seed={seed} deals a {config.game} game of {config.num_players} players that is in "
                             "play at a table: its replay would show the hidden cards; replay it when it is over",
                             409)  # fmt: skip

    async def new_replay(request: Request) -> Response:
        body = await _body(request)
        _fields(body, ("game", "players", "seed", "rounds", "actions", "log"))
        if body.get("log"):
            if log_id is None:
                raise TableError("no log was given on the command line (--replay LOG)", 404)
            key = log_id
        else:
            settings = check_settings(game=body.get("game", "base"), players=body.get("players"),
                                      seed=body.get("seed", 0), rounds=body.get("rounds", 3))  # fmt: skip
            actions = body.get("actions", [])
            if not isinstance(actions, list) or not all(isinstance(a, int) and not isinstance(a, bool)
                                                        for a in actions):  # fmt: skip
                raise TableError("actions must be a list of integer action ids")
            config = GameConfig(game=settings.game, num_players=settings.players, rounds=settings.rounds)
            not_in_play(config, settings.seed)
            await run_in_threadpool(_frames, config, settings.seed, actions, None)  # refuse an illegal list now
            key = replays.add(config, settings.seed, actions)
        config, _, actions = replays.games[key]
        return JSONResponse({"replay": key, "game": config.game, "players": config.num_players,
                             "actions": len(actions)})  # fmt: skip

    async def get_replay(request: Request) -> Response:
        key = request.path_params["replay"]
        if key not in replays.games:
            raise TableError(f"no replay {key[:40]!r}", 404)
        config, seed, actions = replays.games[key]
        not_in_play(config, seed)  # a table may have been dealt from it since the replay was made
        raw = request.query_params.get("viewer", "public")
        viewer: int | str | None
        if raw == "public":
            viewer = None
        elif raw == "omniscient":
            viewer = "omniscient"
        elif raw.isascii() and raw.isdigit() and len(raw) < 4 and int(raw) < config.num_players:
            viewer = int(raw)
        else:
            raise TableError(f"viewer={raw[:20]!r} must be public, omniscient or a seat 0..{config.num_players - 1}")
        frames = await run_in_threadpool(_frames, config, seed, actions, viewer)
        return JSONResponse({"frames": frames, "viewer": raw,
                             "players": config.num_players, "game": config.game})  # fmt: skip

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, TableError)
        return _error(str(exc), exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:  # 404 / 405 of the router, as JSON
        assert isinstance(exc, HTTPException)
        return _error(f"{request.method} {request.url.path[:80]}: {exc.detail}", exc.status_code)

    async def crashed(request: Request, exc: Exception) -> Response:  # a bug: a JSON answer, the traceback in the log
        return _error(f"internal error ({type(exc).__name__}); the server's log has the details", 500)

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/tables", new_table, methods=["POST"]),
        Route("/api/tables/{table}", get_table),
        Route("/api/tables/{table}/move", move, methods=["POST"]),
        Route("/api/tables/{table}/advance", advance, methods=["POST"]),
        Route("/api/replays", new_replay, methods=["POST"]),
        Route("/api/replays/{replay}", get_replay),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={TableError: refused, HTTPException: http_error,
                                                       Exception: crashed})  # fmt: skip
    app.add_middleware(Guard, token=token, hosts=hosts)
    app.state.token = token
    app.state.store = tables
    return app


class StoppingServer(uvicorn.Server):
    """uvicorn's server that, on SIGINT/SIGTERM, first tells every table's agents to stop thinking (uvicorn waits
    for the requests in flight before it exits)."""

    def __init__(self, config: uvicorn.Config, store: TableStore) -> None:
        super().__init__(config)
        self.store = store

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.store.stopping.set()
        super().handle_exit(sig, frame)


def _frames(config: GameConfig, seed: int, actions: list[int], viewer: int | str | None) -> list[dict[str, Any]]:
    from experiments.tournament.replay import steps
    from experiments.web.scene import to_svg

    try:
        shots = steps(config, seed, actions, viewer)
    except ValueError as err:
        raise TableError(f"cannot replay these actions: {err}") from None
    return [{"svg": to_svg(f.scene, 1.0), "caption": f.caption, "round_end": f.round_end} for f in shots]
