"""The service's own container, when it runs in one: its id (from /proc/self/mountinfo,
which works under cgroup v1 and v2), its details, and its mounts, to map host paths to
the paths the service sees (the longest matching mount source wins)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from stackyard.docker.details import ContainerDetails, inspect_container
from stackyard.docker.engine import Engine
from stackyard.errors import StackyardError

_CONTAINER_ID = re.compile(r"/containers/([0-9a-f]{64})/(?:hostname|hosts|resolv\.conf)")


def own_container_id(mountinfo: Path = Path("/proc/self/mountinfo")) -> str | None:
    """This process's container id, or None outside a container."""
    try:
        text = mountinfo.read_text()
    except OSError:
        return None
    found = _CONTAINER_ID.search(text)
    return found.group(1) if found else None


def own_container(client: Engine) -> ContainerDetails | None:
    """This process's container, inspected; None outside a container."""
    container_id = own_container_id()
    return None if container_id is None else inspect_container(client, container_id)


@dataclass(frozen=True)
class PathMapping:
    """A host folder and where this process sees it."""

    host: str
    local: str


def own_mappings(client: Engine) -> list[PathMapping]:
    """The service container's bind mounts, longest host path first (empty outside a
    container, or when the engine does not say)."""
    try:
        own = own_container(client)
    except StackyardError:
        return []
    if own is None:
        return []
    found = [
        PathMapping(m.source, m.destination)
        for m in own.mounts
        if m.type == "bind" and m.source and m.destination
    ]
    return sorted(found, key=lambda m: len(m.host), reverse=True)


def to_local(host_path: str, mappings: list[PathMapping], in_container: bool) -> str | None:
    """Where this process sees `host_path`: through the longest matching mount; itself
    outside a container; None when no mount reaches it."""
    if not in_container:
        return host_path
    path = PurePosixPath(host_path)
    for mapping in mappings:  # longest first
        host = PurePosixPath(mapping.host)
        if path == host or host in path.parents:
            return str(PurePosixPath(mapping.local) / path.relative_to(host))
    return None


def overlap(
    host_path: str, local: Path, mappings: list[PathMapping], in_container: bool
) -> Literal["holds", "inside"] | None:
    """How `host_path` overlaps the folder this process sees at `local`: it is that
    folder or holds it, or it lies inside it; None when apart (or out of reach)."""
    seen = to_local(host_path, mappings, in_container)
    return None if seen is None else path_overlap(seen, str(local))


def path_overlap(path: str, folder: str) -> Literal["holds", "inside"] | None:
    """How two plain absolute paths overlap: `path` is `folder` or holds it, or lies
    inside it; None when apart."""
    inner, outer = PurePosixPath(path), PurePosixPath(folder)
    if inner == outer or inner in outer.parents:
        return "holds"
    return "inside" if outer in inner.parents else None
