"""What the command groups use, built as the service builds it (`stackyard.root`), in a
command's own process: the settings, the database, this host's services (`host`), or
every service of the central (`central`: its scheduler tells the same notifications and
leases under the same instance id as the service's), and an event loop for a command's
work (`run`). Each is built when a command asks for it, and only what it asks for is
imported."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from stackyard.backups.service import BackupService
    from stackyard.db import Database
    from stackyard.db.admin_settings import AdminSettings
    from stackyard.destinations.service import Destinations
    from stackyard.notifications.service import Notifications
    from stackyard.root.services import CentralServices, Services
    from stackyard.settings import Settings
    from stackyard.stacks.service import StackService

T = TypeVar("T")


def settings() -> Settings:
    from stackyard.settings import Settings

    return Settings()


def database() -> Database:
    from stackyard.root.database import database

    return database(settings())


def host() -> Services:
    """This host's services (its stacks and backups), with the central's registry logins
    when this host has the central's database."""
    from stackyard.root.host import host

    current = settings()
    current.prepare_dirs()
    return host(current, "central", functools.cache(functools.partial(_admin_settings, current)))


def _admin_settings(current: Settings) -> AdminSettings | None:
    """The central's admin settings (the registry logins), when this host has its
    database; None on an agent's host (opened when first asked for)."""
    from stackyard.root.database import admin_settings, database

    if current.database_url is None and not (current.data_dir / "stackyard.db").exists():
        return None
    return admin_settings(current, database(current))


def central() -> CentralServices:
    """Every service of the central, on its database."""
    from stackyard.root.build import central_services
    from stackyard.root.database import admin_settings, database

    current = settings()
    db = database(current)
    return central_services(current, db, admin_settings(current, db))


def stacks() -> StackService:
    return host().stacks


def backups() -> BackupService:
    return host().backups


def notifications() -> Notifications:
    return central().notifications


def destination_id(service: Destinations, given: str) -> int:
    """A destination by id or by name."""
    from stackyard.errors import NotFound

    for view in service.all():
        if given in (str(view.id), view.name):
            return view.id
    raise NotFound(f"No destination {given!r} (see `stackyard destination list`)")


def run(services: CentralServices, work: Awaitable[T]) -> T:
    """`work` in an event loop of its own; after it, the events it told the notifications
    written for the service to send, and the agents' connections closed."""

    async def go() -> T:
        try:
            return await work
        finally:
            try:
                await services.notifications.intake.flush()
            finally:
                await services.agents.aclose()

    return asyncio.run(go())
