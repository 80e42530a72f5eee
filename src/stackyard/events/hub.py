"""The hub a host's events are raised on, and what listens to it.

A producer (a run that ended, a container that died, a schedule missed) raises an event on
the hub and goes on; whoever wants the news (notifications, an agent's buffer for the
central, later capabilities) listens. Producers know only this floor, never a listener."""

from __future__ import annotations

import threading
from collections.abc import Callable

from stackyard.events.event import Event

Sink = Callable[[Event], None]


class EventHub:
    """Where a host's events go: every listener, called on the thread that raised the
    event (a listener queues it and returns: raising never waits for a delivery)."""

    def __init__(self) -> None:
        self._listeners: list[Sink] = []
        self._lock = threading.Lock()

    def listen(self, sink: Sink) -> None:
        with self._lock:
            self._listeners.append(sink)

    def raise_event(self, event: Event) -> None:
        for sink in list(self._listeners):
            sink(event)
