"""Restoring an archive: the stack folder and each chosen asset written back through
helper containers (the engine's own extraction: numeric owners, modes, times of files and
folders, symlinks, hardlinks).

Every member to be restored is read through first: its checksum and every entry checked
(nothing absolute, no `..`, nothing through a symlink, no link pointing out; device nodes
and setuid/setgid files outside volumes only when asked for). Only then is anything
written, so a damaged or hostile archive changes nothing. Then everything is written
beside what it replaces and switched in at the end (`stackyard.backups.staging`): volume
contents and bind folders are replaced whole, so files made after the backup do not
survive, and a failure leaves everything as it was. NFS/CIFS volumes are never wiped
(written over, last). Under a new name the stack is a clone beside the original: its bind
paths inside the stack folder follow it, those outside it go to new folders beside the
original's (`clone_path`, or where the user says), its compose file is rewritten to them
and its volumes renamed to the new project; nothing of the original's is written.

Whatever the manifest says, a bind folder outside the stack folder is written only when
the restored compose file binds it, and never to a system path, into or over the stacks
or data folder, or through a symbolic link on the host (checked by the service before the
restore starts); the user confirms every such path (`preview`).

Runs in a worker thread (`stackyard.backups.service` stops and starts the stack).
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackyard.backups import tartool
from stackyard.backups.archive import ROOT, ArchiveReader, check_member
from stackyard.backups.model import Asset, AssetResult, Manifest
from stackyard.backups.staging import Part, PathState, Staging
from stackyard.backups.system_paths import system_reason
from stackyard.compose.project import normalize_project_name
from stackyard.docker.helper import HelperMount, Helpers
from stackyard.docker.own import path_overlap
from stackyard.errors import Invalid
from stackyard.fs.at import DIRECTORY, Fd, write_atomic_at
from stackyard.slugs import slugify

#: Called with (bytes written, assets done).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RestoreItem:
    """One member of the archive and where it goes."""

    result: AssetResult
    kind: str  # volume or bind
    target: str  # the volume name, or the host path
    wipe: bool
    note: str | None = None
    inside: str | None = None  # a bind inside the stack folder: its path there


@dataclass(frozen=True)
class RestorePlan:
    source_id: str
    target_id: str
    renamed: bool
    items: list[RestoreItem]
    skipped: dict[str, str] = field(default_factory=dict)
    #: Device nodes and setuid/setgid files are written outside volumes too.
    special_files: bool = False
    #: How the host has each bind folder outside the stack folder the plan writes.
    outside: Mapping[str, PathState] = field(default_factory=dict)

    @property
    def outside_paths(self) -> list[str]:
        """The host paths outside the stack folder it writes (bind folders and files)."""
        return [i.target for i in self.items if i.kind == "bind" and i.inside is None]


@dataclass(frozen=True)
class OutsideWrite:
    """A bind folder or file outside the stack folder that a restore writes."""

    key: str = field(metadata={"description": "The archive's asset"})
    path: str = field(metadata={"description": "Where it is written on the host"})
    replaced: bool = field(
        metadata={"description": "It exists: its contents are replaced (else it is made)"}
    )


@dataclass(frozen=True)
class RestorePreview:
    """What a restore would write, shown before it starts: a restore that writes
    outside the stack folder takes `outside`'s paths as its confirmation."""

    stack: str
    stack_exists: bool
    renamed: bool
    writes: list[str] = field(metadata={"description": "Volumes and folders written"})
    outside: list[OutsideWrite]
    skipped: dict[str, str] = field(metadata={"description": "Asset: why it is not written"})


def preview(restore: RestorePlan, stack_exists: bool) -> RestorePreview:
    writes = []
    for item in restore.items:
        where = f"{item.inside} in the stack folder" if item.inside is not None else item.target
        writes.append(f"{item.kind} {where}" + (f" ({item.note})" if item.note else ""))
    outside = [
        OutsideWrite(i.result.key, i.target, restore.outside.get(i.target) == "exists")
        for i in restore.items
        if i.kind == "bind" and i.inside is None
    ]
    return RestorePreview(
        restore.target_id, stack_exists, restore.renamed, writes, outside, restore.skipped
    )


def target_id(manifest: Manifest, new_name: str | None) -> str:
    """The stack the archive restores into: the new name, else the manifest's
    `stack_id`, slugified either way (`../..` cannot leave the stacks folder)."""
    return slugify(new_name or manifest.stack_id)


def _asset_of(manifest: Manifest, key: str) -> Asset | None:
    if manifest.inventory is None:
        return None
    return next((a for a in manifest.inventory.assets if a.key == key), None)


def _renamed_volume(name: str, source_id: str, project: str, target: str) -> str | None:
    """A volume's name for the clone: its project prefix swapped; None for a volume that
    belongs to no project of this stack (shared, or named by hand)."""
    new_project = normalize_project_name(target)
    for prefix in {f"{project}_", f"{normalize_project_name(source_id)}_"}:
        if name.startswith(prefix):
            return f"{new_project}_{name[len(prefix) :]}"
    return None


def plan(
    manifest: Manifest,
    target: str,
    target_folder_host: str,
    restore_binds: bool,
    wanted: list[str] | None,
    guarded: Callable[[str], str | None] = lambda path: None,
    moved: Mapping[str, str] | None = None,
    scratch: str | None = None,
) -> RestorePlan:
    """Where each captured asset goes (see the module); `wanted` narrows it down to some
    assets (by key, volume name or compose key, or bind path). `guarded`: why a host
    path is never written (it holds this service's own data, say), or None. `moved`:
    for a clone, where the user wants bind folders outside the stack folder to go
    (original path: new path), instead of `clone_path`. `scratch`: a restore drill's
    folder (made for it, empty): each bind folder outside the stack folder goes there,
    numbered, never beside the original's."""
    originals = [
        a.name
        for a in (manifest.inventory.assets if manifest.inventory else [])
        if a.kind == "bind"
    ]
    source = slugify(manifest.stack_id)
    renamed = target != source
    project = manifest.inventory.project if manifest.inventory else normalize_project_name(source)
    items: list[RestoreItem] = []
    skipped: dict[str, str] = {}
    names = set(wanted) if wanted is not None else None
    for result in manifest.assets:
        if not result.captured or not result.member:
            continue
        kind, _, name = result.key.partition(":")
        asset = _asset_of(manifest, result.key)
        aliases = {result.key, name} | (
            {asset.compose_key, asset.inside_stack} - {None} if asset else set()
        )
        if names is not None and not aliases & names:
            skipped[result.key] = "not chosen"  # one of CHOSEN
            continue
        if kind == "volume":
            remote = bool(asset and asset.remote)
            volume = name
            if manifest.format_version == 1 and not name.startswith(f"{project}_"):
                volume = f"{project}_{name}"  # version 1 kept the compose key only
            if renamed:
                new = _renamed_volume(volume, source, project, target)
                if new is None:
                    skipped[result.key] = (
                        "a volume not of this stack's project: a clone does not overwrite it"
                    )
                    continue
                volume = new
            note = "NFS/CIFS: not wiped" if remote else None
            items.append(RestoreItem(result, "volume", volume, wipe=not remote, note=note))
        elif kind == "bind":
            inside = asset.inside_stack if asset else None
            if not restore_binds:
                skipped[result.key] = "bind folders were not to be written back"
            elif inside is not None:
                if not _is_relative_inside(inside):
                    skipped[result.key] = f"{inside!r} is not a path inside the stack folder"
                    continue
                path = posixpath.join(target_folder_host, inside)
                items.append(RestoreItem(result, "bind", path, wipe=True, inside=inside))
            elif scratch is not None:
                path = posixpath.join(scratch, f"bind-{sum(i.kind == 'bind' for i in items)}")
                items.append(RestoreItem(result, "bind", path, wipe=True))
            else:
                path = ((moved or {}).get(name) or clone_path(name, target)) if renamed else name
                if reason := _unwritable(path, target_folder_host) or guarded(path):
                    skipped[result.key] = reason
                elif renamed and any(path_overlap(path, original) for original in originals):
                    skipped[result.key] = (
                        f"{path} is, holds or is inside a folder of the original stack: "
                        "a clone never writes the original's folders"
                    )
                else:
                    items.append(RestoreItem(result, "bind", path, wipe=True))
    if names is not None and not items and all(r == "not chosen" for r in skipped.values()):
        raise Invalid("None of the chosen assets is in the archive")
    return RestorePlan(source, target, renamed, items, skipped)


def clone_path(path: str, clone: str) -> str:
    """Where a clone's bind folder outside the stack folder goes by default: a new one
    beside the original's, named for the clone (`/srv/media/photos` of a clone
    `web-2`: `/srv/media/photos-web-2`)."""
    return f"{path.rstrip('/')}-{clone}"


#: Why an asset is skipped when the user chose so (every other reason leaves out what
#: the user asked for: the restore is partial).
CHOSEN = frozenset({"not chosen", "bind folders were not to be written back"})


def without(restore: RestorePlan, reasons: dict[str, str]) -> RestorePlan:
    """The plan without the items of `reasons` (by target), each skipped for its reason."""
    items = [i for i in restore.items if i.target not in reasons]
    skipped = restore.skipped | {
        i.result.key: reasons[i.target] for i in restore.items if i.target in reasons
    }
    return dataclasses.replace(restore, items=items, skipped=skipped)


def _is_relative_inside(path: str) -> bool:
    return (
        not posixpath.isabs(path)
        and posixpath.normpath(path) == path
        and path != "."
        and ".." not in path.split("/")
    )


def _unwritable(path: str, folder_host: str) -> str | None:
    """Why a bind folder outside the stack folder is never written (whatever the
    archive says): a path that is not plain, a system path, or one that holds the
    stacks folder."""
    if not posixpath.isabs(path) or posixpath.normpath(path) != path:
        return f"{path!r} is not a plain absolute path: never written"
    if reason := system_reason(path):
        return reason + ": never written"
    how = path_overlap(path, posixpath.dirname(folder_host))
    if how == "holds":
        return f"{path} holds the stacks folder: never written"
    if how == "inside":
        return f"{path} is inside the stacks folder (another stack's, or the trash): never written"
    return None


def check_archive(reader: ArchiveReader, restore: RestorePlan, progress: Progress) -> set[str]:
    """Every member the restore reads, read through and checked (see the module),
    device nodes and setuid/setgid files outside volumes refused unless the plan allows
    them; the members whose data is a folder (not a single file)."""
    special = restore.special_files
    manifest = reader.manifest
    done = [0, 0]
    folders: set[str] = set()

    def read(n: int) -> None:
        done[0] += n
        progress(done[0], done[1])

    if manifest.stack_member:
        gzipped = manifest.stack_member.endswith(".gz")
        check_member(reader, manifest.stack_member, manifest.stack_sha256, gzipped, read, special)
    for item in restore.items:
        member = item.result.member or ""
        allowed = special or item.kind == "volume"
        gzipped = member.endswith(".gz")
        scan = check_member(reader, member, item.result.sha256, gzipped, read, allowed)
        if scan.first is None or scan.first.isdir():
            folders.add(member)
        done[1] += 1
        progress(*done)
    return folders


_VOLUME_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*\Z")


@dataclass(frozen=True)
class Declared:
    """What a restored compose file uses: its volumes (engine names, as the restored
    stack names them) and the host paths of its binds."""

    volumes: set[str]
    binds: set[str]


def restore_data(
    reader: ArchiveReader,
    restore: RestorePlan,
    folders: set[str],
    helpers: Helpers,
    folder_local: Path,
    folder_host: str,
    declared: Callable[[Path], Declared],
    progress: Progress,
    record: Callable[[dict[str, Any]], None] = lambda snapshot: None,
) -> tuple[list[str], list[str]]:
    """Write the checked archive back (see the module and `stackyard.backups.staging`);
    what was done, and what was left out and why, line by line. `folders`: the members
    whose data is a folder. `record` keeps each state of the staged writes (a journal).
    `declared` gives what the compose file of a (staged) stack folder uses, and refuses
    (Invalid) one an edit would refuse, before anything but the staged folder is
    written: a volume is written only when it is one of its volumes, a bind folder
    outside the stack folder only when it is one of its binds, whatever the manifest
    says."""
    manifest = reader.manifest
    done: list[str] = []
    left_out: list[str] = []
    written = 0
    #: The plan's items (its volumes and folders) dealt with, written or left out: what
    #: the counter counts of them ("2 of 3"), the stack folder not among them.
    handled = 0

    def counted(name: str) -> Part:
        def chunks() -> Iterator[bytes]:
            nonlocal written
            for chunk in reader.chunks(name):
                written += len(chunk)
                progress(written, handled)
                yield chunk

        return chunks(), name

    def dealt_with() -> None:
        nonlocal handled
        handled += 1
        progress(written, handled)

    staging = Staging(helpers, folder_local, folder_host, record)
    deferred: list[RestoreItem] = []
    try:
        if manifest.stack_member:
            staged = staging.stack_folder(counted(manifest.stack_member))
            done.append("stack folder")
        else:  # version 1: the compose file and .env as members of their own
            staged = staging.stack_folder(None)
            with Fd(os.open(staged, DIRECTORY | os.O_NOFOLLOW)) as fd:
                for name in ("compose.yaml", "docker-compose.yml", ".env"):
                    if name in reader.members:
                        write_atomic_at(fd, name, reader.read(name, limit=1024 * 1024))
            done.append("compose file and .env")
        if restore.renamed:
            _rewrite_for_clone(staged, folder_host, manifest, restore)
        project = normalize_project_name(restore.target_id)
        allowed = declared(staged)
        for item in restore.items:
            member = item.result.member or ""
            if item.kind == "volume":
                if not _VOLUME_NAME.match(item.target) or item.target not in allowed.volumes:
                    left_out.append(
                        f"volume {item.target!r}: the restored compose file does not use it "
                        "(a manifest cannot name other volumes)"
                    )
                    dealt_with()
                    continue
                if not item.wipe:
                    deferred.append(item)
                    continue
                asset = _asset_of(manifest, item.result.key)
                key = asset.compose_key if asset else None
                staging.volume(item.target, project, key, counted(member))
            elif item.inside is not None:
                staging.inside(item.inside, counted(member))
            elif item.target not in allowed.binds:
                left_out.append(
                    f"{item.target}: the restored compose file does not bind it "
                    "(a manifest cannot name other folders)"
                )
                dealt_with()
                continue
            else:
                staging.bind(item.target, member in folders, counted(member))
            done.append(f"{item.kind} {item.target}" + (f" ({item.note})" if item.note else ""))
            dealt_with()
        done += staging.commit()
    except BaseException:
        staging.discard()
        raise
    for item in deferred:  # NFS/CIFS: written where they are, over what is there
        mount = HelperMount("volume", item.target, f"/{ROOT}")
        tartool.write(helpers, [mount], "/", *counted(item.result.member or ""))
        done.append(f"{item.kind} {item.target}" + (f" ({item.note})" if item.note else ""))
        dealt_with()
    return done, left_out


def _rewrite_for_clone(
    folder: Path, folder_host: str, manifest: Manifest, restore: RestorePlan
) -> None:
    """The clone's compose file and `.env`: absolute paths into the original's folder
    point into the clone's, those of the original's bind folders outside it to the
    clone's (`clone_path`), and volume names given by hand with the original's project
    prefix get the clone's. A path is replaced whole, never the start of a longer name."""
    inventory = manifest.inventory
    if inventory is None:
        return
    replacements = {inventory.folder: folder_host}
    for item in restore.items:
        if item.kind == "volume" or item.inside is None:
            replacements[item.result.key.partition(":")[2]] = item.target
    olds = sorted(replacements, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(old) for old in olds) + r"(?![\w.-])")
    for name in (
        "compose.yaml",
        "compose.yml",
        "docker-compose.yaml",
        "docker-compose.yml",
        ".env",
    ):
        path = folder / name
        if not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(errors="surrogateescape")
        changed = pattern.sub(lambda m: replacements[m.group(0)], text)
        if changed != text:
            with Fd(os.open(folder, DIRECTORY | os.O_NOFOLLOW)) as fd:
                write_atomic_at(fd, name, changed.encode(errors="surrogateescape"))
