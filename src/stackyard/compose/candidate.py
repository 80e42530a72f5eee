"""A stack's compose file or `.env`, checked before it is saved: the new content is written
to a scratch file beside the real one, compose's `config` runs on it with the folder's
other file (the validator, see `stackyard.stacks.machine.Machine.validate`), and the scratch
file is removed on every exit path. A refusal names the user's file, never the copy, and
says which kind of file compose refused.

The stack page (`stackyard.stacks.store`) and the file browser (`stackyard.files.browse`)
both save through this. Files are opened beneath the stack folder's descriptor; the
validator gets paths because compose takes paths. OSErrors propagate: each caller turns
them into typed errors that name the file as its user knows it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from stackyard.compose.references import COMPOSE_FILES, OVERRIDE_FILES
from stackyard.errors import ComposeRejected, Invalid
from stackyard.fs import beneath
from stackyard.fs.at import NEW_FILE_MODE, lstat_at, write_all

#: Validates compose files (and an env file) of a stack folder; raises Invalid.
#: (folder, compose files in compose's order, env file or None).
Validator = Callable[[Path, list[Path], Path | None], None]

ENV_FILE = ".env"
#: The files of a stack folder whose saves are checked.
CHECKED = frozenset({*COMPOSE_FILES, *OVERRIDE_FILES, ENV_FILE})


def regular(folder_fd: int, name: str) -> bool:
    """Whether `name` in the folder is a regular file (a link inside the folder followed)."""
    try:
        fd = beneath.open_beneath(folder_fd, name, os.O_PATH)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def compose_name(folder_fd: int) -> str | None:
    """The folder's compose file, in compose's order of preference (None: it has none)."""
    return next((name for name in COMPOSE_FILES if regular(folder_fd, name)), None)


@contextlib.contextmanager
def _scratch(folder_fd: int, name: str, data: bytes) -> Iterator[str]:
    """`data` in a new scratch file beside `name`; removed afterwards."""
    scratch = f".{name}.stackyard-check"
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


def check_candidate(
    folder_fd: int, folder: Path, name: str, data: bytes, validate: Validator
) -> None:
    """Validate `data` as the new content of `name` (a compose file, an override file or
    `.env`) of the stack folder open as `folder_fd` (at `folder`). Raises Invalid with
    compose's message, labelled by the kind of file; a folder with no compose file left
    has nothing to check `.env` against."""
    main = compose_name(folder_fd)
    with _scratch(folder_fd, name, data) as scratch:
        try:
            if name == ENV_FILE:
                if main is None:
                    return
                validate(folder, [folder / main], folder / scratch)
                return
            env = folder / ENV_FILE if regular(folder_fd, ENV_FILE) else None
            if name in OVERRIDE_FILES:
                if main is None:
                    return
                # An override is read merged onto the main file, as compose reads it.
                validate(folder, [folder / main, folder / scratch], env)
            else:
                validate(folder, [folder / scratch], env)
        except Invalid as exc:
            reason = exc.reason if isinstance(exc, ComposeRejected) else exc.detail
            reason = reason.replace(str(folder / scratch), str(folder / name))
            reason = reason.replace(scratch, name)
            label = ".env file" if name == ENV_FILE else "compose file"
            raise ComposeRejected(reason, label) from exc
