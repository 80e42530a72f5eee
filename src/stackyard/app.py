"""create_app(settings, mode): the central service or an agent, as an ASGI app.

A start goes through named phases: the settings, the database, the services
(`stackyard.root.build`), the background jobs (`stackyard.root.start`) and the routes
(`stackyard.api.routes`, in the warm-up right after the port is bound). The central and
an agent differ in which services, routers and pages they have (`CENTRAL`, `AGENT`)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from stackyard import __version__
from stackyard.api import agent, health, routes
from stackyard.api import errors as api_errors
from stackyard.api.deps import authenticate, services_of
from stackyard.api.disconnect import KillChildrenOnDisconnect
from stackyard.api.headers import SecurityHeaders
from stackyard.api.nul import RefuseNul
from stackyard.api.request_body import AuthenticatedBoundedBody
from stackyard.api.web import mount_ui
from stackyard.auth.audit import AuditRelay
from stackyard.root import start
from stackyard.root.services import Jobs, Services
from stackyard.settings import Mode, Settings

#: Uploads, streamed to disk rather than buffered (paths below /api or /agent).
STREAMED = (("PUT", "/files/upload"), ("PUT", "/backups/upload"))


@dataclass(frozen=True)
class Kind:
    """What makes an app the central or an agent."""

    title: str
    #: Where its API lives.
    prefix: str
    #: Its start: its services built, its background jobs begun (stackyard.root.start).
    start: Callable[[Settings, AsyncExitStack, Callable[[], None]], tuple[Services, Jobs]]
    #: What it answers from the start (its health check), and its other routers.
    early: APIRouter
    parts: tuple[routes.Part, ...]
    #: The first segments of the paths its first page asks for (routes.Routes.warm_up).
    first_page: tuple[str, ...]
    #: Requests served to no one signed in, whose bodies are read before that is known.
    public: frozenset[tuple[str, str]]
    #: Paths beginning so are served to no one signed in too (the git hosts' webhooks,
    #: which the route checks by their signature).
    public_prefixes: tuple[str, ...]
    #: What else it serves and does with each request (the UI and the docs' assets; the
    #: audit entries an agent hands its central).
    furnish: Callable[[FastAPI], None]


def _pages(app: FastAPI) -> None:
    """The docs' assets and the web UI (matched after the API)."""
    from swagger_ui_bundle import swagger_ui_path

    from stackyard.api import docs

    app.mount(docs.DOCS_ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")
    mount_ui(app)


def _relayed_audit(app: FastAPI) -> None:
    app.add_middleware(AuditRelay)


CENTRAL = Kind(
    title="Stackyard",
    prefix="/api",
    start=start.central,
    early=health.router,
    parts=routes.CENTRAL,
    first_page=routes.CENTRAL_FIRST_PAGE,
    public=frozenset({("POST", "/api/auth/login")}),
    public_prefixes=("/api/git/hooks/", "/api/enrol"),
    furnish=_pages,
)
AGENT = Kind(
    title="Stackyard agent",
    prefix="/agent",
    start=start.agent,
    early=agent.router,
    parts=routes.AGENT,
    first_page=routes.AGENT_FIRST_PAGE,
    public=frozenset(),
    public_prefixes=(),
    furnish=_relayed_audit,
)
KINDS: dict[Mode, Kind] = {"central": CENTRAL, "agent": AGENT}


def _streamed(prefix: str) -> Callable[[str, str], bool]:
    """Whether a request's body is an upload (also one proxied to an agent)."""
    pattern = re.compile(rf"{prefix}(?:/agents/[0-9]+)?(?P<path>/.*)")

    def streamed(method: str, path: str) -> bool:
        match = pattern.fullmatch(path)
        return match is not None and (method, match["path"]) in STREAMED

    return streamed


def create_app(settings: Settings, mode: Mode = "central") -> FastAPI:
    """The app of `mode`, to start on `settings` (or on what `app.state.settings` holds
    when it starts: the tests start one app many times, each on settings of its own).
    While started, `app.state.services` holds its services and `app.state.jobs` what its
    start began (api/deps.py reads them)."""
    settings.check_safe(mode)
    kind = KINDS[mode]

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            app.state.services, app.state.jobs = kind.start(
                app.state.settings, stack, app_routes.warm_up
            )
            yield

    app = FastAPI(
        title=kind.title,
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.settings = settings
    app.state.mode = mode
    api_errors.install(app)
    app_routes = routes.Routes(app, kind.prefix, kind.early, kind.parts, kind.first_page)
    schema = app.openapi

    def openapi() -> dict[str, Any]:
        app_routes.include_all()  # (every route in the schema, whenever it is asked for)
        return schema()

    app.openapi = openapi  # type: ignore[method-assign]

    app.add_middleware(RefuseNul)
    app.add_middleware(SecurityHeaders)
    kind.furnish(app)
    app.add_middleware(
        AuthenticatedBoundedBody,
        authenticate=authenticate,
        max_bytes=lambda: services_of(app).settings.max_json_bytes,
        public=kind.public,
        public_prefixes=kind.public_prefixes,
        streamed=_streamed(kind.prefix),
    )
    # Before anything that looks at the routes (the body check asks whether one serves
    # the request): they are in by then.
    app.add_middleware(routes.AwaitRoutes, routes=app_routes)
    app.add_middleware(KillChildrenOnDisconnect)  # outermost: every request's children
    return app


def openapi_text() -> str:
    """The central service's OpenAPI schema, as committed in `web/openapi.json`."""
    schema = create_app(Settings(env="development")).openapi()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
