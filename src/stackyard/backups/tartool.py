"""A part's files read and written through helpers, with the best tar the helper image
has, and what each way keeps (`Fidelity`).

GNU tar (in the default helper image, `debian:bookworm-slim`) keeps what restic, borg
and `tar --xattrs --acls` keep: POSIX (PAX) headers with numeric owners of any size,
nanosecond times, symlinks, hardlinks, FIFOs, devices, empty folders, sparse files (as
sparse), and every xattr the helper may read: `user.*`, `security.*`, and the POSIX
ACLs as their `system.posix_acl_*` xattrs (binary, with numeric ids: nothing is looked
up by name in a helper). `trusted.*` xattrs need CAP_SYS_ADMIN, which no helper gets
(it extracts archives that come from elsewhere): they are not kept, and the manifest
says so. Without GNU tar, busybox tar (and the engine's archive API, for owner ids
beyond what busybox headers hold) keep modes, owners, whole seconds, links and special
files; a restore through the engine keeps xattrs and nanoseconds, not sparseness.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import get_args

from stackyard.backups.archive import ROOT, inflated
from stackyard.backups.model import Attribute, CaptureTool, Fidelity, Manifest
from stackyard.docker.helper import HelperFailed, HelperMount, Helpers
from stackyard.errors import Unavailable

_ALL: tuple[Attribute, ...] = get_args(Attribute)
_BASIC: tuple[Attribute, ...] = (
    "mode",
    "owners",
    "symlinks",
    "hardlinks",
    "fifos",
    "devices",
    "empty_folders",
)


#: Said by a restore whose helper image has no GNU tar.
WRITTEN_WITHOUT_GNU_TAR = (
    "The helper image has no GNU tar: the data is written through the engine's archive "
    "API, which writes sparse files in full and drops the setuid and setgid bits of files "
    "with more than one link (BACKUP_HELPER_IMAGE: an image with GNU tar keeps them, such "
    "as debian:bookworm-slim)"
)
_SAID: dict[Attribute, str] = {
    "mtime_ns": "times finer than a second",
    "xattrs": "xattrs",
    "acls": "ACLs",
    "sparse": "sparseness",
}


def lost(manifest: Manifest) -> str | None:
    """What the archive's parts did not keep of what a helper with GNU tar keeps, in a
    line (None: nothing)."""
    parts = [("the stack folder", manifest.stack_fidelity)] + [
        (a.key.partition(":")[2], a.fidelity) for a in manifest.assets if a.captured
    ]
    short = [(part, f) for part, f in parts if f is not None and f.tool != "gnu-tar"]
    if not short:
        return None
    missing = sorted({_SAID[a] for _, f in short for a in f.not_kept if a in _SAID})
    return (
        f"Not kept ({', '.join(missing)}) in {', '.join(part for part, _ in short)}: "
        "the helper image has no GNU tar (BACKUP_HELPER_IMAGE)"
    )


def fidelity(tool: CaptureTool) -> Fidelity:
    kept: list[Attribute] = [a for a in _ALL if a != "trusted_xattrs"]
    if tool != "gnu-tar":
        kept = list(_BASIC)
    return Fidelity(tool, kept, [a for a in _ALL if a not in kept])


_GNU_CREATE = [
    "tar",
    "--create",
    "--file=-",
    "--format=posix",
    "--numeric-owner",
    "--xattrs",
    "--xattrs-include=*",
    "--sparse",
    "--pax-option=delete=atime,delete=ctime",
    "--directory=/",
    "--anchored",
    "--no-wildcards",
]
_GNU_EXTRACT = [
    "tar",
    "--extract",
    "--file=-",
    "--numeric-owner",
    "--preserve-permissions",
    "--same-owner",
    "--xattrs",
    "--xattrs-include=*",
]

# What a tar says of files that went away or changed while it read them (status 1):
# not a failure, as something outside the stopped stack may still write there.
_VANISHED = re.compile(
    rf"^tar: {ROOT}/(.+): (?:No such file or directory|File removed before we read it)$"
)
_CHANGED = re.compile(rf"^tar: {ROOT}/(.+): file changed as we read it$")
_FULL = re.compile(r"Wrote only \d+ of \d+ bytes|No space left on device")
_NOISE = {"tar: error exit delayed from previous errors"}


@dataclass
class Moving:
    """Files that went away (`vanished`) or changed (`changed`) while they were read."""

    vanished: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    def tolerated(self, stream: Generator[bytes, None, None]) -> Generator[bytes, None, None]:
        """`stream`, where an end with status 1 that names only such files is kept as a
        success (their names noted here); any other failure stays one."""
        try:
            yield from stream
        except HelperFailed as exc:
            if exc.status != 1:
                raise
            vanished, changed = [], []
            for line in exc.errors.splitlines():
                if m := _VANISHED.match(line):
                    vanished.append(m.group(1))
                elif m := _CHANGED.match(line):
                    changed.append(m.group(1))
                elif line not in _NOISE:
                    raise
            if not vanished and not changed:
                raise
            self.vanished += vanished
            self.changed += changed


def read_gnu(
    helpers: Helpers, mount: HelperMount, excluded: list[str], moving: Moving
) -> Generator[bytes, None, None]:
    """The tar of `mount` (at /data) under `data/`, without the `excluded` paths (relative
    to it), as the helper's GNU tar writes it (the helper image must have it)."""
    command = [*_GNU_CREATE, *(f"--exclude={ROOT}/{path}" for path in excluded), ROOT]
    return moving.tolerated(helpers.stream_output([mount], command, f"Reading {mount.source}"))


def read_busybox(
    helpers: Helpers, mount: HelperMount, moving: Moving
) -> Generator[bytes, None, None]:
    """The tar of `mount` (at /data) under `data/`, as busybox tar writes it."""
    command = ["tar", "-cf", "-", "-C", "/", ROOT]
    return moving.tolerated(helpers.stream_output([mount], command, f"Reading {mount.source}"))


def write(
    helpers: Helpers, mounts: list[HelperMount], path: str, chunks: Iterable[bytes], name: str
) -> None:
    """Extract the archive member `name` (its `chunks`, gzip when it ends in `.gz`) at
    `path` of a helper with `mounts`: by GNU tar when the image has it, else through
    the engine's archive API (which writes sparse files in full)."""
    if helpers.gnu_tar():
        plain = inflated(chunks, name) if name.endswith(".gz") else chunks
        command = [*_GNU_EXTRACT, f"--directory={path}"]
        try:
            helpers.feed(mounts, command, plain, f"Writing {name}")
        except HelperFailed as exc:
            if _FULL.search(exc.errors):  # GNU tar says "Wrote only n of m bytes"
                raise Unavailable(f"Writing {name}: no space left on the device") from exc
            raise
        return
    with helpers.created(mounts) as helper:
        helpers.write_tar(helper, path, chunks)
