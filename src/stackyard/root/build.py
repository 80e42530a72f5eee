"""Builds a service's parts once, in dependency order, in named phases: the settings
(`prepare`), the database and what admins keep in it (the central's:
`stackyard.root.database`), the services every host has (`stackyard.root.host`), then the
central's own (`central_services`) or an agent's. The app's lifespan builds them at each
start (`central`, `agent`) and then starts the background jobs (`stackyard.root.start`); a
command builds the parts it uses (cli/services.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from datetime import timedelta
from typing import Any

from stackyard.agents.backups import AgentTransfers
from stackyard.agents.service import Agents
from stackyard.agents.tunnels import Tunnels
from stackyard.auth import passwords
from stackyard.auth.audit import record
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.totp import Totp
from stackyard.auth.users import account_named
from stackyard.db import Database
from stackyard.db.admin_settings import AdminSettings
from stackyard.destinations.service import Destinations, Where
from stackyard.destinations.transfers import Transfers
from stackyard.fleet.dashboard import FleetDashboard
from stackyard.fleet.report import host_report
from stackyard.identity.config import IdentitySettings
from stackyard.identity.service import IdentityService
from stackyard.notifications.monitor import signin_failures
from stackyard.notifications.outbox import Timing
from stackyard.notifications.relay import EventBuffer
from stackyard.notifications.service import Notifications
from stackyard.root.database import admin_settings, database
from stackyard.root.host import host
from stackyard.root.services import AgentServices, CentralServices, Services
from stackyard.root.stack_names import StackNames
from stackyard.schedules.scheduler import Scheduler
from stackyard.schedules.store import ScheduleStore
from stackyard.settings import Settings

log = logging.getLogger(__name__)


# -- the settings ---------------------------------------------------------------------
def prepare(settings: Settings) -> None:
    """What the settings make of this process before a service starts: the cost of the
    passwords it hashes, its data and stacks folders."""
    passwords.configure(settings.test_cheap_password_hashes)
    if settings.test_cheap_password_hashes:
        log.warning("Passwords are hashed at the lowest cost: a setting for tests only")
    settings.prepare_dirs()


# -- the services ---------------------------------------------------------------------
def central_services(settings: Settings, db: Database, admin: AdminSettings) -> CentralServices:
    """The central's services on its database: its host's, then its own, each after what
    it uses. What happens on the host, to sign-ins, to updates, schedules and transfers is
    told to the notifications."""
    on_host = host(settings, "central", lambda: admin, functools.partial(record, db))
    machine, key = on_host.machine, settings.effective_secret_key
    notifications = Notifications(
        db,
        key,
        Timing(window=settings.notify_window_seconds, retry=settings.notify_retry_seconds),
        settings.public_url,
        machine.host_name,
    )
    machine.events.listen(notifications.emit)
    on_host.self_update.events = notifications.emit
    throttle = LoginThrottle()
    throttle.attacked = functools.partial(
        signin_failures, notifications.emit, functools.partial(account_named, db)
    )
    agents = Agents(
        db,
        key,
        settings.app_version,
        settings.agent_timeout,
        Tunnels(settings.data_dir / "tunnel"),
    )
    notifications.known_stacks = StackNames(machine.store, agents, settings.agent_timeout)
    fleet = FleetDashboard(
        functools.partial(
            asyncio.to_thread, host_report, on_host.stacks, settings.app_version, on_host.disk
        ),
        agents,
        settings.agent_timeout,
    )
    fleet.observers.append(notifications.observe)
    where = Where(settings.instance_id, machine.host_name, settings.data_dir / "restic")
    destinations = Destinations(db, key, lambda: machine.docker, machine.helpers, where)
    transfers = Transfers(destinations, on_host.backups.store, machine.runs)
    agent_transfers = AgentTransfers(agents, destinations, settings.data_dir, notifications.emit)
    schedules = ScheduleStore(db, destinations)
    scheduler = Scheduler(
        schedules,
        on_host.backups,
        destinations,
        transfers,
        on_host.disk,
        timedelta(minutes=settings.schedule_grace_minutes),
        agent_transfers.host,
        settings.instance_id,
        notifications.emit,
    )
    return CentralServices(
        **_parts(on_host),
        db=db,
        admin_settings=admin,
        throttle=throttle,
        totp=Totp(db, key),
        identity=IdentityService(db, IdentitySettings(settings, admin), key),
        notifications=notifications,
        agents=agents,
        fleet=fleet,
        destinations=destinations,
        transfers=transfers,
        agent_transfers=agent_transfers,
        schedules=schedules,
        scheduler=scheduler,
    )


# -- every phase, in order -------------------------------------------------------------
def central(settings: Settings) -> CentralServices:
    """Every part of the central, phase by phase."""
    prepare(settings)
    if settings.admin_password is not None:
        passwords.check_policy(settings.admin_password)  # refused before starting
    db = database(settings)
    return central_services(settings, db, admin_settings(settings, db))


def agent(settings: Settings) -> AgentServices:
    """Every part of an agent: its host's services, and the buffer of their events that
    its central follows."""
    prepare(settings)
    on_host = host(settings, "agent")
    events = EventBuffer()
    on_host.machine.events.listen(events.add)
    dialer = None
    if settings.connect_url:
        from stackyard.agents.dialer import Dialer

        port = settings.listen_port("agent")
        dialer = Dialer(settings.data_dir, settings.connect_url, port)
    return AgentServices(**_parts(on_host), events=events, dialer=dialer)


def _parts(services: Services) -> dict[str, Any]:
    """The host's parts, for a mode's record that adds its own to them."""
    return {field.name: getattr(services, field.name) for field in dataclasses.fields(Services)}
