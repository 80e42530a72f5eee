"""Agents' events reach the central: an agent keeps its last events numbered
(`EventBuffer`) and serves them as a stream of JSON lines from a number on; the central
follows every enabled agent's stream (`AgentEvents`) and takes from it only what an
agent may report of its own host (`Kind.from_agents`), checked and bounded, as that
agent's (the host is the central's say, never the agent's).

The same stream carries the agent's fleet report when the central asks for it
(`reports=1`): sent when it changed, looked at every `fleet.pushed.HEARTBEAT` seconds and
after each event, with a line at least that often (`stackyard.fleet.pushed`)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationError

from stackyard.agents.service import Agents, AgentView
from stackyard.auth.audit import Recorder
from stackyard.errors import NotFound, StackyardError
from stackyard.events import KINDS, Event, EventName, Severity, Sink, clip
from stackyard.fleet.pushed import HEARTBEAT, REFRESH, PushedReports, same_state
from stackyard.fleet.report import HostReport

log = logging.getLogger(__name__)

#: Events an agent keeps for a central that was away.
BUFFER = 1000
#: Seconds between keep-alive lines of a quiet stream (without reports).
KEEPALIVE = 15.0
#: Seconds an agent lets events gather before it looks at its report after them.
EVENTS_SETTLE = 0.5
#: The longest line the central reads from an agent's stream (a host report with hundreds
#: of stacks is tens of KiB).
LINE_LIMIT = 4 * 1024 * 1024
#: Seconds before a stream that ended or failed is followed again.
RETRY = 5.0
#: Seconds before an agent without the stream (an older version) is asked again.
RETRY_OLD = 600.0


class WireEvent(BaseModel):
    """An event as it crosses from an agent: every field bounded."""

    name: EventName
    subject: str = Field(max_length=255)
    text: str = Field(max_length=2000)
    state: str = Field("active", max_length=255)
    stack: str | None = Field(None, max_length=100)
    severity: Severity | None = None
    ended: bool = False
    origin: str | None = Field(None, max_length=100)

    @classmethod
    def of(cls, event: Event) -> WireEvent:
        return cls(
            name=event.name,
            subject=clip(event.subject, 255),
            text=clip(event.text, 2000),
            state=clip(event.state, 255),
            stack=event.stack,
            severity=event.severity,
            ended=event.ended,
            origin=clip(event.origin, 100) if event.origin else None,
        )


class WireLine(BaseModel):
    boot: str = Field(max_length=64)
    seq: int = Field(ge=0)
    event: WireEvent | None = None  # None: a keep-alive
    report: HostReport | None = None  # the agent's fleet report, when it changed


class EventBuffer:
    """An agent's last `BUFFER` events, numbered from 1 since it started (`boot`)."""

    def __init__(self, limit: int = BUFFER) -> None:
        self.boot = secrets.token_hex(8)
        self._events: collections.deque[tuple[int, WireEvent]] = collections.deque(maxlen=limit)
        self._seq = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def add(self, event: Event) -> None:
        """(A `Sink`: from any thread.)"""
        with self._lock:
            self._seq += 1
            self._events.append((self._seq, WireEvent.of(event)))
            waiters = list(self._waiters)
        for loop, waiter in waiters:
            with contextlib.suppress(RuntimeError):  # (a closed loop)
                loop.call_soon_threadsafe(waiter.set)

    def after(self, seq: int) -> list[tuple[int, WireEvent]]:
        with self._lock:
            return [(n, e) for n, e in self._events if n > seq]

    async def follow(
        self,
        after: int,
        boot: str | None,
        report: Callable[[], Awaitable[HostReport]] | None = None,
    ) -> AsyncIterator[bytes]:
        """The events after `after` (all kept, when `boot` is another start's), then each
        as it comes, as JSON lines; a keep-alive line first and when quiet. With `report`
        (this host's fleet report), that too: at once, then when it changed, looked at
        every `HEARTBEAT` seconds and after events, a line at least as often."""
        seq = after if boot == self.boot else 0
        waiter = asyncio.Event()
        entry = (asyncio.get_running_loop(), waiter)
        with self._lock:
            self._waiters.append(entry)
        quiet = KEEPALIVE if report is None else HEARTBEAT
        sent: HostReport | None = None
        sent_at = 0.0
        try:
            yield self._line(seq, None)
            while True:
                waiter.clear()
                for n, event in self.after(seq):
                    seq = n
                    yield self._line(n, event)
                if report is not None:
                    now = time.monotonic()
                    current = await report()
                    if not same_state(current, sent) or now - sent_at >= REFRESH:
                        sent, sent_at = current, now
                        yield self._line(seq, None, current)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), quiet)
                if waiter.is_set():
                    await asyncio.sleep(EVENTS_SETTLE)  # (a burst of events: one look)
                else:
                    yield self._line(seq, None)
        finally:
            with self._lock:
                self._waiters.remove(entry)

    def _line(self, seq: int, event: WireEvent | None, report: HostReport | None = None) -> bytes:
        line = WireLine(boot=self.boot, seq=seq, event=event, report=report)
        return line.model_dump_json().encode() + b"\n"


@dataclass
class _Follow:
    task: asyncio.Task[None]
    updated_at: object


#: The news of an update's end (an agent's auto-update is audited here).
_UPDATES = frozenset({"update_applied", "update_failed", "update_rolled_back"})


class AgentEvents:
    """Follows the event stream of every enabled agent while it runs."""

    def __init__(
        self,
        agents: Agents,
        sink: Sink,
        audit: Recorder | None = None,
        refresh: float = 30.0,
        reports: PushedReports | None = None,
    ) -> None:
        """`reports`: where the agents' pushed fleet reports go (asked for when given)."""
        self.agents = agents
        self.sink = sink
        self.audit = audit
        self.refresh = refresh
        self.reports = reports
        self._follows: dict[int, _Follow] = {}
        self._changed = asyncio.Event()
        agents.changed.append(self._changed.set)
        #: Set when an agent's tunnel comes up: its follow, waiting to try again, goes on.
        self._up: dict[int, asyncio.Event] = {}
        agents.tunnels.came_up.append(lambda agent_id: self._up_event(agent_id).set())

    async def serve(self) -> None:
        try:
            while True:
                self._changed.clear()
                try:
                    views = await asyncio.to_thread(self.agents.all)
                except Exception:
                    log.exception("Reading the agents failed")
                    views = []
                wanted = {v.id: v for v in views if v.enabled}
                for agent_id, follow in list(self._follows.items()):
                    view = wanted.get(agent_id)
                    if view is None or view.updated_at != follow.updated_at:
                        follow.task.cancel()
                        del self._follows[agent_id]
                        self._up.pop(agent_id, None)
                for agent_id, view in wanted.items():
                    if agent_id not in self._follows:
                        task = asyncio.create_task(self._follow(view))
                        self._follows[agent_id] = _Follow(task, view.updated_at)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), self.refresh)
        finally:
            for follow in self._follows.values():
                follow.task.cancel()
            self._follows.clear()

    async def _follow(self, view: AgentView) -> None:
        boot: str | None = None
        seq = 0
        up = self._up_event(view.id)
        while True:
            wait = RETRY
            up.clear()  # (a tunnel that comes up from here on cuts the wait short)
            try:
                async for line in self._lines(view, seq, boot):
                    if line.boot != boot:
                        boot, seq = line.boot, 0
                    seq = max(seq, line.seq)
                    if self.reports is not None:
                        self.reports.heard(view.id, line.report)
                    if line.event is not None:
                        self._take(view, line.event)
            except NotFound:
                wait = RETRY_OLD  # an agent of an older version: no stream
            except StackyardError as exc:
                log.debug("Events of agent %s: %s", view.name, exc.detail)
            except Exception:
                log.exception("Following the events of agent %s failed", view.name)
            finally:
                if self.reports is not None:
                    self.reports.lost(view.id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(up.wait(), wait)

    def _up_event(self, agent_id: int) -> asyncio.Event:
        return self._up.setdefault(agent_id, asyncio.Event())

    async def _lines(self, view: AgentView, seq: int, boot: str | None) -> AsyncIterator[WireLine]:
        client = await self.agents.client_for(view)
        params = [("after", str(seq))] + ([("boot", boot)] if boot else [])
        if self.reports is not None:
            params.append(("reports", "1"))
        answer = await client.request("GET", "/notifications/events", params=params)
        if answer.status_code >= 400:
            await client.read_bytes(answer)  # raises with the agent's detail
            return
        buffer = b""
        async with contextlib.aclosing(answer.body()) as chunks:
            async for chunk in chunks:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                if len(buffer) > LINE_LIMIT:
                    raise StackyardError(f"Agent {view.name!r} sent an event line too long")
                for raw in lines:
                    try:
                        yield WireLine.model_validate_json(raw)
                    except ValidationError:
                        log.warning("Agent %s sent an event this central cannot read", view.name)

    def _take(self, view: AgentView, wire: WireEvent) -> None:
        if not KINDS[wire.name].from_agents:
            log.warning("Agent %s reported %s, which agents do not report", view.name, wire.name)
            return
        self.sink(
            Event(
                wire.name,
                wire.subject,
                clip(wire.text),
                wire.state,
                wire.stack,
                wire.severity,
                wire.ended,
                host_id=view.id,
                host=view.name,
                origin=wire.origin,
            )
        )
        if self.audit is not None and wire.origin == "auto-update" and wire.name in _UPDATES:
            # An agent keeps no audit log: its own auto-updates go in the central's.
            outcome = "success" if wire.name == "update_applied" else "failure"
            target = f"{view.name}: {wire.stack or wire.subject}"
            said = f"{clip(wire.text)}; reported by agent {view.name}"
            asyncio.get_running_loop().run_in_executor(
                None, self.audit, "auto-update", "stack.update", target, outcome, said
            )
