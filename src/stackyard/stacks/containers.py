"""A stack's containers, found as the stack list finds them (by compose project and by
folder), for their logs, a shell in one of them, and what they use; and which of the
host's containers the stacks own, so that `stackyard.containers.outside` can tell those
that no stack owns. The container-level work is in `stackyard.containers`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from stackyard.containers import shell
from stackyard.containers.logs import LogReader, Target, targets_of
from stackyard.containers.usage import ContainerUsage, UsageHistory, UsageTotals
from stackyard.docker.containers import ContainerInfo, compose_containers
from stackyard.errors import Invalid, NotFound, StackyardError
from stackyard.stacks.machine import Machine
from stackyard.stacks.status import ContainerIndex


@dataclass(frozen=True)
class HostUsage:
    containers: list[ContainerUsage]
    stacks: dict[str, UsageTotals]
    total: UsageTotals


class StackContainers:
    def __init__(self, machine: Machine) -> None:
        self.machine = machine

    # -- finding containers -----------------------------------------------------------
    def _index(self) -> ContainerIndex:
        return ContainerIndex(compose_containers(self.machine.docker), self.machine.roots())

    def of(self, stack_id: str) -> tuple[list[ContainerInfo], set[str]]:
        """The stack's containers and the compose project names they run under."""
        self.machine.store.folder(stack_id)
        project = self.machine.listed_projects([stack_id])[stack_id]
        name = None if isinstance(project, StackyardError) else project.name
        found = self._index().of(stack_id, name)
        return found, {c.project for c in found} | {name or stack_id}

    def owned(self, everything: list[ContainerInfo]) -> set[str]:
        """The ids of those of `everything` (every container of the host) that a stack
        owns (`stackyard.containers.outside.Owned`)."""
        index = ContainerIndex(everything, self.machine.roots())
        owned: set[str] = set()
        for stack_id, project in self.machine.listed_projects(self.machine.store.ids()).items():
            name = None if isinstance(project, StackyardError) else project.name
            owned.update(c.id for c in index.of(stack_id, name))
        return owned

    def named(self, stack_id: str, container: str) -> ContainerInfo:
        """One of the stack's containers, by name (NotFound otherwise)."""
        found, _ = self.of(stack_id)
        for candidate in found:
            if candidate.name == container:
                return candidate
        raise NotFound(f"Stack {stack_id!r} has no container {container!r}")

    # -- logs -------------------------------------------------------------------------
    async def log_reader(
        self, stack_id: str, service: str | None = None, container: str | None = None
    ) -> LogReader:
        found, projects = await asyncio.to_thread(self.of, stack_id)

        def wanted(target: Target) -> bool:
            return (service is None or target.service == service) and (
                container is None or target.name == container
            )

        targets = [t for t in targets_of(found) if wanted(t)]
        if service is not None and not any(c.service == service for c in found):
            names = sorted({c.service for c in found})
            raise NotFound(
                f"Stack {stack_id!r} has no container of service {service!r}"
                + (f" (services with containers: {', '.join(names)})" if names else "")
            )
        if container is not None and not targets:
            raise NotFound(f"Stack {stack_id!r} has no container {container!r}")
        return LogReader(self.machine.streams, targets, projects, wanted)

    # -- shell ------------------------------------------------------------------------
    async def open_shell(
        self, stack_id: str, container: str, command: str, cols: int, rows: int
    ) -> shell.Session:
        info = await asyncio.to_thread(self.named, stack_id, container)
        if info.state != "running":
            raise Invalid(f"Container {container!r} is {info.state}, not running")
        return await shell.open_session(self.machine.docker, info.id, command, cols, rows)

    # -- resource use -----------------------------------------------------------------
    async def usage_history(self, stack_id: str) -> UsageHistory:
        """The last minutes of CPU and memory of the stack's containers (see
        `UsageCollector.history`)."""
        found, _ = await asyncio.to_thread(self.of, stack_id)
        return self.machine.usage.history(c.name for c in found)

    async def usage(self) -> HostUsage:
        """Every running container's use, summed per stack and for the host."""
        containers = await self.machine.usage.snapshot()
        index = await asyncio.to_thread(self._index)
        ids = await asyncio.to_thread(self.machine.store.ids)
        projects = await asyncio.to_thread(self.machine.listed_projects, ids)
        by_id = {u.id: u for u in containers}
        stacks = {}
        for stack_id, project in projects.items():
            name = None if isinstance(project, StackyardError) else project.name
            mine = [by_id[c.id] for c in index.of(stack_id, name) if c.id in by_id]
            if mine:
                stacks[stack_id] = UsageTotals.of(mine)
        return HostUsage(containers, stacks, UsageTotals.of(containers))
