"""A stack's data assets: the named volumes and bind-mounted host paths its services use,
merged from the compose file and from the running containers' mounts, each measured
through a helper container and selected by default or not, with the reason.

Not selected by default (listed, with the reason, for the user to decide):
- NFS/CIFS volumes (their server keeps them; they are never wiped on restore either);
- system paths of the host (`/`, `/etc/...`, `/proc`, the Docker socket, ...);
- a whole file system (the source is a mount point of the host: a disk, a share);
- a source far larger than everything else together;
- a declared volume that does not exist yet.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from stackyard.backups.model import Asset, AssetUse, Inventory, PathReport, Remote
from stackyard.backups.system_paths import system_reason
from stackyard.docker.containers import SERVICE, compose_containers
from stackyard.docker.details import MountInfo, inspect_container
from stackyard.docker.helper import HelperError, HelperMount, Helpers
from stackyard.docker.own import PathMapping, own_container_id, own_mappings, to_local
from stackyard.docker.volumes import VolumeInfo, volume
from stackyard.errors import NotFound, StackyardError
from stackyard.fs.tally import tally
from stackyard.stacks.machine import Machine
from stackyard.stacks.status import ContainerIndex

#: A source is "far larger than the rest" above this many times the others together...
OVERSIZE_FACTOR = 10
#: ... and above this size.
OVERSIZE_MIN = 1024**3

log = logging.getLogger(__name__)


@dataclass
class _Found:
    kind: str
    name: str
    compose_key: str | None = None
    uses: dict[tuple[str, str], bool] = field(default_factory=dict)  # (service, target) -> ro
    external: bool = False


def _bind_uses(config: dict[str, Any], found: dict[str, _Found]) -> None:
    """Binds and volumes of the resolved compose file (long syntax after `config`)."""
    top = config.get("volumes") or {}
    for service, spec in (config.get("services") or {}).items():
        for mount in spec.get("volumes") or []:
            if not isinstance(mount, dict):
                continue
            kind, source, target = mount.get("type"), mount.get("source"), mount.get("target")
            if not source or not target:
                continue  # anonymous volumes and tmpfs: no data to keep
            read_only = bool(mount.get("read_only"))
            if kind == "bind":
                entry = found.setdefault(f"bind:{source}", _Found("bind", str(source)))
            elif kind == "volume":
                declared = top.get(source) or {}
                name = str(declared.get("name") or source)
                entry = found.setdefault(
                    f"volume:{name}",
                    _Found("volume", name, str(source), external=bool(declared.get("external"))),
                )
            else:
                continue
            entry.uses[(str(service), str(target))] = read_only


def _mount_uses(mounts: tuple[MountInfo, ...], service: str, found: dict[str, _Found]) -> None:
    """Binds and volumes of a running container (compose may have changed since)."""
    for mount in mounts:
        use = (service, mount.destination)
        if mount.type == "bind" and mount.source:
            found.setdefault(f"bind:{mount.source}", _Found("bind", mount.source)).uses.setdefault(
                use, mount.read_only
            )
        elif mount.type == "volume" and mount.name:
            name = mount.name
            if len(name) == 64 and all(c in "0123456789abcdef" for c in name):
                continue  # anonymous volume
            found.setdefault(f"volume:{name}", _Found("volume", name)).uses.setdefault(
                use, mount.read_only
            )


@dataclass(frozen=True)
class _Measure:
    size: int | None
    files: int | None
    mount_point: bool
    wide_ids: bool


#: The largest owner or group id a tar header of the helper's `tar` holds (8 octal digits).
WIDE_ID = 0o77777777


#: Per asset: its size, its entries and whether an owner or group id is above what a
#: header of the helper's `tar` holds ("<entries>-<1 or 0>"), the device of the source
#: and of its parent folder (a mount point when they differ).
_MEASURE = (
    "for d in /m/*; do i=${d#/m/}; "
    's=$(du -sk "$d" 2>/dev/null | cut -f1); '
    "nw=$(find \"$d\" -exec stat -c '%u %g' {} + 2>/dev/null | awk "
    f"'BEGIN{{n=0;w=0}} {{n++}} $1>{WIDE_ID} || $2>{WIDE_ID} {{w=1}} END{{print n \"-\" w}}'); "
    'a=$(stat -c %d "$d" 2>/dev/null); b=$(stat -c %d "/p/$i" 2>/dev/null); '
    'echo "$i ${s:-x} ${nw:-x} ${a:-x} ${b:-x}"; done'
)


def _measure(helpers: Helpers, assets: list[_Found]) -> dict[int, _Measure]:
    """Size (du), file count and whether a bind is a mount point of the host, of each
    asset, measured through one helper (each asset mounted read-only, binds with their
    parent folder beside them). A source that cannot be mounted is left unmeasured."""
    mounts: list[HelperMount] = []
    for n, asset in enumerate(assets):
        mounts.append(HelperMount(_kind(asset), asset.name, f"/m/{n}", read_only=True))
        if asset.kind == "bind":
            parent = posixpath.dirname(asset.name.rstrip("/")) or "/"
            mounts.append(HelperMount("bind", parent, f"/p/{n}", read_only=True))
    if not mounts:
        return {}
    try:
        output = helpers.check_output(mounts, ["sh", "-c", _MEASURE], timeout=600)
    except (HelperError, StackyardError):
        if len(assets) == 1:
            return {}
        # One source cannot be mounted (gone, say): measure the others one by one.
        measured: dict[int, _Measure] = {}
        for n, asset in enumerate(assets):
            alone = _measure(helpers, [asset])
            if 0 in alone:
                measured[n] = alone[0]
        return measured
    results: dict[int, _Measure] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) != 5 or not parts[0].isdigit():
            continue
        index, size, counted, dev, parent_dev = parts
        files, _, wide = counted.partition("-")
        results[int(index)] = _Measure(
            int(size) * 1024 if size.isdigit() else None,
            max(0, int(files) - 1) if files.isdigit() else None,
            dev != parent_dev and dev != "x" and parent_dev != "x",
            wide != "0",
        )
    return results


def _kind(found: _Found) -> Any:
    return "bind" if found.kind == "bind" else "volume"


def _remote(volume: VolumeInfo | None) -> Remote | None:
    kind = (volume.options.get("type") or "").lower() if volume else ""
    if kind.startswith("nfs"):
        return "nfs"
    if kind in ("cifs", "smb", "smb3"):
        return "cifs"
    return None


def inventory(machine: Machine, stack_id: str) -> Inventory:
    """The stack's data assets (see the module); the compose file must resolve."""
    project = machine.project(stack_id)
    folder_local = machine.store.folder(stack_id)
    folder_host = str(machine.project_dirs.project_dir(folder_local))
    found: dict[str, _Found] = {}
    _bind_uses(project.raw, found)
    client = machine.docker
    index = ContainerIndex(compose_containers(client), machine.roots())
    for container in index.of(stack_id, project.name):
        if container.state != "running":
            continue
        try:
            details = inspect_container(client, container.id)
        except NotFound:
            continue
        _mount_uses(details.mounts, details.labels.get(SERVICE, container.service), found)

    volumes = {e.name: volume(client, e.name) for e in found.values() if e.kind == "volume"}

    ordered = sorted(found.values(), key=lambda f: (f.kind != "volume", f.name))
    # NFS/CIFS volumes are not mounted to be measured: an unreachable server would hang.
    measurable = [
        f
        for f in ordered
        if f.kind == "bind"
        or (volumes.get(f.name) is not None and _remote(volumes[f.name]) is None)
    ]
    helpers = machine.helpers()
    unreached = "the host path cannot be reached"
    try:
        helpers.ensure_image()
        measured = _measure(helpers, measurable)
    except StackyardError as exc:  # no helper at all: nothing could be measured
        unreached = f"the helper image {helpers.image} cannot be had: {exc.detail}"
        log.warning("The backup inventory of %s measured nothing: %s", stack_id, unreached)
        measured = {}
    sizes = {id(f): measured.get(n) for n, f in enumerate(measurable)}

    in_container = own_container_id() is not None
    mappings = own_mappings(client) if in_container else []
    roots = {folder_host, str(folder_local)}
    assets = []
    for entry in ordered:
        measure = sizes.get(id(entry))
        found_volume = volumes.get(entry.name) if entry.kind == "volume" else None
        inside = None
        if entry.kind == "bind":
            path = PurePosixPath(entry.name)
            for root in roots:
                if path == PurePosixPath(root) or PurePosixPath(root) in path.parents:
                    inside = str(path.relative_to(root)) if path != PurePosixPath(root) else "."
        remote = _remote(found_volume) if entry.kind == "volume" else None
        reason = None
        if entry.kind == "volume" and found_volume is None:
            reason = "does not exist yet (the stack has not run with it)"
        elif remote is not None:
            reason = f"on {remote.upper()}: its server keeps it (it is never wiped on restore)"
        elif entry.kind == "bind" and inside is None:
            reason = system_reason(entry.name)
            if reason is None and measure is not None and measure.mount_point:
                reason = f"{entry.name} is a whole file system of the host (a disk or share)"
        if entry.kind == "bind" and measure is None and reason is None:
            reason = unreached
        assets.append(
            Asset(
                key=f"{entry.kind}:{entry.name}",
                kind="bind" if entry.kind == "bind" else "volume",
                name=entry.name,
                compose_key=entry.compose_key,
                uses=[AssetUse(s, t, ro) for (s, t), ro in sorted(entry.uses.items())],
                size=measure.size if measure else None,
                files=measure.files if measure else None,
                inside_stack=inside,
                local_path=to_local(entry.name, mappings, in_container)
                if entry.kind == "bind"
                else None,
                external=entry.external,
                driver=found_volume.driver if found_volume else None,
                remote=remote,
                exists=entry.kind == "bind" or found_volume is not None,
                wide_ids=measure.wide_ids if measure else True,
                selected=reason is None,
                reason=reason,
            )
        )
    assets = _deselect_oversized(assets)
    return Inventory(
        stack_id=stack_id,
        project=project.name,
        folder=folder_host,
        paths=_path_report(machine, folder_host, mappings),
        assets=assets,
        folder_size=tally(folder_local, skip=_binds_inside(folder_local, assets)).size,
    )


def _binds_inside(folder: Path, assets: list[Asset]) -> set[Path]:
    """The bind folders inside the stack folder: assets of their own, not counted in the
    stack folder's size."""
    return {folder / a.inside_stack for a in assets if a.inside_stack not in (None, ".")}


def _deselect_oversized(assets: list[Asset]) -> list[Asset]:
    """A selected source far larger than all the other selected ones together is not
    selected by default (a media library bound into a stack, say)."""
    selected = [a for a in assets if a.selected and a.size is not None]
    result = []
    for asset in assets:
        others = sum(a.size or 0 for a in selected if a is not asset)
        if (
            asset.selected
            and asset.size is not None
            and others > 0  # alone, it is the stack's data: taken
            and asset.size > OVERSIZE_MIN
            and asset.size > OVERSIZE_FACTOR * others
        ):
            gib = asset.size / 1024**3
            asset = replace(
                asset,
                selected=False,
                reason=f"{gib:.1f} GiB, more than {OVERSIZE_FACTOR} times everything else "
                "together: select it if it belongs in the backup",
            )
        result.append(asset)
    return result


def _path_report(machine: Machine, folder_host: str, mappings: list[PathMapping]) -> PathReport:
    stacks_dir = str(machine.stacks_dir)
    host_dir = str(machine.settings.effective_stacks_host_dir)
    dirs = machine.project_dirs
    mismatch = stacks_dir != host_dir
    if not mismatch:
        explanation = "The service sees the stacks folder at the same path as the host."
    elif dirs.usable:
        explanation = (
            f"The service sees the stacks folder at {stacks_dir}, the host at {host_dir}. "
            f"Compose is given the host's path ({folder_host}) as the project directory, so "
            "relative binds name the host's folders; backups read them through helper "
            "containers by those host paths."
        )
    else:
        explanation = (
            f"The service sees the stacks folder at {stacks_dir}, the host at {host_dir}, and "
            f"cannot make the host's path reach it here: {dirs.problem}. Relative binds "
            f"then resolve under {stacks_dir} on the host, which is probably not what you "
            "want: mount the stacks folder at the same path inside and outside."
        )
    return PathReport(stacks_dir, host_dir, mismatch, explanation, mappings)
