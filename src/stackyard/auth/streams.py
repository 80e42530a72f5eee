"""Long-lived responses (event streams, shells) end when the credential that opened them
is revoked: sign-out, password change, token revocation, a disabled or removed user, a
change of role."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import TypeVar

from stackyard.auth.principal import Principal, Role
from stackyard.auth.sessions import role_now, still_valid
from stackyard.db import Database

T = TypeVar("T")
#: How often an open stream checks its credential, at the longest.
RECHECK_SECONDS = 2.0


def still_valid_now(db: Database, principal: Principal) -> bool:
    """Whether the credential that proved `principal` still works."""
    with db.session() as session:
        return still_valid(session, principal)


def current_role(db: Database, principal: Principal) -> Role | None:
    """The role `principal`'s user has now; None when their credential no longer works."""
    with db.session() as session:
        return role_now(session, principal)


async def while_valid(
    db: Database, principal: Principal, events: AsyncIterator[T], every: float = RECHECK_SECONDS
) -> AsyncIterator[T]:
    """The items of `events` until it ends or the credential stops working."""
    iterator = aiter(events)
    pending: asyncio.Future[T] | None = None
    loop = asyncio.get_running_loop()
    checked = loop.time()
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=every)
            if loop.time() - checked >= every:
                if not await asyncio.to_thread(still_valid_now, db, principal):
                    return
                checked = loop.time()
            if not done:
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            yield item
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        closer = getattr(iterator, "aclose", None)
        if closer is not None:
            await closer()


class StreamEnds:
    """The open streams a client named (their `stream` query parameter), so that it may
    ask for one to end: a browser leaving a page asks its server to end the page's
    streams, which then complete as any answer does, rather than cut them (Chromium
    reports every stream it cuts as a failed request, net::ERR_ABORTED). A name is only
    ended for the user who opened the stream."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], asyncio.Event] = {}

    async def follow(self, name: str, owner: str, events: AsyncIterator[T]) -> AsyncIterator[T]:
        """The items of `events` until it ends, or until `end(name, owner)`."""
        key = (name, owner)
        ended = self._open.setdefault(key, asyncio.Event())
        iterator = aiter(events)
        waiting = asyncio.ensure_future(ended.wait())
        try:
            while True:
                item = asyncio.ensure_future(anext(iterator))
                await asyncio.wait({item, waiting}, return_when=asyncio.FIRST_COMPLETED)
                if not item.done():
                    item.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                        await item
                    return
                try:
                    value = item.result()
                except StopAsyncIteration:
                    return
                yield value
        finally:
            waiting.cancel()
            if self._open.get(key) is ended:
                del self._open[key]
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                await closer()

    def end(self, name: str, owner: str) -> bool:
        """End the stream `owner` opened as `name`; whether one was open."""
        ended = self._open.get((name, owner))
        if ended is None:
            return False
        ended.set()
        return True


#: The streams of this process (their names are random: one table serves every app).
STREAM_ENDS = StreamEnds()
#: What a stream's name may be (the browser's: a random UUID).
STREAM_NAME = re.compile(r"[A-Za-z0-9_-]{16,64}")
