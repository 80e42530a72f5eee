"""Work that runs to its end even when whoever waits for it is cancelled (`to_the_end`):
for clean-ups that must not stop halfway."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Work running to its end on its own (held so it is not collected before it ends).
_running: set[asyncio.Future[Any]] = set()


async def to_the_end(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` in a task of its own and wait for it: a cancellation of the caller
    (a client that went away, once or again and again) stops the waiting, never the
    work. For clean-ups that must not stop halfway: closing an engine stream, ending
    a shell session's processes."""
    task = asyncio.ensure_future(work)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return await asyncio.shield(task)
