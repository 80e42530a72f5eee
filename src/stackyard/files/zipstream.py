"""A folder as a zip, built while it is sent: no temporary file, bounded memory.

The folder's name is the archive's root; empty folders are kept. Only regular files are
archived: FIFOs, sockets, devices and symlinks are skipped without being opened, and a
file that cannot be read is skipped without failing the download. Files are read in
1 MiB chunks, deflated on every core (`files.deflate`), and the archive leaves in 1 MiB
chunks after its first bytes; Zip64 is used where sizes need it.

The walk works on folder descriptors (openat with O_NOFOLLOW from the folder above, an
explicit stack, no recursion): no path is resolved again, so a folder swapped for a
symlink meanwhile cannot lead outside, and depth is not limited by PATH_MAX. One
descriptor is open per folder on the current path; beyond `_max_depth()` folders (the
descriptor budget) a folder is skipped with a warning, as is anything that vanished or
cannot be read: one log line per skipped entry.
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import stream_zip as _stream_zip_module
from stream_zip import stream_zip
from zlib_ng import zlib_ng

from stackyard.files.browse import CHUNK
from stackyard.files.deflate import DeflatePool, Entry
from stackyard.fs.at import Fd

# stream-zip checksums with the module `zlib` it imported (and deflates the folders'
# empty members with it; files are deflated by `files.deflate`); zlib-ng is its drop-in
# replacement (CRC-32 several times faster). Swapped here, in the one module that uses
# stream-zip.
_stream_zip_module.zlib = zlib_ng  # type: ignore[attr-defined]  # (not in its __all__)

log = logging.getLogger(__name__)
DEFAULT_LEVEL = 6  # zlib's and Info-ZIP's default; 0 stores (deflate without compression)
MAX_DEPTH = 4096  # folders below the archived one, at most (and within the descriptor budget)
MAX_NAME_BYTES = 0xFFFF  # the zip format's limit on a member name
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def file_chunks(handle: IO[bytes], name: str) -> Iterator[bytes]:
    """The file's bytes in chunks of at most CHUNK, to its end as it is then. The holes of
    a sparse file are not read: they are zeros (the kernel would fill pages with them)."""
    with handle:
        fd, offset = handle.fileno(), 0
        try:
            while True:
                data = _seek(fd, offset, os.SEEK_DATA)
                if data is None:  # only a hole follows, or nothing
                    data = max(offset, os.fstat(fd).st_size)
                while offset < data:
                    size = min(CHUNK, data - offset)
                    yield _ZEROS[:size]
                    offset += size
                hole = _seek(fd, offset, os.SEEK_HOLE)
                if hole is None or hole <= offset:
                    return  # the end
                while offset < hole and (chunk := os.pread(fd, min(CHUNK, hole - offset), offset)):
                    yield chunk
                    offset += len(chunk)
                if offset < hole:
                    return  # cut short meanwhile
        except OSError as exc:  # the archive keeps what was read; the rest is logged
            log.warning("Zip: stopped reading %s: %s", name, exc.strerror)


_ZEROS = bytes(CHUNK)


def _seek(fd: int, offset: int, whence: int) -> int | None:
    """The next data (SEEK_DATA) or hole (SEEK_HOLE) at or after `offset`; None at the
    file's end."""
    try:
        return os.lseek(fd, offset, whence)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None
        raise


def _max_depth() -> int:
    """A quarter of the descriptor limit (several deep zips fit at once), at most MAX_DEPTH."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 4 * MAX_DEPTH
    return max(16, min(MAX_DEPTH, soft // 4))


def _arc_name(parent: str, name: str) -> str:
    try:
        name.encode()
    except UnicodeEncodeError:  # a name that is not UTF-8 on disk: shown with U+FFFD
        name = os.fsencode(name).decode("utf-8", "replace")
    return f"{parent}/{name}"


def _time(st: os.stat_result) -> datetime:
    return datetime.fromtimestamp(st.st_mtime, UTC)


def _file_member(folder: int, child: str, name: str) -> Entry | None:
    try:
        fd = os.open(child, _FILE, dir_fd=folder)
    except OSError as exc:
        log.warning("Zip: skipped unreadable %s: %s", name, exc.strerror)
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # replaced by something else meanwhile
        os.close(fd)
        log.warning("Zip: skipped %s: no longer a regular file", name)
        return None
    handle = os.fdopen(fd, "rb", buffering=0)  # closed by file_chunks
    mode = stat.S_IFREG | stat.S_IMODE(st.st_mode)
    return Entry(name, _time(st), mode, st.st_size, file_chunks(handle, name))


def _members(top: int, root_name: str) -> Iterator[Entry]:
    """The members of folder `top` (owned: closed here), depth first, each folder's files
    before its subfolders, by name."""
    max_depth = _max_depth()
    frames: list[tuple[int, str, list[str]]] = []  # (folder fd, name, subfolders left)
    entering: tuple[int, str] | None = (top, root_name)
    try:
        while True:
            if entering is not None:
                fd, arc = entering
                entering = None
                try:
                    st = os.fstat(fd)
                    with os.scandir(fd) as it:
                        items = sorted(it, key=lambda e: e.name)
                except OSError as exc:
                    os.close(fd)
                    log.warning("Zip: skipped unreadable %s/: %s", arc, exc.strerror)
                else:
                    subfolders: list[str] = []
                    frames.append((fd, arc, subfolders))
                    yield Entry(f"{arc}/", _time(st), stat.S_IFDIR | 0o755)
                    for item in items:
                        name = _arc_name(arc, item.name)
                        if len(name.encode()) + 1 > MAX_NAME_BYTES:
                            log.warning("Zip: skipped %s...: name too long for a zip", name[:200])
                            continue
                        try:
                            st = item.stat(follow_symlinks=False)
                        except OSError as exc:
                            log.warning("Zip: skipped vanished %s: %s", name, exc.strerror)
                            continue
                        if stat.S_ISDIR(st.st_mode):
                            subfolders.append(item.name)
                        elif stat.S_ISREG(st.st_mode):
                            member = _file_member(fd, item.name, name)
                            if member is not None:
                                yield member
                        # FIFOs, sockets, devices and symlinks: skipped, never opened.
                    subfolders.reverse()  # taken from the end: by name
            if not frames:
                return
            fd, arc, subfolders = frames[-1]
            if not subfolders:
                frames.pop()
                os.close(fd)
                continue
            child = subfolders.pop()
            name = _arc_name(arc, child)
            if len(frames) > max_depth:
                log.warning("Zip: skipped %s/: more than %d folders deep", name, max_depth)
                continue
            try:
                entering = (os.open(child, _FOLDER, dir_fd=fd), name)
            except OSError as exc:
                log.warning("Zip: skipped unreadable %s/: %s", name, exc.strerror)
    finally:
        for fd, _arc, _left in frames:
            os.close(fd)
        if entering is not None:
            os.close(entering[0])


def zip_folder(
    folder: Path | Fd, level: int = DEFAULT_LEVEL, name: str | None = None
) -> Iterator[bytes]:
    """The zip of `folder` in chunks of 1 MiB (the last one shorter). `folder` is a path
    or an opened folder (whose descriptor the zip takes over); `name` is the archive's
    root folder (by default the folder's name)."""
    if isinstance(folder, Path):
        root_name = name or folder.name
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        root_name = name or "folder"
        top, folder.fd = folder.fd, -1  # taken over: closed by _members
    pool = DeflatePool(level)
    try:
        pieces = iter(stream_zip(pool.members(_members(top, root_name)), chunk_size=CHUNK))
        # The first piece (the root folder's header) leaves at once: the download starts
        # as soon as it is asked, however long its first MiB takes to deflate.
        if first := next(pieces, b""):
            yield first
        pending = bytearray()
        for piece in pieces:
            pending += piece
            while len(pending) >= CHUNK:
                yield bytes(pending[:CHUNK])
                del pending[:CHUNK]
        if pending:
            yield bytes(pending)
    finally:
        pool.close()
