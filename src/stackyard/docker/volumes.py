"""Named volumes on the engine: looked up, made (with labels, and a driver's options for
a mount such as NFS), removed, listed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, explain, unreachable
from stackyard.errors import Conflict, NotFound, Unavailable


@dataclass(frozen=True)
class VolumeInfo:
    name: str
    driver: str | None
    options: dict[str, str]  # the driver's (for the local driver: type, o, device)


def volume(client: Engine, name: str) -> VolumeInfo | None:
    """The volume, or None when there is none of that name."""
    try:
        raw = client.api.inspect_volume(name)
    except sdk.NotFound:
        return None
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    return VolumeInfo(
        name=str(raw.get("Name") or name),
        driver=raw.get("Driver"),
        options={str(k): str(v) for k, v in (raw.get("Options") or {}).items()},
    )


def create_volume(
    client: Engine, name: str, labels: Mapping[str, str], options: Mapping[str, str] | None = None
) -> None:
    """A volume of the local driver (`options`: its mount options)."""
    try:
        client.api.create_volume(
            name,
            driver="local",
            driver_opts=dict(options) if options else None,
            labels=dict(labels),
        )
    except sdk.DockerException as exc:
        raise Unavailable(f"Volume {name} could not be created: {explain(exc)}") from exc


def remove_volume(client: Engine, name: str) -> None:
    """Remove the volume (NotFound when there is none; Conflict while a container uses
    it)."""
    try:
        client.api.remove_volume(name)
    except sdk.NotFound as exc:
        raise NotFound(f"Volume {name} does not exist") from exc
    except sdk.APIError as exc:
        if exc.status_code == 409:
            raise Conflict(f"Volume {name} is in use: {explain(exc)}") from exc
        raise Unavailable(f"Volume {name} could not be removed: {explain(exc)}") from exc
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc


def volume_names(client: Engine) -> set[str]:
    try:
        listed = client.api.volumes() or {}
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    return {str(v.get("Name", "")) for v in listed.get("Volumes") or []}
