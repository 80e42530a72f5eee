"""Uploads stream into a temporary file beside the target and are renamed into place only
when complete: an interrupted upload leaves neither a partial file nor a damaged original,
nor the folders it created on the way."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath

from stackyard.errors import Conflict, Invalid
from stackyard.files.confine import clean, errors_for, opened_root, parent_in, shown
from stackyard.fs import beneath
from stackyard.fs.at import (
    DIRECTORY,
    FolderChain,
    atomic_file_at,
    file_id,
    lstat_at,
    make_folders_at,
    write_all,
)


def _open_folders(root_fd: int, folder: PurePosixPath) -> FolderChain:
    """The upload's folder, opened; the missing ones are created (and undone by
    `FolderChain.undo` if the upload fails). A part that is not a folder is a Conflict."""
    with errors_for(folder):
        try:
            fd = beneath.open_beneath(root_fd, folder.as_posix(), DIRECTORY)
            return FolderChain(fd, file_id(os.fstat(fd)))
        except (FileNotFoundError, NotADirectoryError):
            pass  # find what is missing, below
        # The longest existing prefix, each opened from the root (links inside followed).
        parts = folder.parts
        base_fd, depth = os.dup(root_fd), 0
        try:
            while depth < len(parts):
                prefix = PurePosixPath(*parts[: depth + 1])
                try:
                    fd = beneath.open_beneath(root_fd, prefix.as_posix(), DIRECTORY)
                except FileNotFoundError:
                    break
                except NotADirectoryError as exc:
                    raise Conflict(f"Not a folder: {shown(prefix)}") from exc
                os.close(base_fd)
                base_fd, depth = fd, depth + 1
            try:
                return make_folders_at(base_fd, list(parts[depth:]))
            except FileExistsError as exc:  # a dangling link, or made by someone meanwhile
                blocked = PurePosixPath(*parts[: depth + 1])
                raise Conflict(f"Not a folder: {shown(blocked)}") from exc
        finally:
            os.close(base_fd)


async def receive(
    root: Path, user_path: str, body: AsyncIterator[bytes], overwrite: bool
) -> tuple[str, int]:
    """Store the streamed body at `user_path`; returns (path, size)."""
    relative = clean(user_path)  # too long, `..`, ...: refused before anything is created
    if not relative.parts:
        raise Invalid("A name is needed")
    size = 0
    with opened_root(root) as root_fd:
        chain = _open_folders(root_fd, relative.parent)
        try:
            folder, name = chain.fd, relative.name
            followed = -1
            with errors_for(relative):
                if (st := lstat_at(folder, name)) is not None and stat.S_ISLNK(st.st_mode):
                    # A link inside the root: the upload replaces the file it names.
                    followed, name = parent_in(root_fd, relative, follow=True)
                    folder = followed
            try:
                with errors_for(relative):
                    st = lstat_at(folder, name)
                    if st is not None and not stat.S_ISREG(st.st_mode):
                        raise Invalid(f"Not a file: {user_path}")
                    if st is not None and not overwrite:
                        raise Conflict(f"Already exists: {user_path}")
                try:
                    # A replaced file keeps its mode; the file appears only when complete.
                    with atomic_file_at(folder, name, replace=overwrite, suffix=".upload") as new:
                        async for chunk in body:
                            with errors_for(relative):
                                write_all(new.fd, chunk)
                            size += len(chunk)
                except FileExistsError as exc:  # appeared meanwhile
                    raise Conflict(f"Already exists: {user_path}") from exc
                except OSError as exc:
                    if exc.errno in (errno.EISDIR, errno.ENOTEMPTY):
                        raise Invalid(f"Not a file: {user_path}") from exc
                    with errors_for(relative):
                        raise
            finally:
                if followed >= 0:
                    os.close(followed)
        except BaseException:
            with contextlib.suppress(OSError):
                chain.undo()
            raise
        chain.close()
    return shown(relative), size
