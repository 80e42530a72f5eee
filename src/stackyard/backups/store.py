"""Archives kept on this host: `<data>/backups/*.tar` (a private folder). Listed with
what their manifests say, downloaded, deleted, uploaded (an archive made elsewhere:
streamed to a temporary file, checked through, then named as archives are named), and
checked on demand. Names never leave the folder; temporary files never outlive a call."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import itertools
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from stackyard.backups.archive import ArchiveReader, check_all
from stackyard.backups.model import Manifest
from stackyard.backups.names import SUFFIX, archive_name
from stackyard.errors import Conflict, Invalid, NotFound
from stackyard.fs.at import Fd, rename_at, write_all

#: Largest archive accepted by upload (bytes); the disk is the real limit.
MAX_UPLOAD = 1 << 44
_PARTIAL = ".partial-"


@dataclass(frozen=True)
class ArchiveInfo:
    name: str
    size: int
    stack_id: str | None
    host: str | None
    created_at: datetime | None
    format_version: int | None
    assets: list[str]
    error: str | None = None


@dataclass(frozen=True)
class CheckedMember:
    member: str
    files: int
    bytes: int
    #: Its device nodes and setuid/setgid files (a restore writes them outside volumes
    #: only when asked for).
    special: list[str]


@dataclass(frozen=True)
class VerifyReport:
    name: str
    ok: bool
    members: list[CheckedMember]
    error: str | None


class ArchiveStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _ready(self) -> Path:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.folder

    def path(self, name: str) -> Path:
        """An archive of the folder by name (NotFound otherwise; names never leave it)."""
        if not self.has(name):
            raise NotFound(f"No archive {name!r}")
        return self.folder / name

    def has(self, name: str) -> bool:
        """Whether the folder holds an archive `name` (Invalid for a name that is none)."""
        if "/" in name or name.startswith(".") or not name.endswith(SUFFIX) or "\0" in name:
            raise Invalid(f"{name!r} is not an archive name")
        return (self.folder / name).is_file()

    def keep(self, temporary: Path, name: str) -> Path:
        """The finished `temporary` under `name`, or, when an archive has that name,
        under the first free `<name>-2`, `-3`, ...: never over another archive. Kept
        archives are the owner's alone (0600: they hold the stacks' `.secrets`)."""
        folder = self._ready()
        with Fd(os.open(folder, os.O_RDONLY | os.O_DIRECTORY)) as fd:
            os.chmod(temporary.name, 0o600, dir_fd=fd)
            for n in itertools.count(1):
                candidate = name if n == 1 else name.replace(SUFFIX, f"-{n}{SUFFIX}")
                try:
                    rename_at(fd, temporary.name, fd, candidate, replace=False)
                except FileExistsError:
                    continue
                os.fsync(fd)
                return folder / candidate
        raise AssertionError("unreachable")

    def temporary(self, name: str) -> Path:
        return self._ready() / f".{name}{_PARTIAL}{secrets.token_hex(6)}"

    def info(self, path: Path) -> ArchiveInfo:
        size = path.stat().st_size
        try:
            with ArchiveReader(path) as reader:
                m = reader.manifest
                captured = [a.key for a in m.assets if a.captured]
                return ArchiveInfo(
                    path.name, size, m.stack_id, m.host, m.created_at, m.format_version, captured
                )
        except Invalid as exc:
            return ArchiveInfo(path.name, size, None, None, None, None, [], exc.detail)

    def list(self) -> list[ArchiveInfo]:
        """Newest first; an archive that cannot be read is listed with why."""
        if not self.folder.is_dir():
            return []
        found = [
            self.info(p)
            for p in self.folder.iterdir()
            if p.is_file() and p.name.endswith(SUFFIX) and not p.name.startswith(".")
        ]
        return sorted(found, key=lambda a: (a.created_at is None, a.created_at), reverse=True)

    def names(self) -> builtins.list[str]:
        """The archives' names (without reading them)."""
        if not self.folder.is_dir():
            return []
        return sorted(
            e.name
            for e in os.scandir(self.folder)
            if e.name.endswith(SUFFIX) and not e.name.startswith(".") and e.is_file()
        )

    def delete(self, name: str) -> None:
        self.path(name).unlink()

    def sweep(self) -> None:
        """Temporary files a crash left behind."""
        if self.folder.is_dir():
            for leftover in self.folder.glob(f".*{_PARTIAL}*"):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def verify(self, name: str) -> VerifyReport:
        """Every member read through: checksums, and each entry safe to restore."""
        path = self.path(name)
        try:
            with ArchiveReader(path) as reader:
                checked = [
                    CheckedMember(member, scan.files, reader.size(member), scan.special)
                    for member, scan in check_all(reader)
                ]
        except Invalid as exc:
            return VerifyReport(name, False, [], exc.detail)
        return VerifyReport(name, True, checked, None)

    async def upload(self, body: AsyncIterator[bytes], keep_both: bool = False) -> ArchiveInfo:
        """An archive made elsewhere, streamed in, checked through, then named as
        archives are named; nothing is kept of a bad one. When an archive of that name is
        here already, Conflict (nothing kept), unless `keep_both`: then it is kept beside
        it under the first free `<name>-2`, ..."""
        temporary = self.temporary("upload")
        size = 0
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                async for chunk in body:
                    size += len(chunk)
                    if size > MAX_UPLOAD:
                        raise Invalid("The archive is too large")
                    await asyncio.to_thread(write_all, fd, chunk)
                os.fsync(fd)
            finally:
                os.close(fd)
            if size == 0:
                raise Invalid("The upload was empty")
            manifest = await asyncio.to_thread(_checked_manifest, temporary)
            name = archive_name(manifest.stack_id, manifest.host or "uploaded", manifest.created_at)
            if not keep_both and self.has(name):
                raise Conflict(
                    f"{name} is already on this host (the same backup, uploaded before or "
                    "made here)"
                )
            target = self.keep(temporary, name)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            raise
        return self.info(target)


def _checked_manifest(path: Path) -> Manifest:
    with ArchiveReader(path) as reader:
        check_all(reader)
        return reader.manifest
