"""Trees deeper than PATH_MAX, made and removed through descriptors."""

from __future__ import annotations

import os
from pathlib import Path

from stackyard.fs.at import remove_tree_at

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY


def deep_tree(parent: Path, name: str, depth: int, leaf: str = "leaf.txt") -> None:
    """parent/name/d/d/.../leaf: `depth` folders, a file `f` in each but the deepest,
    which holds `leaf` ("deepest")."""
    top = os.open(parent, DIRECTORY)
    os.mkdir(name, dir_fd=top)
    fd = os.open(name, DIRECTORY, dir_fd=top)
    os.close(top)
    for _ in range(depth - 1):
        _write(fd, "f", b"x")
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    _write(fd, leaf, b"deepest")
    os.close(fd)


def remove_tree(parent: Path, name: str) -> None:
    top = os.open(parent, DIRECTORY)
    try:
        if os.path.lexists(parent / name):
            remove_tree_at(top, name)
    finally:
        os.close(top)


def _write(folder: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=folder)
    os.write(fd, data)
    os.close(fd)
