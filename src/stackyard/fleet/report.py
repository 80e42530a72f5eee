"""What one host reports of itself for the fleet dashboard: its stacks by state, the
containers and stacks that need someone, its failed backups and its resources. Served
for the central's own host directly and by each agent at `/agent/fleet/host`.

Cheap by design (the dashboard asks every host at once, often): one container listing
(the stack list's own), the update summary from its cache, the last run of each stack
from its file, `/proc` for load and memory, and `statvfs` of the engine's data root
(never `docker system df` while the dashboard waits: slow on NAS devices; the disk
summary is the last one measured in the background, `stackyard.disk.service`)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import get_args

from stackyard.agents.compat import CAPABILITIES, Capabilities
from stackyard.disk.model import DiskSummary
from stackyard.disk.service import DiskService
from stackyard.docker.engine import EngineState, engine_state
from stackyard.errors import Unavailable
from stackyard.stacks.service import StackService
from stackyard.stacks.status import State
from stackyard.stacks.updates import StackUpdate

STATES: tuple[State, ...] = get_args(State)


@dataclass(frozen=True)
class Resources:
    cpus: int
    load: tuple[float, float, float]  # 1, 5 and 15 minutes
    memory_total: int  # bytes
    memory_available: int
    disk_path: str | None  # the engine's data root, where it could be measured
    disk_total: int | None
    disk_free: int | None
    containers_running: int
    containers_total: int
    stacks: int


@dataclass(frozen=True)
class ContainerTrouble:
    stack: str
    container: str
    state: str  # "unhealthy", "restarting", "dead"


@dataclass(frozen=True)
class InvalidStack:
    """A stack whose compose file cannot be read, and why."""

    stack: str
    error: str | None


@dataclass(frozen=True)
class FailedBackup:
    stack: str
    at: datetime
    error: str | None


@dataclass(frozen=True)
class InterruptedRun:
    """A stack whose last run was cut short by a stop of the service: why, or what
    became of its work (the first line of the run that resolved it)."""

    stack: str
    action: str
    at: datetime
    detail: str | None


@dataclass(frozen=True)
class RolledBack:
    """A stack whose last update failed its health gate and was rolled back (or whose
    rollback failed too: `failed`)."""

    stack: str
    at: datetime
    detail: str | None
    failed: bool


@dataclass(frozen=True)
class HostReport:
    name: str
    version: str
    stacks: dict[str, int]  # per state
    partial: list[str]
    troubles: list[ContainerTrouble]
    updates: list[str]  # stacks with a newer image digest
    failed_backups: list[FailedBackup]
    resources: Resources
    engine_error: str | None
    capabilities: Capabilities = field(default_factory=list)  # what the host serves
    interrupted: list[InterruptedRun] = field(default_factory=list)
    invalid: list[InvalidStack] = field(default_factory=list)  # absent from older agents
    #: Per stack with a newer image: a fingerprint of the newest digests (news when it
    #: changes). Absent from older agents.
    update_digests: dict[str, str] = field(default_factory=dict)
    #: Stacks whose last update was rolled back. Absent from older agents.
    rolled_back: list[RolledBack] = field(default_factory=list)
    #: What takes room on the engine (the last measured). Absent from older agents.
    disk: DiskSummary | None = None


def _meminfo() -> tuple[int, int]:
    values: dict[str, int] = {}
    try:
        with open("/proc/meminfo") as file:
            for line in file:
                key, _, rest = line.partition(":")
                values[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return 0, 0
    return values.get("MemTotal", 0), values.get("MemAvailable", values.get("MemFree", 0))


def _disk(path: str | None) -> tuple[int | None, int | None]:
    if not path or not Path(path).is_dir():
        return None, None  # the engine's data root is not visible here (another host)
    stats = os.statvfs(path)
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


def _trouble(state: str, health: str | None) -> str | None:
    if state in ("restarting", "dead"):
        return state
    if health == "unhealthy":
        return "unhealthy"
    return None


def _fingerprint(stack: StackUpdate) -> str:
    """The newest digests of a stack's images, in a few characters."""
    digests = sorted(i.remote_digest or "" for i in stack.images if i.state == "update_available")
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]


def host_report(stacks: StackService, version: str, disk: DiskService | None = None) -> HostReport:
    """This host's report (blocking: run it in a thread)."""
    machine = stacks.machine
    engine_error = None
    engine = EngineState()
    client = machine.docker
    try:
        engine = engine_state(client)
    except Unavailable as exc:
        engine_error = exc.detail
    views = stacks.list() if engine_error is None else []
    counts: dict[str, int] = dict.fromkeys(STATES, 0)
    troubles: list[ContainerTrouble] = []
    failed: list[FailedBackup] = []
    interrupted: list[InterruptedRun] = []
    for view in views:
        counts[view.state] += 1
        # A stack being updated: its containers' troubles are the update's to say (its
        # health gate judges them; its outcome says why it rolled back).
        for service in view.services if view.busy != "update" else ():
            for container in service.containers:
                state = _trouble(container.state, container.health)
                if state:
                    troubles.append(ContainerTrouble(view.id, container.name, state))
        last = machine.runs.last(view.id)
        if last is None:
            continue
        at = last.finished_at or last.started_at
        if last.action == "backup" and last.status == "failed":
            errors = last.progress.errors
            failed.append(FailedBackup(view.id, at, errors[-1] if errors else None))
        elif last.status == "interrupted":
            said = last.progress.errors[-1:] or [line.text for line in last.progress.lines[:1]]
            interrupted.append(InterruptedRun(view.id, last.action, at, next(iter(said), None)))
    summary = stacks.updates.summary()
    memory_total, memory_available = _meminfo()
    disk_total, disk_free = _disk(engine.root_dir)
    return HostReport(
        name=machine.host_name(),
        version=version,
        stacks=counts,
        partial=[v.id for v in views if v.state == "partial"],
        troubles=troubles,
        updates=[s.stack for s in summary.stacks if s.has_update],
        update_digests={s.stack: _fingerprint(s) for s in summary.stacks if s.has_update},
        rolled_back=[
            RolledBack(s.stack, tried.at, tried.detail, tried.outcome == "rollback_failed")
            for s in summary.stacks
            if (tried := s.last_update) and tried.outcome in ("rolled_back", "rollback_failed")
        ],
        failed_backups=failed,
        interrupted=interrupted,
        invalid=[InvalidStack(v.id, v.error) for v in views if v.state == "invalid"],
        resources=Resources(
            cpus=os.cpu_count() or 1,
            load=os.getloadavg(),
            memory_total=memory_total,
            memory_available=memory_available,
            disk_path=engine.root_dir if disk_total is not None else None,
            disk_total=disk_total,
            disk_free=disk_free,
            containers_running=engine.containers_running,
            containers_total=engine.containers_total,
            stacks=len(views),
        ),
        engine_error=engine_error,
        capabilities=list(CAPABILITIES),
        disk=disk.summary() if disk is not None and engine_error is None else None,
    )
