"""Listing, reading and editing files under the root."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from stackyard.errors import Conflict, Invalid, NotFound
from stackyard.files.confine import (
    clean,
    errors_for,
    open_in,
    opened_root,
    parent_in,
    printable,
    shown,
)
from stackyard.files.stackfiles import Validator, check_stack_file
from stackyard.fs import beneath
from stackyard.fs.at import (
    DIRECTORY,
    NEW_FILE_MODE,
    lstat_at,
    read_all,
    remove_tree_at,
    rename_at,
    write_atomic_at,
)
from stackyard.fs.errors import as_error

EntryType = Literal["file", "dir", "symlink", "other"]
#: What a symlink leads to, resolved beneath the root: a file or folder inside it, out of
#: it (refused by every operation), nothing (dangling, a loop), or something else inside.
LinkKind = Literal["file", "dir", "outside", "broken", "other"]
MAX_TEXT_BYTES = 5 * 1024 * 1024
#: Paths one existence check takes (a folder upload asks once, in batches of this size).
MAX_CHECKED_PATHS = 5000


@dataclass(frozen=True)
class Entry:
    name: str
    path: str  # relative to the root
    type: EntryType
    size: int
    mode: str  # "0644"
    modified: datetime
    target: str | None  # where a symlink points (as written in the link)
    link: LinkKind | None  # what a symlink leads to (None: not a symlink)


@dataclass(frozen=True)
class TextFile:
    path: str
    content: str
    version: str  # changes whenever the file changes; sent back when saving


def hidden(name: str) -> bool:
    return name.startswith(".")


def _type(mode: int) -> EntryType:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def _link_kind(root_fd: int, path: PurePosixPath) -> LinkKind:
    """Where the link at `path` leads, resolved beneath the root as every operation
    resolves it (a link leading out, absolute ones included, is "outside")."""
    try:
        fd = beneath.open_beneath(root_fd, path.as_posix(), os.O_PATH)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            return "outside"
        return "broken"  # ENOENT, ELOOP, ENOTDIR, EACCES: nothing usable there
    try:
        kind = _type(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if kind == "file" or kind == "dir":
        return kind
    return "other"


def _entry(root_fd: int, folder_fd: int, folder: PurePosixPath, name: str) -> Entry:
    st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    kind = _type(st.st_mode)
    link = _link_kind(root_fd, folder / name) if kind == "symlink" else None
    return Entry(
        name=printable(name),
        path=shown(folder / name),
        type=kind,
        size=st.st_size if kind == "file" else 0,
        mode=f"{stat.S_IMODE(st.st_mode):04o}",
        modified=datetime.fromtimestamp(st.st_mtime, UTC),
        target=printable(os.readlink(name, dir_fd=folder_fd)) if kind == "symlink" else None,
        link=link,
    )


def list_folder(root: Path, user_path: str, show_hidden: bool) -> tuple[str, list[Entry]]:
    """Folders first, then files, by name; dotfiles only when asked."""
    relative = clean(user_path)
    entries = []
    with opened_root(root) as root_fd:
        fd = open_in(root_fd, relative, DIRECTORY)
        try:
            with errors_for(relative), os.scandir(fd) as it:
                for item in it:
                    if show_hidden or not hidden(item.name):
                        with contextlib.suppress(FileNotFoundError):  # gone meanwhile
                            entries.append(_entry(root_fd, fd, relative, item.name))
        finally:
            os.close(fd)
    entries.sort(key=lambda e: (e.type != "dir", e.name.lower()))
    return shown(relative), entries


def _version(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns:x}-{st.st_size:x}"


#: Opening never blocks (a FIFO) nor takes a terminal; non-files are refused after fstat.
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
#: Files are sent, and zips built, in pieces of 1 MiB.
CHUNK = 1024 * 1024


def read_text(root: Path, user_path: str) -> TextFile:
    relative = clean(user_path)
    with opened_root(root) as root_fd:
        fd = open_in(root_fd, relative, READ_FLAGS)
        try:
            with errors_for(relative):
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise Invalid(f"Not a file: {user_path}")
                if st.st_size > MAX_TEXT_BYTES:
                    raise Invalid(
                        f"File too large to edit here ({st.st_size} bytes); download it instead"
                    )
                data = read_all(fd, MAX_TEXT_BYTES)
                st = os.fstat(fd)
        finally:
            os.close(fd)
    if len(data) > MAX_TEXT_BYTES:
        raise Invalid("File too large to edit here; download it instead")
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid("Not a text file (not UTF-8); download it instead") from exc
    return TextFile(shown(relative), content, _version(st))


def save_text(
    root: Path,
    user_path: str,
    content: str,
    version: str | None,
    validate: Validator | None = None,
) -> TextFile:
    """Atomic save. `version` is what the editor read: if the file changed since, refuse.
    Without a version the file must not exist yet (a new file). A link inside the root
    is followed: the file it names is replaced, the link stays. A stack's compose file or
    `.env` is checked with `validate` first (see `stackfiles`): refused, it stays as it was."""
    relative = clean(user_path)
    data = content.encode()
    if len(data) > MAX_TEXT_BYTES:
        raise Invalid(f"Content too large (more than {MAX_TEXT_BYTES // 1024 // 1024} MiB)")
    with opened_root(root) as root_fd:
        parent, name = parent_in(root_fd, relative, follow=True)
        try:
            with errors_for(relative):
                st = _unchanged(parent, name, user_path, version)
            check_stack_file(root, root_fd, relative, data, validate)
            with errors_for(relative):
                if validate is not None:  # the check takes a while: look again
                    st = _unchanged(parent, name, user_path, version)
                mode = stat.S_IMODE(st.st_mode) if st is not None else NEW_FILE_MODE
                saved = write_atomic_at(parent, name, data, mode, replace=st is not None)
        finally:
            os.close(parent)
    return TextFile(shown(relative), content, _version(saved))


def _unchanged(
    parent: int, name: str, user_path: str, version: str | None
) -> os.stat_result | None:
    """The file as the editor read it (None: a new file), or Conflict."""
    st = lstat_at(parent, name)
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise Invalid(f"Not a file: {user_path}")
        if version is None:
            raise Conflict(f"Already exists: {user_path}")
        if _version(st) != version:
            raise Conflict(f"{user_path} changed since it was opened; reload it and edit again")
    elif version is not None:
        raise Conflict(f"{user_path} was deleted since it was opened")
    return st


def _exists_at(folder_fd: int, name: str) -> bool:
    try:
        return lstat_at(folder_fd, name) is not None
    except OSError:  # unreadable folder: the upload will say why
        return False


def existing(root: Path, user_paths: list[str]) -> list[str]:
    """Those of `user_paths` where an entry exists (a link counts, wherever it leads): what
    an upload to them would replace. Each path is cleaned as for every operation; one
    whose folders cannot be opened (missing, not a folder, leading out) does not exist."""
    if len(user_paths) > MAX_CHECKED_PATHS:
        raise Invalid(f"Too many paths (at most {MAX_CHECKED_PATHS} at once)")
    cleaned = [clean(p) for p in user_paths]
    found: list[str] = []
    by_folder: dict[PurePosixPath, list[PurePosixPath]] = {}
    for relative in cleaned:
        if relative.parts:
            by_folder.setdefault(relative.parent, []).append(relative)
        else:
            found.append("")  # the root exists
    with opened_root(root) as root_fd:
        for folder, paths in by_folder.items():
            try:
                fd = beneath.open_beneath(root_fd, folder.as_posix(), DIRECTORY)
            except OSError:
                continue
            try:
                found.extend(shown(p) for p in paths if _exists_at(fd, p.name))
            finally:
                os.close(fd)
    order = {shown(p): i for i, p in reversed(list(enumerate(cleaned)))}
    return sorted(set(found), key=lambda p: order.get(p, 0))


def make_folder(root: Path, user_path: str) -> str:
    relative = clean(user_path)
    with opened_root(root) as root_fd:
        parent, name = parent_in(root_fd, relative)
        try:
            with errors_for(relative):
                os.mkdir(name, 0o777, dir_fd=parent)  # the umask applies, as for mkdir(1)
        finally:
            os.close(parent)
    return shown(relative)


def move(root: Path, source: str, destination: str) -> str:
    """Rename or move within the root; never over an existing entry. A link is moved
    itself, not what it points to."""
    src = clean(source)
    if not src.parts:
        raise Invalid("The root cannot be moved")
    dst = clean(destination)
    with opened_root(root) as root_fd:
        src_parent, src_name = parent_in(root_fd, src)
        try:
            dst_parent, dst_name = parent_in(root_fd, dst)
            try:
                if lstat_at(src_parent, src_name) is None:
                    raise NotFound(f"No such file or folder: {shown(src)}")
                try:
                    rename_at(src_parent, src_name, dst_parent, dst_name, replace=False)
                except OSError as exc:
                    raise _move_error(exc, src, dst) from exc
            finally:
                os.close(dst_parent)
        finally:
            os.close(src_parent)
    return shown(dst)


def _move_error(exc: OSError, src: PurePosixPath, dst: PurePosixPath) -> Exception:
    if exc.errno == errno.EINVAL:
        return Invalid("A folder cannot be moved into itself")
    if exc.errno == errno.EXDEV:
        return Invalid(f"Cannot move {shown(src)} to another file system")
    if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR):
        return Conflict(f"Already exists: {shown(dst)}")
    if exc.errno == errno.ENOENT:
        return NotFound(f"No such file or folder: {shown(src)}")
    return as_error(exc, shown(src)) or exc


def delete(root: Path, user_path: str, recursive: bool) -> None:
    """Delete a file or link, an empty folder, or (recursive=True, after the user
    confirmed) a folder with everything in it, however deep."""
    relative = clean(user_path)
    if not relative.parts:
        raise Invalid("The root cannot be deleted")
    with opened_root(root) as root_fd:
        parent, name = parent_in(root_fd, relative)
        try:
            with errors_for(relative):
                st = lstat_at(parent, name)
                if st is None:
                    raise NotFound(f"No such file or folder: {shown(relative)}")
                if not stat.S_ISDIR(st.st_mode):
                    os.unlink(name, dir_fd=parent)
                elif recursive:
                    remove_tree_at(parent, name)
                else:
                    try:
                        os.rmdir(name, dir_fd=parent)
                    except OSError as exc:
                        if exc.errno != errno.ENOTEMPTY:
                            raise
                        raise Conflict(
                            f"Folder {user_path} is not empty; confirm to delete it with "
                            "everything in it"
                        ) from exc
        finally:
            os.close(parent)
