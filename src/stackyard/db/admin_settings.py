"""One home for what admins set: the identity provider, the registry logins, and the
marks the service keeps for itself (the default notification rules written once).

A setting is a named record in the `settings` table: its JSON `value`, secrets left out,
and its secret part sealed apart (`stackyard.sealing`, under a key of the record's own),
so that what is not secret reads without the secret key, and a secret that cannot be
opened is `SecretUnreadable` where it is needed, never an empty value.

`read` and `write` work in a caller's session (a mark written in the transaction of what
it marks); `AdminSettings` opens its own sessions and seals and opens the secrets.
Settings that lived in files of the data folder before come in through `adopt`, once."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import Setting
from stackyard.errors import SecretUnreadable
from stackyard.sealing import Sealer

log = logging.getLogger(__name__)

#: Longest name of a setting (the `settings.key` column).
MAX_NAME = 100


@dataclass(frozen=True)
class Stored:
    """A setting as stored: `sealed` is its secret part still sealed (None: it has none)."""

    name: str
    value: Any
    sealed: str | None


def _check_name(name: str) -> None:
    if not 1 <= len(name) <= MAX_NAME:
        raise ValueError(f"a setting's name has 1 to {MAX_NAME} characters: {name[:120]!r}")


def _stored(row: Setting) -> Stored:
    return Stored(row.key, json.loads(row.value), row.secret)


def read(session: Session, name: str) -> Stored | None:
    """The setting `name` (None when there is none), its secret still sealed."""
    row = session.get(Setting, name)
    return None if row is None else _stored(row)


def write(session: Session, name: str, value: Any, sealed: str | None = None) -> None:
    """Store (or replace) the setting `name`: `value` JSON, `sealed` its secret part as
    `Sealer.seal_json` made it (None: no secret)."""
    _check_name(name)
    row = session.get(Setting, name)
    if row is None:
        row = Setting(key=name)
        session.add(row)
    row.value, row.secret, row.updated_at = json.dumps(value), sealed, utcnow()


class AdminSettings:
    def __init__(self, db: Database, secret_key: str) -> None:
        self.db = db
        self._secret_key = secret_key
        self._sealers: dict[str, Sealer] = {}

    def _sealer(self, name: str) -> Sealer:
        if name not in self._sealers:
            self._sealers[name] = Sealer(self._secret_key, f"settings/{name}")
        return self._sealers[name]

    # -- reading ----------------------------------------------------------------------
    def get(self, name: str) -> Stored | None:
        with self.db.session() as session:
            return read(session, name)

    def under(self, prefix: str) -> list[Stored]:
        """The settings whose names begin with `prefix`, by name."""
        with self.db.session() as session:
            rows = session.scalars(
                select(Setting).where(Setting.key.startswith(prefix, autoescape=True))
            )
            return sorted((_stored(row) for row in rows), key=lambda s: s.name)

    def secret(self, stored: Stored, what: str) -> Any:
        """The setting's secret part, opened (None when it has none). SecretUnreadable,
        naming `what` ("the identity provider"), when it was sealed under another secret
        key."""
        if stored.sealed is None:
            return None
        return self._sealer(stored.name).unseal_json(stored.sealed, what)

    # -- changing ---------------------------------------------------------------------
    def put(self, name: str, value: Any, secret: Any = None) -> None:
        """Store (or replace) the setting; `secret` (None: none) is sealed apart."""
        sealed = None if secret is None else self._sealer(name).seal_json(secret)
        with self.db.session() as session:
            write(session, name, value, sealed)

    def put_value(self, name: str, value: Any) -> None:
        """Store (or replace) the setting's value; its secret part stays as it is, sealed
        and unopened (so a secret sealed under another key is neither read nor lost)."""
        with self.db.session() as session:
            stored = read(session, name)
            write(session, name, value, stored.sealed if stored else None)

    def delete(self, name: str) -> bool:
        """Forget the setting; whether there was one."""
        with self.db.session() as session:
            row = session.get(Setting, name)
            if row is None:
                return False
            session.delete(row)
            return True

    # -- settings from the files of earlier versions ----------------------------------
    def adopt(self, records: Mapping[str, tuple[Any, Any]]) -> bool:
        """Store `records` (name -> (value, secret)) in one transaction, then read each
        back: True when every one reads back as it was given, so that the file they came
        from may go. A record of the same name is replaced: the file is what was in force
        until it is removed."""
        for name in records:
            _check_name(name)
        sealed = {
            name: None if secret is None else self._sealer(name).seal_json(secret)
            for name, (_, secret) in records.items()
        }
        with self.db.session() as session:
            for name, (value, _) in records.items():
                write(session, name, value, sealed[name])
        for name, (value, secret) in records.items():
            stored = self.get(name)
            try:
                same = (
                    stored is not None
                    and stored.value == value
                    and self.secret(stored, name) == secret
                )
            except SecretUnreadable:
                same = False
            if not same:
                log.error("The setting %s did not read back as it was written", name)
                return False
        return True
