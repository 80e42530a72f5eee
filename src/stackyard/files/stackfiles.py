"""A stack's compose files or `.env`, saved through the file browser, are checked as the
stack page checks them (`stackyard.compose.candidate`): compose must accept them, or the
save is refused and the file stays as it was.

Which saves count: a file directly inside a stack folder of the stacks folder (a folder
whose name is a stack id, not a symlink, holding a compose file) named like a compose
file, a compose override file, or `.env`.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from stackyard.compose.candidate import CHECKED, Validator, check_candidate, compose_name
from stackyard.errors import Invalid
from stackyard.files.confine import errors_for
from stackyard.fs.at import DIRECTORY
from stackyard.slugs import check_slug

__all__ = ["Validator", "check_stack_file", "stack_file"]


def stack_file(relative: PurePosixPath) -> tuple[str, str] | None:
    """(stack folder name, file name) when `relative` names a stack's compose file or
    `.env` by its shape (the folder is checked to be a stack by `check_stack_file`)."""
    if len(relative.parts) != 2:
        return None
    folder, name = relative.parts
    if name not in CHECKED:
        return None
    try:
        check_slug(folder)
    except Invalid:
        return None
    return folder, name


@contextlib.contextmanager
def _opened_stack(root_fd: int, folder: str) -> Iterator[int | None]:
    """The stack folder as a descriptor (never through a link), or None: not a stack."""
    try:
        fd = os.open(folder, DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            yield None
            return
        raise
    try:
        yield fd if compose_name(fd) is not None else None
    finally:
        os.close(fd)


def check_stack_file(
    root: Path, root_fd: int, relative: PurePosixPath, data: bytes, validate: Validator | None
) -> bool:
    """Validate `data` as the new content of `relative` when that is a stack's compose
    file or `.env` (Invalid with compose's error otherwise); True when it was one."""
    found = stack_file(relative)
    if found is None or validate is None:
        return False
    folder, name = found
    with errors_for(relative), _opened_stack(root_fd, folder) as folder_fd:
        if folder_fd is None:
            return False
        check_candidate(folder_fd, root / folder, name, data, validate)
    return True
