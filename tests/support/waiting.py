"""Waiting in tests: one helper for every test that waits for something to happen.

The suite must hold on a loaded machine (two cores, with other busy processes beside it),
where what takes a second on a quiet one takes ten. So the limits are generous: a limit
only decides how long a failure takes to show, and a test that passes never waits it out.
Nothing is asserted after a fixed sleep: a test waits for the state it expects, and "nothing
more happened" is read from what the service recorded.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds to wait, by default, for what takes a moment on a quiet machine.
PATIENCE = 60.0
#: Seconds before the second look, when the test sets no pace of its own; each pause after
#: it is half as long again, up to `SLOWEST` (a look asks a server or the Docker engine, whose
#: CPU the machine shares with every other test: ten seconds are twenty looks, not two
#: hundred). A test that sets `interval` looks at that pace throughout (a short window).
INTERVAL = 0.05
SLOWEST = 0.5


class NotInTime(AssertionError):
    """What a test waited for did not happen within its limit."""


def _failure(what: str, timeout: float, last: object) -> NotInTime:
    return NotInTime(f"{what or 'the condition'}: not within {timeout:g} s (last seen: {last!r})")


def _next(pause: float, interval: float | None) -> float:
    return interval if interval is not None else min(pause * 1.5, SLOWEST)


def wait_until(
    condition: Callable[[], T],
    timeout: float = PATIENCE,
    what: str = "",
    interval: float | None = None,
) -> T:
    """Call `condition` until it returns something true, and return that; fail the test
    (naming `what` and the last value seen) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    pause = INTERVAL if interval is None else interval
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, value)
        time.sleep(pause)
        pause = _next(pause, interval)


async def until(
    condition: Callable[[], T | Awaitable[T]],
    timeout: float = PATIENCE,
    what: str = "",
    interval: float | None = None,
) -> T:
    """`wait_until` in an event loop: `condition` may be a coroutine function."""
    deadline = time.monotonic() + timeout
    pause = INTERVAL if interval is None else interval
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, value)
        await asyncio.sleep(pause)
        pause = _next(pause, interval)


def next_second() -> None:
    """Wait for the wall clock's next second (names made of the time differ then)."""
    now = time.time()
    time.sleep(int(now) + 1 - now)
    wait_until(lambda: time.time() >= int(now) + 1, timeout=5, what="the next second")
