"""Many files of one stack folder at once, by relative path: read them, or write a set of
them (each whole or not at all) and remove others, never leaving the folder.

A stack whose files come from elsewhere (a git repository's folder) is written this way:
the paths come from outside, so each is checked (`checked_path`) and every file is
opened beneath the stack's folder (`stackyard.fs.beneath`): a `..`, an absolute path or
a link that leads out of the folder is refused."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from stackyard.errors import Invalid
from stackyard.fs import beneath
from stackyard.fs.at import DIRECTORY, lstat_at, read_all, write_atomic_at

#: relative path -> its bytes; None: there is no such file (to remove, or none was there).
Tree = dict[str, bytes | None]
#: What a stack's files may weigh, all of them (they are configs, never data).
MAX_TREE_BYTES = 20 * 1024 * 1024
MAX_TREE_FILES = 2000
#: Files of the stack folder that never come from elsewhere: Stackyard keeps them.
OWN_FILES = frozenset({".secrets"})
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY


def checked_path(path: str) -> str:
    """`path` as a relative path inside a folder (`a/b.conf`); Invalid for an absolute
    one, one with `..`, an empty part or a NUL, and for Stackyard's own files."""
    parts = PurePosixPath(path).parts
    if (
        not path
        or "\0" in path
        or path.startswith("/")
        or any(p in ("", ".", "..") for p in parts)
        or path.endswith("/")
    ):
        raise Invalid(f"{path!r} is no path inside a stack folder")
    if parts[0] in OWN_FILES or parts[0] == ".git":
        raise Invalid(f"{path!r} is kept by Stackyard, not written from elsewhere")
    return "/".join(parts)


def checked_tree(files: Mapping[str, bytes | None]) -> Tree:
    """`files` with each path checked, within the bounds of a stack's files."""
    tree = {checked_path(path): data for path, data in files.items()}
    if len(tree) > MAX_TREE_FILES:
        raise Invalid(f"Too many files for a stack ({len(tree)}; at most {MAX_TREE_FILES})")
    size = sum(len(data) for data in tree.values() if data is not None)
    if size > MAX_TREE_BYTES:
        raise Invalid(f"The files weigh {size} bytes; a stack's at most {MAX_TREE_BYTES}")
    return tree


def read_tree(folder: int, paths: Iterable[str]) -> Tree:
    """The files at `paths` beneath the open folder as they are now (None: no file)."""
    found: Tree = {}
    for path in paths:
        try:
            fd = beneath.open_beneath(folder, checked_path(path), _READ)
        except (FileNotFoundError, NotADirectoryError):
            found[path] = None
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Invalid(f"{path} is not a regular file")
            data = read_all(fd, MAX_TREE_BYTES)
        finally:
            os.close(fd)
        if len(data) > MAX_TREE_BYTES:
            raise Invalid(f"{path} weighs more than {MAX_TREE_BYTES} bytes")
        found[path] = data
    return found


def put_tree(folder: int, files: Mapping[str, bytes | None]) -> None:
    """Each file of `files` written whole (its folders made), each None removed (a
    folder it leaves empty removed too). A path that leads out of the folder raises
    OSError(EXDEV), as `stackyard.fs.beneath` does."""
    for path, data in checked_tree(files).items():
        head, _, name = path.rpartition("/")
        if data is None:
            _remove(folder, head, name)
            continue
        parent = _folders(folder, head)
        try:
            write_atomic_at(parent, name, data)
        finally:
            if parent != folder:
                os.close(parent)


def _folders(folder: int, head: str) -> int:
    """The folder `head` beneath `folder`, made where missing (`folder` itself for "")."""
    fd = folder
    for part in head.split("/") if head else ():
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o755, dir_fd=fd)
        try:
            child = beneath.open_beneath(fd, part, DIRECTORY)
        finally:
            if fd != folder:
                os.close(fd)
        fd = child
    return fd


def _remove(folder: int, head: str, name: str) -> None:
    try:
        parent = beneath.open_beneath(folder, head or ".", DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)
    while head:  # the folders it leaves empty
        head, _, last = head.rpartition("/")
        try:
            parent = beneath.open_beneath(folder, head or ".", DIRECTORY)
        except OSError:
            return
        try:
            if lstat_at(parent, last) is None:
                return
            os.rmdir(last, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                return
            raise
        finally:
            os.close(parent)
