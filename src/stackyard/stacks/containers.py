"""A stack's containers, found as the stack list finds them (by compose project and by
folder), for their logs, a shell in one of them, and what they use; and the host's
containers that no stack owns ("outside"), listed, started, stopped and read as Portainer
users expect. The container-level work is in `stackyard.containers`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from stackyard.containers import shell
from stackyard.containers.logs import LogLine, LogReader, Target, merged_lines, targets_of
from stackyard.containers.usage import ContainerUsage, UsageHistory, UsageTotals
from stackyard.docker.containers import (
    ContainerAction,
    ContainerInfo,
    act_on_container,
    compose_containers,
    every_container,
)
from stackyard.docker.own import own_container_id
from stackyard.errors import Conflict, Invalid, NotFound, StackyardError
from stackyard.stacks.machine import Machine
from stackyard.stacks.status import ContainerIndex

#: Lines of a log view before it follows, unless asked otherwise.
DEFAULT_TAIL = 300


@dataclass(frozen=True)
class OutsideContainer:
    """A container of the host that no stack folder owns."""

    name: str
    image: str
    state: str  # running, exited, created, paused, restarting, dead
    status: str  # the engine's text: "Up 3 minutes (healthy)"
    health: str | None
    ports: tuple[str, ...]
    project: str | None  # its compose project, when one made it (not a stack here)

    @classmethod
    def of(cls, info: ContainerInfo) -> OutsideContainer:
        return cls(
            info.name,
            info.image,
            info.state,
            info.status,
            info.health,
            info.ports,
            info.project or None,
        )


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

    def _outside(self) -> list[ContainerInfo]:
        everything = every_container(self.machine.docker)
        index = ContainerIndex(everything, self.machine.roots())
        owned: set[str] = set()
        for stack_id, project in self.machine.listed_projects(self.machine.store.ids()).items():
            name = None if isinstance(project, StackyardError) else project.name
            owned.update(c.id for c in index.of(stack_id, name))
        return sorted((c for c in everything if c.id not in owned), key=lambda c: c.name)

    def outside(self) -> list[OutsideContainer]:
        """The host's containers that no stack owns (Stackyard's helpers left out)."""
        return [OutsideContainer.of(info) for info in self._outside()]

    def outside_named(self, name: str) -> ContainerInfo:
        for info in self._outside():
            if info.name == name:
                return info
        raise NotFound(f"No container {name!r} outside the stacks of this host")

    def act_outside(self, name: str, action: ContainerAction) -> OutsideContainer:
        """Start, stop or restart a container outside the stacks; its state after. The
        service's own container is refused: stopped from its own page, nothing would be
        left to start it again (the self-update restarts it)."""
        info = self.outside_named(name)
        if info.id == own_container_id():
            raise Conflict(f"{name} is this Stackyard's own container: {action} it on its host")
        return OutsideContainer.of(act_on_container(self.machine.docker, info.id, action))

    async def outside_log_reader(self, name: str) -> LogReader:
        info = await asyncio.to_thread(self.outside_named, name)
        # No project to watch: a container recreated under the same name is followed.
        return LogReader(self.machine.streams, targets_of([info]), [], lambda t: t.name == name)

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

    async def logs(
        self, reader: LogReader, tail: int = DEFAULT_TAIL, follow: bool = True
    ) -> AsyncIterator[list[LogLine]]:
        """The last `tail` lines (one batch), then, with `follow`, new lines as they come."""
        if tail < 0:
            raise Invalid("tail must be 0 or more")
        first = await reader.tail(tail)
        yield first
        if follow:
            async for batch in reader.follow():
                yield batch

    async def log_file(self, reader: LogReader) -> AsyncIterator[bytes]:
        """Every line the containers have, merged by time, as text: `time container
        stream text` per line, in chunks of about 64 KiB."""
        chunk: list[str] = []
        size = 0
        async for line in merged_lines(reader):
            text = f"{line.time} {line.container} {line.stream} {line.text}\n"
            chunk.append(text)
            size += len(text)
            if size >= 64 * 1024:
                yield "".join(chunk).encode(errors="replace")
                chunk, size = [], 0
        if chunk:
            yield "".join(chunk).encode(errors="replace")

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
