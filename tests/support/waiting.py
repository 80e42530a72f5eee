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
#: Seconds between two looks.
INTERVAL = 0.05


class NotInTime(AssertionError):
    """What a test waited for did not happen within its limit."""


def _failure(what: str, timeout: float, last: object) -> NotInTime:
    return NotInTime(f"{what or 'the condition'}: not within {timeout:g} s (last seen: {last!r})")


def wait_until(
    condition: Callable[[], T],
    timeout: float = PATIENCE,
    what: str = "",
    interval: float = INTERVAL,
) -> T:
    """Call `condition` until it returns something true, and return that; fail the test
    (naming `what` and the last value seen) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, value)
        time.sleep(interval)


async def until(
    condition: Callable[[], T | Awaitable[T]],
    timeout: float = PATIENCE,
    what: str = "",
    interval: float = INTERVAL,
) -> T:
    """`wait_until` in an event loop: `condition` may be a coroutine function."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, value)
        await asyncio.sleep(interval)


def next_second() -> None:
    """Wait for the wall clock's next second (names made of the time differ then)."""
    now = int(time.time())
    wait_until(lambda: int(time.time()) > now, timeout=5, what="the next second", interval=0.01)
