"""A repository destination: backups kept in a restic repository (deduplicated across
backups and stacks, compressed, encrypted), on a folder, an SFTP server or S3.

A backup archive pushed here is kept as its parts, each a snapshot of its own holding
the part's tar as it was before gzip (compressed data deduplicates poorly: one changed
byte changes everything after it), then an index snapshot (`stackyard-archive.json`:
the archive's manifest and each part's name, size and SHA-256) that makes the backup
complete: parts without an index (a push killed mid-way) are no backup, are never
listed, and are removed by the next push once a day old. Every snapshot is tagged
`stackyard`, `archive:<name>`, `stack:<id>` and `instance:<id>`, its host the service's
host, so that a fresh instance given the recovery key finds every instance's backups.

Pulled back, a backup is the spec's archive again: each part gzip-compressed anew (its
SHA-256 before compression checked against the index) and the manifest's checksums
those of the new members: what a download, a restore and the other destinations use."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from zlib_ng import zlib_ng

from stackyard.backups.archive import MANIFEST, ArchiveReader, ArchiveWriter, GzipWriter
from stackyard.backups.model import Manifest, dump_manifest, load_manifest
from stackyard.destinations.base import Destination, checked_name
from stackyard.destinations.model import Progress, RemoteArchive
from stackyard.destinations.restic import Restic, Snapshot
from stackyard.errors import Conflict, DestinationError, Invalid, NotFound
from stackyard.jsonmodel import parse_json

INDEX = "stackyard-archive.json"
TAG = "stackyard"
CHUNK = 1024 * 1024
#: Parts without an index (a push killed mid-way) are removed once this old.
ORPHANS_AFTER = timedelta(days=1)


class RepositoryDestination(Destination):
    def __init__(self, restic: Restic, instance: str, host: str, level: int = 1) -> None:
        self.restic = restic
        self.instance = instance
        self.host = host
        self.level = level
        #: What the last listing found (a pull follows the listing that found its backup).
        self._listed: list[Snapshot] = []

    async def _snapshots(self, fresh: bool = True) -> list[Snapshot]:
        if fresh or not self._listed:
            self._listed = await self.restic.snapshots(TAG)
        return self._listed

    async def test(self) -> str:
        snapshots = await self.restic.snapshots(TAG)
        stacks = {s.tag("stack") for s in snapshots if "index" in s.tags}
        indexes = sum("index" in s.tags for s in snapshots)
        return f"Repository opened: {indexes} backups of {len(stacks)} stacks"

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        checked_name(name)
        snapshots = await self._snapshots()
        if any(s.tag("archive") == name and "index" in s.tags for s in snapshots):
            raise Conflict(f"{name} is in the repository already")
        await self._remove_orphans(snapshots, name)
        reader = await asyncio.to_thread(ArchiveReader, path)
        made: list[str] = []
        moved = _Moved(progress)
        try:
            manifest = reader.manifest
            tags = [TAG, f"archive:{name}", f"stack:{manifest.stack_id}"]
            tags.append(f"instance:{self.instance}")
            parts = []
            for member in _members(manifest):
                part = _Part(member)
                chunks = part.read(reader, moved)
                summary = await self.restic.backup(
                    part.file, chunks, [*tags, f"part:{member}"], self.host
                )
                made.append(str(summary.get("snapshot_id", "")))
                parts.append({**part.as_data(), "snapshot": made[-1]})
            index = {
                "archive": name,
                "manifest": json.loads(dump_manifest(manifest)),
                "parts": parts,
            }
            size = f"size:{path.stat().st_size}"
            await self.restic.backup(
                INDEX, _one(json.dumps(index).encode()), [*tags, "index", size], self.host
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.restic.forget([m for m in made if m], prune=False))
            raise
        finally:
            reader.close()

    async def use(self) -> RepositoryUse:
        """What the repository keeps and what that weighs on its storage."""
        backups: dict[str, int] = {}
        total = 0
        instances = set()
        snapshots = await self._snapshots()
        for snapshot in snapshots:
            if "index" in snapshot.tags:
                stack = snapshot.tag("stack") or "?"
                backups[stack] = backups.get(stack, 0) + 1
                total += int(snapshot.tag("size") or 0)
                instances.add(snapshot.tag("instance") or "?")
        partial = {s.tag("archive") for s in _partial(snapshots)}
        stored = await self.restic.raw_size()
        return RepositoryUse(
            stored, total, sum(backups.values()), backups, len(instances), len(partial)
        )

    async def archives(self) -> list[RemoteArchive]:
        found = []
        for snapshot in await self._snapshots():
            name = snapshot.tag("archive")
            if name and "index" in snapshot.tags:
                size = int(snapshot.tag("size") or 0)
                found.append(RemoteArchive(name, size, _when(snapshot.time)))
        return sorted(found, key=lambda a: (a.modified, a.name), reverse=True)

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        """The backup as the spec's archive, written to `target` (created)."""
        checked_name(name)
        snapshots = [s for s in await self._snapshots(fresh=False) if s.tag("archive") == name]
        if not any("index" in s.tags for s in snapshots):  # (listed before it was pushed)
            snapshots = [s for s in await self._snapshots() if s.tag("archive") == name]
        index_snapshot = next((s for s in snapshots if "index" in s.tags), None)
        if index_snapshot is None:
            raise NotFound(f"{name} is not in the repository")
        index = await self._index(index_snapshot)
        by_id = {s.id: s for s in snapshots}
        parts = {s.tag("part"): s for s in snapshots if s.tag("part")}
        manifest = load_manifest(json.dumps(index["manifest"]).encode())
        with target.open("xb") as out:
            writer = ArchiveWriter(out, manifest.created_at.timestamp())
            written: dict[str, tuple[str, int]] = {}
            tars = sum(int(p["bytes"]) for p in index["parts"]) or 1
            moved = _Moved(progress, int(index_snapshot.tag("size") or tars) / tars)
            for part in index["parts"]:
                member = str(part["member"])
                # The snapshot the index names (one short id of the full one), else the part's.
                named = str(part.get("snapshot") or "")
                snapshot = next(
                    (s for i, s in by_id.items() if named and i.startswith(named)), None
                )
                snapshot = snapshot or parts.get(member)
                if snapshot is None:
                    raise DestinationError(f"The repository lacks the part {member} of {name}")
                with tempfile.TemporaryFile(dir=target.parent) as raw:
                    await self._dump_part(snapshot, part, raw, name, moved)
                    raw.seek(0)
                    gzipped = bool(part["gzip"])
                    put = functools.partial(_put, writer, member, raw, gzipped, self.level)
                    written[member] = await asyncio.to_thread(put)
            writer.add(MANIFEST, dump_manifest(_rechecked(manifest, written)))

    async def delete(self, name: str) -> None:
        await self.delete_many([name])

    async def delete_many(self, names: list[str]) -> None:
        """Every snapshot of the backups `names` forgotten in one run, then one prune."""
        wanted = {checked_name(name) for name in names}
        snapshots = await self._snapshots()
        if missing := wanted - {s.tag("archive") for s in snapshots}:
            raise NotFound(f"{', '.join(sorted(missing))} not in the repository")
        await self.restic.forget([s.id for s in snapshots if s.tag("archive") in wanted], True)

    async def _dump_part(
        self, snapshot: Snapshot, part: dict[str, Any], raw: IO[bytes], name: str, moved: _Moved
    ) -> None:
        """A part's tar into `raw`, checked against the SHA-256 the index says."""
        digest = hashlib.sha256()

        def keep(chunk: bytes) -> None:
            raw.write(chunk)
            digest.update(chunk)
            moved.add(len(chunk))

        await self.restic.dump(snapshot.id, str(part["file"]), keep)
        if digest.hexdigest() != part["sha256"]:
            raise DestinationError(
                f"The part {part['member']} of {name} is not what was stored (its SHA-256 differs)"
            )

    async def _index(self, snapshot: Snapshot) -> dict[str, Any]:
        chunks = bytearray()

        def keep(chunk: bytes) -> None:
            chunks.extend(chunk)
            if len(chunks) > 64 * 1024 * 1024:
                raise Invalid("The backup's index in the repository is too large")

        await self.restic.dump(snapshot.id, INDEX, keep)
        try:
            index = parse_json(bytes(chunks))
            if not isinstance(index, dict) or not isinstance(index.get("parts"), list):
                raise ValueError("no parts")
            return index
        except ValueError as exc:
            raise DestinationError(f"The backup's index cannot be read: {exc}") from exc

    async def _remove_orphans(self, snapshots: list[Snapshot], name: str) -> None:
        """Parts whose backup never got its index (a push killed mid-way): those of the
        archive pushed now at once (no other push of it can be under way: a stack runs
        one thing at a time), any other of this instance's once a day old."""
        old = datetime.now(UTC) - ORPHANS_AFTER
        orphans = [
            s.id
            for s in _partial(snapshots)
            if s.tag("instance") == self.instance
            and (s.tag("archive") == name or _when(s.time) < old)
        ]
        await self.restic.forget(orphans, prune=False)


@dataclass(frozen=True)
class RepositoryUse:
    #: What the repository takes on its storage (deduplicated, compressed).
    stored_bytes: int
    #: What its backups would take as archives, all together.
    archives_bytes: int
    backups: int
    #: Backups per stack.
    stacks: dict[str, int]
    #: How many instances keep backups here.
    instances: int
    #: Backups whose push never ended (killed mid-way): their parts, never listed, are
    #: removed by a later push (of the same archive at once, else once a day old).
    partial: int = 0


class _Moved:
    """Bytes moved so far, told to the transfer's progress (as bytes of the archive:
    `scale` turns bytes of the parts' tars into the archive's)."""

    def __init__(self, progress: Progress, scale: float = 1.0) -> None:
        self.progress = progress
        self.scale = scale
        self.total = 0

    def add(self, size: int) -> None:
        self.total += size
        self.progress(int(self.total * self.scale))


class _Part:
    """A member of the archive as a repository keeps it: its tar before gzip."""

    def __init__(self, member: str) -> None:
        self.member = member
        self.gzip = member.endswith(".gz")
        self.file = member.removesuffix(".gz")
        self.digest = hashlib.sha256()
        self.bytes = 0

    async def read(self, reader: ArchiveReader, moved: _Moved) -> AsyncIterator[bytes]:
        async for chunk in _read(reader, self.member, self.gzip, moved):
            self.digest.update(chunk)
            self.bytes += len(chunk)
            yield chunk

    def as_data(self) -> dict[str, Any]:
        return {
            "member": self.member,
            "file": self.file,
            "gzip": self.gzip,
            "sha256": self.digest.hexdigest(),
            "bytes": self.bytes,
        }


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _partial(snapshots: list[Snapshot]) -> list[Snapshot]:
    """The parts of backups that have no index (their push never ended)."""
    complete = {s.tag("archive") for s in snapshots if "index" in s.tags}
    return [s for s in snapshots if s.tag("archive") not in complete]


def _members(manifest: Manifest) -> list[str]:
    members = [manifest.stack_member] if manifest.stack_member else []
    return members + [a.member for a in manifest.assets if a.captured and a.member]


async def _read(
    reader: ArchiveReader, member: str, gzipped: bool, moved: _Moved
) -> AsyncIterator[bytes]:
    """A member's bytes, gunzipped when it is gzip (read in a thread, a chunk at a time);
    the archive's bytes read told to `moved`."""
    chunks = reader.chunks(member)
    inflate = zlib_ng.decompressobj(31) if gzipped else None
    while True:
        chunk = await asyncio.to_thread(next, chunks, b"")
        if not chunk:
            break
        moved.add(len(chunk))
        data = inflate.decompress(chunk) if inflate else chunk
        if data:
            yield data
    if inflate is not None:
        rest = inflate.flush()
        if rest:
            yield rest


def _put(
    writer: ArchiveWriter, member: str, raw: IO[bytes], gzipped: bool, level: int
) -> tuple[str, int]:
    """A part written as the archive's member (gzip-compressed anew when it was): its
    SHA-256 and size as written."""
    with writer.member(member) as sink:
        compress = GzipWriter(sink, level) if gzipped else None
        while chunk := raw.read(CHUNK):
            if compress:
                compress.write(chunk)
            else:
                sink.write(chunk)
        if compress:
            compress.close()
    return sink.sha256(), sink.size


def _rechecked(manifest: Manifest, written: dict[str, tuple[str, int]]) -> Manifest:
    """The manifest with the checksums and sizes of the members as written now."""
    assets = [
        dataclasses.replace(a, sha256=written[a.member][0], bytes=written[a.member][1])
        if a.member in written
        else a
        for a in manifest.assets
    ]
    stack_sha = (
        written[manifest.stack_member][0]
        if manifest.stack_member in written
        else manifest.stack_sha256
    )
    return dataclasses.replace(manifest, assets=assets, stack_sha256=stack_sha)


def _when(text: str) -> datetime:
    """restic's time (nanoseconds, an offset or Z) as a UTC datetime."""
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
