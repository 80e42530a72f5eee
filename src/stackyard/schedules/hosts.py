"""Where a schedule's backups and drills are made: this host, or an agent. A schedule runs
the same steps on either (back up, push, prune; fetch, drill); only how each step reaches
the host differs."""

from __future__ import annotations

import asyncio
from typing import Protocol

from stackyard.backups.capture import Selection
from stackyard.backups.drill import DrillRecord
from stackyard.backups.service import BackupService
from stackyard.destinations.transfers import Transfers
from stackyard.disk.model import PruneOptions, PruneReport
from stackyard.disk.service import DiskService
from stackyard.errors import Invalid
from stackyard.stacks.runs import Run, RunBoard


class BackupHost(Protocol):
    async def stacks(self) -> list[str]: ...

    async def back_up(self, stack: str, capture: Selection, into: int | None = None) -> str:
        """Make a backup of `stack` and wait for it: the archive's name. `into`: a
        destination it is written straight into (`writes_into`)."""
        ...

    async def writes_into(self, destination_id: int) -> bool:
        """Whether a backup goes straight into the destination (a repository, from this
        host), rather than made here and pushed."""
        ...

    async def push(self, archive: str, destination_id: int) -> None: ...

    async def archives(self) -> dict[str, int]:
        """The archives the host keeps: name -> size."""
        ...

    async def delete(self, archive: str) -> None: ...

    async def fetch(self, archive: str, destination_id: int) -> None:
        """The destination's archive into the host's archives."""
        ...

    async def drill(self, archive: str, settle: int) -> DrillRecord:
        """A restore drill of the host's archive, waited for: its record."""
        ...

    async def prune(self, options: PruneOptions, origin: str) -> PruneReport:
        """The host's disk pruned: a preview, then exactly what it listed."""
        ...


async def finished(runs: RunBoard, run: Run) -> Run:
    """`run` once it has ended; Invalid with its last error when it failed."""
    await runs.wait(run)
    if run.status != "succeeded":
        errors = run.fold.snapshot().errors
        raise Invalid(errors[-1] if errors else f"The {run.action} failed")
    return run


class LocalHost:
    """This host: its backup service, transfers and disk."""

    def __init__(self, backups: BackupService, transfers: Transfers, disk: DiskService) -> None:
        self.backups = backups
        self.transfers = transfers
        self.disk = disk
        self.runs = backups.machine.runs

    async def stacks(self) -> list[str]:
        return sorted(await asyncio.to_thread(self.backups.machine.store.ids))

    async def back_up(self, stack: str, capture: Selection, into: int | None = None) -> str:
        destinations = self.transfers.destinations
        target = None if into is None else await asyncio.to_thread(destinations.open, into)
        run = await finished(self.runs, await self.backups.create(stack, capture, target))
        if run.artifact is None:
            raise Invalid("The backup made no archive")
        return run.artifact

    async def writes_into(self, destination_id: int) -> bool:
        destination = await asyncio.to_thread(self.transfers.destinations.get, destination_id)
        return destination.type == "repository"

    async def push(self, archive: str, destination_id: int) -> None:
        await finished(self.runs, self.transfers.push(archive, destination_id))

    async def archives(self) -> dict[str, int]:
        listed = await asyncio.to_thread(self.backups.store.list)
        return {info.name: info.size for info in listed}

    async def delete(self, archive: str) -> None:
        await asyncio.to_thread(self.backups.store.delete, archive)

    async def fetch(self, archive: str, destination_id: int) -> None:
        await finished(self.runs, await self.transfers.pull(destination_id, archive))

    async def drill(self, archive: str, settle: int) -> DrillRecord:
        run = await self.backups.drill(archive, settle)
        await self.runs.wait(run)
        record = await asyncio.to_thread(self.backups.drills.get, run.stack, run.id)
        if record is None:  # (it failed before it began: the stack busy, say)
            errors = run.fold.snapshot().errors
            raise Invalid(errors[-1] if errors else "The drill failed")
        return record

    async def prune(self, options: PruneOptions, origin: str) -> PruneReport:
        preview = await self.disk.preview(options)
        wanted = [f"{item.kind}:{item.id}" for item in preview.items]
        return await self.disk.prune(options, wanted, origin)
