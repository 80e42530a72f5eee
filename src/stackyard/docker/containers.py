"""Containers on the engine, read with one list call (no inspect per container), and
started, stopped or restarted one by one (those outside any stack); a scratch compose
project removed whole."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, explain, unreachable
from stackyard.docker.helper import HELPER_LABEL
from stackyard.errors import Conflict, NotFound, Unavailable

PROJECT = "com.docker.compose.project"
SERVICE = "com.docker.compose.service"
WORKING_DIR = "com.docker.compose.project.working_dir"
ONEOFF = "com.docker.compose.oneoff"
_HEALTH = re.compile(r"\((healthy|unhealthy|health: starting)\)")


#: Fields the API leaves out: how the service finds a stack's containers, not what a
#: stack's page shows of them.
_Internal = Field(exclude=True)


@dataclass(frozen=True)
class ContainerInfo:
    id: Annotated[str, _Internal]
    name: str
    project: Annotated[str, _Internal]
    service: Annotated[str, _Internal]
    working_dir: Annotated[str | None, _Internal]
    state: str  # running, exited, created, paused, restarting, dead
    status: str  # the engine's text: "Up 3 minutes (healthy)"
    health: str | None  # healthy, unhealthy, starting; None without a healthcheck
    image: str
    ports: tuple[str, ...]


def _ports(entries: list[dict[str, Any]]) -> tuple[str, ...]:
    ports = []
    for p in entries or []:
        if p.get("PublicPort"):
            ports.append(
                f"{p.get('IP', '0.0.0.0')}:{p['PublicPort']}->{p['PrivatePort']}/{p['Type']}"
            )
        else:
            ports.append(f"{p['PrivatePort']}/{p['Type']}")
    return tuple(dict.fromkeys(ports))


def compose_containers(client: Engine) -> list[ContainerInfo]:
    """Every container of a compose project (one-off `run` containers left out)."""
    found = _listed(client, all=True, filters={"label": PROJECT})
    return [c for c, labels in found if labels.get(ONEOFF) != "True"]


def every_container(client: Engine) -> list[ContainerInfo]:
    """Every container of the engine, running or not, but Stackyard's own helpers."""
    return [c for c, labels in _listed(client, all=True) if HELPER_LABEL not in labels]


ContainerAction = Literal["start", "stop", "restart"]


def act_on_container(client: Engine, container_id: str, action: ContainerAction) -> ContainerInfo:
    """Start, stop (the engine's grace period, then SIGKILL) or restart one container;
    the container as it is after."""
    try:
        getattr(client.api, action)(container_id)
    except sdk.NotFound as exc:
        raise NotFound(f"The container is gone: {explain(exc)}") from exc
    except sdk.APIError as exc:
        raise Conflict(f"The engine refused to {action} the container: {explain(exc)}") from exc
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    after = _listed(client, all=True, filters={"id": container_id})
    if not after:
        raise NotFound("The container is gone")
    return after[0][0]


def running_containers(client: Engine) -> list[ContainerInfo]:
    """Every running container of the engine, of compose projects or not."""
    return [c for c, _ in _listed(client, filters={"status": "running"})]


def _listed(client: Engine, **query: Any) -> list[tuple[ContainerInfo, dict[str, str]]]:
    try:
        raw = client.api.containers(**query)
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot list containers: {exc}") from exc
    found = []
    for c in raw:
        labels = c.get("Labels") or {}
        health = _HEALTH.search(c.get("Status") or "")
        info = ContainerInfo(
            id=c["Id"],
            name=(c.get("Names") or ["/?"])[0].lstrip("/"),
            project=labels.get(PROJECT, ""),
            service=labels.get(SERVICE, ""),
            working_dir=labels.get(WORKING_DIR),
            state=c.get("State", ""),
            status=c.get("Status", ""),
            health=health.group(1).removeprefix("health: ") if health else None,
            image=c.get("Image", ""),
            ports=_ports(c.get("Ports") or []),
        )
        found.append((info, labels))
    return found


def project_containers(client: Engine, project: str) -> list[ContainerInfo]:
    """Every container of the compose project `project`, running or not."""
    return [c for c, _ in _listed(client, all=True, filters={"label": f"{PROJECT}={project}"})]


def remove_project(client: Engine, project: str) -> None:
    """Everything of the compose project `project` on the engine: its containers (forced:
    running ones too), then its networks and volumes (by compose's label)."""
    label = {"label": f"{PROJECT}={project}"}
    try:
        for found in client.api.containers(all=True, filters=label):
            with contextlib.suppress(sdk.NotFound):
                client.api.remove_container(found["Id"], force=True, v=True)
        for network in client.api.networks(filters=label):
            with contextlib.suppress(sdk.NotFound):
                client.api.remove_network(network["Id"])
        for volume in (client.api.volumes(filters=label) or {}).get("Volumes") or []:
            with contextlib.suppress(sdk.NotFound):
                client.api.remove_volume(volume["Name"], force=True)
    except sdk.DockerException as exc:
        raise Unavailable(f"What project {project} made could not be removed: {exc}") from exc
