"""Writing a backup archive: the stack folder and each chosen asset, read through helper
containers (the engine's archive of each), compressed and checksummed while they stream
into the archive, then the manifest; the archive is checked once written.

Runs in a worker thread (`stackyard.backups.service` stops and starts the stack around
it). Nothing is held in memory beyond a chunk; the archive is written under a temporary
name in the archives folder and renamed only when complete and checked, and removed on
any failure.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tarfile
from collections.abc import Callable, Generator, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Protocol

from pydantic import BaseModel, Field

from stackyard.backups import tartool
from stackyard.backups.archive import (
    MANIFEST,
    ROOT,
    STACK_MEMBER,
    ArchiveReader,
    ArchiveWriter,
    ChunkReader,
    GzipWriter,
    PlainWriter,
    Sink,
    check_all,
    member_writer,
    scanner,
)
from stackyard.backups.model import (
    FORMAT_VERSION,
    Asset,
    AssetResult,
    Fidelity,
    Inventory,
    Manifest,
    dump_manifest,
)
from stackyard.backups.tarscan import TarScanner
from stackyard.docker.helper import Helper, HelperMount, Helpers
from stackyard.errors import Invalid
from stackyard.fs.errors import converted

#: Called with (bytes read, assets done) as the capture goes.
Progress = Callable[[int, int], None]


class Selection(BaseModel):
    """What to capture. `volumes` and `binds` name assets (a volume's engine name or
    compose key; a bind's host path, or its path inside the stack folder); None takes the
    inventory's default selection. `include_binds` False captures no bind at all."""

    include_binds: bool = Field(True, description="Capture bind-mounted folders at all")
    binds: list[Annotated[str, Field(max_length=4096)]] | None = Field(
        None,
        max_length=100,
        description="Binds to capture (host paths, or paths inside the stack folder); "
        "null: those the inventory selects",
    )
    volumes: list[Annotated[str, Field(max_length=255)]] | None = Field(
        None,
        max_length=100,
        description="Volumes to capture (engine names or compose keys); null: those the "
        "inventory selects",
    )


def choose(inventory: Inventory, selection: Selection) -> tuple[list[Asset], dict[str, str]]:
    """The assets to capture, and why each other one is not."""
    chosen: list[Asset] = []
    skipped: dict[str, str] = {}
    wanted_volumes = set(selection.volumes) if selection.volumes is not None else None
    wanted_binds = set(selection.binds) if selection.binds is not None else None
    known = (
        {a.name for a in inventory.assets}
        | {a.compose_key for a in inventory.assets if a.compose_key}
        | {a.inside_stack for a in inventory.assets if a.inside_stack}
    )
    for name in (wanted_volumes or set()) | (wanted_binds or set()):
        if name not in known:
            raise Invalid(f"The stack has no volume or bind {name!r} (see its inventory)")
    for asset in inventory.assets:
        names = {asset.name, asset.compose_key, asset.inside_stack} - {None}
        if asset.kind == "bind" and not selection.include_binds:
            skipped[asset.key] = "binds were not included"
            continue
        wanted = wanted_volumes if asset.kind == "volume" else wanted_binds
        if wanted is None:
            if not asset.selected:
                skipped[asset.key] = asset.reason or "not selected"
                continue
        elif not names & wanted:
            skipped[asset.key] = "not selected"
            continue
        if not asset.exists:
            skipped[asset.key] = asset.reason or "does not exist"
            continue
        chosen.append(asset)
    return chosen, skipped


def _cover(folder: Path, excluded: set[PurePosixPath]) -> list[PurePosixPath]:
    """The paths of the stack folder to archive so that everything but `excluded` (and
    what is under it) is included: whole subtrees where nothing is excluded below."""
    if not excluded:
        return [PurePosixPath(".")]
    result: list[PurePosixPath] = []
    pending = [PurePosixPath(".")]
    while pending:
        current = pending.pop()
        for entry in sorted(os.scandir(folder / current), key=lambda e: e.name):
            relative = (
                current / entry.name if current != PurePosixPath(".") else PurePosixPath(entry.name)
            )
            if relative in excluded:
                continue
            below = any(relative in path.parents for path in excluded)
            if below and entry.is_dir(follow_symlinks=False):
                pending.append(relative)
            else:
                result.append(relative)
    return result


def _entry_from(path: Path, name: str) -> tarfile.TarInfo:
    """A directory entry for a folder on the way to what is archived (its mtime to the
    nanosecond, in a PAX record)."""
    st = os.lstat(path)
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode, info.uid, info.gid = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    seconds, nanos = divmod(st.st_mtime_ns, 1_000_000_000)
    info.mtime = seconds
    info.pax_headers = {"mtime": f"{seconds}.{nanos:09d}"}
    return info


def _renamed(info: tarfile.TarInfo, prefix: str) -> tarfile.TarInfo:
    """An entry of the helper's tar under `prefix`. The PAX records that carried its
    long or non-ASCII name and link target go: `tarfile` writes a record it read over
    the name it is given, so they would put the entry back where it came from."""
    info.name = prefix + info.name
    dropped = {"path", "linkpath"} if info.islnk() else {"path"}
    if info.islnk():
        info.linkname = prefix + info.linkname
    info.pax_headers = {k: v for k, v in info.pax_headers.items() if k not in dropped}
    return info


class _TarOut:
    """A file-like that a `tarfile` in write mode writes into a gzip writer, every entry
    checked on the way as a restore will check it (`scan`)."""

    def __init__(self, gzip: GzipWriter | PlainWriter) -> None:
        self.gzip = gzip
        self.scan = scanner()

    def write(self, data: bytes) -> int:
        self.gzip.write(data)
        self.scan.feed(data)
        return len(data)


@dataclass
class Capture:
    helpers: Helpers
    level: int | None  # None: plain tars
    progress: Progress
    read: int = 0
    done: int = 0

    def _copy(
        self, chunks: Generator[bytes, None, None], gzip: GzipWriter | PlainWriter
    ) -> TarScanner:
        """A helper's tar, compressed as it comes; its entries counted and checked on
        the way (what a restore would refuse is refused now)."""
        scan = scanner()
        with contextlib.closing(chunks):
            for chunk in chunks:
                gzip.write(chunk)
                scan.feed(chunk)
                self.read += len(chunk)
                self.progress(self.read, self.done)
        scan.finish()
        return scan

    def _count(self, chunks: Iterable[bytes]) -> Generator[bytes, None, None]:
        for chunk in chunks:
            self.read += len(chunk)
            self.progress(self.read, self.done)
            yield chunk

    def asset(self, writer: Writer, member: str, mount: HelperMount, exact: bool) -> AssetResult:
        """One asset's data (mounted at /data in a helper), as a gzip member: read by
        the helper's GNU tar (everything kept), or else by its busybox tar, or, for owners
        beyond what busybox headers hold (`exact`), through the engine's archive API."""
        moving = tartool.Moving()
        with writer.member(member) as sink:
            gzip = member_writer(sink, self.level)
            if self.helpers.gnu_tar():
                summary = self._copy(tartool.read_gnu(self.helpers, mount, [], moving), gzip)
                kept = tartool.fidelity("gnu-tar")
            elif exact:
                with self.helpers.created([mount]) as helper:
                    summary = self._copy(self.helpers.read_tar(helper, f"/{ROOT}"), gzip)
                kept = tartool.fidelity("engine")
            else:
                summary = self._copy(tartool.read_busybox(self.helpers, mount, moving), gzip)
                kept = tartool.fidelity("busybox-tar")
            gzip.close()
        self.done += 1
        self.progress(self.read, self.done)
        key = f"{mount.kind}:{mount.source}"
        return AssetResult(
            key,
            member,
            True,
            sink.size,
            summary.files,
            sink.sha256(),
            None,
            moving.vanished,
            moving.changed,
            kept,
        )

    def stack_folder(
        self,
        writer: Writer,
        member: str,
        folder_local: Path,
        folder_host: str,
        excluded: set[str],
    ) -> tuple[str, Fidelity]:
        """The stack folder without the binds inside it (captured on their own, or not
        at all): its files read through a helper, under `data/`."""
        mount = HelperMount("bind", folder_host, f"/{ROOT}", read_only=True)
        with writer.member(member) as sink:
            gzip = member_writer(sink, self.level)
            if self.helpers.gnu_tar():
                moving = tartool.Moving()
                stream = tartool.read_gnu(self.helpers, mount, sorted(excluded), moving)
                self._copy(stream, gzip)
                kept = tartool.fidelity("gnu-tar")
            else:
                cover = _cover(folder_local, {PurePosixPath(p) for p in excluded})
                with self.helpers.created([mount]) as helper:
                    if cover == [PurePosixPath(".")]:
                        self._copy(self.helpers.read_tar(helper, f"/{ROOT}"), gzip)
                    else:
                        self._stack_parts(helper, gzip, folder_local, cover)
                kept = tartool.fidelity("engine")
            gzip.close()
        return sink.sha256(), kept

    def _stack_parts(
        self,
        helper: Helper,
        gzip: GzipWriter | PlainWriter,
        folder: Path,
        cover: list[PurePosixPath],
    ) -> TarScanner:
        """The covered parts, renamed under `data/` into one tar (with entries for the
        folders on the way, from the service's own view of the stack folder)."""
        written: set[str] = set()
        target = _TarOut(gzip)
        with tarfile.open(fileobj=target, mode="w|", format=tarfile.PAX_FORMAT) as out:  # type: ignore[call-overload]
            out.addfile(_entry_from(folder, ROOT))
            for part in cover:
                for parent in reversed(part.parents[:-1]):
                    name = f"{ROOT}/{parent}"
                    if name not in written:
                        out.addfile(_entry_from(folder / parent, name))
                        written.add(name)
                chunks = self._count(self.helpers.read_tar(helper, f"/{ROOT}/{part}"))
                up = part.parent
                prefix = f"{ROOT}/{up}/" if up != PurePosixPath(".") else f"{ROOT}/"
                source = ChunkReader(chunks)
                with (
                    contextlib.closing(chunks),
                    tarfile.open(fileobj=source, mode="r|", bufsize=1 << 20) as src,
                ):
                    for info in src:
                        handle = src.extractfile(info) if info.isfile() else None
                        out.addfile(_renamed(info, prefix), handle)
        target.scan.finish()
        return target.scan


def verify_written(path: Path, manifest: Manifest) -> None:
    """The archive as written, read back through the check a restore and `verify` run
    (every checksum, every entry): a backup a restore would refuse is a failed backup.
    No captured part may be empty either."""
    with ArchiveReader(path) as reader:
        check_all(reader)
        for member in [STACK_MEMBER] + [a.member for a in manifest.assets if a.member]:
            if reader.size(member) == 0:
                raise Invalid(f"{member} in the archive is empty")


class Writer(Protocol):
    """Where a capture writes its members and manifest: an `ArchiveWriter` (an archive on
    disk), or a repository's sink (`stackyard.destinations.repository`)."""

    def member(self, name: str) -> AbstractContextManager[Sink]: ...

    def add(self, name: str, data: bytes) -> None: ...


def capture_into(
    writer: Writer,
    inventory: Inventory,
    chosen: list[Asset],
    skipped: dict[str, str],
    helpers: Helpers,
    folder_local: Path,
    meta: tuple[str, str, datetime],
    level: int | None,
    progress: Progress,
) -> Manifest:
    """The stack folder and each chosen asset as members of `writer` (gzip at `level`;
    plain tars, `.tar`, when None), then the manifest."""
    host, version, created = meta
    excluded = {a.inside_stack for a in inventory.assets if a.inside_stack not in (None, ".")}
    capture = Capture(helpers, level, progress)
    results: list[AssetResult] = []
    stack_member = STACK_MEMBER if level is not None else STACK_MEMBER.removesuffix(".gz")
    stack_sha, stack_kept = capture.stack_folder(
        writer, stack_member, folder_local, inventory.folder, {p for p in excluded if p}
    )
    counters = {"volume": 0, "bind": 0}
    suffix = ".tar.gz" if level is not None else ".tar"
    for asset in inventory.assets:
        if asset in chosen:
            n = counters[asset.kind]
            counters[asset.kind] += 1
            member = f"{asset.kind}s/{n}{suffix}"
            mount = HelperMount(asset.kind, asset.name, f"/{ROOT}", True)
            result = capture.asset(writer, member, mount, exact=asset.wide_ids)
            if result.bytes == 0 or result.sha256 is None:
                raise Invalid(f"{asset.name} gave no data")
            results.append(result)
        else:
            reason = skipped.get(asset.key, "not selected")
            results.append(AssetResult(asset.key, None, False, 0, 0, None, reason))
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        stack_id=inventory.stack_id,
        created_at=created,
        service_version=version,
        host=host,
        inventory=inventory,
        assets=results,
        stack_member=stack_member,
        stack_sha256=stack_sha,
        stack_fidelity=stack_kept,
    )
    writer.add(MANIFEST, dump_manifest(manifest))
    return manifest


def write_archive(
    path: Path,
    inventory: Inventory,
    chosen: list[Asset],
    skipped: dict[str, str],
    helpers: Helpers,
    folder_local: Path,
    meta: tuple[str, str, datetime],
    level: int,
    progress: Progress,
) -> Manifest:
    """The archive at `path` (which must not exist; removed again on failure), read
    back through the check a restore runs."""
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        with (
            converted(f"the archive {path.name.lstrip('.')}"),
            os.fdopen(os.open(path, flags, 0o600), "wb") as file,
        ):
            writer = ArchiveWriter(file, meta[2].timestamp())
            manifest = capture_into(
                writer, inventory, chosen, skipped, helpers, folder_local, meta, level, progress
            )
            writer.close()
            os.fsync(file.fileno())
        verify_written(path, manifest)
        return manifest
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise
