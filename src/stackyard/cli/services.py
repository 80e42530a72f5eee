"""The services the command groups build and share: settings, the database, this host's
stacks, backups, destinations, transfers, schedules and notifications, the agents (and an event loop
that closes their connections)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from stackyard.agents.service import Agents
    from stackyard.backups.service import BackupService
    from stackyard.db import Database
    from stackyard.destinations.service import Destinations
    from stackyard.destinations.transfers import Transfers
    from stackyard.notifications.service import Notifications
    from stackyard.schedules.scheduler import Scheduler
    from stackyard.schedules.store import ScheduleStore
    from stackyard.settings import Settings
    from stackyard.stacks.service import StackService

T = TypeVar("T")


def settings() -> Settings:
    from stackyard.settings import Settings

    return Settings()


def database() -> Database:
    from stackyard.db import Database

    current = settings()
    current.prepare_dirs()
    db = Database(current.effective_database_url)
    db.reconcile()
    return db


def stacks() -> StackService:
    from stackyard.stacks.machine import Machine
    from stackyard.stacks.service import StackService

    current = settings()
    current.prepare_dirs()
    return StackService(Machine(current))


def backups() -> BackupService:
    from stackyard.backups.service import BackupService

    return BackupService(stacks())


def destinations(service: BackupService | None = None) -> Destinations:
    from stackyard.destinations.service import Destinations

    machine = (service or backups()).machine
    return Destinations(
        database(), settings().effective_secret_key, lambda: machine.docker, machine.helpers
    )


def destination_id(service: Destinations, given: str) -> int:
    """A destination by id or by name."""
    from stackyard.errors import NotFound

    for view in service.all():
        if given in (str(view.id), view.name):
            return view.id
    raise NotFound(f"No destination {given!r} (see `stackyard destination list`)")


def notifications() -> Notifications:
    from stackyard.notifications.service import Notifications

    current = settings()
    return Notifications(database(), current.effective_secret_key, base_url=current.public_url)


def transfers(service: BackupService) -> Transfers:
    from stackyard.destinations.transfers import Transfers

    return Transfers(destinations(service), service.store, service.machine.runs)


def agents() -> Agents:
    from stackyard.agents.service import Agents

    current = settings()
    return Agents(
        database(), current.effective_secret_key, current.app_version, current.agent_timeout
    )


def run(reach: Agents, work: Awaitable[T]) -> T:
    """`work` in an event loop of its own, the agents' connections closed after it."""

    async def go() -> T:
        try:
            return await work
        finally:
            await reach.aclose()

    return asyncio.run(go())


def schedules(service: Destinations | None = None) -> ScheduleStore:
    """The schedules and their history."""
    from stackyard.schedules.store import ScheduleStore

    service = service or destinations()
    return ScheduleStore(service.db, service)


def scheduler(reach: Agents | None = None) -> Scheduler:
    """The scheduler; schedules of agents run through `reach` (none: this host's only)."""
    from datetime import timedelta

    from stackyard.agents.backups import AgentTransfers
    from stackyard.schedules.scheduler import Scheduler

    service = backups()
    moves = transfers(service)
    grace = timedelta(minutes=settings().schedule_grace_minutes)
    agent_host = (
        AgentTransfers(reach, moves.destinations, settings().data_dir).host if reach else None
    )
    return Scheduler(
        schedules(moves.destinations), service, moves.destinations, moves, grace, agent_host
    )
