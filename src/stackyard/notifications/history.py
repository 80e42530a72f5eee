"""What was sent through a channel: each event's delivery, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from sqlalchemy import select

from stackyard.db.engine import Database
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.models import NotificationDelivery as DeliveryRow
from stackyard.db.models import NotificationEvent as EventRow
from stackyard.db.rows import row_of
from stackyard.events import Severity, severity

DeliveryStatus = Literal["pending", "sent", "failed"]


@dataclass(frozen=True)
class DeliveryView:
    """One event for one channel, and how its delivery went."""

    id: int
    event: str  # an EventName (one an older version knew, maybe)
    severity: Severity
    ended: bool
    host: str
    stack: str | None
    text: str
    at: datetime
    status: DeliveryStatus
    attempts: int
    sent_at: datetime | None
    error: str | None
    message: str | None  # the deliveries sent in one digest share it


def _status(text: str) -> DeliveryStatus:
    return next((s for s in get_args(DeliveryStatus) if s == text), "failed")


def deliveries(db: Database, channel_id: int, limit: int = 100) -> list[DeliveryView]:
    with db.session() as session:
        row_of(session, ChannelRow, channel_id, "notification channel")
        rows = session.execute(
            select(DeliveryRow, EventRow)
            .join(EventRow, EventRow.id == DeliveryRow.event_id)
            .where(DeliveryRow.channel_id == channel_id)
            .order_by(DeliveryRow.id.desc())
            .limit(limit)
        ).all()
        return [
            DeliveryView(
                id=d.id,
                event=e.name,
                severity=severity(e.severity),
                ended=e.ended,
                host=e.host,
                stack=e.stack,
                text=e.detail,
                at=e.at,
                status=_status(d.status),
                attempts=d.attempts,
                sent_at=d.sent_at,
                error=d.error,
                message=d.message,
            )
            for d, e in rows
        ]
