"""A stack's status from its containers: running, partially running or stopped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, computed_field

from stackyard.compose.project import Project
from stackyard.docker.containers import ContainerInfo

State = Literal["running", "partial", "stopped", "invalid"]


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
    state: State
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
) -> StackStatus:
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
    if project is None and error:
        state: State = "invalid" if not running else "partial"
    elif expected and len(running) == len(expected):
        state = "running"
    elif running or any(s.running for s in services):
        state = "partial"
    else:
        state = "stopped"
    return StackStatus(stack_id, state, services, error)


def _first_image(containers: list[ContainerInfo]) -> str | None:
    return containers[0].image if containers else None
