"""Intake on the central: the events of every host coming in (`emit`, from any thread,
never waiting) and the conditions the fleet sees (`observe`, judged into events), written
to the outbox in batches, the dispatcher woken when some were queued."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable

from stackyard.db.engine import Database
from stackyard.db.models import Agent as AgentRow
from stackyard.events import Event, event_name
from stackyard.fleet.dashboard import Fleet
from stackyard.notifications import outbox
from stackyard.notifications.conditions import observed

log = logging.getLogger(__name__)

#: Events queued in memory before they are written (beyond it the oldest are dropped:
#: only a flood no channel could carry reaches it).
INBOX_LIMIT = 100_000


class Intake:
    def __init__(
        self,
        db: Database,
        gather: float,
        listening: Callable[[], bool],
        queued: Callable[[], None],
        host_name: Callable[[], str] = lambda: "",
    ) -> None:
        """`listening`: whether some channel is enabled; `queued`: called when
        deliveries were queued; `host_name`: the central's own host's name (blocking:
        asked in a thread)."""
        self.db = db
        self.gather = gather
        self.listening = listening
        self.queued = queued
        self.host_name = host_name
        self._inbox: collections.deque[Event] = collections.deque(maxlen=INBOX_LIMIT)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._arrived = asyncio.Event()
        #: Fleet payloads to judge, in order (the oldest dropped beyond a few).
        self._fleets: collections.deque[Fleet] = collections.deque(maxlen=4)

    def emit(self, event: Event) -> None:
        """Queue `event` (from any thread; returns at once)."""
        self._inbox.append(event)
        self._wake()

    def observe(self, fleet: Fleet) -> None:
        """What the fleet sees now (judged in order, off the loop)."""
        self._fleets.append(fleet)
        self._wake()

    def _wake(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._arrived.set)

    def _judge(self, fleet: Fleet) -> list[Event]:
        """The fleet's conditions as events: each that holds, and the end of each last
        known to hold that its host's card covers and no longer shows (nothing while no
        channel listens: what holds then is news to the first one)."""
        if not self.listening():
            return []
        active = outbox.active_subjects(self.db)
        events: list[Event] = []
        for card, holding, covered in observed(fleet):
            events += holding
            keys = {event.key for event in holding}
            for key, known in active.items():
                name = event_name(known.name)
                if (
                    known.host_id != (card.id or 0)
                    or key in keys
                    or name not in covered
                    or (name.startswith("container_") and known.stack is None)
                ):
                    # (The fleet sees the containers of stacks only: what the engine's
                    # events said of another container, they say the end of too.)
                    continue
                subject = key.split("/", 2)[2]
                events.append(
                    Event(name, subject, subject, ended=True, host_id=card.id, host=card.name)
                )
        return events

    async def serve(self) -> None:
        """Write what arrives to the outbox, until cancelled."""
        self._loop = asyncio.get_running_loop()
        self._arrived.set()  # (what was raised before this loop was known)
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            await self._flush()  # what came before a payload is known when it is judged
            while self._fleets:
                fleet = self._fleets.popleft()
                try:
                    self._inbox.extend(await asyncio.to_thread(self._judge, fleet))
                except Exception:
                    log.exception("Judging the fleet's conditions failed")
                await self._flush()

    async def flush(self) -> None:
        """Write what is queued now, without serving (a command's events, before it
        exits: the service sends them)."""
        await self._flush()

    async def _flush(self) -> None:
        while self._inbox:
            batch = [self._inbox.popleft() for _ in range(min(len(self._inbox), 500))]
            try:
                queued = await asyncio.to_thread(self._record, batch)
            except Exception:
                log.exception("Queueing %d notification events failed", len(batch))
                continue
            if queued:
                self.queued()

    def _record(self, events: list[Event]) -> int:
        unnamed = {e.host_id for e in events if not e.host}  # each looked up once a batch
        hosts = {host_id: self._host(host_id) for host_id in unnamed}
        named = [e if e.host else e.on_host(e.host_id, hosts[e.host_id]) for e in events]
        return outbox.record(self.db, named, self.gather)

    def _host(self, host_id: int | None) -> str:
        if host_id is None:
            return self.host_name()
        with self.db.session() as session:
            agent = session.get(AgentRow, host_id)
            return str(agent.name) if agent else f"agent {host_id}"
