"""Moving archives between this host and a destination, each as a run of the archive's
stack (followed like a deploy, one at a time per stack): push a local archive, pull a
remote one into the local archives (to restore it, or to download it from here).

A pull is written to a temporary file in the archives folder and takes its name only
when it is complete and its manifest reads; a failed transfer leaves nothing behind on
this side (and, by each destination's own rule, nothing under the final name there).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from stackyard.backups.names import stack_of
from stackyard.backups.store import ArchiveStore
from stackyard.compose.progress import ProgressFold
from stackyard.destinations.service import Destinations
from stackyard.errors import Conflict, Invalid, StackyardError
from stackyard.stacks.runs import Run, RunBoard, progress_reporter


class Transfers:
    def __init__(self, destinations: Destinations, store: ArchiveStore, runs: RunBoard) -> None:
        self.destinations = destinations
        self.store = store
        self.runs = runs

    def push(self, name: str, destination_id: int) -> Run:
        """Start pushing the local archive `name` (NotFound when it is not here)."""
        path = self.store.path(name)
        where = self.destinations.get(destination_id).name

        async def steps(run: Run) -> int:
            return await self._push(path, destination_id, where, run)

        return self.runs.start(stack_of(name), "push", ProgressFold(mode="transfer"), steps)

    async def _push(self, path: Path, destination_id: int, where: str, run: Run) -> int:
        size = path.stat().st_size
        report = progress_reporter(run, size, 1, f"Pushing to {where}")
        run.feed_line(f"Pushing {path.name} ({size} bytes) to {where}")
        try:
            destination = await asyncio.to_thread(self.destinations.open, destination_id)
            await destination.push(path, path.name, lambda done: report(done, 0))
        except StackyardError as exc:
            run.fail(f"To {where}: {exc.detail}")
            return 1
        run.advance(size, size, 1, 1, f"Pushing to {where}")
        run.artifact = path.name
        run.feed_line(f"Pushed {path.name} to {where}")
        return 0

    async def pull(self, destination_id: int, name: str) -> Run:
        """Start pulling `name` from the destination into the local archives."""
        stack = stack_of(name)
        if self.store.has(name):
            raise Conflict(f"{name} is already on this host")
        where, destination, size = await self.destinations.remote(destination_id, name)

        async def steps(run: Run) -> int:
            report = progress_reporter(run, size, 1, f"Pulling from {where}")
            temporary = self.store.temporary(name)
            run.feed_line(f"Pulling {name} ({size} bytes) from {where}")
            try:
                await destination.pull(name, temporary, lambda done: report(done, 0))
                problem = (await asyncio.to_thread(self.store.info, temporary)).error
                if problem:
                    raise Invalid(f"{name} is not a readable Stackyard archive: {problem}")
                kept = await asyncio.to_thread(self.store.keep, temporary, name)
            except StackyardError as exc:
                run.fail(f"Pull failed: {exc.detail}")
                return 1
            finally:
                with contextlib.suppress(FileNotFoundError):
                    temporary.unlink()
            run.advance(size, size, 1, 1, f"Pulling from {where}")
            run.artifact = kept.name
            run.feed_line(f"Pulled {name}: it is in this host's archives as {kept.name}")
            return 0

        return self.runs.start(stack, "pull", ProgressFold(mode="transfer"), steps)
