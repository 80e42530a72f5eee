"""A repository destination: backups kept in a restic repository (deduplicated across
backups and stacks, compressed, encrypted), on a folder, an SFTP server or S3.

A backup is one snapshot holding one file named after the archive: the archive's parts
(the stack folder, each volume, each bind) as tars before any gzip, one after another
(compressed data deduplicates poorly: one changed byte changes everything after it), then
the backup's index (the manifest, and each part's member, offset, size and SHA-256) and a
16-byte trailer that says the index's length. Every snapshot is tagged `stackyard`,
`archive:<name>`, `stack:<id>` and `instance:<id>`, its host the service's host, so that
a fresh instance given the recovery key finds every instance's backups; once stored
whole, it is tagged `size:<bytes>` (of the archive a pull gives back), the backup's last
step: a snapshot without it (its run killed after restic stored it, or restic finishing
a stream cut short) is no backup, is never listed, is said `partial` by `use`, and is
forgotten by a later retention of this instance once a day old. A run killed before
restic stored its snapshot leaves data referenced by nothing, which the next prune
removes.

A backup gets there two ways: an archive of the host's pushed (its gzip members
decompressed on the way), or a capture written straight into the repository (`write`: the
helpers' tars go to restic as they are read, no archive on the host, no gzip; a
schedule's backups into a repository are made so). Pulled back, a backup is the spec's
archive again, its parts as plain tar members (`volumes/0.tar`: restic gave them back
uncompressed, and a restore would only undo a gzip), each checked against the SHA-256 of
the index, the manifest's checksums those of the members written."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import queue
import struct
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from zlib_ng import zlib_ng

from stackyard.backups.archive import MANIFEST, ArchiveReader, ArchiveWriter
from stackyard.backups.model import Manifest, dump_manifest, load_manifest
from stackyard.destinations.base import Destination, checked_name
from stackyard.destinations.model import Progress, RemoteArchive
from stackyard.destinations.restic import Restic, Snapshot
from stackyard.errors import Conflict, DestinationError, Invalid, NotFound
from stackyard.jsonmodel import parse_json

TAG = "stackyard"
CHUNK = 1024 * 1024
#: After the index: its length (8 bytes, big-endian), then this mark.
MARK = b"SYINDEX1"
TRAILER = 16
#: An index larger than this is refused (a manifest is kilobytes, a large one megabytes).
MAX_INDEX = 64 * 1024 * 1024
#: Chunks a capture may run ahead of restic.
AHEAD = 16
#: A partial snapshot is forgotten once this old (a run of another service of this
#: instance may still be tagging it before).
PARTIAL_KEPT = timedelta(days=1)


class RepositoryDestination(Destination):
    def __init__(self, restic: Restic, instance: str, host: str) -> None:
        self.restic = restic
        self.instance = instance
        self.host = host
        #: What the last listing found (a pull follows the listing that found its backup).
        self._listed: list[Snapshot] = []

    async def _snapshots(self, fresh: bool = True) -> list[Snapshot]:
        if fresh or not self._listed:
            self._listed = await self.restic.snapshots(TAG)
        return self._listed

    async def test(self) -> str:
        snapshots = await self.restic.snapshots(TAG)
        stacks = {s.tag("stack") for s in snapshots}
        return f"Repository opened: {len(snapshots)} backups of {len(stacks)} stacks"

    # -- in ---------------------------------------------------------------------------
    async def push(self, path: Path, name: str, progress: Progress) -> None:
        """The host's archive at `path` stored as the backup `name`."""
        checked_name(name)
        await self._absent(name)
        reader = await asyncio.to_thread(ArchiveReader, path)
        try:
            parts = _Parts()
            moved = _Moved(progress)

            async def stream() -> AsyncIterator[bytes]:
                for member in _members(reader.manifest):
                    parts.begin(member)
                    async for chunk in _read(reader, member, moved):
                        yield parts.add(chunk)
                yield parts.end(name, reader.manifest)

            await self._store(name, reader.manifest.stack_id, stream(), parts)
        finally:
            reader.close()

    async def write(self, name: str, stack: str, capture: Callable[[ArchiveSink], Manifest]) -> int:
        """A capture written straight into the repository as the backup `name`: run in a
        thread with a sink whose members go to restic as they come (nothing on the host);
        the size of the archive a pull gives back."""
        checked_name(name)  # (a new name: made now, never pushed)
        pipe = _Pipe()
        sink = ArchiveSink(pipe, name)
        storing = asyncio.ensure_future(self._store(name, stack, pipe.chunks(), sink.parts))
        try:
            await asyncio.to_thread(_captured, capture, sink, pipe)
            await storing
        except BaseException:
            pipe.abort()
            storing.cancel()
            with contextlib.suppress(BaseException):
                await storing
            raise
        return sink.parts.size

    async def _absent(self, name: str) -> None:
        """Conflict when the backup is there; a partial one of that name is forgotten
        (no other run of it can be under way: a stack runs one thing at a time)."""
        snapshots = await self._snapshots()
        if any(s.tag("archive") == name for s in _complete(snapshots)):
            raise Conflict(f"{name} is in the repository already")
        partial = [s.id for s in snapshots if s.tag("archive") == name]
        await self.restic.forget(partial, prune=False)

    async def _store(
        self, name: str, stack: str, data: AsyncIterator[bytes], parts: _Parts
    ) -> None:
        """The stream stored as the backup's snapshot, then tagged with its size (known
        at its end only; a snapshot a kill left untagged is listed with size 0)."""
        tags = [TAG, f"archive:{name}", f"stack:{stack}", f"instance:{self.instance}"]
        summary = await self.restic.backup(name, data, tags, self.host)
        snapshot = str(summary.get("snapshot_id") or "")
        if not snapshot:
            raise DestinationError(f"restic stored {name} without saying its snapshot")
        await self.restic.tag(snapshot, [f"size:{parts.size}"])

    # -- out --------------------------------------------------------------------------
    async def use(self) -> RepositoryUse:
        """What the repository keeps and what that weighs on its storage."""
        backups: dict[str, int] = {}
        total = 0
        instances = set()
        snapshots = await self._snapshots()
        for snapshot in _complete(snapshots):
            stack = snapshot.tag("stack") or "?"
            backups[stack] = backups.get(stack, 0) + 1
            total += int(snapshot.tag("size") or 0)
            instances.add(snapshot.tag("instance") or "?")
        stored = await self.restic.raw_size()
        partial = len(snapshots) - sum(backups.values())
        return RepositoryUse(stored, total, sum(backups.values()), backups, len(instances), partial)

    async def archives(self) -> list[RemoteArchive]:
        found = []
        for snapshot in _complete(await self._snapshots()):
            if name := snapshot.tag("archive"):
                size = int(snapshot.tag("size") or 0)
                found.append(RemoteArchive(name, size, _when(snapshot.time)))
        return sorted(found, key=lambda a: (a.modified, a.name), reverse=True)

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        """The backup as the spec's archive, written to `target` (created)."""
        checked_name(name)
        snapshot = _named(_complete(await self._snapshots(fresh=False)), name)
        if snapshot is None:  # (listed before it was stored)
            snapshot = _named(_complete(await self._snapshots()), name)
        if snapshot is None:
            raise NotFound(f"{name} is not in the repository")
        moved = _Moved(progress, 0.5)
        with tempfile.TemporaryFile(dir=target.parent) as raw:

            def keep(chunk: bytes) -> None:
                raw.write(chunk)
                moved.add(len(chunk))

            await self.restic.dump(snapshot.id, name, keep)
            await asyncio.to_thread(_unpacked, raw, target, name, moved)

    async def delete(self, name: str) -> None:
        await self.delete_many([name])

    async def delete_many(self, names: list[str]) -> None:
        """Every snapshot of the backups `names` forgotten in one run, with this
        instance's partial ones a day old, then one prune."""
        wanted = {checked_name(name) for name in names}
        snapshots = await self._snapshots()
        if missing := wanted - {s.tag("archive") for s in _complete(snapshots)}:
            raise NotFound(f"{', '.join(sorted(missing))} not in the repository")
        old = datetime.now(UTC) - PARTIAL_KEPT
        partial = set(snapshots) - set(_complete(snapshots))
        gone = [
            s.id
            for s in snapshots
            if s.tag("archive") in wanted
            or (s in partial and s.tag("instance") == self.instance and _when(s.time) < old)
        ]
        await self.restic.forget(gone, prune=True)


def _complete(snapshots: list[Snapshot]) -> list[Snapshot]:
    """The snapshots that are backups: stored whole (tagged with their size)."""
    return [s for s in snapshots if s.tag("size") is not None]


@dataclass(frozen=True)
class RepositoryUse:
    #: What the repository takes on its storage (deduplicated, compressed).
    stored_bytes: int
    #: What its backups would take as archives (as pulls give them back), all together.
    archives_bytes: int
    backups: int
    #: Backups per stack.
    stacks: dict[str, int]
    #: How many instances keep backups here.
    instances: int
    #: Snapshots that are no backup (a run killed once restic had stored it): never
    #: listed, forgotten by a later retention of their instance once a day old.
    partial: int = 0


# -- the parts stream ----------------------------------------------------------------------
@dataclass
class _Part:
    member: str
    offset: int
    bytes: int = 0
    digest: Any = field(default_factory=hashlib.sha256)


class _Parts:
    """The parts of a backup as they go to restic: where each begins, its size and
    SHA-256; at the end, the index and the trailer."""

    def __init__(self) -> None:
        self.parts: list[_Part] = []
        self.offset = 0
        #: The size of the archive a pull gives back (its members' tar headers counted).
        self.size = 0

    def begin(self, member: str) -> None:
        self.parts.append(_Part(_plain(member), self.offset))

    def add(self, chunk: bytes) -> bytes:
        part = self.parts[-1]
        part.digest.update(chunk)
        part.bytes += len(chunk)
        self.offset += len(chunk)
        return chunk

    def end(self, name: str, manifest: Manifest) -> bytes:
        """The index and the trailer (what a pull needs to give the archive back): the
        manifest as the pulled archive holds it, and that archive's size."""
        written = {
            _gzipped(p.member): (p.member, p.digest.hexdigest(), p.bytes) for p in self.parts
        }
        pulled = dump_manifest(_rewritten(manifest, written))
        index = {
            "archive": name,
            "manifest": json.loads(pulled),
            "parts": [
                {"member": p.member, "offset": p.offset, "bytes": p.bytes,
                 "sha256": p.digest.hexdigest()}
                for p in self.parts
            ],
        }  # fmt: skip
        data = json.dumps(index).encode()
        self.size = sum(_blocks(p.bytes) for p in self.parts) + _blocks(len(pulled)) + 1024
        return data + struct.pack(">Q", len(data)) + MARK


class _Pipe:
    """Chunks from a capture's thread to restic's stdin in the event loop, at most
    `AHEAD` ahead; `abort` ends both sides."""

    _END = b""

    def __init__(self) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue(AHEAD)
        self._aborted = threading.Event()

    def put(self, chunk: bytes) -> None:
        while not self._aborted.is_set():
            with contextlib.suppress(queue.Full):
                self._queue.put(chunk, timeout=0.5)
                return
        raise DestinationError("The repository stopped taking the backup")

    def close(self) -> None:
        self.put(self._END)

    def abort(self) -> None:
        self._aborted.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(self._END)

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await asyncio.to_thread(self._queue.get)
            if not chunk or self._aborted.is_set():
                return
            yield chunk


class ArchiveSink:
    """What a capture writes an archive into when it goes straight to a repository (as
    `ArchiveWriter`: members, then the manifest): its parts go to restic as they come."""

    def __init__(self, pipe: _Pipe, name: str) -> None:
        self.pipe = pipe
        self.name = name
        self.parts = _Parts()
        self.manifest: bytes | None = None

    @contextlib.contextmanager
    def member(self, name: str) -> Iterator[_PartSink]:
        self.parts.begin(name)
        sink = _PartSink(self)
        yield sink

    def add(self, name: str, data: bytes) -> None:
        if name != MANIFEST:
            raise Invalid(f"A repository's backup holds no member {name} besides its parts")
        self.manifest = data

    def close(self) -> None:
        if self.manifest is None:
            raise Invalid("The capture wrote no manifest")
        self.pipe.put(self.parts.end(self.name, load_manifest(self.manifest)))
        self.pipe.close()


@dataclass
class _PartSink:
    """A part's bytes on their way (counted and hashed as `MemberSink` does)."""

    into: ArchiveSink
    size: int = 0

    def write(self, data: bytes) -> None:
        if data:
            self.into.pipe.put(self.into.parts.add(data))
            self.size += len(data)

    def sha256(self) -> str:
        return str(self.into.parts.parts[-1].digest.hexdigest())


def _captured(capture: Callable[[Any], Manifest], sink: ArchiveSink, pipe: _Pipe) -> None:
    try:
        capture(sink)
        sink.close()
    except BaseException:
        pipe.abort()
        raise


# -- pulling back ----------------------------------------------------------------------
def _unpacked(raw: IO[bytes], target: Path, name: str, moved: _Moved) -> None:
    """The dumped backup in `raw` written as the spec's archive at `target`: each part a
    plain tar member, checked against the index's SHA-256."""
    index = _index(raw, name)
    manifest = load_manifest(json.dumps(index["manifest"]).encode())
    written: dict[str, tuple[str, str, int]] = {}
    try:
        with target.open("xb") as out:
            writer = ArchiveWriter(out, manifest.created_at.timestamp())
            for part in index["parts"]:
                member, offset, size = str(part["member"]), int(part["offset"]), int(part["bytes"])
                raw.seek(offset)
                with writer.member(member) as sink:
                    left = size
                    while left:
                        chunk = raw.read(min(CHUNK, left))
                        if not chunk:
                            raise DestinationError(f"The backup {name} is cut short")
                        sink.write(chunk)
                        left -= len(chunk)
                        moved.add(len(chunk))
                if sink.sha256() != part["sha256"]:
                    raise DestinationError(
                        f"The part {member} of {name} is not what was stored (its SHA-256 differs)"
                    )
                written[_gzipped(member)] = (member, sink.sha256(), sink.size)
            writer.add(MANIFEST, dump_manifest(_rewritten(manifest, written)))
            writer.close()
            os.fsync(out.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        raise


def _index(raw: IO[bytes], name: str) -> dict[str, Any]:
    """The index at the end of a dumped backup, its parts checked to lie before it."""
    end = raw.seek(0, os.SEEK_END)
    if end < TRAILER:
        raise DestinationError(f"The backup {name} in the repository has no index")
    raw.seek(end - TRAILER)
    trailer = raw.read(TRAILER)
    (length,) = struct.unpack(">Q", trailer[:8])
    if trailer[8:] != MARK or not 0 < length <= min(MAX_INDEX, end - TRAILER):
        raise DestinationError(f"The backup {name} in the repository has no index")
    start = end - TRAILER - length
    raw.seek(start)
    try:
        index = parse_json(raw.read(length))
        if not isinstance(index, dict) or not isinstance(index.get("parts"), list):
            raise ValueError("no parts")
        at = 0
        for part in index["parts"]:
            checked = {"member", "offset", "bytes", "sha256"} <= set(part)
            if not checked or int(part["offset"]) != at or not _member_name(part["member"]):
                raise ValueError("its parts are not in order")
            at += int(part["bytes"])
        if at != start:
            raise ValueError("its parts do not end where it begins")
        return index
    except (ValueError, TypeError) as exc:
        raise DestinationError(f"The backup {name}'s index cannot be read: {exc}") from exc


def _member_name(member: object) -> bool:
    """A part's member name as this service gives them (nothing else is written)."""
    if not isinstance(member, str):
        return False
    if member == "stack.tar":
        return True
    kind, _, rest = member.partition("/")
    return kind in ("volumes", "binds") and rest.removesuffix(".tar").isdigit()


def _rewritten(manifest: Manifest, written: dict[str, tuple[str, str, int]]) -> Manifest:
    """The manifest with each part's member as written now (a plain tar), its checksum and
    size; `written` is keyed by the member's name in the manifest (gzip or not)."""

    def of(member: str | None) -> tuple[str, str, int] | None:
        return written.get(_gzipped(member)) if member else None

    assets = []
    for asset in manifest.assets:
        now = of(asset.member)
        if now is not None:
            asset = dataclasses.replace(asset, member=now[0], sha256=now[1], bytes=now[2])
        assets.append(asset)
    stack = of(manifest.stack_member)
    return dataclasses.replace(
        manifest,
        assets=assets,
        stack_member=stack[0] if stack else manifest.stack_member,
        stack_sha256=stack[1] if stack else manifest.stack_sha256,
    )


# -- helpers ---------------------------------------------------------------------------------
class _Moved:
    """Bytes moved so far, told to the transfer's progress (`scale`: the share of the
    transfer's size they stand for)."""

    def __init__(self, progress: Progress, scale: float = 1.0) -> None:
        self.progress = progress
        self.scale = scale
        self.total = 0

    def add(self, size: int) -> None:
        self.total += size
        self.progress(int(self.total * self.scale))


def _blocks(size: int) -> int:
    """What a member of `size` bytes takes in an archive (its header, its padded data)."""
    return 512 + -(-size // 512) * 512


def _named(snapshots: list[Snapshot], name: str) -> Snapshot | None:
    return next((s for s in snapshots if s.tag("archive") == name), None)


def _plain(member: str) -> str:
    """A member's name as a plain tar (`volumes/0.tar.gz`: `volumes/0.tar`)."""
    return member.removesuffix(".gz")


def _gzipped(member: str) -> str:
    return member if member.endswith(".gz") else f"{member}.gz"


def _members(manifest: Manifest) -> list[str]:
    members = [manifest.stack_member] if manifest.stack_member else []
    return members + [a.member for a in manifest.assets if a.captured and a.member]


async def _read(reader: ArchiveReader, member: str, moved: _Moved) -> AsyncIterator[bytes]:
    """A member's bytes, gunzipped when it is gzip (read in a thread, a chunk at a time);
    the archive's bytes read told to `moved`."""
    chunks = reader.chunks(member)
    inflate = zlib_ng.decompressobj(31) if member.endswith(".gz") else None
    while True:
        chunk = await asyncio.to_thread(next, chunks, b"")
        if not chunk:
            break
        moved.add(len(chunk))
        data = inflate.decompress(chunk) if inflate else chunk
        if data:
            yield data
    if inflate is not None and (rest := inflate.flush()):
        yield rest


def _when(text: str) -> datetime:
    """restic's time (nanoseconds, an offset or Z) as a UTC datetime."""
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
