"""The engine's event stream for containers, read in windows: each call returns the
events of one window (`since` to `until`) as they happen, then ends, so that a reader
never hangs on a silent engine and misses nothing across windows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, unreachable

#: The actions a watcher needs: how containers end, stop and fare.
ACTIONS = ("die", "oom", "kill", "stop", "health_status", "start", "destroy")


@dataclass(frozen=True)
class ContainerEvent:
    action: str  # "die", "oom", "kill", "health_status: unhealthy", ...
    id: str
    name: str
    labels: dict[str, str]
    exit_code: int | None
    at: float  # seconds since the epoch


def _event(raw: Any) -> ContainerEvent | None:
    if not isinstance(raw, dict) or raw.get("Type") != "container":
        return None
    actor = raw.get("Actor")
    actor = actor if isinstance(actor, dict) else {}
    attributes = actor.get("Attributes")
    labels = {str(k): str(v) for k, v in attributes.items()} if isinstance(attributes, dict) else {}
    code = labels.pop("exitCode", None)
    try:
        at = int(raw.get("timeNano") or 0) / 1e9 or float(raw.get("time") or 0)
    except (TypeError, ValueError):
        return None
    return ContainerEvent(
        action=str(raw.get("Action") or raw.get("status") or ""),
        id=str(actor.get("ID") or raw.get("id") or ""),
        name=labels.pop("name", ""),
        labels=labels,
        exit_code=int(code) if code and code.lstrip("-").isdigit() else None,
        at=at,
    )


def container_events(
    client: Engine, since: int, until: int, container: str | None = None
) -> Iterator[ContainerEvent]:
    """The container events from `since` to `until` (whole seconds since the epoch, both
    included), of every container or only of `container`, as they come; Unavailable when
    the engine cannot be reached."""
    filters: dict[str, list[str]] = {"type": ["container"], "event": list(ACTIONS)}
    if container is not None:
        filters["container"] = [container]
    try:
        stream = client.api.events(since=since, until=until, decode=True, filters=filters)
        for raw in stream:
            event = _event(raw)
            if event is not None:
                yield event
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    except OSError as exc:  # the connection dropped under the stream
        raise unreachable(sdk.DockerException(str(exc))) from exc
