"""Replacing a file by path whole or not at all, for the service's own files (the data
folder: caches, stores, the secret key). User paths go through `at.write_atomic_at`
with a confined folder descriptor; this opens the folder by path and uses the same core.

The sequence: a private temporary file beside the target, written and fsync'ed, its
mode set, renamed over the target, then the folder fsync'ed so that the rename itself
survives a crash. A reader sees the old file or the new one, never a part.
"""

from __future__ import annotations

import os
from pathlib import Path

from stackyard.fs.at import DIRECTORY, NEW_FILE_MODE, write_atomic_at

__all__ = ["NEW_FILE_MODE", "fsync_folder", "write_atomic"]


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data`. The mode is `mode`, else the replaced file's, else
    0644. Missing parent folders are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, DIRECTORY)
    try:
        write_atomic_at(folder, path.name, data, mode)
    finally:
        os.close(folder)


def fsync_folder(path: Path) -> None:
    """Make the entries of folder `path` (a rename, a removal) durable."""
    folder = os.open(path, DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
