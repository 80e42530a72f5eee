"""The one place a user-supplied path becomes a real path: under its root or refused."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from stackyard.errors import Forbidden, Invalid, NotFound


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
    return PurePosixPath(*parts) if parts else PurePosixPath()


def confine(root: Path, user_path: str, must_exist: bool = True, follow: bool = True) -> Path:
    """The real path for `user_path` under `root`.

    Symlinks in the folders on the way are resolved and must stay under the root. The
    last part is followed too (and must stay under the root) unless follow=False, which
    names a link itself (to delete or rename it). With must_exist=False the last part
    may be missing (create, upload, rename target); its folder must exist.
    """
    base = root.resolve()
    relative = clean(user_path)
    if not relative.parts:
        if must_exist:
            return base
        raise Invalid("A name is needed")
    parent = (base / relative.parent).resolve()
    if not parent.is_relative_to(base):
        raise Forbidden(f"Path leads outside the root: {user_path!r}")
    path = parent / relative.name
    exists = os.path.lexists(path)
    if not exists:
        if must_exist:
            raise NotFound(f"No such file or folder: {relative.as_posix()}")
        if not parent.is_dir():
            raise NotFound(f"No such folder: {relative.parent.as_posix()}")
        return path
    if follow:
        path = path.resolve()
        if not path.is_relative_to(base):
            raise Forbidden(f"Path leads outside the root: {user_path!r}")
    return path


def relative_to_root(root: Path, path: Path) -> str:
    return path.relative_to(root.resolve()).as_posix() if path != root.resolve() else ""
