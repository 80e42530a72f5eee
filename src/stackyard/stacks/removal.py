"""What deleting a stack does, said before it is done: the containers and networks that
`compose down` removes, the named volumes (kept unless asked), and the stack folder, which
is never erased but moved aside to `STACKS_DIR/.trash/<id>-<UTC time>` (a rename on the
same file system; dot-folders are never stacks), bind-mounted data inside it included.

The plan and the result are served by the API as they are: the schema's descriptions are
on their fields."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from stackyard.compose.project import Project
from stackyard.docker.containers import ContainerInfo, compose_containers
from stackyard.docker.networks import network_names
from stackyard.docker.volumes import volume_names
from stackyard.errors import Invalid, StackyardError, Unavailable
from stackyard.fs.tally import Tally, tally
from stackyard.stacks.machine import Machine
from stackyard.stacks.status import ContainerIndex
from stackyard.stacks.store import TRASH


@dataclass(frozen=True)
class PlannedContainer:
    name: str
    service: str
    state: str


@dataclass(frozen=True)
class PlannedVolume:
    key: Annotated[str, Field(description="The volume's name in the compose file")]
    name: Annotated[str, Field(description="The engine's name of the volume")]
    exists: bool


@dataclass(frozen=True)
class BindFolder:
    path: Annotated[str, Field(description="Relative to the stack folder")]
    services: tuple[str, ...]


@dataclass(frozen=True)
class ExternalBind:
    path: Annotated[
        str, Field(description="Absolute host path outside the stack folder: left alone")
    ]
    services: tuple[str, ...]


@dataclass(frozen=True)
class FolderPlan:
    #: As the service sees it.
    path: Annotated[str, Field(description="The stack folder")]
    trash: Annotated[
        str,
        Field(
            description="Where the folder goes, relative to the stacks folder (the time is "
            "that of the deletion)"
        ),
    ]
    files: Annotated[
        int, Field(description="Files (and links) in the folder, bind-mounted data included")
    ]
    bytes: int
    complete: Annotated[bool, Field(description="False: some entries could not be read or counted")]
    binds: Annotated[
        tuple[BindFolder, ...], Field(description="Bind-mounted folders inside the folder")
    ]


@dataclass(frozen=True)
class DeletePlan:
    stack: str
    #: Then the networks and volumes are unknown.
    error: Annotated[str | None, Field(description="The compose file does not resolve")]
    containers: Annotated[
        tuple[PlannedContainer, ...], Field(description="Removed by `compose down`")
    ]
    networks: Annotated[tuple[str, ...], Field(description="Removed by `compose down`")]
    volumes: Annotated[
        tuple[PlannedVolume, ...],
        Field(description="The stack's named volumes: kept unless `remove_volumes=true`"),
    ]
    external_binds: tuple[ExternalBind, ...]
    folder: FolderPlan


@dataclass(frozen=True)
class DeleteResult:
    stack: str
    trash: Annotated[str, Field(description="Where the folder went, relative to the stacks folder")]
    containers: tuple[str, ...]
    networks: tuple[str, ...]
    volumes_removed: tuple[str, ...]
    volumes_kept: tuple[str, ...]

    def summary(self) -> str:
        """For the audit log: what went where."""
        parts = [f"folder moved to {self.trash}"]
        if self.containers:
            parts.append(f"containers removed: {', '.join(self.containers)}")
        if self.networks:
            parts.append(f"networks removed: {', '.join(self.networks)}")
        if self.volumes_removed:
            parts.append(f"volumes removed: {', '.join(self.volumes_removed)}")
        if self.volumes_kept:
            parts.append(f"volumes kept: {', '.join(self.volumes_kept)}")
        return "; ".join(parts)


def check_confirmation(stack_id: str, confirm: str | None) -> None:
    """Deleting needs the stack's name typed back, exactly."""
    if confirm != stack_id:
        raise Invalid(
            f"Deletion of stack {stack_id!r} not confirmed: "
            f"confirm must be the stack's name, exactly {stack_id!r}"
        )


def trash_name(stack_id: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stack_id}-{stamp}"


def stack_containers(
    machine: Machine, stack_id: str, project: Project | None
) -> list[ContainerInfo]:
    index = ContainerIndex(compose_containers(machine.docker), machine.roots())
    return index.of(stack_id, project.name if project else None)


def plan(machine: Machine, stack_id: str, measure: bool = True) -> DeletePlan:
    """`measure`: count the folder's files and bytes (False: zeros)."""
    folder = machine.store.folder(stack_id)
    try:
        project: Project | None = machine.project(stack_id)
        error = None
    except StackyardError as exc:
        project, error = None, exc.detail
    containers = stack_containers(machine, stack_id, project)
    raw = project.raw if project else {}
    declared = [
        str((spec or {}).get("name") or f"{project.name}_{key}")
        for key, spec in (raw.get("networks") or {}).items()
        if project and not (spec or {}).get("external")
    ]
    present = _network_names(machine)
    networks = tuple(sorted(n for n in declared if present is None or n in present))
    existing = _volume_names(machine)
    volumes = tuple(
        PlannedVolume(key, name, name in existing)
        for key, name in sorted(_named_volumes(project).items())
    )
    inside, outside = _binds(raw, [root / stack_id for root in machine.roots()])
    counted = tally(folder) if measure else Tally(0, 0, True)
    return DeletePlan(
        stack=stack_id,
        error=error,
        containers=tuple(PlannedContainer(c.name, c.service, c.state) for c in containers),
        networks=networks,
        volumes=volumes,
        external_binds=outside,
        folder=FolderPlan(
            path=str(folder),
            trash=f"{TRASH}/{trash_name(stack_id)}",
            files=counted.files,
            bytes=counted.size,
            complete=counted.complete,
            binds=inside,
        ),
    )


def _named_volumes(project: Project | None) -> dict[str, str]:
    """The stack's own named volumes (compose key -> engine name); external ones are not
    the stack's to remove."""
    if project is None:
        return {}
    found = {}
    for key, spec in (project.raw.get("volumes") or {}).items():
        spec = spec or {}
        if spec.get("external"):
            continue
        found[key] = str(spec.get("name") or f"{project.name}_{key}")
    return found


def _network_names(machine: Machine) -> set[str] | None:
    """The engine's networks (None: it could not say)."""
    try:
        return network_names(machine.docker)
    except Unavailable:
        return None


def _volume_names(machine: Machine) -> set[str]:
    try:
        return volume_names(machine.docker)
    except Unavailable:
        return set()


def _binds(
    raw: dict[str, Any], folders: list[Path]
) -> tuple[tuple[BindFolder, ...], tuple[ExternalBind, ...]]:
    """Bind mounts of the services: those inside the stack folder (relative paths), and
    those outside it (left alone by deletion)."""
    inside: dict[str, list[str]] = {}
    outside: dict[str, list[str]] = {}
    for name, spec in sorted((raw.get("services") or {}).items()):
        for volume in (spec or {}).get("volumes") or []:
            if not isinstance(volume, dict) or volume.get("type") != "bind":
                continue
            source = str(volume.get("source") or "")
            if not source:
                continue
            relative = _relative_to_any(source, folders)
            bucket, key = (inside, relative) if relative is not None else (outside, source)
            if name not in bucket.setdefault(key, []):
                bucket[key].append(name)
    return (
        tuple(BindFolder(p or ".", tuple(s)) for p, s in sorted(inside.items())),
        tuple(ExternalBind(p, tuple(s)) for p, s in sorted(outside.items())),
    )


def _relative_to_any(source: str, folders: list[Path]) -> str | None:
    path = Path(os.path.normpath(source))
    for folder in folders:
        with contextlib.suppress(ValueError):
            relative = path.relative_to(folder)
            return "" if str(relative) == "." else relative.as_posix()
    return None
