"""Operations on (folder descriptor, name): nothing here follows a path string again.

- `atomic_file_at`, `write_atomic_at`: a temporary file in the same folder, fsync, a
  rename, and the folder fsync'ed: every writer of a whole file uses it.
- `temp_file_at`: an exclusive, randomly named file to stream into.
- `rename_at`: rename, optionally never over an existing entry (RENAME_NOREPLACE).
- `make_folders_at`: create a chain of folders, undone by `FolderChain.undo`.
- `remove_tree_at`: delete a folder with everything in it, iteratively, holding at most
  three descriptors, climbing back through ".." checked against (st_dev, st_ino).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from stackyard.fs import syscalls

NEW_FILE_MODE = 0o644
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
NAME_MAX = 255

FileId = tuple[int, int]  # (st_dev, st_ino)


class Fd:
    """An owned descriptor, closed once: explicitly, on leaving a `with`, or when dropped
    (a response that never started streaming still lets its descriptor go)."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            self.close()


def file_id(st: os.stat_result) -> FileId:
    return (st.st_dev, st.st_ino)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry itself (a link is not followed); None if there is none."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _temp_name(name: str, suffix: str) -> str:
    token = secrets.token_hex(6)
    candidate = f".{name}.{token}{suffix}"
    if len(os.fsencode(candidate)) <= NAME_MAX:
        return candidate
    return f".stackyard.{token}{suffix}"


def temp_file_at(dir_fd: int, name: str, suffix: str = ".tmp") -> tuple[int, str]:
    """A new, empty, private file beside `name` (O_EXCL|O_NOFOLLOW: never an existing
    entry, never through a link): (descriptor open for writing, its name)."""
    for _ in range(100):
        tmp = _temp_name(name, suffix)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(tmp, flags, 0o600, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def rename_at(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, *, replace: bool) -> None:
    """renameat; with replace=False never over an existing entry (EEXIST instead)."""
    if replace:
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        return
    try:
        syscalls.renameat2(src_dir_fd, src, dst_dir_fd, dst, syscalls.RENAME_NOREPLACE)
    except OSError as exc:
        # ENOSYS: an old kernel; EINVAL: a file system without the flag, or a folder
        # moved into itself (which the plain rename refuses again, with EINVAL).
        if exc.errno not in (errno.ENOSYS, errno.EINVAL):
            raise
        if lstat_at(dst_dir_fd, dst) is not None:
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST)) from None
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass
class PendingFile:
    """The temporary file of `atomic_file_at`: write to `fd`; `stat` is the file's once
    it is in place."""

    fd: int
    temp_name: str
    stat: os.stat_result | None = None


@contextlib.contextmanager
def atomic_file_at(
    dir_fd: int, name: str, mode: int | None = None, *, replace: bool = True, suffix: str = ".tmp"
) -> Iterator[PendingFile]:
    """A file written whole or not at all, the one sequence every writer uses: the block
    writes a private temporary file beside `name`; when it ends without error the file
    gets its mode (`mode`, else the replaced file's, else 0644), is fsync'ed, renamed over
    `name` and the folder fsync'ed, so the rename survives a crash. On any error, the
    block's or the rename's, the temporary file is removed and `name` stays as it was.
    With replace=False an entry that exists (or appears meanwhile) is refused (EEXIST)."""
    fd, tmp = temp_file_at(dir_fd, name, suffix)
    pending = PendingFile(fd, tmp)
    try:
        yield pending
        if mode is None:
            existing = lstat_at(dir_fd, name)
            regular = existing is not None and stat.S_ISREG(existing.st_mode)
            mode = stat.S_IMODE(existing.st_mode) if regular and existing else NEW_FILE_MODE
        os.fchmod(fd, mode)
        os.fsync(fd)
        rename_at(dir_fd, tmp, dir_fd, name, replace=replace)
        os.fsync(dir_fd)
        pending.stat = os.fstat(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    finally:
        os.close(fd)


def write_atomic_at(
    dir_fd: int, name: str, data: bytes, mode: int | None = None, *, replace: bool = True
) -> os.stat_result:
    """Write `name` in `dir_fd` whole or not at all (`atomic_file_at`); returns the new
    file's stat."""
    with atomic_file_at(dir_fd, name, mode, replace=replace) as pending:
        write_all(pending.fd, data)
    assert pending.stat is not None
    return pending.stat


def read_all(fd: int, limit: int) -> bytes:
    """Up to `limit` + 1 bytes from `fd` (so that the caller sees "too large")."""
    chunks = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _up(fd: int, expected: FileId) -> int:
    """The parent of folder `fd` through "..", checked to be the folder we came from:
    a folder renamed elsewhere meanwhile stops the walk instead of redirecting it."""
    parent = os.open("..", DIRECTORY, dir_fd=fd)
    if file_id(os.fstat(parent)) != expected:
        os.close(parent)
        raise OSError(errno.ESTALE, "a folder was moved during the operation")
    return parent


def _rmdir_if_same(dir_fd: int, name: str, expected: FileId) -> bool:
    """Remove empty folder `name` if it is still the one we emptied. False: not empty
    (something appeared meanwhile) or replaced: look again."""
    st = lstat_at(dir_fd, name)
    if st is None:
        return True
    if file_id(st) != expected or not stat.S_ISDIR(st.st_mode):
        return False
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return False
        raise
    return True


def _next_subfolder(fd: int) -> tuple[int, str] | None:
    """Unlink everything in folder `fd` but folders; open the first folder found (None:
    the folder is empty now)."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                try:
                    child = os.open(entry.name, DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    # Swapped for a file or link meanwhile: remove that instead.
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=fd)
                    continue
                return child, entry.name
            try:
                os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except IsADirectoryError:  # became a folder meanwhile: the next pass sees it
                continue
    return None


def remove_tree_at(dir_fd: int, name: str) -> None:
    """Delete folder `name` of `dir_fd` and everything in it, however deep: no recursion,
    at most three descriptors open, links never followed."""
    top = os.open(name, DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    ids: list[FileId] = [file_id(os.fstat(dir_fd)), file_id(os.fstat(top))]
    names: list[str] = [name]  # names[i] is the name of ids[i + 1] in ids[i]
    fd = top
    try:
        while True:
            found = _next_subfolder(fd)
            if found is not None:
                child, child_name = found
                ids.append(file_id(os.fstat(child)))
                names.append(child_name)
                os.close(fd)
                fd = child
                continue
            if len(names) == 1:
                break
            parent = _up(fd, ids[-2])
            os.close(fd)
            fd = parent
            done = names.pop()
            done_id = ids.pop()
            _rmdir_if_same(fd, done, done_id)  # if not: the next pass finds it again
    finally:
        os.close(fd)
    if not _rmdir_if_same(dir_fd, name, ids[1]):
        st = lstat_at(dir_fd, name)
        if st is not None and file_id(st) == ids[1]:
            raise OSError(errno.ENOTEMPTY, "entries appeared while deleting")


@dataclass
class FolderChain:
    """Folders created one inside the other below an existing one: `fd` is the deepest
    (or the existing folder when none had to be created)."""

    fd: int
    base: FileId
    created: list[tuple[str, FileId]] = field(default_factory=list)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def undo(self) -> None:
        """Remove the folders this chain created, deepest first, if still empty; climbs
        through ".." checked against the remembered parents. Closes the chain."""
        if not self.created:
            self.close()
            return
        fd, self.fd = self.fd, -1
        try:
            for depth in range(len(self.created) - 1, -1, -1):
                name, own = self.created[depth]
                parent_id = self.created[depth - 1][1] if depth else self.base
                parent = _up(fd, parent_id)
                os.close(fd)
                fd = parent
                if not _rmdir_if_same(fd, name, own):
                    break  # not empty any more: someone else uses it now
        finally:
            os.close(fd)
        self.created.clear()


def make_folders_at(dir_fd: int, names: Iterator[str] | list[str]) -> FolderChain:
    """Create `names` one inside the other, starting in `dir_fd` (which is not closed).
    On failure what was created is removed again and the error raised."""
    chain = FolderChain(os.dup(dir_fd), file_id(os.fstat(dir_fd)))
    try:
        for name in names:
            os.mkdir(name, 0o777, dir_fd=chain.fd)  # the umask applies, as for mkdir(1)
            made = lstat_at(chain.fd, name)
            child = os.open(name, DIRECTORY | os.O_NOFOLLOW, dir_fd=chain.fd)
            if made is None or file_id(os.fstat(child)) != file_id(made):
                os.close(child)
                raise OSError(errno.ESTALE, "a folder was replaced while it was created")
            os.close(chain.fd)
            chain.fd = child
            chain.created.append((name, file_id(made)))
    except BaseException:
        chain.undo()
        raise
    return chain
