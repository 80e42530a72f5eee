"""The host's containers that no stack owns ("outside" the stacks: made by `docker run`,
another tool, or a compose project whose folder is not a stack here), listed, started,
stopped, restarted and their logs read, as Portainer users expect.

Which containers the stacks own is the stacks' knowledge, not this module's: it is
handed in as `Owned` (`StackContainers.owned`), so that this floor never imports the
stacks above it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stackyard.containers.logs import LogReader, targets_of
from stackyard.docker.containers import (
    ContainerAction,
    ContainerInfo,
    act_on_container,
    every_container,
)
from stackyard.docker.own import own_container_id
from stackyard.errors import Conflict, NotFound

if TYPE_CHECKING:
    from stackyard.docker.engine import Engine
    from stackyard.docker.streams import EngineStreams

#: The ids of the containers the stacks own, of a listing of every container.
Owned = Callable[[list[ContainerInfo]], set[str]]


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


class OutsideContainers:
    """`docker` and `streams` give the engine's two ends when first needed (the service
    starts without either)."""

    def __init__(
        self,
        docker: Callable[[], Engine],
        streams: Callable[[], EngineStreams],
        owned: Owned,
    ) -> None:
        self._docker = docker
        self._streams = streams
        self._owned = owned

    def _infos(self) -> list[ContainerInfo]:
        everything = every_container(self._docker())
        owned = self._owned(everything)
        return sorted((c for c in everything if c.id not in owned), key=lambda c: c.name)

    def list(self) -> list[OutsideContainer]:
        """The host's containers that no stack owns (Stackyard's helpers left out)."""
        return [OutsideContainer.of(info) for info in self._infos()]

    def named(self, name: str) -> ContainerInfo:
        for info in self._infos():
            if info.name == name:
                return info
        raise NotFound(f"No container {name!r} outside the stacks of this host")

    def act(self, name: str, action: ContainerAction) -> OutsideContainer:
        """Start, stop or restart a container outside the stacks; its state after. The
        service's own container is refused: stopped from its own page, nothing would be
        left to start it again (the self-update restarts it)."""
        info = self.named(name)
        if info.id == own_container_id():
            raise Conflict(f"{name} is this Stackyard's own container: {action} it on its host")
        return OutsideContainer.of(act_on_container(self._docker(), info.id, action))

    async def log_reader(self, name: str) -> LogReader:
        info = await asyncio.to_thread(self.named, name)
        # No project to watch: a container recreated under the same name is followed.
        return LogReader(self._streams(), targets_of([info]), [], lambda t: t.name == name)
