"""Listing, reading and editing files under the root."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from stackyard.errors import Conflict, Invalid
from stackyard.files.confine import confine, relative_to_root
from stackyard.files_atomic import write_atomic

EntryType = Literal["file", "dir", "symlink", "other"]
MAX_TEXT_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    name: str
    path: str  # relative to the root
    type: EntryType
    size: int
    mode: str  # "0644"
    modified: datetime
    target: str | None  # where a symlink points (as written in the link)


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


def _entry(root: Path, path: Path) -> Entry:
    st = path.lstat()
    kind = _type(st.st_mode)
    return Entry(
        name=path.name,
        path=relative_to_root(root, path),
        type=kind,
        size=st.st_size if kind == "file" else 0,
        mode=f"{stat.S_IMODE(st.st_mode):04o}",
        modified=datetime.fromtimestamp(st.st_mtime, UTC),
        target=os.readlink(path) if kind == "symlink" else None,
    )


def list_folder(root: Path, user_path: str, show_hidden: bool) -> tuple[str, list[Entry]]:
    """Folders first, then files, by name; dotfiles only when asked."""
    folder = confine(root, user_path)
    if not folder.is_dir():
        raise Invalid(f"Not a folder: {user_path}")
    entries = []
    with os.scandir(folder) as it:
        for item in it:
            if show_hidden or not hidden(item.name):
                with contextlib.suppress(FileNotFoundError):  # gone meanwhile
                    entries.append(_entry(root, Path(item.path)))
    entries.sort(key=lambda e: (e.type != "dir", e.name.lower()))
    return relative_to_root(root, folder), entries


def _version(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns:x}-{st.st_size:x}"


def read_text(root: Path, user_path: str) -> TextFile:
    path = confine(root, user_path)
    if not path.is_file():
        raise Invalid(f"Not a file: {user_path}")
    st = path.stat()
    if st.st_size > MAX_TEXT_BYTES:
        raise Invalid(f"File too large to edit here ({st.st_size} bytes); download it instead")
    data = path.read_bytes()
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid("Not a text file (not UTF-8); download it instead") from exc
    return TextFile(relative_to_root(root, path), content, _version(st))


def save_text(root: Path, user_path: str, content: str, version: str | None) -> TextFile:
    """Atomic save. `version` is what the editor read: if the file changed since, refuse.
    Without a version the file must not exist yet (a new file)."""
    path = confine(root, user_path, must_exist=False)
    data = content.encode()
    if len(data) > MAX_TEXT_BYTES:
        raise Invalid(f"Content too large (more than {MAX_TEXT_BYTES // 1024 // 1024} MiB)")
    if path.exists():
        if not path.is_file():
            raise Invalid(f"Not a file: {user_path}")
        if version is None:
            raise Conflict(f"Already exists: {user_path}")
        if _version(path.stat()) != version:
            raise Conflict(f"{user_path} changed since it was opened; reload it and edit again")
    elif version is not None:
        raise Conflict(f"{user_path} was deleted since it was opened")
    write_atomic(path, data)
    return TextFile(relative_to_root(root, path), content, _version(path.stat()))


def make_folder(root: Path, user_path: str) -> str:
    path = confine(root, user_path, must_exist=False)
    if os.path.lexists(path):
        raise Conflict(f"Already exists: {user_path}")
    path.mkdir()
    return relative_to_root(root, path)


def move(root: Path, source: str, destination: str) -> str:
    """Rename or move within the root; never over an existing entry."""
    src = confine(root, source, follow=False)
    if src == root.resolve():
        raise Invalid("The root cannot be moved")
    dst = confine(root, destination, must_exist=False, follow=False)
    if os.path.lexists(dst):
        raise Conflict(f"Already exists: {destination}")
    if src.is_dir() and not src.is_symlink() and dst.is_relative_to(src):
        raise Invalid("A folder cannot be moved into itself")
    os.rename(src, dst)
    return relative_to_root(root, dst)


def delete(root: Path, user_path: str, recursive: bool) -> None:
    """Delete a file or link, an empty folder, or (recursive=True, after the user
    confirmed) a folder with everything in it."""
    path = confine(root, user_path, follow=False)
    if path == root.resolve():
        raise Invalid("The root cannot be deleted")
    if path.is_dir() and not path.is_symlink():
        if recursive:
            shutil.rmtree(path)
        elif any(path.iterdir()):
            raise Conflict(
                f"Folder {user_path} is not empty; confirm to delete it with everything in it"
            )
        else:
            path.rmdir()
    else:
        path.unlink()
