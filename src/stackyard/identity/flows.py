"""Sign-ins on their way through the provider: for each, the `state` that the callback
must bring back (also in a cookie of the browser that began it, so that nobody can make
another browser finish their sign-in), the `nonce` the ID token must carry, and the PKCE
verifier. Each is taken once: a callback replayed, or a token meant for another sign-in,
finds nothing.

Anyone may begin one, so what one client begins cannot push out what others began: an
address (`throttle.source`) keeps at most `PER_SOURCE` sign-ins waiting, its own oldest
forgotten first; and when `MAX_PENDING` wait in all, the oldest of the address with the
most goes."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from stackyard.auth.throttle import source
from stackyard.errors import Invalid

#: How long the user has at the provider's pages.
FLOW_SECONDS = 600
#: At most this many sign-ins wait at once from one address (a browser with a few tabs).
PER_SOURCE = 10
#: At most this many sign-ins wait at once in all.
MAX_PENDING = 10_000


@dataclass(frozen=True)
class Flow:
    state: str
    nonce: str
    verifier: str
    then: str  # where to go once signed in (a path of this service)
    redirect_uri: str
    address: str | None = None  # of the browser that began it
    began: float = field(default_factory=time.monotonic)

    @property
    def source(self) -> str:
        return source(self.address) if self.address else ""


class PendingFlows:
    def __init__(self, per_source: int = PER_SOURCE, max_pending: int = MAX_PENDING) -> None:
        self.per_source = per_source
        self.max_pending = max_pending
        self._flows: OrderedDict[str, Flow] = OrderedDict()
        self._by_source: dict[str, deque[str]] = {}  # states, oldest first
        self._lock = threading.Lock()

    def begin(self, then: str, redirect_uri: str, address: str | None = None) -> Flow:
        flow = Flow(
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            verifier=secrets.token_urlsafe(48),
            then=then,
            redirect_uri=redirect_uri,
            address=address,
        )
        with self._lock:
            self._forget_stale()
            self._flows[flow.state] = flow
            mine = self._by_source.setdefault(flow.source, deque())
            mine.append(flow.state)
            if len(mine) > self.per_source:
                self._drop(mine[0])
            if len(self._flows) > self.max_pending:
                busiest = max(self._by_source.values(), key=len)
                self._drop(busiest[0])
        return flow

    def _drop(self, state: str) -> Flow | None:
        flow = self._flows.pop(state, None)
        if flow is not None:
            mine = self._by_source[flow.source]
            mine.remove(state)
            if not mine:
                del self._by_source[flow.source]
        return flow

    def take(self, state: str | None, browser_state: str | None) -> Flow:
        """The sign-in a callback finishes, once; Invalid when there is none for it."""
        if not state:
            raise Invalid("The provider's answer has no state: start the sign-in again")
        if not browser_state or not secrets.compare_digest(state, browser_state):
            raise Invalid(
                "This sign-in was not started in this browser (or it began in another "
                "tab): start it again"
            )
        with self._lock:
            self._forget_stale()
            flow = self._drop(state)
        if flow is None:
            raise Invalid("This sign-in has expired or was finished already: start it again")
        return flow

    def _forget_stale(self) -> None:
        now = time.monotonic()
        while self._flows:
            oldest = next(iter(self._flows.values()))
            if now - oldest.began < FLOW_SECONDS:
                break
            self._drop(oldest.state)
