"""A transfer that stops moving fails: a destination's push or pull ends with "No progress
for N s" when no byte has moved for `STALL_SECONDS`.

Each type's own time limits end a call to a server that does not answer at all (S3's
read limit, SSH's keep-alives, the helpers' limits), but a server that stalls in the
middle of a transfer can keep its connection open, and a transfer that creeps on for
hours holds the stack's run. The transfer is cancelled (one that runs in a thread stops
at its next piece, should the server answer again: a transfer given up on never ends up
complete); what it wrote on this side goes with it (the callers' rule), and its
temporary name on the destination is removed when the server answers again, or swept by
a later upload once a day old (`base`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from stackyard.backups.model import Manifest
from stackyard.destinations.base import Destination
from stackyard.destinations.model import Progress, RemoteArchive
from stackyard.errors import DestinationUnreachable

STALL_SECONDS = 60.0
#: How long a cancelled transfer is given to clean up before the failure is reported
#: (it goes on cleaning up after that, as far as the server lets it).
CLEANUP_SECONDS = 2.0


class Watched(Destination):
    """`inner`, its transfers ended when they stop moving for `limit` seconds."""

    def __init__(
        self, inner: Destination, limit: float = STALL_SECONDS, grace: float = CLEANUP_SECONDS
    ) -> None:
        self.inner = inner
        self.limit = limit
        self.grace = grace

    async def test(self) -> str:
        return await self.inner.test()

    async def archives(self) -> list[RemoteArchive]:
        return await self.inner.archives()

    async def delete(self, name: str) -> None:
        await self.inner.delete(name)

    async def delete_many(self, names: list[str]) -> None:
        await self.inner.delete_many(names)

    async def write(self, name: str, stack: str, capture: Callable[[Any], Manifest]) -> int:
        return await self.inner.write(name, stack, capture)

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        await self._moving(lambda seen: self.inner.push(path, name, seen), progress)

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        await self._moving(lambda seen: self.inner.pull(name, target, seen), progress)

    async def _moving(
        self, work: Callable[[Progress], Awaitable[None]], progress: Progress
    ) -> None:
        moved = time.monotonic()
        given_up: str | None = None

        def seen(done: int) -> None:  # (called from the transfer's thread for some types)
            nonlocal moved
            if given_up is not None:  # a transfer in a thread, which a cancel does not
                raise DestinationUnreachable(given_up)  # stop, ends at its next piece
            moved = time.monotonic()
            progress(done)

        task = asyncio.ensure_future(work(seen))
        # Its outcome is taken when it ends after having been given up on.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=min(1.0, self.limit / 4))
                if not task.done() and time.monotonic() - moved > self.limit:
                    given_up = (
                        f"No progress for {self.limit:g} s: the server stopped answering "
                        "in the middle of the transfer"
                    )
                    task.cancel()
                    await asyncio.wait({task}, timeout=self.grace)
                    raise DestinationUnreachable(given_up)
        finally:
            if not task.done():  # (given up on, or this call was cancelled)
                given_up = given_up or "The transfer was cancelled"
                task.cancel()
        task.result()
