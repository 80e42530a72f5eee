"""Notifications on the central: its channels and rules (admin's), the events of every
host coming in (`emit`, from any thread, never waiting), the conditions the fleet sees
(`observe`), the outbox and its dispatcher, the history and the test."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import Agent as AgentRow
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.models import NotificationDelivery as DeliveryRow
from stackyard.db.models import NotificationEvent as EventRow
from stackyard.db.models import NotificationRule as RuleRow
from stackyard.db.models import Setting
from stackyard.db.rows import row_of
from stackyard.errors import Conflict, Invalid, StackyardError
from stackyard.fleet.dashboard import Fleet
from stackyard.notifications import outbox
from stackyard.notifications.catalogue import EventName, Severity, event_name, severity
from stackyard.notifications.channels import (
    ChannelKind,
    Target,
    channel_kind,
    secret_words,
    split_values,
    target,
)
from stackyard.notifications.conditions import observed
from stackyard.notifications.delivery import Message, deliver
from stackyard.notifications.events import Event
from stackyard.sealing import Sealer

log = logging.getLogger(__name__)

#: Set once the first start has written the default rules (deleting them all is kept).
DEFAULTS_WRITTEN = "notifications.default_rules"
#: Events queued in memory before they are written (beyond it the oldest are dropped:
#: only a flood no channel could carry reaches it).
INBOX_LIMIT = 100_000


@dataclass(frozen=True)
class ChannelView:
    id: int
    name: str
    kind: ChannelKind
    settings: dict[str, str]
    secrets_set: list[str]
    enabled: bool
    created_at: datetime
    updated_at: datetime | None
    last_success_at: datetime | None
    last_error_at: datetime | None
    last_error: str | None


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


@dataclass(frozen=True)
class TestResult:
    ok: bool
    detail: str


#: The rules of a first start: failures and what needs someone, and new images, to every
#: channel, so that adding a channel is enough.
DEFAULT_RULES = (
    RuleSpec("Failures and warnings", min_severity="warning"),
    RuleSpec("Image updates", events=("stack_update",)),
)


def _status(text: str) -> DeliveryStatus:
    return next((s for s in get_args(DeliveryStatus) if s == text), "failed")


def _json_list(text: str) -> list[object]:
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, list):
            return value
    return []


class Notifications:
    def __init__(
        self,
        db: Database,
        secret_key: str,
        timing: outbox.Timing | None = None,
        base_url: str | None = None,
        host_name: Callable[[], str] = lambda: "",
    ) -> None:
        """`host_name`: the central's own host's name (blocking: asked in a thread)."""
        self.db = db
        self.host_name = host_name
        self._sealer = Sealer(secret_key, "notification-channels")
        self.timing = timing or outbox.Timing()
        self.base_url = base_url
        self.dispatcher = outbox.Dispatcher(db, self._target_of, self.timing, lambda: self.base_url)
        self._inbox: collections.deque[Event] = collections.deque(maxlen=INBOX_LIMIT)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._arrived = asyncio.Event()
        #: Fleet payloads to judge, in order (the oldest dropped beyond a few).
        self._fleets: collections.deque[Fleet] = collections.deque(maxlen=4)
        self._tasks: list[asyncio.Task[None]] = []

    # -- events ---------------------------------------------------------------------
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
        """Write what arrives to the outbox and send it, until cancelled."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self.ensure_default_rules)
        self._arrived.set()  # (what was raised before this loop was known)
        self._tasks = [
            asyncio.create_task(self._write()),
            asyncio.create_task(self.dispatcher.serve()),
        ]
        try:
            await asyncio.gather(*self._tasks)
        finally:
            for task in self._tasks:
                task.cancel()
            await self.dispatcher.aclose()

    async def _write(self) -> None:
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

    async def _flush(self) -> None:
        while self._inbox:
            batch = [self._inbox.popleft() for _ in range(min(len(self._inbox), 500))]
            try:
                queued = await asyncio.to_thread(self._record, batch)
            except Exception:
                log.exception("Queueing %d notification events failed", len(batch))
                continue
            if queued:
                self.dispatcher.wake()

    def _record(self, events: list[Event]) -> int:
        unnamed = {e.host_id for e in events if not e.host}  # each looked up once a batch
        hosts = {host_id: self._host(host_id) for host_id in unnamed}
        named = [e if e.host else e.on_host(e.host_id, hosts[e.host_id]) for e in events]
        return outbox.record(self.db, named, self.timing.gather)

    def _host(self, host_id: int | None) -> str:
        if host_id is None:
            return self.host_name()
        with self.db.session() as session:
            agent = session.get(AgentRow, host_id)
            return str(agent.name) if agent else f"agent {host_id}"

    def listening(self) -> bool:
        """Whether some channel is enabled (else nothing needs looking for)."""
        with self.db.session() as session:
            found = session.scalars(
                select(ChannelRow.id).where(ChannelRow.enabled.is_(True)).limit(1)
            ).first()
            return found is not None

    # -- channels -------------------------------------------------------------------
    def _view(self, row: ChannelRow) -> ChannelView:
        return ChannelView(
            id=row.id,
            name=row.name,
            kind=channel_kind(row.kind),
            settings=json.loads(row.config or "{}"),
            secrets_set=sorted(self._secrets(row)),
            enabled=row.enabled,
            created_at=row.created_at,
            updated_at=row.updated_at,
            last_success_at=row.last_success_at,
            last_error_at=row.last_error_at,
            last_error=row.last_error,
        )

    def _secrets(self, row: ChannelRow) -> dict[str, str]:
        if not row.secrets:
            return {}
        try:
            value = json.loads(self._sealer.decode(row.secrets.encode()))
        except ValueError:
            return {}  # sealed under another secret key: to be entered again
        return value if isinstance(value, dict) else {}

    def _seal(self, values: Mapping[str, str]) -> str | None:
        return self._sealer.encode(json.dumps(dict(values)).encode()).decode() if values else None

    @staticmethod
    def _row(session: Session, channel_id: int) -> ChannelRow:
        return row_of(session, ChannelRow, channel_id, "notification channel")

    def channels(self) -> list[ChannelView]:
        with self.db.session() as session:
            return [
                self._view(r) for r in session.scalars(select(ChannelRow).order_by(ChannelRow.name))
            ]

    def channel(self, channel_id: int) -> ChannelView:
        with self.db.session() as session:
            return self._view(self._row(session, channel_id))

    def create(
        self,
        name: str,
        kind: ChannelKind,
        settings: Mapping[str, str],
        secrets: Mapping[str, str],
        enabled: bool = True,
    ) -> ChannelView:
        config, sealed = split_values(kind, settings, secrets)
        target(kind, config | sealed)  # refused here, not at the first event
        row = ChannelRow(
            name=name,
            kind=kind,
            config=json.dumps(config),
            secrets=self._seal(sealed),
            enabled=enabled,
        )
        return self._save(row, name)

    def update(
        self,
        channel_id: int,
        name: str | None,
        settings: Mapping[str, str] | None,
        secrets: Mapping[str, str] | None,
        enabled: bool | None,
    ) -> ChannelView:
        with self.db.session() as session:
            row = self._row(session, channel_id)
            kind = channel_kind(row.kind)
            config = json.loads(row.config or "{}")
            kept = self._secrets(row)
            new_config, new_secrets = split_values(kind, settings or {}, secrets or {})
            if settings is not None:
                config = new_config
            if secrets is not None:  # left out: kept; empty: removed
                kept = {k: v for k, v in kept.items() if k not in secrets or secrets[k].strip()}
                kept |= new_secrets
            target(kind, config | kept)
            row.config, row.secrets = json.dumps(config), self._seal(kept)
            if name is not None:
                row.name = name
            if enabled is not None:
                row.enabled = enabled
            row.updated_at = utcnow()
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"A notification channel named {row.name!r} exists") from exc
            return self._view(row)

    def _save(self, row: ChannelRow, name: str) -> ChannelView:
        try:
            with self.db.session() as session:
                session.add(row)
                session.flush()
                return self._view(row)
        except IntegrityError as exc:
            raise Conflict(f"A notification channel named {name!r} exists") from exc

    def delete(self, channel_id: int) -> str:
        """Forget the channel, its queue and history; the rules that named it no longer
        do (one that named it alone is disabled: it would otherwise send to every channel)."""
        with self.db.session() as session:
            row = self._row(session, channel_id)
            for rule in session.scalars(select(RuleRow)):
                named = [c for c in _json_list(rule.channels) if isinstance(c, int)]
                if channel_id in named:
                    rest = [c for c in named if c != channel_id]
                    rule.channels = json.dumps(rest)
                    rule.enabled = rule.enabled and bool(rest)
            session.delete(row)
            return row.name

    def _target_of(self, channel_id: int) -> tuple[Target, list[str]] | None:
        with self.db.session() as session:
            row = session.get(ChannelRow, channel_id)
            if row is None or not row.enabled:
                return None
            secrets = self._secrets(row)
            values = json.loads(row.config or "{}") | secrets
        try:
            return target(channel_kind(row.kind), values), secret_words(secrets, set(secrets))
        except StackyardError:
            return None

    # -- tests ----------------------------------------------------------------------
    async def test(self, channel_id: int) -> TestResult:
        """Send a test message through a saved channel; what the service answered."""
        with self.db.session() as session:
            row = self._row(session, channel_id)
            kind = channel_kind(row.kind)
            secrets = self._secrets(row)
            values = json.loads(row.config or "{}") | secrets
            name = row.name
        result = await self._try(kind, values, secret_words(secrets, set(secrets)), name)
        now = utcnow()
        with self.db.session() as session:
            row = self._row(session, channel_id)
            if result.ok:
                row.last_success_at = now
            else:
                row.last_error, row.last_error_at = result.detail, now
        return result

    async def test_unsaved(
        self,
        kind: ChannelKind,
        settings: Mapping[str, str],
        secrets: Mapping[str, str],
        channel_id: int | None = None,
    ) -> TestResult:
        """Try settings not saved yet; with `channel_id` (its edit), the secrets left out
        are the saved channel's, as saving would keep them."""
        config, sealed = split_values(kind, settings, secrets)
        if channel_id is not None:
            with self.db.session() as session:
                row = self._row(session, channel_id)
                if channel_kind(row.kind) != kind:
                    raise Invalid(f"Notification channel {channel_id} is of another kind")
                kept = {k: v for k, v in self._secrets(row).items() if k not in secrets}
            sealed = kept | sealed
        return await self._try(kind, config | sealed, secret_words(sealed, set(sealed)), "unsaved")

    async def _try(
        self, kind: ChannelKind, values: Mapping[str, str], secrets: list[str], name: str
    ) -> TestResult:
        where = target(kind, values)
        message = Message(
            "Stackyard: test message",
            f"Notifications from Stackyard reach {name!r}.",
            "info",
            {"events": [], "test": True},
        )
        try:
            await asyncio.to_thread(deliver, where, message, secrets)
        except StackyardError as exc:
            return TestResult(False, exc.detail)
        return TestResult(True, "Sent: the service accepted the test message")

    # -- rules ----------------------------------------------------------------------
    @staticmethod
    def _rule_view(row: RuleRow) -> RuleView:
        return RuleView(
            id=row.id,
            name=row.name,
            enabled=row.enabled,
            events=[n for e in _json_list(row.events) if (n := event_name(str(e)))],
            min_severity=severity(row.min_severity),
            hosts=[h for h in _json_list(row.hosts) if isinstance(h, int)],
            stacks=[s for s in _json_list(row.stacks) if isinstance(s, str)],
            channels=[c for c in _json_list(row.channels) if isinstance(c, int)],
        )

    @staticmethod
    def _fill(row: RuleRow, spec: RuleSpec) -> None:
        row.name, row.enabled, row.min_severity = spec.name, spec.enabled, spec.min_severity
        row.events = json.dumps(list(spec.events))
        row.hosts = json.dumps(list(spec.hosts))
        row.stacks = json.dumps(list(spec.stacks))
        row.channels = json.dumps(list(spec.channels))

    def rules(self) -> list[RuleView]:
        with self.db.session() as session:
            return [
                self._rule_view(r) for r in session.scalars(select(RuleRow).order_by(RuleRow.id))
            ]

    def _check_channels(self, session: Session, spec: RuleSpec) -> None:
        known = set(session.scalars(select(ChannelRow.id)).all())
        unknown = sorted(set(spec.channels) - known)
        if unknown:
            raise Invalid(f"No notification channel {unknown[0]}")

    def create_rule(self, spec: RuleSpec) -> RuleView:
        with self.db.session() as session:
            self._check_channels(session, spec)
            row = RuleRow()
            self._fill(row, spec)
            session.add(row)
            session.flush()
            return self._rule_view(row)

    @staticmethod
    def _rule_row(session: Session, rule_id: int) -> RuleRow:
        return row_of(session, RuleRow, rule_id, "notification rule")

    def update_rule(self, rule_id: int, spec: RuleSpec) -> RuleView:
        with self.db.session() as session:
            row = self._rule_row(session, rule_id)
            self._check_channels(session, spec)
            self._fill(row, spec)
            return self._rule_view(row)

    def delete_rule(self, rule_id: int) -> str:
        with self.db.session() as session:
            row = self._rule_row(session, rule_id)
            session.delete(row)
            return row.name

    def ensure_default_rules(self) -> None:
        with self.db.session() as session:
            if session.get(Setting, DEFAULTS_WRITTEN) is not None:
                return
            for spec in DEFAULT_RULES:
                row = RuleRow()
                self._fill(row, spec)
                session.add(row)
            session.add(Setting(key=DEFAULTS_WRITTEN, value="1"))

    # -- history --------------------------------------------------------------------
    def deliveries(self, channel_id: int, limit: int = 100) -> list[DeliveryView]:
        with self.db.session() as session:
            self._row(session, channel_id)
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
