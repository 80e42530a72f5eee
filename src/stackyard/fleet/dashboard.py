"""The fleet payload: the central's own host and every agent, asked at once.

Each agent is asked with a time limit of its own (`STACKYARD_AGENT_TIMEOUT`) and at most
`CONCURRENCY` at a time, all under one deadline, so that a slow or silent agent costs
the time limit once, never the sum; one that fails is reported offline with why and when
it was last seen, and the others are shown. What each contact found is written to that
agent's record in a database session of its own. An agent whose event stream is live
has answered already: the report it pushed last is its answer (`fleet.pushed`), and
only the others are asked. Concurrent requests share one computation (many open
dashboards cost one fan-out), and it is served encoded from its types; a failure nobody
foresaw is reported as such (`fleet.failures`)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import TypeAdapter

from stackyard.agents.compat import incompatibility
from stackyard.agents.service import Agents, AgentView, Contact
from stackyard.errors import StackyardError
from stackyard.events import EventName
from stackyard.fleet.failures import reported
from stackyard.fleet.pushed import Pushed, PushedReports
from stackyard.fleet.report import STATES, HostReport

#: Agents asked at once; beyond that they wait for a free slot (within the deadline).
#: Each agent's connection is kept open between dashboards, so this bounds the requests
#: in flight, not the connections: at 256, 2,000 agents were asked in eight waves.
CONCURRENCY = 1024
#: Percent used at which a disk or the memory needs attention (warning, critical).
DISK_LEVELS = (85.0, 95.0)
MEMORY_LEVELS = (90.0, 95.0)

Severity = Literal["critical", "warning", "info"]
#: reconnecting: an agent that dials in, whose tunnel went down less than
#: `RECONNECT_GRACE` ago (no attention yet: it dials again on its own).
HostStatus = Literal["online", "reconnecting", "offline", "incompatible", "disabled"]
RECONNECT_GRACE = timedelta(seconds=60)
_REPORT = TypeAdapter(HostReport)
_RANK: dict[Severity, int] = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Attention:
    """What needs someone: the same condition, by the same name (`kind`, an event of
    `notifications.catalogue`), as the notifications say it began and ended."""

    severity: Severity
    kind: EventName
    host: str
    host_id: int | None  # the agent's id; None for this host
    stack: str | None
    message: str
    subject: str = ""  # what it is about on its host: a stack, a container, "host"
    #: What makes it news again while it holds (the newest image digests); None: nothing.
    state: str | None = None


@dataclass(frozen=True)
class HostCard:
    id: int | None  # the agent's id; None for the central's own host
    name: str
    kind: Literal["local", "agent"]
    status: HostStatus
    detail: str | None  # why it is not online
    version: str | None
    last_seen_at: datetime | None
    answered_in_ms: float | None  # None: it did not answer, or its report was pushed
    report: HostReport | None
    #: When the report shown was true: now for a host asked; for an agent that pushed
    #: it, the last line of its stream (each says nothing changed since; a change on its
    #: host is pushed within 5 s).
    reported_at: datetime | None = None


@dataclass(frozen=True)
class Kpis:
    hosts: int
    hosts_online: int
    stacks: int
    stacks_running: int
    containers_running: int
    containers_total: int
    updates: int
    critical: int
    warnings: int


@dataclass(frozen=True)
class Fleet:
    generated_at: datetime
    attention: list[Attention]
    kpis: Kpis
    breakdown: dict[str, int]  # stacks per state, over the hosts that answered
    hosts: list[HostCard]


def _percent(used: float, total: float) -> float:
    return 100.0 * used / total if total else 0.0


def _level(percent: float, levels: tuple[float, float]) -> Severity | None:
    return "critical" if percent >= levels[1] else "warning" if percent >= levels[0] else None


_TROUBLES: dict[str, EventName] = {
    "unhealthy": "container_unhealthy",
    "restarting": "container_restarting",
    "dead": "container_dead",
}


def attention_of(card: HostCard) -> list[Attention]:
    """What on this host needs someone, most pressing first within the host."""

    def item(
        severity: Severity,
        kind: EventName,
        message: str,
        stack: str | None = None,
        subject: str | None = None,
        state: str | None = None,
    ) -> Attention:
        about = subject or stack or ("agent" if kind.startswith("agent_") else "host")
        return Attention(severity, kind, card.name, card.id, stack, message, about, state)

    if card.status == "offline":
        seen = f"; last seen {card.last_seen_at:%Y-%m-%d %H:%M} UTC" if card.last_seen_at else ""
        return [item("critical", "agent_offline", f"{card.name} is offline: {card.detail}{seen}")]
    if card.status == "incompatible":
        return [item("critical", "agent_incompatible", card.detail or "Incompatible version")]
    report = card.report
    if report is None:
        return []
    items: list[Attention] = []
    if report.engine_error:
        items.append(item("critical", "engine_unreachable", report.engine_error))
    for trouble in report.troubles:
        kind = _TROUBLES.get(trouble.state)
        if kind is not None:
            message = f"{trouble.container} is {trouble.state}"
            items.append(item("critical", kind, message, trouble.stack, trouble.container))
    for failed in report.failed_backups:
        why = f": {failed.error}" if failed.error else ""
        items.append(
            item("critical", "backup_failed", f"The last backup failed{why}", failed.stack)
        )
    for cut in report.interrupted:
        what = f": {cut.detail}" if cut.detail else ""
        message = f"The {cut.action} was interrupted (the service stopped while it ran){what}"
        items.append(item("warning", "run_interrupted", message, cut.stack))
    resources = report.resources
    if resources.disk_total:
        used = _percent(resources.disk_total - (resources.disk_free or 0), resources.disk_total)
        if severity := _level(used, DISK_LEVELS):
            message = f"Disk of {resources.disk_path} is {used:.0f} % full"
            items.append(item(severity, "disk_full", message))
    if resources.memory_total:
        used = _percent(resources.memory_total - resources.memory_available, resources.memory_total)
        if severity := _level(used, MEMORY_LEVELS):
            items.append(item(severity, "memory_full", f"Memory is {used:.0f} % used"))
    for bad in report.invalid:
        why = f": {bad.error}" if bad.error else ""
        items.append(
            item("warning", "stack_invalid", f"The compose file cannot be read{why}", bad.stack)
        )
    for stack in report.partial:
        items.append(item("warning", "stack_partial", "Only some services run", stack))
    for back in report.rolled_back:
        said = f": {back.detail}" if back.detail else ""
        if back.failed:
            message = f"The last update failed and so did its rollback{said}"
            items.append(item("critical", "update_rolled_back", message, back.stack))
        else:
            message = f"The last update was rolled back{said}"
            items.append(item("warning", "update_rolled_back", message, back.stack))
    for stack in report.updates:
        digests = report.update_digests.get(stack)
        items.append(
            item("info", "stack_update", "Newer images are available", stack, None, digests)
        )
    return items


def merge(cards: list[HostCard]) -> Fleet:
    attention = sorted(
        (entry for card in cards for entry in attention_of(card)),
        key=lambda entry: _RANK[entry.severity],
    )
    reports = [card.report for card in cards if card.report is not None]
    breakdown: dict[str, int] = {
        state: sum(r.stacks.get(state, 0) for r in reports) for state in STATES
    }
    kpis = Kpis(
        hosts=len(cards),
        hosts_online=sum(card.status == "online" for card in cards),
        stacks=sum(breakdown.values()),
        stacks_running=breakdown["running"],
        containers_running=sum(r.resources.containers_running for r in reports),
        containers_total=sum(r.resources.containers_total for r in reports),
        updates=sum(len(r.updates) for r in reports),
        critical=sum(entry.severity == "critical" for entry in attention),
        warnings=sum(entry.severity == "warning" for entry in attention),
    )
    return Fleet(datetime.now(UTC), attention, kpis, breakdown, cards)


def _card(view: AgentView, status: HostStatus, detail: str | None) -> HostCard:
    """The card of an agent without a report: why, and when it was last seen."""
    return HostCard(
        view.id, view.name, "agent", status, detail, view.version, view.last_seen_at, None, None
    )


#: The payload is encoded straight from its types: it was built from typed parts, and
#: validating two hundred host cards again before sending them cost more than the rest.
_FLEET = TypeAdapter(Fleet)


class FleetDashboard:
    def __init__(
        self,
        local: Callable[[], Awaitable[HostReport]],
        agents: Agents,
        timeout: float,
        pushed: PushedReports | None = None,
    ) -> None:
        self.local = local
        self.agents = agents
        self.timeout = timeout
        self.pushed = pushed if pushed is not None else PushedReports()
        self._pending: asyncio.Future[Fleet] | None = None
        self._took: dict[int, float] = {}  # seconds each agent took to answer last time
        #: Told of every payload computed (notifications judge its conditions).
        self.observers: list[Callable[[Fleet], None]] = []

    async def fleet(self) -> Fleet:
        """The payload; a request that comes while one is computed gets that one."""
        if self._pending is None or self._pending.done():
            self._pending = asyncio.ensure_future(self._compute())
        return await asyncio.shield(self._pending)

    async def fleet_json(self) -> bytes:
        """The payload as JSON; any failure is a `ComputeFailed` that says where."""
        with reported("The fleet payload"):
            return _FLEET.dump_json(await self.fleet())

    async def _compute(self) -> Fleet:
        # The time limit counts from the request, not from the agents' records read.
        deadline = asyncio.get_running_loop().time() + self.timeout  # the loop's clock
        views = await asyncio.to_thread(self.agents.all)
        cards: dict[int, HostCard] = {}
        contacts: list[Contact] = []  # what the pushed reports tell the agents' records
        left: list[AgentView] = []
        for view in views:
            if not view.enabled:
                cards[view.id] = _card(view, "disabled", "Disabled")
            elif (pushed := self.pushed.fresh(view.id)) is not None:
                cards[view.id] = self._pushed(view, pushed, contacts)
            else:
                left.append(view)
        slots = asyncio.Semaphore(CONCURRENCY)
        # The agents that took longest last time are asked first (those not asked yet
        # before all): the answer waits for the slowest, not for the last one sent.
        left.sort(key=lambda v: -self._took.get(v.id, math.inf))
        asked = [asyncio.create_task(self._agent(v, deadline, slots)) for v in left]
        recorded = asyncio.ensure_future(self.agents.record_reports(contacts))
        local, *answers = await asyncio.gather(self._local(), *asked)
        await recorded
        cards.update(zip((view.id for view in left), answers, strict=True))
        fleet = merge([local, *(cards[view.id] for view in views)])
        for observer in self.observers:
            observer(fleet)
        return fleet

    def _answered(
        self, view: AgentView, report: HostReport, at: datetime, elapsed_ms: float | None
    ) -> tuple[HostCard, Contact]:
        """The card of an agent that answered with `report` (asked, or pushed: no answer
        time), and what its record learns from it."""
        reason = incompatibility(self.agents.version, report.version)
        contact = Contact(view, report.version, reason, report.capabilities or None)
        if reason:
            return _card(view, "incompatible", reason), contact
        card = HostCard(
            view.id, view.name, "agent", "online", None, report.version, at, elapsed_ms, report, at
        )
        return card, contact

    def _pushed(self, view: AgentView, pushed: Pushed, contacts: list[Contact]) -> HostCard:
        """The card of an agent whose stream is live: its last pushed report."""
        card, contact = self._answered(view, pushed.report, pushed.at, None)
        contacts.append(contact)
        return card

    async def _local(self) -> HostCard:
        began = time.monotonic()
        report = await self.local()
        elapsed = (time.monotonic() - began) * 1000
        now = datetime.now(UTC)
        return HostCard(
            None, report.name, "local", "online", None, report.version, now, elapsed, report, now
        )

    async def _agent(self, view: AgentView, deadline: float, slots: asyncio.Semaphore) -> HostCard:
        began = time.monotonic()
        try:
            async with asyncio.timeout_at(deadline), slots:
                # An agent last seen with an incompatible version is asked too: it may
                # have been updated since.
                client = await self.agents.client_for(view, usable=False)
                report = await client.get("/fleet/host", _REPORT)
        except TimeoutError:
            detail = f"no answer within {self.timeout:g} s"
        except StackyardError as exc:
            detail = exc.detail
        else:
            took = self._took[view.id] = time.monotonic() - began
            card, contact = self._answered(view, report, datetime.now(UTC), took * 1000)
            await self.agents.record_reports([contact])
            return card
        self._took[view.id] = time.monotonic() - began
        if view.incompatibility:  # an older agent has no fleet route: say why
            detail = view.incompatibility
        await self.agents.record_report(view, None, detail)
        if (
            view.tunnel == "reconnecting"
            and view.tunnel_since is not None
            and datetime.now(UTC) - view.tunnel_since < RECONNECT_GRACE
        ):
            return _card(view, "reconnecting", detail)
        return _card(view, "incompatible" if view.incompatibility else "offline", detail)
