"""Which children belong to which request: those started in a `request_scope` (threads
started from it included) are killed with their groups when the client goes away before
its answer is complete (`api/disconnect.py` cancels the scope). Work that outlives its
request (a stack action runs on after its 202) runs `detached` from it."""

from __future__ import annotations

import contextlib
import contextvars
import signal
import threading
from collections.abc import Iterator

from stackyard.process.groups import signal_group


class RequestScope:
    """The children started on behalf of one request (`request_scope`): killed with their
    groups when the client goes away before its answer is complete (`cancel`). Once the
    answer is sent (`close`), nothing is killed any more."""

    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self.cancelled = False
        self._closed = False

    def adopt(self, pgid: int) -> None:
        with self._lock:
            if self._closed:
                return
            self._groups.add(pgid)
            cancelled = self.cancelled
        if cancelled:  # started after the client left
            signal_group(pgid, signal.SIGKILL)

    def release(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def cancel(self) -> None:
        """The client is gone: every child started for it is killed with its group."""
        with self._lock:
            if self._closed:
                return
            self.cancelled = True
            groups = list(self._groups)
        for pgid in groups:
            signal_group(pgid, signal.SIGKILL)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._groups.clear()


_request: contextvars.ContextVar[RequestScope | None] = contextvars.ContextVar(
    "stackyard_request_scope", default=None
)


@contextlib.contextmanager
def request_scope() -> Iterator[RequestScope]:
    """Children started in this context (threads started from it included: their
    context is copied) belong to the returned scope."""
    scope = RequestScope()
    token = _request.set(scope)
    try:
        yield scope
    finally:
        scope.close()
        _request.reset(token)


def current_scope() -> RequestScope | None:
    """The scope of the request this context works for; None outside requests."""
    return _request.get()


def detached() -> contextvars.Context:
    """A context without the request: for work that outlives the request that started
    it (a stack action runs on after its 202)."""
    context = contextvars.copy_context()
    context.run(_request.set, None)
    return context
