"""Uploads stream into a temporary file beside the target and are renamed into place only
when complete: an interrupted upload leaves neither a partial file nor a damaged original."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from stackyard.errors import Conflict, Invalid
from stackyard.files.confine import clean, confine, relative_to_root
from stackyard.files_atomic import NEW_FILE_MODE


def _make_parents(root: Path, user_path: str) -> None:
    """Create the folders an upload needs, one confined step at a time (a path that is
    refused is refused before anything is created)."""
    parts = clean(user_path).parts[:-1]
    for depth in range(1, len(parts) + 1):
        folder = confine(root, "/".join(parts[:depth]), must_exist=False)
        if not folder.exists():
            folder.mkdir()
        elif not folder.is_dir():
            raise Conflict(f"Not a folder: {'/'.join(parts[:depth])}")


async def receive(
    root: Path, user_path: str, body: AsyncIterator[bytes], overwrite: bool
) -> tuple[str, int]:
    """Store the streamed body at `user_path`; returns (path, size)."""
    _make_parents(root, user_path)
    target = confine(root, user_path, must_exist=False)
    if target.exists() and not target.is_file():
        raise Invalid(f"Not a file: {user_path}")
    if target.exists() and not overwrite:
        raise Conflict(f"Already exists: {user_path}")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".upload")
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in body:
                out.write(chunk)
                size += len(chunk)
        mode = target.stat().st_mode & 0o7777 if target.exists() else NEW_FILE_MODE
        os.chmod(tmp, mode)
        if not overwrite and os.path.lexists(target):  # appeared meanwhile
            raise Conflict(f"Already exists: {user_path}")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return relative_to_root(root, target), size
