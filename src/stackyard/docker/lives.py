"""What the health gate of an update reads of a compose project's containers: which
container and image each service runs; how a container fares (running, restarted, exited,
killed for memory, its health). What a rollback does to images is in `docker.images`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from stackyard.docker import sdk
from stackyard.docker.containers import ONEOFF, PROJECT, SERVICE
from stackyard.docker.engine import Engine, explain
from stackyard.docker.events import container_events
from stackyard.errors import Unavailable

#: A log line kept for a rollback's outcome is cut to this many characters.
LINE_LIMIT = 400


@dataclass(frozen=True)
class Running:
    """A service's container: which one, and the image (by id) it was created from."""

    service: str
    container_id: str
    image_id: str


@dataclass(frozen=True)
class Life:
    """How a container fares now."""

    status: str  # created, running, restarting, exited, dead, paused, removing
    exit_code: int | None  # its last exit's; None when it never exited or it is not known
    restart_count: int
    oom_killed: bool
    health: str | None  # starting, healthy, unhealthy; None without a healthcheck
    health_output: str  # the last probe's output
    restart_policy: str  # no, always, unless-stopped, on-failure


def project_containers(client: Engine, project: str) -> list[Running]:
    """The containers of compose project `project` (one-off `run` containers left out)."""
    try:
        raw = client.api.containers(all=True, filters={"label": f"{PROJECT}={project}"})
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot list containers: {explain(exc)}") from exc
    return [
        Running(c["Labels"].get(SERVICE, ""), c["Id"], c.get("ImageID", ""))
        for c in raw
        if (c.get("Labels") or {}).get(ONEOFF) != "True"
    ]


def life_of(client: Engine, container_id: str) -> Life | None:
    """How the container fares; None when it is gone."""
    try:
        attrs: dict[str, Any] = client.api.inspect_container(container_id)
    except sdk.NotFound:
        return None
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot inspect container {container_id[:12]}: {explain(exc)}") from exc
    state = attrs.get("State") or {}
    health = state.get("Health") or None
    probes = (health or {}).get("Log") or []
    policy = ((attrs.get("HostConfig") or {}).get("RestartPolicy") or {}).get("Name") or "no"
    status = str(state.get("Status", ""))
    restarts = int(attrs.get("RestartCount") or 0)
    exit_code: int | None = int(state.get("ExitCode") or 0)
    if status not in ("exited", "dead", "restarting"):
        # The engine sets ExitCode to 0 when it starts the container (again): a container
        # restarted and running tells its last exit only in the engine's events.
        exit_code = _last_exit(client, container_id, attrs) if restarts else None
    return Life(
        status=status,
        exit_code=exit_code,
        restart_count=restarts,
        oom_killed=bool(state.get("OOMKilled")),
        health=str(health["Status"]) if health and health.get("Status") != "none" else None,
        health_output=str(probes[-1].get("Output") or "").strip()[:LINE_LIMIT] if probes else "",
        restart_policy=str(policy),
    )


def _last_exit(client: Engine, container_id: str, attrs: dict[str, Any]) -> int | None:
    """The exit code of the container's last `die` event, or None when the engine has none."""
    created = str(attrs.get("Created") or "")[:19]
    try:
        since = int(datetime.strptime(created, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp())
    except ValueError:
        return None
    codes = [
        event.exit_code
        for event in container_events(client, since, int(time.time()) + 1, container_id)
        if event.action == "die"
    ]
    return codes[-1] if codes else None


def log_tail(client: Engine, container_id: str, lines: int = 20) -> tuple[str, ...]:
    """The container's last `lines` log lines (stdout and stderr); none when it is gone."""
    try:
        raw = client.api.logs(container_id, stdout=True, stderr=True, tail=lines)
    except sdk.DockerException:
        return ()
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return tuple(line[:LINE_LIMIT] for line in text.splitlines()[-lines:])
