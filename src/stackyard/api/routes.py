"""The routes phase: which routers the central and an agent serve, each imported and put
in when it is first needed, those of the first page right after a start (off the request
path).

Importing a router builds its routes' models and validators, and FastAPI builds them once
more for the app when a request first reaches the router (tens of milliseconds a router;
all of them would cost every start about 0.7 s of CPU and 16 MiB, for capabilities a
host may never use). So a start answers its health check first; the warm-up puts in and
builds the routers of the UI's first page (`Routes.warm_up`: sign-in, who is signed in,
the dashboard, the system, the stacks); any other router is put in when a request first
asks for a path of it (`AwaitRoutes`, which holds that request until it is in). Which
paths a router serves is told by the first segment of each (`Part.paths`, checked
against the routers by tests/api/test_routes.py), so that nothing is imported to find
out.

Matching walks the routers in order, and FastAPI builds an included router's routes the
first time a request is matched against it, on the event loop. So the routers put in by
one request go before all others, and are built in the thread that puts them in: that
request walks through them alone (a folder download, the first request for the files
router, walked through the stack's containers and backups routers put in by the warm-up
and built them too: 0.1-0.15 s of its first byte, the event loop held meanwhile). No two
routers serve one path (the same test checks it), so the order never decides which
answers."""

from __future__ import annotations

import asyncio
import importlib
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from stackyard.api import errors as api_errors


@dataclass(frozen=True)
class Part:
    """A router of a mode, named rather than imported."""

    module: str  # in stackyard.api
    name: str
    #: The first segment of each of its paths (under the mode's prefix).
    paths: frozenset[str]

    def router(self) -> APIRouter:
        module = importlib.import_module(f"stackyard.api.{self.module}")
        router: APIRouter = getattr(module, self.name)
        return router


def _part(module: str, name: str, *paths: str) -> Part:
    return Part(module, name, frozenset(paths))


#: What every host serves: the central for its own host under /api, an agent for its host
#: under /agent (and the central proxies those).
HOST = (
    _part("system", "router", "system"),
    _part("stacks", "router", "stacks"),
    _part("fleet", "host", "fleet"),
    _part("containers", "router", "containers", "usage", "stacks"),
    _part("containers", "sockets", "stacks"),
    _part("backups", "router", "backups", "stacks"),
    _part("files", "router", "files"),
    _part("streams", "router", "streams"),
    _part("git", "router", "git"),
    _part("disk", "router", "disk"),
)
#: The central's own and its host's, under /api (beside the health check).
CENTRAL = (
    _part("auth", "public", "auth"),
    _part("identity", "public", "auth"),
    _part("auth", "router", "auth"),
    _part("fleet", "router", "dashboard"),
    *HOST,
    _part("git", "hooks", "git"),
    _part("identity", "router", "identity-provider"),
    _part("users", "router", "users"),
    _part("audit", "router", "audit"),
    _part("agents", "router", "agents"),
    _part("agents", "sockets", "agents"),
    _part("agents", "enrolment", "enrol"),
    _part("destinations", "router", "destinations", "backups"),
    _part("notifications", "router", "notifications"),
    _part("schedules", "router", "schedules"),
    _part("schedules", "timetable", "timetable"),
    _part("registries", "router", "registries"),
    _part("docs", "router", "docs", "openapi.json"),
)
#: What the UI's first page asks for: sign-in and who is signed in, the dashboard, the
#: system, the stacks. An agent's: what its central asks of it first (the host's card
#: for the dashboard, its stacks).
#: An agent's: its host's, and the webhook deliveries its central passes on.
AGENT = (*HOST, _part("git", "deliveries", "git"))
CENTRAL_FIRST_PAGE = ("auth", "dashboard", "system", "stacks")
AGENT_FIRST_PAGE = ("system", "stacks", "fleet")


class Routes:
    """One app's routes under its prefix: `early` at once, each of `parts` when first
    needed (`include`), those of `first_page` in the warm-up (`warm_up`). Each router is
    included on its own, before what the app serves besides (the UI's pages): FastAPI
    keeps the routes it built of an included router while no router is added inside it."""

    def __init__(
        self,
        app: FastAPI,
        prefix: str,
        early: APIRouter,
        parts: tuple[Part, ...],
        first_page: tuple[str, ...],
    ) -> None:
        self.app = app
        self.prefix = prefix
        self.parts = parts
        self.first_page = first_page
        #: First segments some part serves (any other is answered 404 as it is).
        self.known = frozenset(path for part in parts for path in part.paths)
        self._in: set[Part] = set()
        self._segments: set[str] = set()  # whose every part is in
        self._lock = threading.Lock()
        app.include_router(early, prefix=prefix, responses=api_errors.ERROR_RESPONSES)
        self._start = len(app.router.routes)  # where the routers put in next go
        self._end = self._start  # after the routers: what the app serves besides

    def missing(self, scope: Scope) -> str | None:
        """The first segment of a request's path, when a part that serves it is not in."""
        path: str = scope["path"]
        if not path.startswith(self.prefix + "/"):
            return None
        segment = path[len(self.prefix) + 1 :].split("/", 1)[0]
        return segment if segment in self.known and segment not in self._segments else None

    def include(self, *segments: str, build: bool = True) -> None:
        """Every part that serves a path beginning with one of `segments` imported and put
        in, once, before the routers put in earlier; with `build`, built too (blocking:
        from a thread; a caller that comes meanwhile waits)."""
        with self._lock:
            added: list[Any] = []
            for part in self.parts:
                if part not in self._in and not part.paths.isdisjoint(segments):
                    added.append(self._put_in(part.router(), self._start + len(added)))
                    self._in.add(part)
            for included in added if build else ():
                if hasattr(included, "effective_candidates"):
                    included.effective_candidates()  # (built once, then kept)
            self._segments.update(segments)

    def _put_in(self, router: APIRouter, at: int) -> Any:
        """`router` included at `at` (before the pages); FastAPI's included router."""
        self.app.include_router(router, prefix=self.prefix, responses=api_errors.ERROR_RESPONSES)
        routes = self.app.router.routes
        included = routes.pop()
        routes.insert(at, included)
        self._end += 1
        return included

    def include_all(self) -> None:
        """Every part put in, none built (the schema is drawn from the routers alone)."""
        self.include(*self.known, build=False)

    def warm_up(self) -> None:
        """The first page's parts put in, then built as its requests would build them:
        the routers they walk through, in order, up to the first that serves the last of
        its segments."""
        self.include(*self.first_page, build=False)
        last = next(p for p in self.parts if self.first_page[-1] in p.paths).router()
        for route in self.app.router.routes[: self._end]:
            included: Any = route
            if hasattr(included, "effective_candidates"):
                included.effective_candidates()  # (built once, then kept)
            if getattr(included, "original_router", None) is last:
                return


class AwaitRoutes:
    """Holds a request for a path whose router is not in yet until it is (its first
    request: the import, tens of milliseconds)."""

    def __init__(self, app: ASGIApp, routes: Routes) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            segment = self.routes.missing(scope)
            if segment is not None:
                await asyncio.to_thread(self.routes.include, segment)
        await self.app(scope, receive, send)
