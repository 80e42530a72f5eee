"""The dispatcher beside the outbox: it sends each channel's queued deliveries.

An event goes out within `gather` seconds (with what else is queued by then) while the
channel has sends to spare: `BURST` at once, one more each `window` seconds (a token
bucket). What comes while it has none is gathered and goes out as one digest when it has
(at most `DIGEST_SIZE` events a message): sparse events are sent at once, a flood as a
few digests. A failed send is tried again with a doubling delay up to `MAX_ATTEMPTS`
times, and the channel shows its last error and last success. One channel's slow service
never holds up another's, nor the work that raised the event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select, update

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.models import NotificationDelivery as DeliveryRow
from stackyard.db.models import NotificationEvent as EventRow
from stackyard.errors import StackyardError
from stackyard.events import KINDS, RANK, Severity, event_name, severity
from stackyard.notifications.channels import Target
from stackyard.notifications.delivery import Message, NotifyType, deliver
from stackyard.notifications.links import page_of
from stackyard.notifications.outbox import Timing

log = logging.getLogger(__name__)

#: Events in one digest message (a burst of a thousand is twenty messages).
DIGEST_SIZE = 50
#: Sends a quiet channel has to spare (each may carry a digest of what is queued).
BURST = 3
#: Tries of one delivery before it is given up as failed.
MAX_ATTEMPTS = 8
#: Deliveries sent or given up are kept this long (the history), then removed.
KEEP = timedelta(days=30)


@dataclass(frozen=True)
class Queued:
    delivery: int
    event: EventRow


_TYPES: dict[Severity, NotifyType] = {"critical": "failure", "warning": "warning", "info": "info"}


def compose(events: list[EventRow], base_url: str | None) -> Message:
    """One event as its own message, several as a digest."""

    def link(row: EventRow) -> str:
        page = page_of(row.name, row.stack, row.host_id)
        return f"{base_url.rstrip('/')}{page}" if base_url else page

    def line(row: EventRow) -> str:
        name = event_name(row.name)
        title = KINDS[name].title if name else row.name
        where = f"[{row.host}] " if row.host else ""
        end = "Resolved: " if row.ended else ""
        return f"{end}{where}{title}: {row.detail}"

    worst = max(events, key=lambda r: RANK[severity(r.severity)])
    kind: NotifyType = (
        "success" if all(r.ended for r in events) else _TYPES[severity(worst.severity)]
    )
    payload = {
        "events": [
            {
                "id": r.id,
                "name": r.name,
                "severity": r.severity,
                "ended": r.ended,
                "host": r.host,
                "host_id": r.host_id,
                "stack": r.stack,
                "subject": r.subject,
                "text": r.detail,
                "link": link(r),
                "at": r.at.isoformat(),
            }
            for r in events
        ]
    }
    if len(events) == 1:
        (row,) = events
        return Message(f"Stackyard: {line(row)}"[:250], f"{row.detail}\n{link(row)}", kind, payload)
    body = "\n".join(f"- {line(r)}" for r in events)
    home = f"{base_url.rstrip('/')}/" if base_url else "/"
    return Message(f"Stackyard: {len(events)} events", f"{body}\n{home}", kind, payload)


class Dispatcher:
    """Sends the queued deliveries; `wake` it when some were queued."""

    def __init__(
        self,
        db: Database,
        target_of: Callable[[int], tuple[Target, list[str]] | None],
        timing: Timing,
        base_url: Callable[[], str | None],
    ) -> None:
        self.db = db
        self.target_of = target_of  # channel id -> (target, its secrets), None: gone
        self.timing = timing
        self.base_url = base_url
        self._wake = asyncio.Event()
        self._sending: dict[int, asyncio.Task[None]] = {}
        self._sends: dict[int, tuple[float, float]] = {}  # channel: (sends to spare, at)

    def wake(self) -> None:
        self._wake.set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        next_prune = 0.0
        while True:
            self._wake.clear()
            now = loop.time()
            if now >= next_prune:
                next_prune = now + 3600
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self._prune)
            try:
                due = await asyncio.to_thread(self._due)
            except Exception:
                log.exception("Reading the notification queue failed")
                due = {}
            sleep = 60.0
            wall = utcnow()
            for channel, first in due.items():
                if channel in self._sending:
                    continue
                ready = max((first - wall).total_seconds(), self._spare_in(channel, loop.time()))
                if ready <= 0:
                    self._sending[channel] = asyncio.create_task(self._send(channel))
                else:
                    sleep = min(sleep, ready)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), sleep)

    def _spared(self, channel: int, now: float) -> tuple[float, float]:
        """The sends `channel` has to spare at `now`, and when that was reckoned."""
        spare, at = self._sends.get(channel, (BURST, now))
        earned = (now - at) / self.timing.window if self.timing.window else BURST
        return min(BURST, spare + earned), now

    def _spare_in(self, channel: int, now: float) -> float:
        """Seconds until `channel` has a send to spare (0 or less: it has)."""
        spare, _ = self._spared(channel, now)
        return (1 - spare) * self.timing.window

    async def aclose(self) -> None:
        for task in list(self._sending.values()):
            task.cancel()
        for task in list(self._sending.values()):
            with contextlib.suppress(BaseException):
                await task

    def _due(self) -> dict[int, datetime]:
        with self.db.session() as session:
            rows = session.execute(
                select(DeliveryRow.channel_id, func.min(DeliveryRow.next_at))
                .where(DeliveryRow.status == "pending")
                .group_by(DeliveryRow.channel_id)
            ).all()
        return {channel: first for channel, first in rows}

    async def _send(self, channel: int) -> None:
        loop = asyncio.get_running_loop()
        try:
            queued = await asyncio.to_thread(self._queued, channel)
            try:
                found = await asyncio.to_thread(self.target_of, channel) if queued else None
            except StackyardError as exc:  # its secrets cannot be read: tried again later
                await asyncio.to_thread(
                    self._failed, channel, [q.delivery for q in queued], exc.detail
                )
                return
            if queued and found is None:
                await asyncio.to_thread(self._give_up, [q.delivery for q in queued])
            elif queued and found is not None:
                target, channel_secrets = found
                for start in range(0, len(queued), DIGEST_SIZE):
                    chunk = queued[start : start + DIGEST_SIZE]
                    message = compose([q.event for q in chunk], self.base_url())
                    try:
                        await asyncio.to_thread(deliver, target, message, channel_secrets)
                    except StackyardError as exc:
                        rest = [q.delivery for q in queued[start:]]
                        await asyncio.to_thread(self._failed, channel, rest, exc.detail)
                        break
                    except Exception as exc:  # a service's library failing is a failure too
                        log.exception("Sending to notification channel %s failed", channel)
                        rest = [q.delivery for q in queued[start:]]
                        await asyncio.to_thread(
                            self._failed, channel, rest, f"Internal error: {type(exc).__name__}"
                        )
                        break
                    await asyncio.to_thread(self._sent, channel, [q.delivery for q in chunk])
                spare, _ = self._spared(channel, loop.time())
                self._sends[channel] = (spare - 1, loop.time())
        except Exception:
            log.exception("The notification queue of channel %s failed", channel)
        finally:
            self._sending.pop(channel, None)
            self._wake.set()

    def _queued(self, channel: int) -> list[Queued]:
        with self.db.session() as session:
            rows = session.execute(
                select(DeliveryRow.id, EventRow)
                .join(EventRow, EventRow.id == DeliveryRow.event_id)
                .where(
                    DeliveryRow.channel_id == channel,
                    DeliveryRow.status == "pending",
                    # What is queued goes along (a burst is not cut at its gather time);
                    # a retry waits for its time.
                    or_(DeliveryRow.next_at <= utcnow(), DeliveryRow.attempts == 0),
                )
                .order_by(EventRow.id)
                .limit(DIGEST_SIZE * 20)
            ).all()
            session.expunge_all()
        return [Queued(delivery, event) for delivery, event in rows]

    def _sent(self, channel: int, deliveries: list[int]) -> None:
        now = utcnow()
        message = secrets.token_hex(8)
        with self.db.session() as session:
            session.execute(
                update(DeliveryRow)
                .where(DeliveryRow.id.in_(deliveries))
                .values(
                    status="sent",
                    sent_at=now,
                    error=None,
                    message=message,
                    attempts=DeliveryRow.attempts + 1,
                )
            )
            session.execute(
                update(ChannelRow).where(ChannelRow.id == channel).values(last_success_at=now)
            )

    def _failed(self, channel: int, deliveries: list[int], error: str) -> None:
        log.warning("Notification channel %s: %s", channel, error)
        now = utcnow()
        with self.db.session() as session:
            for row in session.scalars(select(DeliveryRow).where(DeliveryRow.id.in_(deliveries))):
                row.attempts += 1
                row.error = error
                if row.attempts >= MAX_ATTEMPTS:
                    row.status = "failed"
                else:
                    delay = self.timing.retry * 2 ** (row.attempts - 1)
                    row.next_at = now + timedelta(seconds=delay)
            session.execute(
                update(ChannelRow)
                .where(ChannelRow.id == channel)
                .values(last_error=error, last_error_at=now)
            )

    def _give_up(self, deliveries: list[int]) -> None:
        with self.db.session() as session:
            session.execute(
                update(DeliveryRow)
                .where(DeliveryRow.id.in_(deliveries))
                .values(status="failed", error="The channel was disabled or removed")
            )

    def _prune(self) -> None:
        horizon = utcnow() - KEEP
        with self.db.session() as session:
            session.execute(
                delete(DeliveryRow).where(
                    DeliveryRow.status != "pending", DeliveryRow.next_at < horizon
                )
            )
            session.execute(
                delete(EventRow).where(
                    EventRow.at < horizon,
                    ~select(DeliveryRow.id).where(DeliveryRow.event_id == EventRow.id).exists(),
                )
            )
