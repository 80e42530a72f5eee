"""The backup archive: one plain tar file holding

    stack.tar.gz            the stack folder (compose files, .env, .secrets, config, extras)
    volumes/<n>.tar.gz      one per captured named volume
    binds/<n>.tar.gz        one per captured bind-mounted folder
    manifest.json           version 2 (last: it holds every member's checksum)

Each inner tar is the engine's own archive of the data (numeric owners, modes, whole-
second times, symlinks, hardlinks), its entries under `data/`, gzip-compressed; or, in an
archive pulled from a repository, plain (`stack.tar`, `volumes/<n>.tar`). Version 1
archives (`manifest.json` with a `stack_id`, `compose.yaml`, `.env`, `volumes/*.tar`) are
read too.

The outer tar is written in one pass to a seekable file: a member's header is written
first with size 0, its data streamed (never held in memory), then the header rewritten
with the real size. Inner tars are read through `tarfile` in stream mode, one entry at a
time, for counting and for the checks that keep a restore inside its target.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import posixpath
import queue
import tarfile
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO, Protocol

from zlib_ng import zlib_ng

from stackyard.backups.model import Manifest, load_manifest
from stackyard.backups.tarscan import TarScanner
from stackyard.errors import Invalid

MANIFEST = "manifest.json"
STACK_MEMBER = "stack.tar.gz"
#: The stack folder's member: gzip, or plain (pulled from a repository).
STACK_MEMBERS = (STACK_MEMBER, "stack.tar")
#: The folder every inner tar's entries live under.
ROOT = "data"
BLOCK = 512
#: Bytes copied at a time.
CHUNK = 1024 * 1024


# -- writing ---------------------------------------------------------------------------
class ArchiveWriter:
    """The outer tar, written in one pass (see the module) to a seekable file."""

    def __init__(self, fileobj: BinaryIO, mtime: float) -> None:
        self.file = fileobj
        self.mtime = int(mtime)

    def _header(self, name: str, size: int) -> bytes:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = size, self.mtime, 0o600
        header = info.tobuf(format=tarfile.GNU_FORMAT)
        if len(header) != BLOCK:  # member names are ours and short
            raise ValueError(f"member name too long: {name}")
        return header

    @contextlib.contextmanager
    def member(self, name: str) -> Iterator[MemberSink]:
        """A member written while the block writes to the yielded sink."""
        start = self.file.tell()
        self.file.write(self._header(name, 0))
        sink = MemberSink(self.file)
        yield sink
        size = sink.size
        self.file.write(b"\0" * (-size % BLOCK))
        end = self.file.tell()
        self.file.seek(start)
        self.file.write(self._header(name, size))
        self.file.seek(end)

    def add(self, name: str, data: bytes) -> None:
        with self.member(name) as sink:
            sink.write(data)

    def close(self) -> None:
        self.file.write(b"\0" * (2 * BLOCK))
        self.file.flush()


@dataclass
class MemberSink:
    """Where a member's bytes go; counts and hashes them."""

    file: BinaryIO
    size: int = 0
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)

    def write(self, data: bytes) -> None:
        self.file.write(data)
        self.size += len(data)
        self.digest.update(data)

    def sha256(self) -> str:
        return self.digest.hexdigest()


class Sink(Protocol):
    """Where a member's bytes go (`MemberSink`, or a repository's part), counted and
    hashed."""

    size: int

    def write(self, data: bytes) -> None: ...

    def sha256(self) -> str: ...


class PlainWriter:
    """A member's bytes into its sink as they are (a plain tar member)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def write(self, data: bytes) -> None:
        self.sink.write(data)

    def close(self) -> None:
        pass


def member_writer(sink: Sink, level: int | None) -> GzipWriter | PlainWriter:
    """gzip at `level`, or plain when None."""
    return GzipWriter(sink, level) if level is not None else PlainWriter(sink)


class GzipWriter:
    """gzip-compresses into a sink (zlib-ng: the same format, several times faster)."""

    def __init__(self, sink: Sink, level: int) -> None:
        self.sink = sink
        self._compressor = zlib_ng.compressobj(level, zlib_ng.DEFLATED, 31)

    def write(self, data: bytes) -> None:
        if data:
            self.sink.write(self._compressor.compress(data))

    def close(self) -> None:
        self.sink.write(self._compressor.flush())


# -- reading inner tars ----------------------------------------------------------------
class ChunkReader(io.RawIOBase):
    """A readable file over an iterator of chunks; each byte read is also handed to
    `tee` (the compressor of a capture), so a scan and a copy are one pass."""

    def __init__(self, chunks: Iterable[bytes], tee: GzipWriter | None = None) -> None:
        self._chunks = iter(chunks)
        self._pending = memoryview(b"")
        self._tee = tee
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        count = min(len(buffer), len(self._pending))
        piece = self._pending[:count]
        buffer[:count] = piece
        if self._tee is not None:
            self._tee.write(bytes(piece))
        self._pending = self._pending[count:]
        self.consumed += count
        return count


def _inside(path: str) -> bool:
    """Whether a relative path stays in its root once normalized."""
    normal = posixpath.normpath(path)
    return not posixpath.isabs(path) and normal != ".." and not normal.startswith("../")


def check_entry(info: tarfile.TarInfo, links: set[str]) -> None:
    """Refuse an entry that would land outside the target: an absolute name, `..`, a
    name through a symlink of the same archive, a hardlink or a relative symlink that
    points out. (Absolute symlinks are kept as they are: they name paths in the
    container that uses the data, and nothing is ever written through them.)"""
    name = info.name.rstrip("/")
    if posixpath.isabs(info.name) or ".." in name.split("/") or "\0" in name:
        raise Invalid(f"Unsafe member in the archive: {info.name!r} leaves its folder")
    if name != ROOT and not name.startswith(ROOT + "/"):
        raise Invalid(f"Unsafe member in the archive: {info.name!r} is outside {ROOT}/")
    parent = posixpath.dirname(name)
    while parent and parent != ROOT:
        if parent in links:
            raise Invalid(f"Unsafe member in the archive: {info.name!r} goes through a link")
        parent = posixpath.dirname(parent)
    if info.islnk() and (posixpath.isabs(info.linkname) or not _inside(info.linkname)):
        raise Invalid(f"Unsafe member in the archive: hardlink {info.name!r} points out")
    if info.issym():
        links.add(name)
        if not posixpath.isabs(info.linkname):
            target = posixpath.join(posixpath.dirname(name), info.linkname)
            if not _inside(target) or not (posixpath.normpath(target) + "/").startswith(ROOT + "/"):
                raise Invalid(
                    f"Unsafe member in the archive: symlink {info.name!r} points out of it"
                )


def scanner(check: bool = True) -> TarScanner:
    """A scanner of one inner tar: with `check`, Invalid at its first unsafe entry."""
    links: set[str] = set()
    return TarScanner(
        on_entry=(lambda info: check_entry(info, links)) if check else (lambda _: None)
    )


# -- reading archives ------------------------------------------------------------------
class ArchiveReader:
    """An archive on disk: its manifest and members (read where they lie)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._tar = tarfile.open(path, mode="r:")  # noqa: SIM115 (closed by `close`)
        except (tarfile.TarError, OSError) as exc:
            raise Invalid(f"{path.name} is not a backup archive: {exc}") from exc
        try:
            self.members = {m.name: m for m in self._tar.getmembers() if m.isfile()}
        except (tarfile.TarError, EOFError) as exc:
            self._tar.close()
            raise Invalid(f"{path.name} is cut short or damaged: {exc}") from exc
        if MANIFEST not in self.members:
            self._tar.close()
            raise Invalid(f"{path.name} holds no {MANIFEST}: it is not a backup archive")
        self.manifest: Manifest = load_manifest(self.read(MANIFEST, limit=64 * 1024 * 1024))

    def read(self, name: str, limit: int) -> bytes:
        with self.open(name) as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise Invalid(f"{name} in the archive is too large")
        return data

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        info = self.members.get(name)
        if info is None:
            raise Invalid(f"The archive has no member {name}")
        handle = self._tar.extractfile(info)
        if handle is None:
            raise Invalid(f"{name} in the archive cannot be read")
        try:
            yield handle
        finally:
            handle.close()

    def chunks(self, name: str) -> Iterator[bytes]:
        """A member's bytes as stored, in chunks (for the engine, or a download)."""
        with self.open(name) as handle:
            while chunk := handle.read(CHUNK):
                yield chunk

    def size(self, name: str) -> int:
        return self.members[name].size if name in self.members else 0

    def close(self) -> None:
        self._tar.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def check_member(
    reader: ArchiveReader,
    name: str,
    sha256: str | None,
    gzipped: bool,
    read: Callable[[int], None] = lambda n: None,
    special: bool = True,
) -> TarScanner:
    """One inner tar, read through: its checksum (when the manifest has one) and every
    entry checked; Invalid otherwise, and when it holds device nodes or setuid/setgid
    files unless `special`. `read` hears of every chunk's length."""
    digest = hashlib.sha256()
    scan = scanner()

    def counted() -> Iterator[bytes]:
        for chunk in _hashed_ahead(reader.chunks(name), digest):
            read(len(chunk))
            yield chunk

    for data in inflated(counted(), name) if gzipped else counted():
        scan.feed(data)
    scan.finish()
    if sha256 is not None and digest.hexdigest() != sha256:
        raise Invalid(f"{name} in the archive does not match its checksum: it is damaged")
    if scan.special and not special:
        shown = ", ".join(repr(n.removeprefix(ROOT + "/")) for n in scan.special[:5])
        raise Invalid(
            f"{name} in the archive holds device nodes, setuid/setgid files or files with "
            f"capabilities ({shown}): they are written outside volumes only when asked for "
            "(special_files)"
        )
    return scan


def check_all(reader: ArchiveReader) -> list[tuple[str, TarScanner]]:
    """Every member of the archive read through and checked (`check_member`); the
    scan of each. What `verify`, an upload and the end of every backup run."""
    manifest = reader.manifest
    members = []
    if manifest.stack_member:
        members.append((manifest.stack_member, manifest.stack_sha256))
    members += [(a.member, a.sha256) for a in manifest.assets if a.captured and a.member]
    if manifest.format_version >= 2 and not members:
        raise Invalid("The archive holds no data")
    scans = [
        (member, check_member(reader, member, digest, gzipped=member.endswith(".gz")))
        for member, digest in members
    ]
    if manifest.format_version >= 2 and manifest.stack_member not in STACK_MEMBERS:
        raise Invalid("The archive has no stack folder")
    return scans


#: Chunks read and hashed ahead of the inflating (4 MiB at most in memory).
AHEAD = 4


def _hashed_ahead(chunks: Iterator[bytes], digest: hashlib._Hash) -> Iterator[bytes]:
    """`chunks`, read and added to `digest` in a thread of their own, up to `AHEAD`
    chunks ahead of the consumer: SHA-256 and inflating both leave the GIL, so a part's
    check takes the time of its inflating alone (a sixth less for 2 GiB of data). The
    reading thread has ended when this generator has, however it ended."""
    ready: queue.Queue[bytes | BaseException | None] = queue.Queue(AHEAD)
    stop = threading.Event()

    def hand_over(item: bytes | BaseException | None) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for chunk in chunks:
                digest.update(chunk)
                if not hand_over(chunk):
                    return
            hand_over(None)
        except BaseException as exc:  # handed to the consumer, raised there
            hand_over(exc)
        finally:
            if isinstance(chunks, Generator):
                chunks.close()

    reader = threading.Thread(target=read, name="stackyard-archive-read", daemon=True)
    reader.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def inflated(chunks: Iterable[bytes], name: str) -> Iterator[bytes]:
    """A gzip member's chunks decompressed, at most CHUNK at a time (text compresses a
    hundredfold: a chunk must not become a hundred megabytes in memory); a gzip stream
    of several members goes on with the next. Invalid when it is damaged or cut short."""
    decompressor = zlib_ng.decompressobj(31)
    try:
        for data in chunks:
            while data:
                if out := decompressor.decompress(data, CHUNK):
                    yield out
                data = decompressor.unconsumed_tail
                if decompressor.eof and decompressor.unused_data:
                    data = decompressor.unused_data
                    decompressor = zlib_ng.decompressobj(31)
        if tail := decompressor.flush():
            yield tail
    except zlib_ng.error as exc:  # type: ignore[misc]  # (its stub types it loosely)
        raise Invalid(f"{name} in the archive is damaged: {exc}") from exc
    if not decompressor.eof:
        raise Invalid(f"{name} in the archive is cut short")
