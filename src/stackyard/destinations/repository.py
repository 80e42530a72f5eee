"""A repository destination: backups kept in a restic repository (deduplicated across
backups and stacks, compressed, encrypted), on a folder, an SFTP server or S3.

A backup is one snapshot holding one file named after the archive: the archive's parts
(the stack folder, each volume, each bind) as tars before any gzip (compressed data
deduplicates poorly: one changed byte changes everything after it), each split into its
data and its metadata (`tarsplit`: a file changed in place then costs the chunks of the
change, not the chunk around its header too): every part's data one after another, then
every part's metadata, then the backup's index (the manifest, and where each part's data
and metadata lie, its size and SHA-256) and a 16-byte trailer that says the index's
length. Every snapshot is tagged `stackyard`,
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
from stackyard.destinations.tarsplit import Splitter, joined
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
#: A backup's metadata is kept in memory up to this, then in a private temporary file.
SPOOLED = 8 * 1024 * 1024
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
            with self._spool() as spool:
                parts = _Parts(spool)
                moved = _Moved(progress)

                async def stream() -> AsyncIterator[bytes]:
                    for member in _members(reader.manifest):
                        parts.begin(member)
                        async for chunk in _read(reader, member, moved):
                            if data := parts.add(chunk):
                                yield data
                    for chunk in parts.end(name, reader.manifest):
                        yield chunk

                await self._store(name, reader.manifest.stack_id, stream(), parts)
        finally:
            reader.close()

    def _spool(self) -> tempfile.SpooledTemporaryFile[bytes]:
        """A private temporary file for a backup's metadata (in memory while small)."""
        self.restic.scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
        return tempfile.SpooledTemporaryFile(SPOOLED, "w+b", dir=str(self.restic.scratch))

    async def write(self, name: str, stack: str, capture: Callable[[ArchiveSink], Manifest]) -> int:
        """A capture written straight into the repository as the backup `name`: run in a
        thread with a sink whose members go to restic as they come (nothing on the host);
        the size of the archive a pull gives back."""
        checked_name(name)  # (a new name: made now, never pushed)
        pipe = _Pipe()
        with self._spool() as spool:
            sink = ArchiveSink(pipe, name, _Parts(spool))
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
    data_offset: int
    splitter: Splitter = field(default_factory=Splitter)
    bytes: int = 0  # of its tar
    data: int = 0  # of its data
    meta_offset: int = 0  # in the metadata spool, then in the stream
    meta: int = 0
    digest: Any = field(default_factory=hashlib.sha256)


class _Parts:
    """The parts of a backup as they go to restic: each part's tar split into its data,
    sent on at once, and its metadata, kept in `spool` (a private temporary file) and
    sent after the last part's data (`tarsplit`); then the index and the trailer."""

    def __init__(self, spool: tempfile.SpooledTemporaryFile[bytes]) -> None:
        self.spool = spool
        self.parts: list[_Part] = []
        self.offset = 0
        #: The size of the archive a pull gives back (its members' tar headers counted).
        self.size = 0

    def begin(self, member: str) -> None:
        self._finish()
        self.parts.append(_Part(_plain(member), self.offset, meta_offset=self.spool.tell()))

    def add(self, chunk: bytes) -> bytes:
        """The data of `chunk` (its metadata is kept for the end)."""
        part = self.parts[-1]
        part.digest.update(chunk)
        part.bytes += len(chunk)
        meta, data = part.splitter.feed(chunk)
        self._keep(meta)
        part.data += len(data)
        self.offset += len(data)
        return data

    def _keep(self, meta: bytes) -> None:
        if meta:
            self.spool.write(meta)
            self.parts[-1].meta += len(meta)

    def _finish(self) -> None:
        if self.parts:
            self._keep(self.parts[-1].splitter.finish())

    def end(self, name: str, manifest: Manifest) -> Iterator[bytes]:
        """The parts' metadata, the index and the trailer (what a pull needs to give the
        archive back): the manifest as the pulled archive holds it, and that archive's
        size."""
        self._finish()
        data_end = self.offset
        self.spool.seek(0)
        while chunk := self.spool.read(CHUNK):
            yield chunk
        written = {
            _gzipped(p.member): (p.member, p.digest.hexdigest(), p.bytes) for p in self.parts
        }
        pulled = dump_manifest(_rewritten(manifest, written))
        index = {
            "archive": name,
            "manifest": json.loads(pulled),
            "parts": [
                {"member": p.member, "bytes": p.bytes, "sha256": p.digest.hexdigest(),
                 "data_offset": p.data_offset, "data": p.data,
                 "meta_offset": data_end + p.meta_offset, "meta": p.meta}
                for p in self.parts
            ],
        }  # fmt: skip
        encoded = json.dumps(index).encode()
        self.size = sum(_blocks(p.bytes) for p in self.parts) + _blocks(len(pulled)) + 1024
        yield encoded + struct.pack(">Q", len(encoded)) + MARK


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

    def __init__(self, pipe: _Pipe, name: str, parts: _Parts) -> None:
        self.pipe = pipe
        self.name = name
        self.parts = parts
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
        for chunk in self.parts.end(self.name, load_manifest(self.manifest)):
            self.pipe.put(chunk)
        self.pipe.close()


@dataclass
class _PartSink:
    """A part's bytes on their way (counted and hashed as `MemberSink` does)."""

    into: ArchiveSink
    size: int = 0

    def write(self, data: bytes) -> None:
        if data:
            if kept := self.into.parts.add(data):
                self.into.pipe.put(kept)
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
                member = str(part["member"])
                meta = _Reader(raw, int(part["meta_offset"]))
                data = _Reader(raw, int(part["data_offset"]))
                with writer.member(member) as sink:
                    try:
                        for piece in joined(meta.read, data.read, int(part["meta"])):
                            sink.write(piece)
                            moved.add(len(piece))
                    except ValueError as exc:
                        raise DestinationError(f"The part {member} of {name}: {exc}") from exc
                if sink.sha256() != part["sha256"] or sink.size != int(part["bytes"]):
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
        data = meta = 0
        parts = index["parts"]
        for part in parts:
            keys = {"member", "bytes", "sha256", "data_offset", "data", "meta_offset", "meta"}
            if not keys <= set(part) or not _member_name(part["member"]):
                raise ValueError("a part is not described")
            if int(part["data_offset"]) != data or int(part["data"]) < 0:
                raise ValueError("its parts' data are not in order")
            data += int(part["data"])
        for part in parts:
            if int(part["meta_offset"]) != data + meta or int(part["meta"]) < 0:
                raise ValueError("its parts' metadata are not in order")
            meta += int(part["meta"])
        if data + meta != start:
            raise ValueError("its parts do not end where it begins")
        return index
    except (ValueError, TypeError) as exc:
        raise DestinationError(f"The backup {name}'s index cannot be read: {exc}") from exc


class _Reader:
    """Reads a file on from `offset`, whatever else reads it meanwhile."""

    def __init__(self, raw: IO[bytes], offset: int) -> None:
        self.raw = raw
        self.offset = offset

    def read(self, size: int) -> bytes:
        self.raw.seek(self.offset)
        found = self.raw.read(size)
        self.offset += len(found)
        return found


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
