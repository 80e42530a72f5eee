"""One container inspected: what a listing does not say (the image it was made from,
all its labels, its mounts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, unreachable
from stackyard.errors import NotFound


@dataclass(frozen=True)
class MountInfo:
    type: str  # bind, volume, tmpfs, ...
    source: str  # a host path (for a volume: where the engine keeps it)
    destination: str  # the path in the container
    name: str | None  # a volume's name
    read_only: bool


@dataclass(frozen=True)
class ContainerDetails:
    id: str
    image: str  # the reference it was made from
    image_id: str
    labels: dict[str, str]
    mounts: tuple[MountInfo, ...]


def inspect_container(client: Engine, container_id: str) -> ContainerDetails:
    try:
        raw = client.api.inspect_container(container_id)
    except sdk.NotFound as exc:
        raise NotFound(f"Container {container_id[:12]} does not exist") from exc
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    config = raw.get("Config") or {}
    return ContainerDetails(
        id=str(raw.get("Id") or container_id),
        image=str(config.get("Image") or ""),
        image_id=str(raw.get("Image")),
        labels={str(k): str(v) for k, v in (config.get("Labels") or {}).items()},
        mounts=tuple(_mount(m) for m in raw.get("Mounts") or []),
    )


def _mount(raw: dict[str, Any]) -> MountInfo:
    return MountInfo(
        type=str(raw.get("Type") or ""),
        source=str(raw.get("Source") or ""),
        destination=str(raw.get("Destination") or ""),
        name=str(raw["Name"]) if raw.get("Name") else None,
        read_only=not raw.get("RW", True),
    )
