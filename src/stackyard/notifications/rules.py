"""Rules: which events go to which channels (admins'), and whether a rule sends an event.
A first start writes `DEFAULT_RULES`, once (deleting them all is kept)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackyard.db import admin_settings
from stackyard.db.engine import Database
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.models import NotificationRule as RuleRow
from stackyard.db.rows import row_of
from stackyard.errors import Invalid
from stackyard.events import RANK, Event, EventName, Severity, event_name, severity

#: Set once the first start has written the default rules (deleting them all is kept).
DEFAULTS_WRITTEN = "notifications.default_rules"


@dataclass(frozen=True)
class RuleView:
    id: int
    name: str
    enabled: bool
    events: list[EventName]
    min_severity: Severity
    hosts: list[int]
    stacks: list[str]
    channels: list[int]


@dataclass(frozen=True)
class RuleSpec:
    name: str
    enabled: bool = True
    events: tuple[EventName, ...] = ()
    min_severity: Severity = "info"
    hosts: tuple[int, ...] = ()
    stacks: tuple[str, ...] = ()
    channels: tuple[int, ...] = ()


#: The rules of a first start: failures and what needs someone, and new images, to every
#: channel, so that adding a channel is enough.
DEFAULT_RULES = (
    RuleSpec("Failures and warnings", min_severity="warning"),
    RuleSpec("Image updates", events=("stack_update",)),
)


def json_list(text: str) -> list[object]:
    """A rule's list column (`[]` when it holds anything else)."""
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, list):
            return value
    return []


def matches(rule: RuleRow, event: Event) -> bool:
    """Whether `rule` sends `event` (an empty list of a rule matches everything)."""
    events, hosts, stacks = json_list(rule.events), json_list(rule.hosts), json_list(rule.stacks)
    minimum = RANK[severity(rule.min_severity)]
    return (
        rule.enabled
        and (not events or event.name in events)
        and RANK[event.level] >= minimum
        and (not hosts or (event.host_id or 0) in hosts)
        and (not stacks or event.stack in stacks)
    )


def channels_of(rule: RuleRow) -> list[int]:
    return [c for c in json_list(rule.channels) if isinstance(c, int)]


def forget_channel(session: Session, channel_id: int) -> None:
    """The rules that named the channel no longer do (one that named it alone is
    disabled: it would otherwise send to every channel)."""
    for rule in session.scalars(select(RuleRow)):
        named = channels_of(rule)
        if channel_id in named:
            rest = [c for c in named if c != channel_id]
            rule.channels = json.dumps(rest)
            rule.enabled = rule.enabled and bool(rest)


def _view(row: RuleRow) -> RuleView:
    return RuleView(
        id=row.id,
        name=row.name,
        enabled=row.enabled,
        events=[n for e in json_list(row.events) if (n := event_name(str(e)))],
        min_severity=severity(row.min_severity),
        hosts=[h for h in json_list(row.hosts) if isinstance(h, int)],
        stacks=[s for s in json_list(row.stacks) if isinstance(s, str)],
        channels=channels_of(row),
    )


def _fill(row: RuleRow, spec: RuleSpec) -> None:
    row.name, row.enabled, row.min_severity = spec.name, spec.enabled, spec.min_severity
    row.events = json.dumps(list(spec.events))
    row.hosts = json.dumps(list(spec.hosts))
    row.stacks = json.dumps(list(spec.stacks))
    row.channels = json.dumps(list(spec.channels))


def _row(session: Session, rule_id: int) -> RuleRow:
    return row_of(session, RuleRow, rule_id, "notification rule")


def _check_channels(session: Session, spec: RuleSpec) -> None:
    known = set(session.scalars(select(ChannelRow.id)).all())
    unknown = sorted(set(spec.channels) - known)
    if unknown:
        raise Invalid(f"No notification channel {unknown[0]}")


class Rules:
    def __init__(self, db: Database) -> None:
        self.db = db

    def all(self) -> list[RuleView]:
        with self.db.session() as session:
            return [_view(r) for r in session.scalars(select(RuleRow).order_by(RuleRow.id))]

    def create(self, spec: RuleSpec) -> RuleView:
        with self.db.session() as session:
            _check_channels(session, spec)
            row = RuleRow()
            _fill(row, spec)
            session.add(row)
            session.flush()
            return _view(row)

    def update(self, rule_id: int, spec: RuleSpec) -> RuleView:
        with self.db.session() as session:
            row = _row(session, rule_id)
            _check_channels(session, spec)
            _fill(row, spec)
            return _view(row)

    def delete(self, rule_id: int) -> str:
        with self.db.session() as session:
            row = _row(session, rule_id)
            session.delete(row)
            return row.name

    def ensure_defaults(self) -> None:
        with self.db.session() as session:
            if admin_settings.read(session, DEFAULTS_WRITTEN) is not None:
                return
            for spec in DEFAULT_RULES:
                row = RuleRow()
                _fill(row, spec)
                session.add(row)
            admin_settings.write(session, DEFAULTS_WRITTEN, True)
