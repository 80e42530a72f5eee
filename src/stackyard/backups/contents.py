"""What a tar holds, entry by entry, as a restore drill compares it: the archive's member
against the data the drill wrote back and read again.

Each entry is named by its path under `data/` and described by its kind, mode, owner,
size, time (not for folders: writing into one moves its time) and its content's SHA-256
(a symbolic link: its target). A hard link is described as the file it links to: which
of the names carries the data depends on the order a tar walks them in."""

from __future__ import annotations

import hashlib
import posixpath
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass

from stackyard.backups.archive import ROOT, ChunkReader
from stackyard.errors import Invalid

#: Differences said at most (the count says the rest).
SHOWN = 10


@dataclass(frozen=True)
class Described:
    kind: str  # file, folder, symlink, device
    mode: int
    owner: str  # uid:gid
    size: int
    mtime: int
    digest: str  # a file's SHA-256, a symlink's target, a device's numbers


@dataclass(frozen=True)
class Contents:
    entries: dict[str, Described]

    @property
    def files(self) -> int:
        return sum(e.kind == "file" for e in self.entries.values())

    @property
    def bytes(self) -> int:
        return sum(e.size for e in self.entries.values() if e.kind == "file")


def contents(chunks: Iterable[bytes], with_times: bool = True) -> Contents:
    """The entries of a plain tar stream under `data/` (see the module)."""
    entries: dict[str, Described] = {}
    try:
        with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as tar:
            for info in tar:
                name = _relative(info.name)
                if name is None:
                    continue
                entries[name] = _described(tar, info, entries, with_times)
    except tarfile.TarError as exc:
        raise Invalid(f"The data cannot be read as a tar: {exc}") from exc
    return Contents(entries)


def differences(expected: Contents, found: Contents) -> list[str]:
    """What differs between the archive's entries and those written back, a line each
    (at most `SHOWN`, then how many more)."""
    lines = []
    for name in sorted(expected.entries.keys() | found.entries.keys()):
        want, got = expected.entries.get(name), found.entries.get(name)
        if got is None:
            lines.append(f"{name}: missing")
        elif want is None:
            lines.append(f"{name}: not in the backup")
        elif want != got:
            what = [
                field
                for field in ("kind", "digest", "size", "mode", "owner", "mtime")
                if getattr(want, field) != getattr(got, field)
            ]
            lines.append(f"{name}: its {', '.join(what)} differ")
    if len(lines) > SHOWN:
        return [*lines[:SHOWN], f"and {len(lines) - SHOWN} more"]
    return lines


def _relative(name: str) -> str | None:
    """The entry's path under `data/` ("." for `data` itself); None for any other."""
    path = posixpath.normpath(name.lstrip("/"))
    if path.startswith("./"):
        path = path[2:]
    if path == ROOT:
        return "."
    if path.startswith(f"{ROOT}/"):
        return path[len(ROOT) + 1 :]
    return None


def _described(
    tar: tarfile.TarFile,
    info: tarfile.TarInfo,
    seen: dict[str, Described],
    with_times: bool,
) -> Described:
    owner = f"{info.uid}:{info.gid}"
    mtime = int(info.mtime) if with_times and not info.isdir() else 0
    if info.islnk():
        target = seen.get(_relative(info.linkname) or "")
        if target is None:
            raise Invalid(f"{info.name} links to {info.linkname}, which is not before it")
        return target
    if info.isreg():
        digest = hashlib.sha256()
        handle = tar.extractfile(info)
        if handle is not None:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
        return Described("file", info.mode, owner, info.size, mtime, digest.hexdigest())
    if info.issym():
        return Described("symlink", info.mode, owner, 0, mtime, info.linkname)
    if info.isdir():
        return Described("folder", info.mode, owner, 0, 0, "")
    numbers = f"{info.type!r} {info.devmajor}:{info.devminor}"
    return Described("device", info.mode, owner, 0, mtime, numbers)
