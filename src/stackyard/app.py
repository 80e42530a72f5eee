"""create_app(settings, mode): the central service or the agent, as an ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from stackyard import __version__
from stackyard.agents.backups import AgentTransfers
from stackyard.agents.service import Agents
from stackyard.api import (
    agent,
    agents,
    audit,
    auth,
    backups,
    containers,
    destinations,
    docs,
    files,
    fleet,
    health,
    identity,
    notifications,
    registries,
    schedules,
    stacks,
    system,
    users,
)
from stackyard.api import errors as api_errors
from stackyard.api.deps import authenticate
from stackyard.api.disconnect import KillChildrenOnDisconnect
from stackyard.api.headers import SecurityHeaders
from stackyard.api.nul import RefuseNul
from stackyard.api.request_body import AuthenticatedBoundedBody
from stackyard.api.web import mount_ui
from stackyard.auth import passwords
from stackyard.auth.audit import AuditRelay, record
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.totp import Totp
from stackyard.auth.users import ensure_bootstrap_admin, migrate_legacy_roles
from stackyard.backups.service import BackupService
from stackyard.db import Database
from stackyard.destinations.service import Destinations
from stackyard.destinations.transfers import Transfers
from stackyard.fleet.dashboard import FleetDashboard
from stackyard.fleet.report import host_report
from stackyard.identity.config import IdentitySettings
from stackyard.identity.service import IdentityService
from stackyard.notifications.containers import ContainerWatcher
from stackyard.notifications.monitor import signin_failures, watch_fleet
from stackyard.notifications.outbox import Timing
from stackyard.notifications.relay import AgentEvents, EventBuffer
from stackyard.notifications.service import Notifications
from stackyard.process import children
from stackyard.schedules.scheduler import Scheduler
from stackyard.schedules.store import ScheduleStore
from stackyard.settings import Mode, Settings
from stackyard.stacks.machine import Machine
from stackyard.stacks.service import StackService
from stackyard.system.self_update import SelfUpdate

log = logging.getLogger(__name__)


#: What every host does, written once: the central serves them for its own host under
#: /api, an agent for its host under /agent (and the central proxies those).
HOST_ROUTERS = (
    system.router,
    stacks.router,
    containers.router,
    containers.sockets,
    backups.router,
    files.router,
    fleet.host,
)
#: Uploads, streamed to disk rather than buffered (paths below /api or /agent).
STREAMED = (("PUT", "/files/upload"), ("PUT", "/backups/upload"))


#: The central's own routers, under /api, in the order their routes are matched.
CENTRAL_ROUTERS = (
    health.router,
    auth.public,
    identity.public,
    auth.router,
    identity.router,
    users.router,
    audit.router,
    *HOST_ROUTERS,
    fleet.router,
    agents.router,
    agents.sockets,
    destinations.router,
    notifications.router,
    schedules.router,
    registries.router,
    docs.router,
)
#: An agent's routers, under /agent.
AGENT_ROUTERS = (agent.router, *HOST_ROUTERS)


def _include(app: FastAPI, prefix: str, routers: tuple[APIRouter, ...]) -> None:
    """Each router under `prefix`. FastAPI builds an included router's routes (their
    validators) when a request first reaches them, and the warm-up builds them all just
    after start-up; a router included without a prefix of the include's own is built at
    once, every route before the service could answer (0.4 s)."""
    for router in routers:
        app.include_router(router, prefix=prefix, responses=api_errors.ERROR_RESPONSES)


def _streamed(prefix: str) -> Callable[[str, str], bool]:
    """Whether a request's body is an upload (also one proxied to an agent)."""
    pattern = re.compile(rf"{prefix}(?:/agents/[0-9]+)?(?P<path>/.*)")

    def streamed(method: str, path: str) -> bool:
        match = pattern.fullmatch(path)
        return match is not None and (method, match["path"]) in STREAMED

    return streamed


#: Seconds from the end of start-up to the warm-up: the service binds its port and
#: answers first (a warm-up holding the interpreter made the first answer wait 0.2 s).
WARM_UP_DELAY = 0.1


async def _warm_up_soon(
    machine: Machine,
    recover: Callable[[], Awaitable[None]],
    *clean_ups: Callable[[], None],
) -> None:
    await asyncio.sleep(WARM_UP_DELAY)
    await asyncio.get_running_loop().run_in_executor(None, _warm_up, machine, clean_ups)
    await recover()  # once what an interrupted run left is cleaned up


def _warm_up(machine: Machine, clean_ups: tuple[Callable[[], None], ...] = ()) -> None:
    """Start-up work done off the request path, so that no first request pays for it:
    first what an interrupted run of the service left is cleaned up, then what the first
    requests would need is made."""
    for clean_up in clean_ups:
        clean_up()
    # (Routes are not built ahead: FastAPI builds a router's routes, their models and
    # validators, when the first request reaches it, tens of milliseconds once; all of
    # them would cost every start 0.3 s of CPU and 6.4 MiB, kept for capabilities a host
    # may never use.)
    machine.warm_up()
    _freeze_start_up()


@functools.cache
def _freeze_start_up() -> None:
    """What start-up made (modules, schemas, routes) lives as long as the service: moved
    out of the collector's sight, it is no longer scanned by every full collection (with a
    million long-lived objects those slowed an SFTP transfer from 280 to 225 MiB/s). Once
    per process: a process that starts many apps (the tests) would keep each one's
    garbage."""
    gc.collect()  # start-up's own garbage first (`stackyard serve` starts with the
    gc.freeze()  # collector off, cli/serve.py)
    gc.enable()


def create_app(settings: Settings, mode: Mode = "central") -> FastAPI:
    settings.check_safe(mode)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Read at each start: the tests start one app (its routes built once) many times,
        # each time on new settings and a new data folder.
        settings: Settings = app.state.settings
        app.state.throttle = LoginThrottle()
        passwords.configure(settings.test_cheap_password_hashes)
        if settings.test_cheap_password_hashes:
            log.warning("Passwords are hashed at the lowest cost: a setting for tests only")
        settings.prepare_dirs()
        if mode == "central":
            db = Database(settings.effective_database_url)
            db.reconcile()
            migrate_legacy_roles(db)
            if settings.admin_password is not None:
                passwords.check_policy(settings.admin_password)  # refused before starting
            # The first admin's password is hashed (0.15 s of Argon2 on a first start) while
            # the service begins to answer; a sign-in waits for it (api/deps.py).
            app.state.first_admin = asyncio.ensure_future(
                asyncio.to_thread(ensure_bootstrap_admin, db, settings.admin_password)
            )
            app.state.db = db
            app.state.totp = Totp(db, settings.effective_secret_key)
            app.state.identity = IdentityService(
                db,
                IdentitySettings(settings, settings.data_dir, settings.effective_secret_key),
                settings.effective_secret_key,
            )
        machine = Machine(settings)
        app.state.stacks = StackService(
            machine, functools.partial(record, app.state.db) if mode == "central" else None
        )
        app.state.self_update = SelfUpdate(
            settings.app_version,
            settings.data_dir,
            lambda: machine.docker,
            machine.registry_client,
            mode,
            settings.update_health_seconds,
        )
        app.state.backups = BackupService(app.state.stacks)
        watcher = ContainerWatcher(
            lambda: machine.docker, machine.stack_of, machine.events.raise_event
        )
        background: list[asyncio.Task[None]] = []
        scheduler: Scheduler | None = None
        firing: asyncio.Task[None] | None = None
        outcome: asyncio.Task[None] | None = None
        if mode == "agent":
            app.state.event_buffer = EventBuffer()
            machine.events.listen(app.state.event_buffer.add)
        if mode == "central":
            notifier = Notifications(
                db,
                settings.effective_secret_key,
                Timing(window=settings.notify_window_seconds, retry=settings.notify_retry_seconds),
                settings.public_url,
                machine.host_name,
            )
            app.state.notifications = notifier
            machine.events.listen(notifier.emit)
            app.state.throttle.attacked = functools.partial(signin_failures, notifier.emit)
            app.state.self_update.events = notifier.emit
            app.state.agents = Agents(
                db, settings.effective_secret_key, settings.app_version, settings.agent_timeout
            )
            app.state.fleet = FleetDashboard(
                functools.partial(
                    asyncio.to_thread, host_report, app.state.stacks, settings.app_version
                ),
                app.state.agents,
                settings.agent_timeout,
            )
            app.state.fleet.observers.append(notifier.observe)
            app.state.agent_events = AgentEvents(
                app.state.agents, notifier.emit, functools.partial(record, app.state.db)
            )
            background += [
                asyncio.create_task(notifier.serve()),
                asyncio.create_task(app.state.agent_events.serve()),
                asyncio.create_task(
                    watch_fleet(
                        notifier,
                        app.state.fleet,
                        app.state.self_update,
                        settings.notify_check_seconds,
                    )
                ),
            ]
            app.state.destinations = Destinations(
                db, settings.effective_secret_key, lambda: machine.docker, machine.helpers
            )
            app.state.transfers = Transfers(
                app.state.destinations, app.state.backups.store, machine.runs
            )
            app.state.agent_transfers = AgentTransfers(
                app.state.agents, app.state.destinations, settings.data_dir, notifier.emit
            )
            app.state.schedules = ScheduleStore(db, app.state.destinations)
            scheduler = Scheduler(
                app.state.schedules,
                app.state.backups,
                app.state.destinations,
                app.state.transfers,
                timedelta(minutes=settings.schedule_grace_minutes),
                app.state.agent_transfers.host,
                settings.instance_id,
                notifier.emit,
            )
            app.state.scheduler = scheduler
            firing = asyncio.create_task(scheduler.serve())
        clean_ups = [app.state.backups.clean_up]
        if mode == "central":
            clean_ups.append(app.state.agent_transfers.clean_up)
            outcome = asyncio.create_task(  # (once the update's helper has written it)
                app.state.self_update.record_outcome(functools.partial(record, app.state.db))
            )
        # What a killed run of the service left, read before this one begins any work.
        left = machine.journal.pending()

        async def recover() -> None:
            await app.state.backups.recover(left)
            await app.state.stacks.recover(left)

        app.state.warm_up = asyncio.ensure_future(_warm_up_soon(machine, recover, *clean_ups))
        app.state.warm_up.add_done_callback(lambda _: watcher.start())  # (it loads the SDK)
        checker = None
        if settings.update_check_interval:
            checker = asyncio.create_task(app.state.stacks.watch(settings.update_check_interval))
        try:
            yield
        finally:
            watcher.stop()
            for task in background:
                task.cancel()
            for task in background:
                with contextlib.suppress(BaseException):
                    await task
            if checker is not None:
                checker.cancel()
            if firing is not None:
                firing.cancel()
            if outcome is not None:
                outcome.cancel()
            if scheduler is not None:
                await scheduler.aclose()
            if mode == "central":
                await app.state.agents.aclose()
                await app.state.identity.aclose()
            children.kill_all()  # no compose run outlives the service
            await machine.aclose()
            machine.close()
            if mode == "central":
                with contextlib.suppress(Exception):  # (reported to sign-ins already)
                    await app.state.first_admin
                app.state.db.dispose()

    app = FastAPI(
        title="Stackyard" if mode == "central" else "Stackyard agent",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.settings = settings
    app.state.mode = mode
    api_errors.install(app)

    app.add_middleware(RefuseNul)
    app.add_middleware(SecurityHeaders)

    if mode == "agent":
        app.add_middleware(AuditRelay)
        app.add_middleware(
            AuthenticatedBoundedBody,
            authenticate=authenticate,
            max_bytes=lambda: app.state.settings.max_json_bytes,
            streamed=_streamed("/agent"),
        )
        _include(app, "/agent", AGENT_ROUTERS)
        app.add_middleware(KillChildrenOnDisconnect)  # outermost: every request's children
        return app

    app.add_middleware(
        AuthenticatedBoundedBody,
        authenticate=authenticate,
        max_bytes=lambda: app.state.settings.max_json_bytes,
        public=frozenset({("POST", "/api/auth/login")}),
        streamed=_streamed("/api"),
    )

    _include(app, "/api", CENTRAL_ROUTERS)
    from swagger_ui_bundle import swagger_ui_path

    app.mount(docs.DOCS_ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")
    mount_ui(app)
    app.add_middleware(KillChildrenOnDisconnect)  # outermost: every request's children
    return app


def openapi_text() -> str:
    """The central service's OpenAPI schema, as committed in `web/openapi.json`."""
    schema = create_app(Settings(env="development")).openapi()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
