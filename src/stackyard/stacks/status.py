"""A stack's status from its containers: one state word that includes their health, so
that the stacks list, a stack's page, the side list and the fleet dashboard (which all
read it from here) say the same of a stack."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, computed_field

from stackyard.compose.project import Project
from stackyard.docker.containers import ContainerInfo

#: One word per stack, the first that holds in this order (most pressing first):
#: restarting: a container is restarting (a restart loop serves nothing);
#: unhealthy: a running container fails its healthcheck;
#: invalid: the compose file cannot be read and nothing of it runs;
#: partial: some of the services run, not all (or containers of no service run);
#: rolled_back: every service runs and is healthy (or starting), but the last update
#: failed its health gate and the previous images run again;
#: running: every service runs, none unhealthy (health "starting" is running);
#: stopped: nothing runs.
State = Literal[
    "running", "unhealthy", "partial", "restarting", "rolled_back", "stopped", "invalid"
]


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    image: str | None
    containers: tuple[ContainerInfo, ...]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def running(self) -> bool:
        return any(c.state == "running" for c in self.containers)


@dataclass(frozen=True)
class StackStatus:
    id: str
    state: Annotated[
        State,
        Field(
            description="One word that includes health, the first that holds of: restarting, "
            "unhealthy, invalid, partial (some services run), rolled_back (all run, but the "
            "last update was rolled back), running, stopped"
        ),
    ]
    services: tuple[ServiceStatus, ...]
    error: Annotated[str | None, Field(description="Why the compose file could not be read")] = None


class ContainerIndex:
    """Finds a stack's containers by its project name, or by the folder compose ran in
    (as the service or as the host sees it: a stack started by hand is found too)."""

    def __init__(self, containers: list[ContainerInfo], roots: list[Path]) -> None:
        self.roots = roots
        self.by_dir: dict[str, list[ContainerInfo]] = {}
        self.by_project: dict[str, list[ContainerInfo]] = {}
        for c in containers:
            if c.working_dir:
                self.by_dir.setdefault(c.working_dir.rstrip("/"), []).append(c)
            self.by_project.setdefault(c.project, []).append(c)

    def of(self, stack_id: str, project_name: str | None) -> list[ContainerInfo]:
        """Compose identifies a project by its name; the folder catches the rest."""
        found = {c.id: c for c in self.by_project.get(project_name or stack_id, [])}
        for root in self.roots:
            found.update((c.id, c) for c in self.by_dir.get(str(root / stack_id), []))
        return sorted(found.values(), key=lambda c: c.name)


def stack_status(
    stack_id: str,
    project: Project | None,
    containers: list[ContainerInfo],
    error: str | None = None,
    rolled_back: bool = False,
) -> StackStatus:
    """`rolled_back`: the stack's last update was rolled back (its preferences say)."""
    by_service: dict[str, list[ContainerInfo]] = {}
    for c in containers:
        by_service.setdefault(c.service, []).append(c)
    if project is not None:
        names = [s.name for s in project.services]
        images = {s.name: s.image for s in project.services}
    else:
        names = sorted(by_service)
        images = {}
    names += [n for n in sorted(by_service) if n not in names]  # orphans still show
    services = tuple(
        ServiceStatus(
            n, images.get(n) or _first_image(by_service.get(n, [])), tuple(by_service.get(n, []))
        )
        for n in names
    )
    expected = [s for s in services if project is None or s.name in images]
    running = [s for s in expected if s.running]
    anything_runs = any(s.running for s in services)
    if any(c.state == "restarting" for c in containers):
        state: State = "restarting"
    elif any(c.state == "running" and c.health == "unhealthy" for c in containers):
        state = "unhealthy"
    elif project is None and error and not running:
        state = "invalid"
    elif project is None and error:
        state = "partial"
    elif expected and len(running) == len(expected):
        state = "rolled_back" if rolled_back else "running"
    elif anything_runs:
        state = "partial"
    else:
        state = "stopped"
    return StackStatus(stack_id, state, services, error)


def _first_image(containers: list[ContainerInfo]) -> str | None:
    return containers[0].image if containers else None
