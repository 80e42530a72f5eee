"""Mapped tables. Columns added later must be nullable or carry a server default, so
that start-up reconciliation can add them to an existing database."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from stackyard.clock import utcnow
from stackyard.db.types import UTCDateTime


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), server_default=text("'viewer'"))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Signed in with the one-time password printed at first start: nudged to change it.
    password_change_due: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=text("false")
    )
    #: Set by an admin; what an identity provider's verified email may link an account by.
    email: Mapped[str | None] = mapped_column(String(255))
    #: "<issuer> <sub>" of the identity provider account this user signs in as.
    oidc_subject: Mapped[str | None] = mapped_column(String(512), index=True, unique=True)
    #: Two-factor sign-in (`stackyard.auth.totp`): the sealed secret once enrolled, the
    #: one being enrolled, the last time step used (no code works twice), the hashes of
    #: the unused recovery codes (a JSON list), and whether an admin requires it.
    totp_secret: Mapped[str | None] = mapped_column(Text)
    totp_pending: Mapped[str | None] = mapped_column(Text)
    totp_last_step: Mapped[int | None] = mapped_column(BigInteger)
    totp_recovery: Mapped[str | None] = mapped_column(Text)
    totp_required: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=text("false")
    )


class LoginSession(Base):
    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    client_ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(255))
    #: The identity provider's ID token (sealed) for a session begun there: the hint its
    #: sign-out asks for.
    id_token: Mapped[str | None] = mapped_column(Text)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: A token minted on a sign-in at the identity provider ends with it (`auth.sessions`);
    #: None: until revoked.
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str | None] = mapped_column(String(255))
    outcome: Mapped[str] = mapped_column(String(16))
    detail: Mapped[str | None] = mapped_column(Text)


class Agent(Base):
    """A remote host, reached directly or through the tunnel it dials (`kind`).
    `token_encrypted` is sealed (`stackyard.sealing`); `certificate` is
    the pinned TLS certificate (PEM) of an HTTPS agent, or `ca_certificate` the CA it is
    trusted by. `version`, `capabilities` (JSON), `last_seen_at` and `last_error` are
    what the last contact found."""

    __tablename__ = "agents"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    url: Mapped[str] = mapped_column(String(500))
    token_encrypted: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    version: Mapped[str | None] = mapped_column(String(64))
    enabled: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    certificate: Mapped[str | None] = mapped_column(Text)
    ca_certificate: Mapped[str | None] = mapped_column(Text)
    capabilities: Mapped[str | None] = mapped_column(Text)
    last_error: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: direct: the central connects to `url`; tunnel: the agent dials the central.
    kind: Mapped[str] = mapped_column(String(16), server_default=text("'direct'"))
    #: A tunnel agent's SSH key (OpenSSH public key line), pinned when it enrolled, and
    #: the new one of a rotation under way.
    public_key: Mapped[str | None] = mapped_column(Text)
    pending_key: Mapped[str | None] = mapped_column(Text)
    #: The one-time enrolment token (its SHA-256) and when it expires; null once used.
    enrol_token_hash: Mapped[str | None] = mapped_column(String(64))
    enrol_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Destination(Base):
    """A backup destination: `config` its settings (JSON, no secret), `secrets` its
    credentials sealed (`stackyard.sealing`), `host_key` the pinned SSH host key."""

    __tablename__ = "destinations"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    type: Mapped[str] = mapped_column(String(16))
    config: Mapped[str] = mapped_column(Text, server_default=text("'{}'"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    secrets: Mapped[str | None] = mapped_column(Text)
    host_key: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Schedule(Base):
    """A backup schedule, or a schedule of restore drills (`kind`). `stacks`: a JSON list
    of stack ids, null for every stack (`stack_id`, from before schedules covered several
    stacks, mirrors it: `*` or the first id). Runs are claimed by moving `next_run_at` in
    one conditional UPDATE, and held by `lease_until` (by the service `lease_holder`), so
    that a run never starts twice, also across services sharing one database."""

    __tablename__ = "schedules"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    stack_id: Mapped[str] = mapped_column(String(100))
    agent_id: Mapped[int | None] = mapped_column(
        ForeignKey("agents.id", ondelete="CASCADE"), index=True
    )
    destination_id: Mapped[int | None] = mapped_column(
        ForeignKey("destinations.id", ondelete="SET NULL")
    )
    cron: Mapped[str] = mapped_column(String(100))
    retention: Mapped[int] = mapped_column(Integer, server_default=text("7"))
    enabled: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status: Mapped[str | None] = mapped_column(String(16))
    stacks: Mapped[str | None] = mapped_column(Text)
    capture: Mapped[str | None] = mapped_column(Text)
    keep_daily: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    keep_weekly: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    keep_monthly: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    timezone: Mapped[str | None] = mapped_column(String(64))
    next_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_holder: Mapped[str | None] = mapped_column(String(64))
    #: backup, drill (a restore drill of each stack's latest backup), or prune (the
    #: host's disk, with `prune_options`).
    kind: Mapped[str] = mapped_column(String(16), server_default=text("'backup'"))
    settle_seconds: Mapped[int] = mapped_column(Integer, server_default=text("30"))
    prune_options: Mapped[str | None] = mapped_column(Text)


class ScheduleRun(Base):
    """One run of a schedule for one stack (a run over three stacks is three rows)."""

    __tablename__ = "schedule_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    schedule_id: Mapped[int] = mapped_column(
        ForeignKey("schedules.id", ondelete="CASCADE"), index=True
    )
    stack_id: Mapped[str] = mapped_column(String(100))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str] = mapped_column(String(16))
    archive: Mapped[str | None] = mapped_column(String(255))
    size: Mapped[int | None] = mapped_column(BigInteger)
    pruned: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    error: Mapped[str | None] = mapped_column(Text)


class Setting(Base):
    """One admin setting (`stackyard.db.admin_settings`): `value` its JSON, secrets left
    out, `secret` its secret part as sealed JSON (`stackyard.sealing`), if it has one."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    secret: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class NotificationChannel(Base):
    """Where notifications go: `kind` (ntfy, email, webhook, ...), `config` its settings
    (JSON, no secret), `secrets` sealed (`stackyard.sealing`). `last_*` say how its
    last delivery went."""

    __tablename__ = "notification_channels"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    config: Mapped[str] = mapped_column(Text, server_default=text("'{}'"))
    secrets: Mapped[str | None] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_success_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)


class NotificationRule(Base):
    """Which events go to which channels. Lists are JSON; an empty list matches all."""

    __tablename__ = "notification_rules"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    enabled: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    events: Mapped[str] = mapped_column(Text, server_default=text("'[]'"))
    min_severity: Mapped[str] = mapped_column(String(16), server_default=text("'info'"))
    hosts: Mapped[str] = mapped_column(Text, server_default=text("'[]'"))
    stacks: Mapped[str] = mapped_column(Text, server_default=text("'[]'"))
    channels: Mapped[str] = mapped_column(Text, server_default=text("'[]'"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class NotificationEvent(Base):
    """An event that some channel is to hear of (kept with its deliveries)."""

    __tablename__ = "notification_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    name: Mapped[str] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16))
    ended: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    host_id: Mapped[int | None] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(String(255), server_default=text("''"))
    stack: Mapped[str | None] = mapped_column(String(100))
    subject: Mapped[str] = mapped_column(String(255))
    detail: Mapped[str] = mapped_column(Text)
    # (A `link` column of earlier versions stays in their databases, unused: the page
    # is made when a message is composed, notifications/links.py.)


class NotificationDelivery(Base):
    """One event for one channel: queued ("pending") until sent, or "failed" when every
    try has failed. `message` groups the deliveries sent as one digest."""

    __tablename__ = "notification_deliveries"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(
        ForeignKey("notification_events.id", ondelete="CASCADE"), index=True
    )
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("notification_channels.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    next_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str | None] = mapped_column(String(32))


class NotificationSubject(Base):
    """The last news of one thing (`Event.key`): sent once until it changes."""

    __tablename__ = "notification_subjects"

    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    host_id: Mapped[int] = mapped_column(Integer, index=True)  # 0: the central's host
    name: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    stack: Mapped[str | None] = mapped_column(String(100))  # what it is about is the stack's
