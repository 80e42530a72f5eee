"""Sign-ins on their way through the provider: for each, the `state` that the callback
must bring back (also in a cookie of the browser that began it, so that nobody can make
another browser finish their sign-in), the `nonce` the ID token must carry, and the PKCE
verifier. Each is taken once: a callback replayed, or a token meant for another sign-in,
finds nothing."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from stackyard.errors import Invalid

#: How long the user has at the provider's pages.
FLOW_SECONDS = 600
#: At most this many sign-ins wait at once (the oldest is forgotten first).
MAX_PENDING = 10_000


@dataclass(frozen=True)
class Flow:
    state: str
    nonce: str
    verifier: str
    then: str  # where to go once signed in (a path of this service)
    redirect_uri: str
    began: float = field(default_factory=time.monotonic)


class PendingFlows:
    def __init__(self) -> None:
        self._flows: OrderedDict[str, Flow] = OrderedDict()
        self._lock = threading.Lock()

    def begin(self, then: str, redirect_uri: str) -> Flow:
        flow = Flow(
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            verifier=secrets.token_urlsafe(48),
            then=then,
            redirect_uri=redirect_uri,
        )
        with self._lock:
            self._forget_stale()
            self._flows[flow.state] = flow
            while len(self._flows) > MAX_PENDING:
                self._flows.popitem(last=False)
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
            flow = self._flows.pop(state, None)
        if flow is None:
            raise Invalid("This sign-in has expired or was finished already: start it again")
        return flow

    def _forget_stale(self) -> None:
        now = time.monotonic()
        while self._flows:
            oldest = next(iter(self._flows.values()))
            if now - oldest.began < FLOW_SECONDS:
                break
            self._flows.popitem(last=False)
