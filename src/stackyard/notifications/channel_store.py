"""The channels notifications are sent through (admins'): their settings, and their
secrets sealed at rest under the instance's secret key (write-only in the API).

A field can become a secret in a later version (the webhook's URL, which holds its
token, was a setting): `seal_settings` moves such values of saved channels into their
sealed secrets once, at start-up, and no answer shows a secret field's value meanwhile."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import NotificationChannel as ChannelRow
from stackyard.db.rows import row_of
from stackyard.errors import Conflict, Invalid, SecretUnreadable, StackyardError
from stackyard.notifications.channels import (
    ChannelKind,
    Target,
    channel_kind,
    secret_fields,
    secret_words,
    split_values,
    target,
)
from stackyard.notifications.rules import forget_channel
from stackyard.sealing import Sealer

log = logging.getLogger(__name__)


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
class Reach:
    """What sending through a channel takes: its kind, every value (secrets too), and
    the secret words its errors must never show."""

    name: str
    kind: ChannelKind
    values: dict[str, str]
    secrets: list[str]

    def target(self) -> Target:
        return target(self.kind, self.values)


def _row(session: Session, channel_id: int) -> ChannelRow:
    return row_of(session, ChannelRow, channel_id, "notification channel")


class Channels:
    def __init__(self, db: Database, secret_key: str) -> None:
        self.db = db
        self._sealer = Sealer(secret_key, "notification-channels")

    def _secrets(self, row: ChannelRow) -> dict[str, str]:
        """The channel's sealed secrets; SecretUnreadable when they were sealed under
        another secret key (a send or a test then says why, never goes without them)."""
        if not row.secrets:
            return {}
        value = self._sealer.unseal_json(row.secrets, f"notification channel {row.name!r}")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def _values(
        self, row: ChannelRow, replacing: Mapping[str, str] | None = None
    ) -> tuple[dict[str, str], dict[str, str]]:
        """(settings, secrets) of a saved channel; a secret field's value still in its
        settings (saved before the field was a secret) counts as a secret. Secrets that
        cannot be read are SecretUnreadable, unless new ones are being given (`replacing`):
        entering them again is the way out, and the edit starts from none."""
        secret = secret_fields(channel_kind(row.kind))
        config = json.loads(row.config or "{}")
        clear = {k: v for k, v in config.items() if k in secret}
        try:
            sealed = self._secrets(row)
        except SecretUnreadable:
            if not replacing or not any(v.strip() for v in replacing.values()):
                raise
            sealed = {}
        return {k: v for k, v in config.items() if k not in secret}, clear | sealed

    def _seal(self, values: Mapping[str, str]) -> str | None:
        return self._sealer.seal_json(dict(values)) if values else None

    def _view(self, row: ChannelRow) -> ChannelView:
        try:
            config, secrets = self._values(row)
        except SecretUnreadable:
            # None that can be used: every use says why, and the form asks for them again.
            config, secrets = json.loads(row.config or "{}"), {}
        return ChannelView(
            id=row.id,
            name=row.name,
            kind=channel_kind(row.kind),
            settings=config,
            secrets_set=sorted(secrets),
            enabled=row.enabled,
            created_at=row.created_at,
            updated_at=row.updated_at,
            last_success_at=row.last_success_at,
            last_error_at=row.last_error_at,
            last_error=row.last_error,
        )

    def _reach(self, row: ChannelRow) -> Reach:
        config, secrets = self._values(row)
        return Reach(
            row.name, channel_kind(row.kind), config | secrets, secret_words(secrets, set(secrets))
        )

    def seal_settings(self) -> int:
        """Start-up: the values of secret fields that saved channels keep in their settings
        (saved before the field was a secret) moved into their sealed secrets, once; how
        many channels changed."""
        moved = 0
        with self.db.session() as session:
            for row in session.scalars(select(ChannelRow)):
                try:
                    secret = secret_fields(channel_kind(row.kind))
                except Invalid:
                    continue
                if not secret & set(json.loads(row.config or "{}")):
                    continue
                try:
                    config, secrets = self._values(row)
                except SecretUnreadable as exc:
                    log.warning("%s: its settings stay as they are", exc.detail)
                    continue
                row.config, row.secrets = json.dumps(config), self._seal(secrets)
                moved += 1
        return moved

    def all(self) -> list[ChannelView]:
        with self.db.session() as session:
            rows = session.scalars(select(ChannelRow).order_by(ChannelRow.name))
            return [self._view(r) for r in rows]

    def get(self, channel_id: int) -> ChannelView:
        with self.db.session() as session:
            return self._view(_row(session, channel_id))

    def listening(self) -> bool:
        """Whether some channel is enabled (else nothing needs looking for)."""
        with self.db.session() as session:
            found = session.scalars(
                select(ChannelRow.id).where(ChannelRow.enabled.is_(True)).limit(1)
            ).first()
            return found is not None

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
        try:
            with self.db.session() as session:
                session.add(row)
                session.flush()
                return self._view(row)
        except IntegrityError as exc:
            raise Conflict(f"A notification channel named {name!r} exists") from exc

    def update(
        self,
        channel_id: int,
        name: str | None,
        settings: Mapping[str, str] | None,
        secrets: Mapping[str, str] | None,
        enabled: bool | None,
    ) -> ChannelView:
        with self.db.session() as session:
            row = _row(session, channel_id)
            kind = channel_kind(row.kind)
            config, kept = self._values(row, secrets)
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

    def delete(self, channel_id: int) -> str:
        """Forget the channel, its queue and history, and take it out of the rules."""
        with self.db.session() as session:
            row = _row(session, channel_id)
            forget_channel(session, channel_id)
            session.delete(row)
            return row.name

    def reach(self, channel_id: int) -> Reach:
        """A saved channel as it would be sent through (also a disabled one: a test)."""
        with self.db.session() as session:
            return self._reach(_row(session, channel_id))

    def reach_unsaved(
        self,
        kind: ChannelKind,
        settings: Mapping[str, str],
        secrets: Mapping[str, str],
        channel_id: int | None = None,
        name: str | None = None,
    ) -> Reach:
        """Settings not saved yet, under the `name` typed for them; with `channel_id` (its
        edit), the secrets left out are the saved channel's, as saving would keep them."""
        config, sealed = split_values(kind, settings, secrets)
        typed = name.strip() if name else ""
        name = typed  # ("": not named yet)
        if channel_id is not None:
            with self.db.session() as session:
                row = _row(session, channel_id)
                if channel_kind(row.kind) != kind:
                    raise Invalid(f"Notification channel {channel_id} is of another kind")
                saved = self._values(row, secrets)[1]
                kept = {k: v for k, v in saved.items() if k not in secrets}
                name = typed or row.name
            sealed = kept | sealed
        return Reach(name, kind, config | sealed, secret_words(sealed, set(sealed)))

    def target_of(self, channel_id: int) -> tuple[Target, list[str]] | None:
        """Where the dispatcher sends a channel's queue; None when the channel is gone,
        disabled or no longer makes a target; SecretUnreadable when its secrets cannot be
        read (its deliveries fail with that, and are tried again)."""
        with self.db.session() as session:
            row = session.get(ChannelRow, channel_id)
            if row is None or not row.enabled:
                return None
            reach = self._reach(row)
        try:
            return reach.target(), reach.secrets
        except StackyardError:
            return None

    def tried(self, channel_id: int, error: str | None) -> None:
        """Keep how a test through a saved channel went."""
        now = utcnow()
        with self.db.session() as session:
            row = _row(session, channel_id)
            if error is None:
                row.last_success_at = now
            else:
                row.last_error, row.last_error_at = error, now
