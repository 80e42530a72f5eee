"""Containers that fare badly, from the engine's event stream of this host (on the
central and on every agent alike): unhealthy and healthy again, exited unexpectedly,
killed for want of memory.

An exit is unexpected when the container was not told to stop (no `kill` just before:
`docker stop`, compose down and a recreation all send one) and its code is not 0. A
container that keeps exiting (`LOOP_EXITS` within `LOOP_SECONDS`) is said once as
restarting in a loop, the rest of its exits being noise; the loop has ended when it has
not exited for `LOOP_SECONDS`, or was stopped or removed."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

from stackyard.docker.engine import Engine
from stackyard.docker.events import ContainerEvent, container_events
from stackyard.docker.helper import HELPER_LABEL
from stackyard.errors import StackyardError
from stackyard.notifications.catalogue import EventName
from stackyard.notifications.events import Event, Sink

log = logging.getLogger(__name__)

#: Seconds the stream is read in one call (the engine ends it then; read again).
WINDOW = 20.0
#: A kill this recent makes an exit expected.
STOPPED_WITHIN = 60.0
LOOP_EXITS = 3
LOOP_SECONDS = 300.0
PROJECT_LABEL = "com.docker.compose.project"


class ContainerWatcher:
    """Reads the stream in a thread of its own until `stop`."""

    def __init__(
        self, docker: Callable[[], Engine], stack_of: Callable[[str], str | None], sink: Sink
    ) -> None:
        self.docker = docker
        self.stack_of = stack_of  # a compose project -> its stack's id, if it is one
        self.sink = sink
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._killed: dict[str, float] = {}
        self._oom: dict[str, float] = {}
        self._exits: dict[str, collections.deque[float]] = {}
        self._loops: dict[str, ContainerEvent] = {}  # looping: the last exit of each

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="container-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        since = int(time.time())
        client: Engine | None = None
        seen: set[tuple[str, str, float]] = set()  # the last window's (a second is read twice)
        while not self._stop.is_set():
            until = int(time.time() + WINDOW)
            try:
                client = client or self.docker()
                now_seen: set[tuple[str, str, float]] = set()
                for event in container_events(client, since, until):
                    if self._stop.is_set():
                        return
                    mark = (event.id, event.action, event.at)
                    now_seen.add(mark)
                    if mark not in seen:
                        self.seen(event)
                seen, since = now_seen, until
                self._quiet(time.time())
            except StackyardError as exc:
                log.debug("Container events: %s", exc.detail)
                client = None
                self._stop.wait(5.0)
            except Exception:
                log.exception("Reading the engine's container events failed")
                client = None
                self._stop.wait(5.0)

    def seen(self, event: ContainerEvent) -> None:
        """One event of the stream, judged."""
        if HELPER_LABEL in event.labels or not event.name:
            return
        action = event.action
        if action == "kill":
            self._killed[event.id] = event.at
        elif action == "oom":  # (said once a life: the killer may strike again, also after
            # the engine said it died: each process of the container it kills is an event)
            if event.id not in self._oom:
                self._say(event, "container_oom", "was killed: out of memory", str(event.at))
            self._oom[event.id] = event.at
        elif action == "health_status: unhealthy":
            self._say(event, "container_unhealthy", "is unhealthy")
        elif action == "health_status: healthy":
            self._say(event, "container_unhealthy", "is healthy again", ended=True)
        elif action == "die":
            self._died(event)
        elif action == "start":
            self._oom.pop(event.id, None)
        elif action == "stop":  # (also of one waiting to be restarted: no kill, no exit)
            self._end_loop(event.id, "was stopped")
        elif action == "destroy":
            for known in (self._killed, self._oom, self._exits):
                known.pop(event.id, None)
            self._end_loop(event.id, "was removed")
            self._say(event, "container_unhealthy", "was removed", ended=True)  # (if it was)

    def _say(
        self,
        event: ContainerEvent,
        name: EventName,
        what: str,
        state: str = "active",
        ended: bool = False,
    ) -> None:
        project = event.labels.get(PROJECT_LABEL)
        stack = self.stack_of(project) if project else None
        self.sink(Event(name, event.name, f"{event.name} {what}", state, stack, ended=ended))

    def _died(self, event: ContainerEvent) -> None:
        killed = self._killed.pop(event.id, None)
        oom = self._oom.get(event.id)  # (forgotten when it starts again or is removed)
        if killed is not None and event.at - killed <= STOPPED_WITHIN:
            self._end_loop(event.id, "was stopped")
            return  # told to stop
        if event.exit_code in (None, 0) or oom is not None:
            return  # ended by itself, or said as killed for memory
        exits = self._exits.setdefault(event.id, collections.deque(maxlen=LOOP_EXITS))
        exits.append(event.at)
        code = event.exit_code
        if event.id in self._loops:
            self._loops[event.id] = event  # still in its loop: no news
        elif len(exits) < LOOP_EXITS or event.at - exits[0] > LOOP_SECONDS:
            what = f"exited unexpectedly with code {code}"
            self._say(event, "container_exited", what, str(event.at))
        else:
            self._loops[event.id] = event
            minutes = f"{LOOP_SECONDS / 60:g}"
            self._say(
                event,
                "container_restarting",
                f"keeps exiting ({LOOP_EXITS} times within {minutes} minutes, "
                f"the last with code {code})",
            )

    def _quiet(self, now: float) -> None:
        """The loops that have not exited for `LOOP_SECONDS` have ended."""
        for container, last in list(self._loops.items()):
            if now - last.at > LOOP_SECONDS:
                self._end_loop(container, f"has run {LOOP_SECONDS / 60:g} minutes without exiting")

    def _end_loop(self, container: str, why: str) -> None:
        last = self._loops.pop(container, None)
        if last is not None:
            self._say(last, "container_restarting", why, ended=True)
