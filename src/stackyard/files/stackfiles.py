"""A stack's compose file or `.env`, saved through the file browser, is checked as the
stack page checks it: compose must accept it, or the save is refused and the file stays
as it was.

Which saves count: a file directly inside a stack folder of the stacks folder (a folder
whose name is a stack id, not a symlink, holding a compose file) named like a compose
file (`compose.yaml`, `compose.yml`, `docker-compose.yaml`, `docker-compose.yml`) or
`.env`. The candidate is written to a scratch file beside the real one, the validator
(compose's `config`, see `stackyard.stacks.host.Host.validate`) runs on it, and the
scratch file is removed on every exit path. Everything is opened beneath the root's
descriptor; the validator gets paths because compose takes paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from stackyard.compose.references import COMPOSE_FILES
from stackyard.errors import Invalid
from stackyard.files.confine import errors_for
from stackyard.fs import beneath
from stackyard.fs.at import DIRECTORY, NEW_FILE_MODE, lstat_at, write_all
from stackyard.slugs import check_slug

#: Validates a candidate compose file (and env file) in a stack folder; raises Invalid.
#: The same shape as `stackyard.stacks.store.Validator`: (folder, compose file, env file).
Validator = Callable[[Path, Path, Path | None], None]

ENV_FILE = ".env"


def stack_file(relative: PurePosixPath) -> tuple[str, str] | None:
    """(stack folder name, file name) when `relative` names a stack's compose file or
    `.env` by its shape (the folder is checked to be a stack by `check`)."""
    if len(relative.parts) != 2:
        return None
    folder, name = relative.parts
    if name not in (*COMPOSE_FILES, ENV_FILE):
        return None
    try:
        check_slug(folder)
    except Invalid:
        return None
    return folder, name


def _regular(folder_fd: int, name: str) -> bool:
    """Whether `name` in the folder is a regular file (a link inside the folder followed)."""
    try:
        fd = beneath.open_beneath(folder_fd, name, os.O_PATH)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def _compose_name(folder_fd: int) -> str | None:
    for name in COMPOSE_FILES:
        if _regular(folder_fd, name):
            return name
    return None


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
        yield fd if _compose_name(fd) is not None else None
    finally:
        os.close(fd)


@contextlib.contextmanager
def _scratch(folder_fd: int, relative: PurePosixPath, name: str, data: bytes) -> Iterator[str]:
    """The candidate in a new scratch file beside `name`; removed afterwards."""
    scratch = f".{name}.stackyard-check"
    with errors_for(relative):
        if (st := lstat_at(folder_fd, scratch)) is not None and not stat.S_ISDIR(st.st_mode):
            os.unlink(scratch, dir_fd=folder_fd)  # left over from a crash
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(scratch, flags, NEW_FILE_MODE, dir_fd=folder_fd)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        yield scratch
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch, dir_fd=folder_fd)


def check_stack_file(
    root: Path, root_fd: int, relative: PurePosixPath, data: bytes, validate: Validator | None
) -> bool:
    """Validate `data` as the new content of `relative` when that is a stack's compose
    file or `.env` (Invalid with compose's error otherwise); True when it was one."""
    found = stack_file(relative)
    if found is None or validate is None:
        return False
    folder, name = found
    with _opened_stack(root_fd, folder) as folder_fd:
        if folder_fd is None:
            return False
        path = root / folder
        with _scratch(folder_fd, relative, name, data) as scratch:
            try:
                if name == ENV_FILE:
                    compose = _compose_name(folder_fd)
                    if compose is None:  # gone meanwhile: nothing to check it against
                        return False
                    validate(path, path / compose, path / scratch)
                else:
                    env = path / ENV_FILE if _regular(folder_fd, ENV_FILE) else None
                    validate(path, path / scratch, env)
            except Invalid as exc:
                # Compose names the file it checked: name the user's file, not the copy.
                detail = exc.detail.replace(str(path / scratch), str(path / name))
                detail = detail.replace(scratch, name)
                raise Invalid(detail) from exc
    return True
