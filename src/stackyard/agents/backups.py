"""Backups of an agent's stacks, driven by the central: made on the agent, moved between
the agent and a destination through the central (the destination's secrets never leave
the central), kept and pruned on the agent.

An archive crossing the central is spooled to a private temporary file in the central's
data folder (destinations read and write files: multipart and resumable transfers need
one), and that file is removed on every exit path; nothing of it stays when the transfer
fails on either side."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from pydantic import TypeAdapter

from stackyard.agents.service import Agents
from stackyard.backups.capture import Selection
from stackyard.backups.drill import DrillRecord
from stackyard.backups.store import ArchiveInfo
from stackyard.destinations.base import Destination
from stackyard.destinations.service import Destinations
from stackyard.destinations.transfers import start_transfer
from stackyard.disk.model import PruneOptions, PrunePreview, PruneReport
from stackyard.errors import AgentError, Conflict, Invalid, NotFound
from stackyard.events import Sink
from stackyard.stacks.news import run_event
from stackyard.stacks.runs import Run, RunBoard, RunState

if TYPE_CHECKING:
    from stackyard.agents.client import AgentClient

_RUN = TypeAdapter(RunState)
_ARCHIVES = TypeAdapter(list[ArchiveInfo])
_DRILLS = TypeAdapter(list[DrillRecord])
_PREVIEW = TypeAdapter(PrunePreview)
_REPORT = TypeAdapter(PruneReport)
_CHUNK = 1024 * 1024
#: How often a backup running on an agent is looked at.
POLL_SECONDS = 1.0


class AgentHost:
    """A schedule's `BackupHost` on an agent; also what the central's transfers use."""

    def __init__(self, client: AgentClient, destinations: Destinations, spool: Path) -> None:
        self.client = client
        self.destinations = destinations
        self.spool = spool

    async def stacks(self) -> list[str]:
        listed = await self.client.get("/stacks", TypeAdapter(list[dict[str, object]]))
        return sorted(str(stack["id"]) for stack in listed)

    async def _ended(self, path: str, body: dict[str, object]) -> RunState:
        """The run the agent starts at `path`, once it has ended."""
        started = await self.client.read(await self.client.request("POST", path, body=body), _RUN)
        while True:
            state = await self.client.get(f"/stacks/{started.stack}/run", _RUN)
            if state.id == started.id and state.status != "running":
                return state
            await asyncio.sleep(POLL_SECONDS)

    async def writes_into(self, destination_id: int) -> bool:
        return False  # (the destination's secrets never leave the central)

    async def back_up(self, stack: str, capture: Selection, into: int | None = None) -> str:
        if into is not None:
            raise Invalid("An agent's backups are made on the agent, then pushed")
        state = await self._ended(f"/stacks/{stack}/backups", capture.model_dump(mode="json"))
        if state.status != "succeeded":
            errors = state.progress.errors
            raise Invalid(errors[-1] if errors else "The backup failed on the agent")
        if state.artifact is None:
            raise Invalid("The backup made no archive")
        return state.artifact

    async def archives(self) -> dict[str, int]:
        return {a.name: a.size for a in await self.client.get("/backups", _ARCHIVES)}

    async def delete(self, archive: str) -> None:
        await self.client.read_bytes(await self.client.request("DELETE", f"/backups/{archive}"))

    async def fetch(self, archive: str, destination_id: int) -> None:
        destination = await asyncio.to_thread(self.destinations.open, destination_id)
        await self.pull(destination, archive)

    async def drill(self, archive: str, settle: int) -> DrillRecord:
        state = await self._ended(f"/backups/{archive}/drill", {"settle_seconds": settle})
        records = await self.client.get(f"/stacks/{state.stack}/drills", _DRILLS)
        record = next((r for r in records if r.id == state.id), None)
        if record is None:
            errors = state.progress.errors
            raise Invalid(errors[-1] if errors else "The drill failed on the agent")
        return record

    async def prune(self, options: PruneOptions, origin: str) -> PruneReport:
        body = options.model_dump(mode="json")
        answer = await self.client.request("POST", "/disk/prune/preview", body=body)
        preview = await self.client.read(answer, _PREVIEW)
        wanted = [f"{item.kind}:{item.id}" for item in preview.items]
        answer = await self.client.request(
            "POST", "/disk/prune", body={"options": body, "ids": wanted, "origin": origin}
        )
        return await self.client.read(answer, _REPORT)

    def _spooled(self, name: str) -> Path:
        self.spool.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.spool / f".{name}.{secrets.token_hex(4)}.part"

    async def push(
        self, archive: str, destination_id: int, progress: Callable[[int], None] = lambda _: None
    ) -> None:
        """The agent's archive to the destination, through a spool file here."""
        destination = await asyncio.to_thread(self.destinations.open, destination_id)
        spooled = self._spooled(archive)
        try:
            answer = await self.client.request("GET", f"/backups/{archive}/download")
            if answer.status_code >= 400:
                await self.client.read_bytes(answer)  # raises with the agent's detail
            done = 0
            async with await anyio.open_file(spooled, "wb") as file:
                async for chunk in answer.body():
                    await file.write(chunk)
                    done += len(chunk)
                    progress(done // 2)  # the first half of the way
            size = done
            await destination.push(spooled, archive, lambda sent: progress(size // 2 + sent // 2))
        finally:
            with contextlib.suppress(FileNotFoundError):
                spooled.unlink()

    async def pull(
        self,
        destination: Destination,
        archive: str,
        progress: Callable[[int], None] = lambda _: None,
    ) -> ArchiveInfo:
        """A destination's archive into the agent's archives, through a spool file here."""
        spooled = self._spooled(archive)
        try:
            await destination.pull(archive, spooled, lambda done: progress(done // 2))
            size = spooled.stat().st_size

            async def chunks() -> AsyncIterator[bytes]:
                sent = 0
                async with await anyio.open_file(spooled, "rb") as file:
                    while chunk := await file.read(_CHUNK):
                        sent += len(chunk)
                        progress(size // 2 + sent // 2)
                        yield chunk

            answer = await self.client.request(
                "PUT",
                "/backups/upload",
                content=chunks(),
                headers={"content-type": "application/x-tar", "content-length": str(size)},
            )
            return await self.client.read(answer, TypeAdapter(ArchiveInfo))
        finally:
            with contextlib.suppress(FileNotFoundError):
                spooled.unlink()


class AgentTransfers:
    """Pushes and pulls for an agent's archives started from the UI: each a run of the
    archive's stack on a board the central keeps per agent (followed like any run)."""

    def __init__(
        self,
        agents: Agents,
        destinations: Destinations,
        data_dir: Path,
        events: Sink | None = None,
    ) -> None:
        """`events`: where the end of a push or pull is said (as the agent's)."""
        self.agents = agents
        self.destinations = destinations
        self.data_dir = data_dir
        self.events = events
        self._boards: dict[int, RunBoard] = {}

    def _board(self, agent_id: int) -> RunBoard:
        if agent_id not in self._boards:
            board = RunBoard(self.data_dir / "agents" / str(agent_id))
            board.ended.append(functools.partial(self._ended, agent_id))
            self._boards[agent_id] = board
        return self._boards[agent_id]

    def _ended(self, agent_id: int, state: RunState, origin: str | None) -> None:
        event = run_event(state, origin)
        if event is not None and self.events is not None:
            self.events(dataclasses.replace(event, host_id=agent_id))

    def last_run(self, agent_id: int, stack_id: str) -> RunState | None:
        """The current or last push or pull of the stack's archives for this agent (None
        when there was none)."""
        return self._board(agent_id).last(stack_id)

    def follow(self, agent_id: int, stack_id: str) -> AsyncIterator[RunState]:
        """That run's state now and after each change, until it ends."""
        return self._board(agent_id).follow(stack_id)

    async def host(self, agent_id: int) -> AgentHost:
        client = await self.agents.client(agent_id)
        return AgentHost(client, self.destinations, self.data_dir / "spool")

    def clean_up(self) -> None:
        """Spool files a stopped service left behind."""
        for leftover in (self.data_dir / "spool").glob(".*.part"):
            with contextlib.suppress(OSError):
                leftover.unlink()

    async def push(self, agent_id: int, name: str, destination_id: int) -> Run:
        host = await self.host(agent_id)
        archives = await host.archives()
        if name not in archives:
            raise NotFound(f"{name} is not on agent {host.client.target.name!r}")
        where = self.destinations.get(destination_id).name

        async def move(progress: Callable[[int], None]) -> str:
            await host.push(name, destination_id, progress)
            return name

        return start_transfer(
            self._board(agent_id),
            "push",
            name,
            archives[name],
            where,
            move,
            host.client.target.name,
        )

    async def pull(self, agent_id: int, destination_id: int, name: str) -> Run:
        host = await self.host(agent_id)
        if name in await host.archives():
            raise Conflict(f"{name} is already on agent {host.client.target.name!r}")
        where, destination, size = await self.destinations.remote(destination_id, name)

        async def move(progress: Callable[[int], None]) -> str:
            return (await host.pull(destination, name, progress)).name

        return start_transfer(
            self._board(agent_id), "pull", name, size, where, move, host.client.target.name
        )


__all__ = ["AgentError", "AgentHost", "AgentTransfers"]
