"""The outbox: events become queued deliveries in the database, so that none is lost to
a restart (the dispatcher beside it, `dispatcher`, sends them).

`record` (in a thread) keeps a subject's last news (`NotificationSubject`): the same news
of the same thing is dropped, the end of a condition is news only when its beginning was;
what is news is matched against the rules and queued per channel."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.models import NotificationDelivery as DeliveryRow
from stackyard.db.models import NotificationEvent as EventRow
from stackyard.db.models import NotificationRule as RuleRow
from stackyard.db.models import NotificationSubject as SubjectRow
from stackyard.events import KINDS, Event, clip
from stackyard.notifications.rules import json_list, matches

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Timing:
    gather: float = 0.3  # seconds a first event waits for others raised with it
    window: float = 2.0  # seconds in which a channel earns one more send (up to BURST)
    retry: float = 5.0  # the first retry's delay, doubled at each failure


def _same(known: str, new: str) -> bool:
    """Whether a condition's state `new` is no news after `known`. "*" is the fleet's word
    for "it holds" (in whatever state), "active" a source's that has no state to tell."""
    return new in (known, "*") or (known == "*" and new == "active")


def _news(session: Session, event: Event) -> bool:
    """Whether `event` is news of its subject (and keep it as the subject's last)."""
    kind = KINDS[event.name]
    if not kind.condition:
        return True
    row = session.get(SubjectRow, event.key)
    now = utcnow()
    if event.ended:
        if row is None or not row.active:
            return False
        row.active, row.state, row.changed_at = False, "ended", now
        return kind.announces_end
    if row is not None and row.active and _same(row.state, event.state):
        return False
    if row is None:
        session.add(
            SubjectRow(
                key=event.key,
                host_id=event.host_id or 0,
                name=event.name,
                state=clip(event.state, 255),
                active=True,
                changed_at=now,
                stack=event.stack,
            )
        )
    else:
        row.state, row.active, row.changed_at = clip(event.state, 255), True, now
        row.stack = event.stack
    return True


@dataclass(frozen=True)
class Holding:
    """A condition last known to hold."""

    host_id: int  # 0: the central's own host
    name: str
    stack: str | None


def active_subjects(db: Database) -> dict[str, Holding]:
    """The conditions last known to hold, by key."""
    with db.session() as session:
        rows = session.execute(
            select(SubjectRow.key, SubjectRow.host_id, SubjectRow.name, SubjectRow.stack).where(
                SubjectRow.active.is_(True)
            )
        ).all()
    return {key: Holding(host_id, name, stack) for key, host_id, name, stack in rows}


def record(db: Database, events: Iterable[Event], gather: float) -> int:
    """Queue what is news among `events` for the channels their rules name; how many
    deliveries were queued."""
    queued = 0
    with db.session() as session:
        enabled = set(
            session.scalars(select(ChannelRow.id).where(ChannelRow.enabled.is_(True))).all()
        )
        if not enabled:
            return 0  # (nobody listens: what holds now is news to the first channel)
        rules = session.scalars(select(RuleRow).where(RuleRow.enabled.is_(True))).all()
        due = utcnow() + timedelta(seconds=gather)
        for event in events:
            if not _news(session, event):
                continue
            channels: set[int] = set()
            for rule in rules:
                if matches(rule, event):
                    named = {c for c in json_list(rule.channels) if isinstance(c, int)}
                    channels |= (named & enabled) if named else enabled
            if not channels:
                continue
            row = EventRow(
                at=event.at,
                name=event.name,
                severity=event.level,
                ended=event.ended,
                host_id=event.host_id,
                host=clip(event.host, 255),
                stack=event.stack,
                subject=clip(event.subject, 255),
                detail=clip(event.text),
            )
            session.add(row)
            session.flush()
            for channel in sorted(channels):
                session.add(
                    DeliveryRow(event_id=row.id, channel_id=channel, status="pending", next_at=due)
                )
                queued += 1
    return queued
