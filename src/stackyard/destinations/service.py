"""Destinations kept in the database, and what is done with them.

Settings are stored as JSON, secrets sealed apart (`stackyard.sealing`): they are never
returned (a view says only which are set), never logged, and an update that leaves one
out keeps it (an empty string removes it). An SFTP destination's host key is pinned by
its first successful test (or given when it is created, as a test of the unsaved
settings showed it); changing the host or port forgets it.

The SFTP and S3 modules are imported where a destination of their kind is first used,
not when the service starts: asyncssh and boto3 take 0.8 s and about 50 MiB together,
which a host without such destinations never needs.
"""

from __future__ import annotations

import asyncio
import base64
import secrets as secrets_random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import TypeAdapter
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import Destination as Row
from stackyard.db.rows import row_of
from stackyard.destinations import model, nfs
from stackyard.destinations.base import Destination
from stackyard.destinations.model import (
    SECRET_FIELDS,
    AnySettings,
    FolderLocation,
    NfsSettings,
    RemoteArchive,
    RepositorySettings,
    S3Settings,
    Secrets,
    Settings,
    SftpSettings,
)
from stackyard.destinations.stalls import Watched
from stackyard.docker.engine import Engine
from stackyard.docker.helper import Helpers
from stackyard.errors import Conflict, Invalid, NotFound, SecretUnreadable
from stackyard.sealing import Sealer
from stackyard.sshkeys import HostKey

if TYPE_CHECKING:
    from stackyard.destinations.repository import RepositoryUse
    from stackyard.destinations.restic import Restic

_SETTINGS: TypeAdapter[AnySettings] = TypeAdapter(Settings)


@dataclass(frozen=True)
class DestinationView:
    id: int
    name: str
    settings: AnySettings
    secrets_set: list[str]
    host_key_fingerprint: str | None
    created_at: datetime
    updated_at: datetime | None

    @property
    def type(self) -> str:
        return self.settings.type


@dataclass(frozen=True)
class TestResult:
    ok: bool
    detail: str
    host_key: HostKey | None = None


@dataclass(frozen=True)
class Where:
    """Who keeps backups in a repository: the instance and host its snapshots are tagged
    with, and a private folder for what restic needs on disk for one run."""

    instance: str
    host: Callable[[], str]  # (the engine's name for it: asked when first needed)
    scratch: Path


@dataclass(frozen=True)
class NewRepository:
    """A repository made (or recovered) as a destination: the recovery key is shown
    this once (null when recovered with it)."""

    destination: DestinationView
    recovery_key: str | None
    #: The id restic gives the recovery key (`restic key list` shows it).
    recovery_key_id: str | None


class _Unset:
    pass


UNSET = _Unset()


class Destinations:
    def __init__(
        self,
        db: Database,
        secret_key: str,
        docker_client: Callable[[], Engine],
        helpers: Callable[[], Helpers],
        where: Where | None = None,
    ) -> None:
        """`where`: this instance and host, and its scratch folder (repositories)."""
        self.db = db
        self._sealer = Sealer(secret_key, "destination-secrets")
        self._docker = docker_client
        self._helpers = helpers
        self.where = where or Where(
            "", lambda: "", Path(tempfile.gettempdir()) / "stackyard-restic"
        )

    def clean_up(self) -> None:
        """What a killed restic run left in its private folder (a deploy key, askpass)."""
        shutil.rmtree(self.where.scratch, ignore_errors=True)

    # -- records ------------------------------------------------------------------------
    def _secrets(self, row: Row) -> Secrets:
        """The destination's secrets; SecretUnreadable when they were sealed under
        another secret key."""
        if not row.secrets:
            return Secrets()
        opened = self._sealer.unseal_json(row.secrets, f"destination {row.name!r}")
        return Secrets.model_validate(opened)

    def _seal(self, secrets: Secrets) -> str | None:
        data = secrets.model_dump(exclude_none=True)
        return self._sealer.seal_json(data) if data else None

    def _view(self, row: Row) -> DestinationView:
        settings = _SETTINGS.validate_json(row.config)
        try:
            present = sorted(self._secrets(row).model_dump(exclude_none=True))
        except SecretUnreadable:
            # None that can be used: every use says why (SecretUnreadable), and the
            # form asks for them again, as for a destination without them.
            present = []
        fingerprint = _fingerprint(row.host_key) if row.host_key else None
        return DestinationView(
            row.id, row.name, settings, present, fingerprint, row.created_at, row.updated_at
        )

    def _row(self, session: Session, destination_id: int) -> Row:
        return row_of(session, Row, destination_id, "destination")

    def all(self) -> list[DestinationView]:
        with self.db.session() as session:
            return [self._view(r) for r in session.scalars(select(Row).order_by(Row.name))]

    def get(self, destination_id: int) -> DestinationView:
        with self.db.session() as session:
            return self._view(self._row(session, destination_id))

    def create(
        self,
        name: str,
        settings: AnySettings,
        secrets: Secrets,
        host_key: str | None = None,
    ) -> DestinationView:
        if isinstance(settings, RepositorySettings):
            raise Invalid("A repository is made with POST /api/destinations/repositories")
        return self._save(name, settings, _only_their_secrets(settings.type, secrets), host_key)

    def _save(
        self, name: str, settings: AnySettings, kept: Secrets, host_key: str | None
    ) -> DestinationView:
        _check_secrets(settings, kept)
        row = Row(
            name=_name(name),
            type=settings.type,
            config=settings.model_dump_json(),
            secrets=self._seal(kept),
            host_key=_host_key(settings, host_key),
        )
        with self.db.session() as session:
            session.add(row)
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"A destination named {name!r} exists") from exc
            return self._view(row)

    def update(
        self,
        destination_id: int,
        name: str | None = None,
        settings: AnySettings | None = None,
        secrets: Secrets | None = None,
        host_key: str | _Unset | None = UNSET,
    ) -> DestinationView:
        """Change what is given: secrets left out (None) are kept, "" removes one;
        `host_key` None forgets the pinned key. Secrets sealed under another secret key
        are replaced by those given (SecretUnreadable when none are)."""
        with self.db.session() as session:
            row = self._row(session, destination_id)
            old = _SETTINGS.validate_json(row.config)
            new = settings or old
            try:
                merged = self._secrets(row).model_dump(exclude_none=True)
            except SecretUnreadable:
                if not secrets or not secrets.model_dump(exclude_none=True):
                    raise
                merged = {}
            for field, value in (secrets.model_dump(exclude_unset=True) if secrets else {}).items():
                if value == "":
                    merged.pop(field, None)
                elif value is not None:
                    merged[field] = value
            kept = _only_their_secrets(new.type, Secrets(**merged))
            _check_secrets(new, kept)
            if name is not None:
                row.name = _name(name)
            row.type, row.config = new.type, new.model_dump_json()
            row.secrets = self._seal(kept)
            if not isinstance(host_key, _Unset):
                row.host_key = _host_key(new, host_key)
            elif not _same_server(old, new):
                row.host_key = None
            row.updated_at = utcnow()
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"A destination named {name!r} exists") from exc
            return self._view(row)

    def delete(self, destination_id: int) -> str:
        """Forget the destination (what it holds stays there); its name."""
        with self.db.session() as session:
            row = self._row(session, destination_id)
            if row.type == "nfs":
                nfs.remove_volume(self._docker(), self._helpers().owner, row.id)
            session.delete(row)
            return row.name

    # -- use ----------------------------------------------------------------------------
    def open(self, destination_id: int) -> Destination:
        """The destination, ready to use (an NFS one's volume made or brought up to date)."""
        with self.db.session() as session:
            row = self._row(session, destination_id)
            settings, secrets, host_key = (
                _SETTINGS.validate_json(row.config),
                self._secrets(row),
                row.host_key,
            )
        # Its transfers are ended when they stop moving.
        return Watched(self._build(destination_id, settings, secrets, host_key))

    def _build(
        self,
        destination_id: int,
        settings: AnySettings,
        secrets: Secrets,
        host_key: str | None,
    ) -> Destination:
        if isinstance(settings, SftpSettings):
            from stackyard.destinations.sftp import SftpDestination

            return SftpDestination(settings, secrets, host_key)
        if isinstance(settings, S3Settings):
            from stackyard.destinations.s3 import S3Destination

            return S3Destination(settings, secrets)
        if isinstance(settings, RepositorySettings):
            from stackyard.destinations.repository import RepositoryDestination

            restic = self._restic(settings, secrets, host_key, secrets.repository_key or "")
            restic.key_id = settings.key_id
            where = self.where
            return RepositoryDestination(restic, where.instance, where.host())
        helpers = self._helpers()
        volume = nfs.ensure_volume(self._docker(), helpers.owner, destination_id, settings)
        return nfs.NfsDestination(helpers, volume, settings)

    def _restic(
        self, settings: RepositorySettings, secrets: Secrets, host_key: str | None, key: str
    ) -> Restic:
        """restic for the repository at the settings' location, opened with `key`."""
        from stackyard.destinations.restic import Restic, Ssh

        location = settings.location
        if isinstance(location, FolderLocation):
            return Restic(location.path, key, self.where.scratch, where=location.path)
        if isinstance(location, SftpSettings):
            if host_key is None:
                raise Invalid("The SFTP server's host key is not pinned yet")
            folder = location.folder or "."
            ssh = Ssh(location.host, location.port, location.username, host_key)
            ssh.private_key, ssh.password = secrets.private_key, secrets.password
            where = model.where(location)
            repository = f"sftp:{location.username}@{location.host}:{folder}"
            return Restic(repository, key, self.where.scratch, ssh=ssh, where=where)
        path = "/".join(p for p in (location.bucket, location.prefix) if p)
        env = {
            "AWS_ACCESS_KEY_ID": location.access_key,
            "AWS_SECRET_ACCESS_KEY": secrets.secret_key or "",
            "AWS_DEFAULT_REGION": location.region,
        }
        url = f"s3:{location.endpoint_url.rstrip('/')}/{path}"
        return Restic(url, key, self.where.scratch, env=env, where=model.where(location))

    async def create_repository(
        self, name: str, settings: RepositorySettings, secrets: Secrets, recovery_key: str | None
    ) -> NewRepository:
        """A repository as a destination: made here with this instance's key and a
        recovery key (shown this once), or, given `recovery_key`, an existing one opened
        with it and given a key of this instance's. Nothing is saved when it fails."""
        kept = _only_their_secrets("repository", secrets)
        _check_secrets(settings, kept)
        host_key = None
        location = settings.location
        if isinstance(location, SftpSettings):
            from stackyard.destinations.sftp import fetch_host_key

            host_key = (await fetch_host_key(location)).key
        instance_key = secrets_random.token_urlsafe(32)
        restic = self._restic(settings, kept, host_key, instance_key)
        shown: str | None = None
        shown_id: str | None = None
        if recovery_key is None:
            await restic.init()
            key_id = await restic.current_key()
            shown = new_recovery_key()
            shown_id = await restic.add_key(shown)
        else:
            opener = self._restic(settings, kept, host_key, recovery_key.strip())
            key_id = await opener.add_key(instance_key)
        kept = kept.model_copy(update={"repository_key": instance_key})
        settings = settings.model_copy(update={"key_id": key_id or None})
        view = await asyncio.to_thread(self._save, name, settings, kept, host_key)
        return NewRepository(view, shown, shown_id)

    async def repository_use(self, destination_id: int) -> RepositoryUse:
        """What a repository destination keeps, and what it takes on its storage."""
        from stackyard.destinations.repository import RepositoryDestination

        destination = await asyncio.to_thread(self.open, destination_id)
        inner = destination.inner if isinstance(destination, Watched) else destination
        if not isinstance(inner, RepositoryDestination):
            raise Invalid("Only a repository destination keeps backups deduplicated")
        return await inner.use()

    async def archives(self, destination_id: int) -> list[RemoteArchive]:
        destination = await asyncio.to_thread(self.open, destination_id)
        return await destination.archives()

    async def remote(self, destination_id: int, name: str) -> tuple[str, Destination, int]:
        """An archive the destination holds, before pulling it: the destination's name,
        the opened destination and the archive's size (NotFound when it is not there)."""
        view = self.get(destination_id)
        destination = await asyncio.to_thread(self.open, destination_id)
        found = {a.name: a for a in await destination.archives()}
        if name not in found:
            raise NotFound(f"{name} is not on {view.name}")
        return view.name, destination, found[name].size

    async def delete_archive(self, destination_id: int, name: str) -> None:
        destination = await asyncio.to_thread(self.open, destination_id)
        await destination.delete(name)

    async def test(self, destination_id: int) -> TestResult:
        """Test a saved destination; an SFTP server's key is pinned by its first success."""
        view = self.get(destination_id)
        if isinstance(view.settings, SftpSettings) and view.host_key_fingerprint is None:
            with self.db.session() as session:
                secrets = self._secrets(self._row(session, destination_id))
            found, detail = await _first_contact(view.settings, secrets)
            with self.db.session() as session:
                self._row(session, destination_id).host_key = found.key
            return TestResult(True, f"{detail}. Host key pinned: {found.fingerprint}", found)
        destination = await asyncio.to_thread(self.open, destination_id)
        detail = await destination.test()
        pinned = None
        if isinstance(view.settings, SftpSettings):
            with self.db.session() as session:
                line = self._row(session, destination_id).host_key
            pinned = HostKey(line, _fingerprint(line)) if line else None
        return TestResult(True, detail, pinned)

    async def test_unsaved(self, settings: AnySettings, secrets: Secrets) -> TestResult:
        """Test settings before they are saved (an NFS export cannot be: its volume is
        made when it is saved). For SFTP the server's key is read and shown, not pinned."""
        kept = _only_their_secrets(settings.type, secrets)
        _check_secrets(settings, kept)
        if isinstance(settings, NfsSettings):
            raise Invalid("An NFS destination is tested once it is saved (its volume is made then)")
        if isinstance(settings, RepositorySettings):
            raise Invalid("A repository is tried when it is made (it is made then)")
        if isinstance(settings, SftpSettings):
            found, detail = await _first_contact(settings, kept)
            return TestResult(True, f"{detail}. Host key: {found.fingerprint}", found)
        from stackyard.destinations.s3 import S3Destination

        return TestResult(True, await S3Destination(settings, kept).test())


def new_recovery_key() -> str:
    """A recovery key a person can write down: 240 random bits as 48 base32 letters and
    digits, in twelve groups of four."""
    text = base64.b32encode(secrets_random.token_bytes(30)).decode()
    return "-".join(text[i : i + 4] for i in range(0, len(text), 4))


def _name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise Invalid("A destination's name has 1 to 100 characters")
    return name


def _only_their_secrets(kind: str, secrets: Secrets) -> Secrets:
    data = secrets.model_dump(exclude_none=True)
    return Secrets(**{k: v for k, v in data.items() if k in SECRET_FIELDS[kind] and v})


def _check_secrets(settings: AnySettings, secrets: Secrets) -> None:
    if isinstance(settings, RepositorySettings):
        if not isinstance(settings.location, FolderLocation):
            _check_secrets(settings.location, secrets)
        return
    if isinstance(settings, SftpSettings):
        if not (secrets.password or secrets.private_key):
            raise Invalid("An SFTP destination needs a password or a private key")
        if secrets.private_key:
            from stackyard.destinations.sftp import load_private_key

            load_private_key(secrets.private_key, secrets.passphrase)
    elif isinstance(settings, S3Settings) and not secrets.secret_key:
        raise Invalid("An S3 destination needs its secret key")


def _host_key(settings: AnySettings, line: str | None) -> str | None:
    if line is None:
        return None
    if not isinstance(_server(settings), SftpSettings):
        raise Invalid("Only SFTP destinations have a host key")
    _fingerprint(line)  # Invalid unless it is a public key line
    return line.strip()


def _fingerprint(line: str) -> str:
    from stackyard.sshkeys import fingerprint_of

    return fingerprint_of(line)


async def _first_contact(settings: SftpSettings, secrets: Secrets) -> tuple[HostKey, str]:
    """An SFTP server's host key as it shows it, and a test signed in with it."""
    from stackyard.destinations.sftp import SftpDestination, fetch_host_key

    found = await fetch_host_key(settings)
    return found, await SftpDestination(settings, secrets, found.key).test()


def _server(settings: AnySettings | FolderLocation) -> AnySettings | FolderLocation:
    """Where a destination's data goes: a repository's location, else itself."""
    return settings.location if isinstance(settings, RepositorySettings) else settings


def _same_server(old: AnySettings, new: AnySettings) -> bool:
    old_at, new_at = _server(old), _server(new)
    return (
        isinstance(old_at, SftpSettings)
        and isinstance(new_at, SftpSettings)
        and (old_at.host, old_at.port) == (new_at.host, new_at.port)
    )
