"""Moving archives between this host and a destination, each as a run of the archive's
stack (followed like a deploy, one at a time per stack): push a local archive, pull a
remote one into the local archives (to restore it, or to download it from here).

A pull is written to a temporary file in the archives folder and takes its name only
when it is complete and its manifest reads; a failed transfer leaves nothing behind on
this side (and, by each destination's own rule, nothing under the final name there).

`start_transfer` is the run of one push or pull, what it says and how it ends, for this
host's archives and for an agent's (`agents.backups`) alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Literal

from stackyard.backups.names import stack_of
from stackyard.backups.store import ArchiveStore
from stackyard.compose.progress import ProgressFold
from stackyard.destinations.service import Destinations
from stackyard.errors import Conflict, Invalid, StackyardError
from stackyard.stacks.runs import Run, RunBoard, progress_reporter

#: The moving itself: it hands the bytes moved so far to its argument and returns the
#: name the archive is kept under where it went.
Move = Callable[[Callable[[int], None]], Awaitable[str]]


def start_transfer(
    runs: RunBoard,
    kind: Literal["push", "pull"],
    name: str,
    size: int,
    where: str,
    move: Move,
    agent: str | None = None,
) -> Run:
    """Start pushing the archive `name` (`size` bytes) to the destination `where`, or
    pulling it from there, as a run of its stack on `runs`; `agent` names the agent whose
    archive it is (None: this host's). A StackyardError of `move` fails the run with its
    detail; the run's artifact is the archive's name as kept."""
    if kind == "push":
        stage = f"Pushing to {where}"
        began = f"Pushing {name} ({size} bytes)" + (f" from {agent}" if agent else "")
        began += f" to {where}"
    else:
        stage = f"Pulling from {where}"
        began = f"Pulling {name} ({size} bytes) from {where}" + (f" to {agent}" if agent else "")
    whose = "the agent's" if agent else "this host's"

    async def steps(run: Run) -> int:
        report = progress_reporter(run, size, 1, stage)
        run.feed_line(began)
        try:
            kept = await move(lambda done: report(done, 0))
        except StackyardError as exc:
            run.fail(
                f"To {where}: {exc.detail}" if kind == "push" else f"Pull failed: {exc.detail}"
            )
            return 1
        run.advance(size, size, 1, 1, stage)
        run.artifact = kept
        if kind == "push":
            run.feed_line(f"Pushed {name} to {where}")
        else:
            run.feed_line(f"Pulled {name}: it is in {whose} archives as {kept}")
        return 0

    return runs.start(stack_of(name), kind, ProgressFold(mode="transfer"), steps)


class Transfers:
    def __init__(self, destinations: Destinations, store: ArchiveStore, runs: RunBoard) -> None:
        self.destinations = destinations
        self.store = store
        self.runs = runs

    def push(self, name: str, destination_id: int) -> Run:
        """Start pushing the local archive `name` (NotFound when it is not here)."""
        path = self.store.path(name)
        where = self.destinations.get(destination_id).name

        async def move(progress: Callable[[int], None]) -> str:
            destination = await asyncio.to_thread(self.destinations.open, destination_id)
            await destination.push(path, path.name, progress)
            return path.name

        return start_transfer(self.runs, "push", name, path.stat().st_size, where, move)

    async def pull(self, destination_id: int, name: str) -> Run:
        """Start pulling `name` from the destination into the local archives."""
        stack_of(name)  # (a name this service never gives is refused before anything)
        if self.store.has(name):
            raise Conflict(f"{name} is already on this host")
        where, destination, size = await self.destinations.remote(destination_id, name)

        async def move(progress: Callable[[int], None]) -> str:
            temporary = self.store.temporary(name)
            try:
                await destination.pull(name, temporary, progress)
                problem = (await asyncio.to_thread(self.store.info, temporary)).error
                if problem:
                    raise Invalid(f"{name} is not a readable Stackyard archive: {problem}")
                kept = await asyncio.to_thread(self.store.keep, temporary, name)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    temporary.unlink()
            return kept.name

        return start_transfer(self.runs, "pull", name, size, where, move)
