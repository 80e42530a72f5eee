"""The one place a user-supplied path is cleaned and confined under its root.

`clean` refuses what could point elsewhere (NUL, backslash, absolute, `..`) or that no
file system takes (a name over 255 bytes, a path over 4095), before anything is touched.
The root is then opened once as a descriptor (`opened_root`) and the path resolved
beneath it by `stackyard.fs.beneath`: symlinks inside the root are followed, links that
lead out (absolute ones included) are refused. Operations work on the descriptors they
get here, never on a path string resolved again, so a folder swapped for a symlink in
the middle of a request cannot redirect them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath

from stackyard.errors import Forbidden, Invalid, NotFound
from stackyard.fs import beneath
from stackyard.fs.at import DIRECTORY
from stackyard.fs.errors import converted

NAME_MAX = 255  # bytes in one path component
PATH_MAX = 4095  # bytes in a whole path (4096 with its NUL)


def clean(user_path: str) -> PurePosixPath:
    """A relative path without `.`/`..` segments; refuses what could point elsewhere."""
    if "\x00" in user_path:
        raise Invalid("Path contains a NUL byte")
    if "\\" in user_path:
        raise Invalid("Path contains a backslash; use '/' between folders")
    text = user_path.strip()
    if text.startswith("/"):
        raise Forbidden(f"Absolute paths are not allowed: {user_path!r}")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if ".." in parts:
        raise Forbidden(f"Path leaves the root: {user_path!r}")
    for part in parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise Invalid(f"Name too long (more than {NAME_MAX} bytes): {part[:40]}...")
    relative = PurePosixPath(*parts) if parts else PurePosixPath()
    if len(os.fsencode(relative.as_posix())) > PATH_MAX:
        raise Invalid(f"Path too long (more than {PATH_MAX} bytes)")
    return relative


def shown(relative: PurePosixPath) -> str:
    """How a cleaned path is shown and returned: "" for the root."""
    return "" if not relative.parts else printable(relative.as_posix())


def printable(name: str) -> str:
    """A name from the file system as text: bytes that are not UTF-8 (which Python keeps
    as lone surrogates) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@contextlib.contextmanager
def opened_root(root: Path) -> Iterator[int]:
    """The root as a folder descriptor, for the duration of one operation."""
    try:
        fd = os.open(root, DIRECTORY)
    except FileNotFoundError as exc:
        raise NotFound("The root folder does not exist") from exc
    except NotADirectoryError as exc:
        raise Invalid("The root is not a folder") from exc
    try:
        yield fd
    finally:
        os.close(fd)


def errors_for(relative: PurePosixPath | str) -> AbstractContextManager[None]:
    """OSErrors inside the block become typed errors naming the user's path."""
    return converted(shown(relative) if isinstance(relative, PurePosixPath) else relative)


def open_in(root_fd: int, relative: PurePosixPath, flags: int) -> int:
    """Open `relative` beneath the root, following links that stay inside."""
    with errors_for(relative):
        return beneath.open_beneath(root_fd, relative.as_posix(), flags)


def parent_in(root_fd: int, relative: PurePosixPath, follow: bool = False) -> tuple[int, str]:
    """(descriptor of the folder holding the last part, its name). The last part is the
    entry itself (a link is not followed: delete, rename, create) unless follow=True, for
    which a link inside the root is followed to the entry it names (save, upload)."""
    if not relative.parts:
        raise Invalid("A name is needed")
    with errors_for(relative):
        if follow:
            return beneath.open_parent_following(root_fd, relative.as_posix())
        return beneath.open_parent(root_fd, relative.as_posix())
