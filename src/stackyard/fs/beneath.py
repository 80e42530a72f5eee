"""Opening a path relative to a directory descriptor without ever leaving that directory.

Symlinks are followed while they stay beneath the directory; a link that is absolute,
or whose `..` climbs above the directory, is refused with EXDEV, as the kernel's
openat2(RESOLVE_BENEATH) does. Where the kernel has openat2 it does the resolution in
one call; otherwise `_walk` does it one component at a time with O_NOFOLLOW, resolving
links by hand (at most 40). Either way every step is relative to a descriptor already
beneath the directory, so swapping a folder for a symlink during a request cannot
redirect it: callers then work on the descriptors they got, never on path strings.

Everything here raises plain OSError; `stackyard.fs.errors` turns it into the error tree.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import Literal

from stackyard.fs import syscalls

Resolver = Literal["openat2", "walk"]
MAX_LINKS = 40  # as the kernel (MAXSYMLINKS)
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

_resolver: Resolver | None = None  # chosen on first use


def resolver() -> Resolver:
    """The implementation in use: openat2 where the kernel allows it, the walk otherwise."""
    global _resolver
    if _resolver is None:
        _resolver = "openat2" if syscalls.openat2_available() else "walk"
    return _resolver


@contextlib.contextmanager
def using(name: Resolver) -> Iterator[None]:
    """Force one implementation (tests run both)."""
    global _resolver
    if name == "openat2" and not syscalls.openat2_available():
        raise RuntimeError("openat2 is not available on this kernel")
    before, _resolver = _resolver, name
    try:
        yield
    finally:
        _resolver = before


def _error(code: int) -> OSError:
    return OSError(code, os.strerror(code))


def open_beneath(dir_fd: int, path: str, flags: int, mode: int = 0) -> int:
    """open(2) of `path` relative to `dir_fd`, resolved beneath it (see the module).

    The last component is followed too unless `flags` has O_NOFOLLOW (then a symlink
    there gives ELOOP, or with O_PATH the link itself). "" and "." name `dir_fd` itself.
    """
    flags |= os.O_CLOEXEC
    if not flags & (os.O_CREAT | os.O_TMPFILE):
        mode = 0
    path = path or "."
    if resolver() == "openat2":
        return syscalls.openat2(
            dir_fd,
            path,
            flags,
            mode,
            syscalls.RESOLVE_BENEATH | syscalls.RESOLVE_NO_MAGICLINKS,
        )
    return _walk(dir_fd, path, flags, mode)


def _parts(path: str) -> list[str]:
    """Components, reversed (the next one is at the end). A trailing "/" means the last
    component must be a folder: it becomes a final "."."""
    parts = [p for p in path.split("/") if p]
    if path.endswith("/") and parts:
        parts.append(".")
    return parts[::-1] or ["."]


def _walk(dir_fd: int, path: str, flags: int, mode: int) -> int:
    """The fallback: one openat(O_NOFOLLOW) per component, links expanded by hand."""
    if path.startswith("/"):
        raise _error(errno.EXDEV)
    todo = _parts(path)
    held: list[int] = []  # the folders walked into, beneath dir_fd (".." pops one)
    links = 0
    try:
        while True:
            name = todo.pop()
            last = not todo
            here = held[-1] if held else dir_fd
            if name in (".", ".."):
                if name == "..":
                    if not held:
                        raise _error(errno.EXDEV)  # would climb above dir_fd
                    os.close(held.pop())
                    here = held[-1] if held else dir_fd
                if last:
                    return os.open(".", flags | os.O_NOFOLLOW, mode, dir_fd=here)
                continue
            if last:
                try:
                    fd = os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=here)
                except OSError as exc:
                    # A link as the last component: ELOOP, or ENOTDIR with O_DIRECTORY.
                    if flags & os.O_NOFOLLOW or exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    target = _link_target(here, name)
                    if target is None:
                        raise
                else:
                    # O_PATH|O_NOFOLLOW opens a link itself: follow it unless asked not to.
                    if flags & os.O_NOFOLLOW or not flags & os.O_PATH:
                        return fd
                    if not stat.S_ISLNK(os.fstat(fd).st_mode):
                        return fd
                    try:
                        target = os.readlink("", dir_fd=fd)
                    finally:
                        os.close(fd)
            else:
                fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=here)
                kind = stat.S_IFMT(os.fstat(fd).st_mode)
                if kind == stat.S_IFDIR:
                    held.append(fd)
                    continue
                if kind != stat.S_IFLNK:
                    os.close(fd)
                    raise _error(errno.ENOTDIR)
                try:
                    target = os.readlink("", dir_fd=fd)  # the link this descriptor names
                finally:
                    os.close(fd)
            links += 1
            if links > MAX_LINKS:
                raise _error(errno.ELOOP)
            if target.startswith("/"):
                raise _error(errno.EXDEV)  # absolute links are refused, as RESOLVE_BENEATH does
            if not target:
                raise _error(errno.ENOENT)
            todo.extend(_parts(target))  # relative to the folder holding the link: `here`
    finally:
        for fd in held:
            os.close(fd)


def _link_target(dir_fd: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):  # not a link (any more)
            return None
        raise


def _split(path: str) -> tuple[str, str]:
    head, _, name = path.rstrip("/").rpartition("/")
    return head or ".", name


def open_parent(dir_fd: int, path: str) -> tuple[int, str]:
    """(descriptor of the folder holding the last component, its name). The folders on
    the way are resolved beneath `dir_fd`; the last component is not looked at, so a
    link there is the link itself (to delete, rename or replace it)."""
    head, name = _split(path)
    if name in ("", ".", ".."):
        raise _error(errno.EISDIR)
    return open_beneath(dir_fd, head, DIRECTORY), name


def open_parent_following(dir_fd: int, path: str) -> tuple[int, str]:
    """As `open_parent`, but a symlink as the last component is followed (beneath
    `dir_fd`) to the entry it names, which need not exist: where a save writes."""
    for _ in range(MAX_LINKS + 1):
        parent, name = open_parent(dir_fd, path)
        try:
            target = _link_target(parent, name)
        except BaseException:
            os.close(parent)
            raise
        if target is None:
            return parent, name
        os.close(parent)
        if target.startswith("/"):
            raise _error(errno.EXDEV)
        head = path.rstrip("/").rpartition("/")[0]
        path = f"{head}/{target}" if head else target  # the kernel resolves the "..": physical
    raise _error(errno.ELOOP)
