"""Restoring an archive: the stack folder and each chosen asset written back through
helper containers (the engine's own extraction: numeric owners, modes, times of files and
folders, symlinks, hardlinks).

Every member to be restored is read through first: its checksum and every entry checked
(nothing absolute, no `..`, nothing through a symlink, no link pointing out). Only then
is anything written, so a damaged or hostile archive changes nothing. Then everything is
written beside what it replaces and switched in at the end (`stackyard.backups.staging`):
volume contents and bind folders are replaced whole, so files made after the backup do
not survive, and a failure leaves everything as it was. NFS/CIFS volumes are never wiped
(written over, last). Under a new name the stack is a clone beside the original: its
bind paths inside the stack folder follow it, its volumes are renamed to the new
project, and nothing of the original's (outside folders, shared volumes) is written. A
bind outside the stack folder is never written to a system path or to a folder holding
the stacks folder.

Runs in a worker thread (`stackyard.backups.service` stops and starts the stack).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stackyard.backups.archive import ROOT, ArchiveReader, check_member
from stackyard.backups.model import Asset, AssetResult, Manifest
from stackyard.backups.staging import Staging
from stackyard.backups.system_paths import system_reason
from stackyard.compose.project import normalize_project_name
from stackyard.docker.helper import HelperMount, Helpers
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
) -> RestorePlan:
    """Where each captured asset goes (see the module); `wanted` narrows it down to some
    assets (by key, volume name or compose key, or bind path). `guarded`: why a host
    path is never written (it holds this service's own data, say), or None."""
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
            skipped[result.key] = "not chosen"
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
            elif renamed:
                skipped[result.key] = (
                    "outside the stack folder: a clone does not write to the original's folders"
                )
            elif reason := _unwritable(name, target_folder_host) or guarded(name):
                skipped[result.key] = reason
            else:
                items.append(RestoreItem(result, "bind", name, wipe=True))
    if names is not None and not items and all(r == "not chosen" for r in skipped.values()):
        raise Invalid("None of the chosen assets is in the archive")
    return RestorePlan(source, target, renamed, items, skipped)


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
    stacks = posixpath.dirname(folder_host)
    if stacks == path or stacks.startswith(path.rstrip("/") + "/"):
        return f"{path} holds the stacks folder: never written"
    return None


def check_archive(reader: ArchiveReader, restore: RestorePlan, progress: Progress) -> set[str]:
    """Every member the restore reads, read through and checked (see the module); the
    members whose data is a folder (not a single file)."""
    manifest = reader.manifest
    done = [0, 0]
    folders: set[str] = set()

    def read(n: int) -> None:
        done[0] += n
        progress(done[0], done[1])

    if manifest.stack_member:
        check_member(reader, manifest.stack_member, manifest.stack_sha256, True, read)
    for item in restore.items:
        member = item.result.member or ""
        scan = check_member(reader, member, item.result.sha256, member.endswith(".gz"), read)
        if scan.first is None or scan.first.isdir():
            folders.add(member)
        done[1] += 1
        progress(*done)
    return folders


_VOLUME_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]*\Z")


def restore_data(
    reader: ArchiveReader,
    restore: RestorePlan,
    folders: set[str],
    helpers: Helpers,
    folder_local: Path,
    folder_host: str,
    declared: Callable[[Path], set[str] | None],
    progress: Progress,
) -> list[str]:
    """Write the checked archive back (see the module and `stackyard.backups.staging`);
    what was done, line by line. `folders`: the members whose data is a folder.
    `declared` gives the volumes the compose file of a (staged) stack folder names, as
    the restored stack will name them (None: it does not resolve): a volume is written
    only when it is one of them (or, without them, when it has the stack's project
    prefix), whatever the manifest says."""
    manifest = reader.manifest
    done: list[str] = []
    written = 0

    def counted(name: str) -> Iterator[bytes]:
        nonlocal written
        for chunk in reader.chunks(name):
            written += len(chunk)
            progress(written, len(done))
            yield chunk

    staging = Staging(helpers, folder_local, folder_host)
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
                own = allowed is not None and item.target in allowed
                prefixed = allowed is None and item.target.startswith(f"{project}_")
                if not _VOLUME_NAME.match(item.target) or not (own or prefixed):
                    done.append(
                        f"nothing into volume {item.target!r}: the restored compose file does "
                        "not use it (a manifest cannot name other volumes)"
                    )
                    continue
                if not item.wipe:
                    deferred.append(item)
                    continue
                asset = _asset_of(manifest, item.result.key)
                key = asset.compose_key if asset else None
                staging.volume(item.target, project, key, counted(member))
            elif item.inside is not None:
                staging.inside(item.inside, counted(member))
            else:
                staging.bind(item.target, member in folders, counted(member))
            done.append(f"{item.kind} {item.target}" + (f" ({item.note})" if item.note else ""))
            progress(written, len(done))
        done += staging.commit()
    except BaseException:
        staging.discard()
        raise
    for item in deferred:  # NFS/CIFS: written where they are, over what is there
        mount = HelperMount("volume", item.target, f"/{ROOT}")
        with helpers.created([mount]) as helper:
            helpers.write_tar(helper, "/", counted(item.result.member or ""))
        done.append(f"{item.kind} {item.target}" + (f" ({item.note})" if item.note else ""))
        progress(written, len(done))
    return done


def _rewrite_for_clone(
    folder: Path, folder_host: str, manifest: Manifest, restore: RestorePlan
) -> None:
    """The clone's compose file: absolute paths into the original's folder point into
    the clone's, and volume names given by hand with the original's project prefix get
    the clone's."""
    inventory = manifest.inventory
    if inventory is None:
        return
    replacements = {inventory.folder: folder_host}
    for item in restore.items:
        if item.kind == "volume":
            old = item.result.key.partition(":")[2]
            replacements[old] = item.target
    for name in ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"):
        path = folder / name
        if not path.is_file():
            continue
        text = path.read_text()
        changed = text
        for old, new in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
            changed = changed.replace(old, new)
        if changed != text:
            with Fd(os.open(folder, DIRECTORY | os.O_NOFOLLOW)) as fd:
                write_atomic_at(fd, name, changed.encode())
