"""A start of the service: its parts built (`stackyard.root.build`: the settings, the
database, the services), then its background jobs started, each in one place and each
stopped in the reverse order of its start (`AsyncExitStack`: what started first stops
last, so the database outlives every job that uses it). The routes are the last phase:
the app's, done in the warm-up that follows the start (`routes`)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from typing import Any

from stackyard.auth.audit import record
from stackyard.auth.users import ensure_bootstrap_admin
from stackyard.notifications.containers import ContainerWatcher
from stackyard.notifications.monitor import watch_fleet
from stackyard.notifications.relay import AgentEvents
from stackyard.process import children
from stackyard.process.tuning import return_freed_memory
from stackyard.root import build
from stackyard.root.services import AgentServices, CentralServices, Jobs, Services
from stackyard.settings import Settings

#: What a job waits for before it begins (set by the warm-up).
Ready = asyncio.Future[None]
#: A job's work.
Work = Coroutine[Any, Any, None]

#: Seconds from the end of start-up to the warm-up: the service binds its port and
#: answers first (a warm-up holding the interpreter made the first answer wait 0.2 s, and
#: the background jobs' first queries, in threads, up to 0.3 s more: they begin once the
#: warm-up has cleaned up what an interrupted run left, whose helpers and partial files
#: they would otherwise lose to it).
WARM_UP_DELAY = 0.1


def central(
    settings: Settings, stack: AsyncExitStack, routes: Callable[[], None]
) -> tuple[CentralServices, Jobs]:
    """The central started: its parts, then its jobs. `routes`: the routes phase (in the
    warm-up); `stack`: where each job's stop goes."""
    services = build.central(settings)
    cleaned = asyncio.get_running_loop().create_future()
    db = services.db
    stack.callback(db.dispose)
    first_admin = asyncio.ensure_future(
        asyncio.to_thread(ensure_bootstrap_admin, db, settings.admin_password)
    )
    stack.push_async_callback(_settled, first_admin)
    _host_resources(services, stack)
    stack.push_async_callback(services.identity.aclose)
    stack.push_async_callback(services.agents.aclose)
    stack.push_async_callback(services.scheduler.aclose)
    # (The outcome is recorded once the update's helper has written it.)
    outcome = services.self_update.record_outcome(functools.partial(record, db))
    _cancelled_at_stop(stack, cleaned, outcome)
    _cancelled_at_stop(stack, cleaned, services.scheduler.serve())
    _update_checks(services, stack, cleaned)
    relay = AgentEvents(
        services.agents,
        services.notifications.emit,
        functools.partial(record, db),
        reports=services.fleet.pushed,
    )
    for work in (
        services.notifications.serve(),
        relay.serve(),
        watch_fleet(
            services.notifications,
            services.fleet,
            services.self_update,
            settings.notify_check_seconds,
        ),
    ):
        _awaited_at_stop(stack, cleaned, work)
    clean_ups = (
        services.backups.clean_up,
        services.agent_transfers.clean_up,
        services.destinations.clean_up,
        services.git.repositories.clean_up,
    )
    warm_up = _warm_up(services, stack, routes, clean_ups, cleaned)
    return services, Jobs(first_admin, warm_up)


def agent(
    settings: Settings, stack: AsyncExitStack, routes: Callable[[], None]
) -> tuple[AgentServices, Jobs]:
    """An agent started: its parts, then its jobs (as the central's, less its own)."""
    services = build.agent(settings)
    cleaned = asyncio.get_running_loop().create_future()
    _host_resources(services, stack)
    _update_checks(services, stack, cleaned)
    clean_ups = (services.backups.clean_up, services.git.repositories.clean_up)
    warm_up = _warm_up(services, stack, routes, clean_ups, cleaned)
    if services.dialer is not None:  # (at once: an agent that dials in is online in 2 s)
        stack.callback(asyncio.create_task(services.dialer.run()).cancel)
    no_accounts = asyncio.get_running_loop().create_future()
    no_accounts.set_result(None)
    return services, Jobs(no_accounts, warm_up)


def _host_resources(services: Services, stack: AsyncExitStack) -> None:
    """Closed after every job that may use them: the engine's connections and streams,
    and every child still running (no compose run outlives the service)."""
    machine = services.machine
    stack.callback(machine.close)
    stack.push_async_callback(machine.aclose)
    stack.callback(children.kill_all)


def _update_checks(services: Services, stack: AsyncExitStack, cleaned: Ready) -> None:
    """The image update checks, and the polls of the git repositories."""
    interval = services.settings.update_check_interval
    if interval:
        _cancelled_at_stop(stack, cleaned, services.stacks.watch(interval))
    _cancelled_at_stop(stack, cleaned, services.git.poll())


def _cancelled_at_stop(stack: AsyncExitStack, cleaned: Ready, work: Work) -> None:
    """`work` in a task that the stop cancels without waiting for it (an update or a
    backup under way finishes what cannot be cut short on its own)."""
    stack.callback(asyncio.create_task(_once(cleaned, work)).cancel)


def _awaited_at_stop(stack: AsyncExitStack, cleaned: Ready, work: Work) -> None:
    """`work` in a task that the stop cancels, then waits for."""
    task = asyncio.create_task(_once(cleaned, work))

    async def stop() -> None:
        task.cancel()
        await _settled(task)

    stack.push_async_callback(stop)


async def _once(cleaned: Ready, work: Work) -> None:
    """A job's work, once what an interrupted run left is cleaned up (in the warm-up,
    after the service has begun to answer)."""
    try:
        await asyncio.shield(cleaned)
    except BaseException:
        work.close()  # (stopped before it began)
        raise
    await work


async def _settled(task: Awaitable[None]) -> None:
    """Waited for, however it ends (a failure was reported where it happened)."""
    with contextlib.suppress(BaseException):
        await task


def _warm_up(
    services: Services,
    stack: AsyncExitStack,
    routes: Callable[[], None],
    clean_ups: tuple[Callable[[], None], ...],
    cleaned: Ready,
) -> asyncio.Future[None]:
    """The warm-up, soon after the start; then the engine's container events watched
    (the watcher loads the Docker SDK: not before the warm-up has)."""
    machine = services.machine
    # What a killed run of the service left, read before this one begins any work.
    left = machine.journal.pending()

    async def recover() -> None:
        await services.backups.recover(left)
        await services.stacks.recover(left)

    watcher = ContainerWatcher(
        lambda: machine.docker,
        machine.stack_of,
        machine.events.raise_event,
        lambda stack: machine.runs.busy(stack) == "update",  # (its outcome says it all)
    )
    warm_up = asyncio.ensure_future(_warm_up_soon(services, routes, clean_ups, cleaned, recover))
    warm_up.add_done_callback(lambda _: watcher.start())
    stack.callback(watcher.stop)
    return warm_up


async def _warm_up_soon(
    services: Services,
    routes: Callable[[], None],
    clean_ups: tuple[Callable[[], None], ...],
    cleaned: Ready,
    recover: Callable[[], Awaitable[None]],
) -> None:
    """Start-up work done off the request path, so that no first request pays for it:
    first what an interrupted run of the service left is cleaned up (then the jobs
    begin), then what the first page needs is made (the routes, which a request waits
    for; the engine asked and the stacks' files read, for the first list), then what the
    interrupted run left undone is recovered."""
    await asyncio.sleep(WARM_UP_DELAY)
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, _clean_up, clean_ups)
    finally:
        cleaned.set_result(None)
    await loop.run_in_executor(None, _warm_up_now, services, routes)
    await recover()


def _clean_up(clean_ups: tuple[Callable[[], None], ...]) -> None:
    for clean_up in clean_ups:
        clean_up()


def _warm_up_now(services: Services, routes: Callable[[], None]) -> None:
    routes()
    services.machine.warm_up()
    _freeze_start_up()


@functools.cache
def _freeze_start_up() -> None:
    """What start-up made (modules, schemas, routes) lives as long as the service: moved
    out of the collector's sight, it is no longer scanned by every full collection (with a
    million long-lived objects those slowed an SFTP transfer from 280 to 225 MiB/s); what
    it freed goes back to the system (2-3 MiB of the idle service's memory). Once
    per process: a process that starts many apps (the tests) would keep each one's
    garbage."""
    gc.collect()  # start-up's own garbage first (`stackyard serve` starts with the
    gc.freeze()  # collector off, cli/serve.py)
    gc.enable()
    return_freed_memory()
