"""The web app: a Starlette application serving the page (plain HTML/JS/CSS, no build step) and a small JSON API.

==========================================  ========================================================================
request                                     answer
==========================================  ========================================================================
``GET /``                                   the page (``static/index.html``)
``GET /api/options``                        games, agents per game, player ranges, the command line's defaults
``POST /api/tables`` ``{game, players,      a new table (agents play until it is your turn); its payload
seat, bots, seed, rounds}``
``GET /api/tables/{id}``                    the table's payload (a reload resumes here)
``POST /api/tables/{id}/move``              your move ``{action, version}``; the payload after the agents' replies
``POST /api/replays`` ``{game, players,     a replay of a seed and actions (or ``{"log": true}``: the game the
seed, actions}``                            command line loaded); its id and frame count
``GET /api/replays/{id}?viewer=V``          the frames (SVG and caption) from seat V, ``public`` or ``omniscient``
==========================================  ========================================================================

Errors are JSON ``{"error": message}`` with status 400 (bad value, named with its valid range), 404 (no such table),
409 (not your turn, stale version, game over) or 413 (body over 64 KiB); a refused request changes nothing.
"""

from __future__ import annotations

import json
import secrets
import threading
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from experiments.web.table import BOTS, TableError, TableStore, bot_names
from saboteur_env import GameConfig, variants

STATIC = Path(__file__).with_name("static")
MAX_BODY = 64 * 1024
MAX_REPLAYS = 16


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise TableError(f"request body of {len(raw)} bytes is over the limit of {MAX_BODY}", 413)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise TableError(f"the body is not JSON: {err}") from None
    if not isinstance(data, dict):
        raise TableError(f"the body must be a JSON object, got {type(data).__name__}")
    return data


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
               store: TableStore | None = None) -> Starlette:  # fmt: skip
    """The application; ``defaults`` prefill the page's form (game, players, seat, bots, seed, rounds)."""
    tables = store or TableStore()
    replays = Replays()
    log_id = replays.add(*log_game) if log_game else None
    defaults = dict(defaults or {})

    async def index(_: Request) -> Response:
        return FileResponse(STATIC / "index.html")

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
        allowed = {"game", "players", "seat", "bots", "seed", "rounds"}
        extra = sorted(set(body) - allowed)
        if extra:
            raise TableError(f"unknown field(s) {extra}; valid: {sorted(allowed)}")
        try:  # agents think in a worker thread, so other tables are served meanwhile
            table = await run_in_threadpool(tables.create, **body)
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
        if "action" not in body:
            raise TableError("the body needs 'action' (an action id from the payload's moves) and 'version'")
        await run_in_threadpool(table.play, body["action"], body.get("version"))
        return JSONResponse(await run_in_threadpool(table.payload))

    async def new_replay(request: Request) -> Response:
        from experiments.web.table import check_settings

        body = await _body(request)
        allowed = {"game", "players", "seed", "rounds", "actions", "log"}
        extra = sorted(set(body) - allowed)
        if extra:
            raise TableError(f"unknown field(s) {extra}; valid: {sorted(allowed)}")
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

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/tables", new_table, methods=["POST"]),
        Route("/api/tables/{table}", get_table),
        Route("/api/tables/{table}/move", move, methods=["POST"]),
        Route("/api/replays", new_replay, methods=["POST"]),
        Route("/api/replays/{replay}", get_replay),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={TableError: refused})


def _frames(config: GameConfig, seed: int, actions: list[int], viewer: int | str | None) -> list[dict[str, Any]]:
    from experiments.replay import steps
    from experiments.web.scene import to_svg

    try:
        shots = steps(config, seed, actions, viewer)
    except ValueError as err:
        raise TableError(f"cannot replay these actions: {err}") from None
    return [{"svg": to_svg(f.scene, 1.0), "caption": f.caption, "round_end": f.round_end} for f in shots]
