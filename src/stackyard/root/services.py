"""What a service is made of: one typed record of the services a start builds once
(`stackyard.root.build`), read by the app's lifespan, the routers' dependencies
(api/deps.py) and the commands (cli/services.py) alike.

Every host has the same part (`Services`: its stacks, backups, self-update, stacks
from git, its disk). The central
adds its own (`CentralServices`: the database and what lives in it, the agents, the
notifications, the schedules); an agent adds the events the central follows
(`AgentServices`). Which of the two a service is, is what its mode is. `Jobs`: what a
start of the service began, that requests may wait for (stackyard.root.start).

Only the types are imported here (the annotations are not evaluated): a router that
names `Services` does not load the capabilities it does not use."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackyard.agents.backups import AgentTransfers
    from stackyard.agents.dialer import Dialer
    from stackyard.agents.service import Agents
    from stackyard.auth.throttle import LoginThrottle
    from stackyard.auth.totp import Totp
    from stackyard.backups.service import BackupService
    from stackyard.db import Database
    from stackyard.db.admin_settings import AdminSettings
    from stackyard.destinations.service import Destinations
    from stackyard.destinations.transfers import Transfers
    from stackyard.disk.service import DiskService
    from stackyard.fleet.dashboard import FleetDashboard
    from stackyard.git.service import GitService
    from stackyard.identity.service import IdentityService
    from stackyard.notifications.relay import EventBuffer
    from stackyard.notifications.service import Notifications
    from stackyard.schedules.scheduler import Scheduler
    from stackyard.schedules.store import ScheduleStore
    from stackyard.settings import Settings
    from stackyard.stacks.machine import Machine
    from stackyard.stacks.service import StackService
    from stackyard.system.self_update import SelfUpdate


@dataclass(frozen=True, kw_only=True)
class Services:
    """What every host has: the central for its own host, an agent for its."""

    settings: Settings
    #: This host: its engine, compose, stack folders, runs, journal and event hub.
    machine: Machine
    stacks: StackService
    backups: BackupService
    self_update: SelfUpdate
    #: Stacks from git repositories (fetched by the host that runs them).
    git: GitService
    #: What takes room on the engine, and the prune.
    disk: DiskService


@dataclass(frozen=True, kw_only=True)
class CentralServices(Services):
    """The central's own, beside its host's."""

    db: Database
    #: What admins set (the identity provider, the registry logins), in the database.
    admin_settings: AdminSettings
    throttle: LoginThrottle
    totp: Totp
    identity: IdentityService
    notifications: Notifications
    agents: Agents
    fleet: FleetDashboard
    destinations: Destinations
    transfers: Transfers
    #: Backups of agents' stacks moved through the central (pushes, pulls, schedules).
    agent_transfers: AgentTransfers
    schedules: ScheduleStore
    scheduler: Scheduler


@dataclass(frozen=True, kw_only=True)
class AgentServices(Services):
    """An agent's own, beside its host's."""

    #: This host's last events, numbered, for the central to follow.
    events: EventBuffer
    #: The tunnel to the central, for an agent that dials it (`--connect`).
    dialer: Dialer | None = None


@dataclass(frozen=True)
class Jobs:
    """What a start began that others wait for."""

    #: The first admin made: its password is hashed (0.15 s of Argon2 on a first start)
    #: while the service begins to answer, and a sign-in waits for it (api/deps.py). Done
    #: at once on an agent, which has no accounts.
    first_admin: asyncio.Future[None]
    #: The warm-up: the routes in, what a killed run left cleaned up and recovered, the
    #: engine asked and every stack's files read, ahead of the first requests.
    warm_up: asyncio.Future[None]
