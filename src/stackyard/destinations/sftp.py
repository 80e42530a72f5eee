"""SFTP destinations (asyncssh): any SSH server with SFTP, a Hetzner Storage Box on port
23 included.

The server's host key is pinned: `fetch_host_key` reads the key a server offers (before
any credential is sent), the first test stores it, and every later connection accepts
that key only; a server showing another one is refused before we authenticate. No
`~/.ssh/config`, agent or default key of the service's user is ever used. Uploads go to a
hidden temporary name in the same folder and are renamed into place with
`posix-rename@openssh.com` (plain SFTPv3 rename where a server lacks it; we never rename
over an existing file). asyncssh's errors are classified here.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncssh

from stackyard.backups.names import is_archive_name
from stackyard.destinations.base import (
    Destination,
    checked_name,
    is_stale_partial,
    newest_first,
    partial_name,
    probe_name,
)
from stackyard.destinations.model import Progress, RemoteArchive, Secrets, SftpSettings
from stackyard.errors import (
    Conflict,
    DestinationDenied,
    DestinationError,
    DestinationUnreachable,
    Invalid,
    NotFound,
    StackyardError,
)
from stackyard.sshkeys import HostKey, server_host_key

CONNECT_TIMEOUT = 15.0
# AES-GCM first: with AES-NI it moves archives about twice as fast as asyncssh's
# ChaCha20-Poly1305 (bench/bench_destinations.py); a server without it falls back to the
# rest of asyncssh's defaults.
CIPHERS = "^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
# Requests in flight per transfer: enough to fill a fast link, and a bounded buffer
# (16 blocks of at most 255 KiB with OpenSSH) in the service's memory.
IN_FLIGHT = 16


def load_private_key(text: str, passphrase: str | None) -> asyncssh.SSHKey:
    """The private key of an SFTP destination; Invalid when it cannot be read."""
    try:
        return asyncssh.import_private_key(text.strip() + "\n", passphrase or None)
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError, ValueError) as exc:
        raise Invalid(f"The private key cannot be read: {exc}") from exc


async def fetch_host_key(settings: SftpSettings) -> HostKey:
    """The host key the server offers now (no credential is sent to read it)."""
    try:
        key = await server_host_key(settings.host, settings.port, CONNECT_TIMEOUT)
    except (OSError, TimeoutError, asyncssh.Error) as exc:
        raise _classified(exc, settings) from exc
    if key is None:
        raise DestinationError(f"{settings.host}:{settings.port} offered no host key")
    return key


def _classified(exc: BaseException, settings: SftpSettings) -> StackyardError:
    where = f"{settings.host}:{settings.port}"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return DestinationDenied(
            f"The host key of {where} is not the pinned one: the server changed its key, or "
            "something else answers in its place. Check the new fingerprint with the server's "
            "owner, then forget the pinned key and test again"
        )
    if isinstance(exc, asyncssh.PermissionDenied):
        return DestinationDenied(
            f"{where} refused user {settings.username!r}: check the password or the key"
        )
    if isinstance(exc, asyncssh.SFTPPermissionDenied):
        return DestinationDenied(f"Permission denied on {where}: {exc.reason}")
    if isinstance(exc, asyncssh.SFTPNoConnection | asyncssh.SFTPConnectionLost):
        return DestinationUnreachable(f"The connection to {where} was lost: {exc.reason}")
    if isinstance(exc, asyncssh.SFTPNoSuchFile):
        return DestinationError(f"Not found on {where}: {exc.reason}")
    if isinstance(exc, asyncssh.SFTPError):
        return DestinationError(f"SFTP error from {where}: {exc.reason}")
    if isinstance(exc, TimeoutError):
        return DestinationUnreachable(f"{where} did not answer within {CONNECT_TIMEOUT:g} s")
    if isinstance(exc, asyncssh.DisconnectError | asyncssh.ConnectionLost):
        return DestinationUnreachable(f"The connection to {where} was lost: {exc.reason}")
    if isinstance(exc, OSError):
        return DestinationUnreachable(f"{where} cannot be reached: {exc.strerror or exc}")
    return DestinationError(f"SFTP to {where} failed: {exc}")


class SftpDestination(Destination):
    def __init__(self, settings: SftpSettings, secrets: Secrets, host_key: str | None) -> None:
        self.settings = settings
        self.secrets = secrets
        self.host_key = host_key

    @property
    def folder(self) -> str:
        return self.settings.folder or "."

    def _remote(self, name: str) -> str:
        return posixpath.join(self.folder, name)

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[asyncssh.SFTPClient]:
        settings, secrets = self.settings, self.secrets
        if self.host_key is None:
            await fetch_host_key(settings)  # a server that cannot be reached says so
            raise DestinationDenied(
                f"The host key of {settings.host}:{settings.port} is not pinned yet: test the "
                "destination to see it and pin it"
            )
        keys = (
            [load_private_key(secrets.private_key, secrets.passphrase)]
            if secrets.private_key
            else []
        )
        try:
            async with (
                asyncssh.connect(
                    settings.host,
                    settings.port,
                    username=settings.username,
                    password=secrets.password,
                    client_keys=keys,
                    known_hosts=([asyncssh.import_public_key(self.host_key)], [], []),
                    agent_path=None,
                    config=None,
                    encryption_algs=CIPHERS,
                    connect_timeout=CONNECT_TIMEOUT,
                    login_timeout=CONNECT_TIMEOUT,
                    keepalive_interval=30,
                    keepalive_count_max=4,
                ) as connection,
                connection.start_sftp_client() as sftp,
            ):
                yield sftp
        except (OSError, TimeoutError, asyncssh.Error) as exc:
            raise _classified(exc, settings) from exc

    async def test(self) -> str:
        async with self._session() as sftp:
            if self.settings.folder:
                await sftp.makedirs(self.folder, exist_ok=True)
            probe = self._remote(probe_name())
            async with sftp.open(probe, "wb") as handle:
                await handle.write(b"stackyard\n")
            await sftp.remove(probe)
            found = await self._listing(sftp)
        return (
            f"Signed in to {self.settings.host}:{self.settings.port} as "
            f"{self.settings.username}; the folder {self.folder} is writable and holds "
            f"{len(found)} Stackyard archives"
        )

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        final = self._remote(checked_name(name))
        async with self._session() as sftp:
            if self.settings.folder:
                await sftp.makedirs(self.folder, exist_ok=True)
            if await sftp.exists(final):
                raise Conflict(f"{name} is already on the destination")
            await self._sweep(sftp)
            partial = self._remote(partial_name(name))
            try:
                await sftp.put(
                    str(path),
                    partial,
                    max_requests=IN_FLIGHT,
                    progress_handler=lambda _src, _dst, done, _total: progress(done),
                )
                try:
                    await sftp.posix_rename(partial, final)
                except asyncssh.SFTPOpUnsupported:
                    await sftp.rename(partial, final)
            except BaseException:
                with contextlib.suppress(Exception):
                    await asyncio.shield(sftp.remove(partial))
                raise

    async def _sweep(self, sftp: asyncssh.SFTPClient) -> None:
        now = datetime.now(UTC)
        for entry in await sftp.readdir(self.folder):
            name = str(entry.filename)
            modified = datetime.fromtimestamp(entry.attrs.mtime or 0, UTC)
            if is_stale_partial(name, modified, now):
                with contextlib.suppress(asyncssh.SFTPError):
                    await sftp.remove(self._remote(name))

    async def archives(self) -> list[RemoteArchive]:
        async with self._session() as sftp:
            return await self._listing(sftp)

    async def _listing(self, sftp: asyncssh.SFTPClient) -> list[RemoteArchive]:
        try:
            entries = await sftp.readdir(self.folder)
        except asyncssh.SFTPNoSuchFile:
            return []  # nothing pushed yet
        found = [
            RemoteArchive(
                str(e.filename), e.attrs.size or 0, datetime.fromtimestamp(e.attrs.mtime or 0, UTC)
            )
            for e in entries
            if e.attrs.type == asyncssh.FILEXFER_TYPE_REGULAR and is_archive_name(str(e.filename))
        ]
        return newest_first(found)

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        remote = self._remote(checked_name(name))
        async with self._session() as sftp:
            try:
                await sftp.get(
                    remote,
                    str(target),
                    max_requests=IN_FLIGHT,
                    progress_handler=lambda _src, _dst, done, _total: progress(done),
                )
            except asyncssh.SFTPNoSuchFile as exc:
                raise NotFound(f"{name} is not on the destination") from exc

    async def delete(self, name: str) -> None:
        remote = self._remote(checked_name(name))
        async with self._session() as sftp:
            try:
                await sftp.remove(remote)
            except asyncssh.SFTPNoSuchFile as exc:
                raise NotFound(f"{name} is not on the destination") from exc
