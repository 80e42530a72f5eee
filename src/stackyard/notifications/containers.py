"""Containers that fare badly, from the engine's event stream of this host (on the
central and on every agent alike): unhealthy and healthy again, exited unexpectedly,
killed for want of memory.

An exit is unexpected when the container was not told to stop (no `kill` just before:
`docker stop`, compose down and a recreation all send one) and its code is not 0. A life
of a container (from one `start` to the next) fails once at most: killed for memory and
the death that follows are one failure, in whichever order the engine tells them.

Failures that follow each other are one problem, said at most three times: the first
failure (no other within `LOOP_SECONDS` before it), the loop once it is one
(`LOOP_EXITS` failures within `LOOP_SECONDS`), and the loop's end (no failure for
`LOOP_SECONDS`, or the container stopped or removed). The failures between are noise.

While a stack is being updated, what its containers do is the update's to say (its
health gate judges them, its outcome says why it rolled back): no trouble of theirs is
said then, and so no end of one either."""

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
from stackyard.events import Event, EventName, Sink

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
        self,
        docker: Callable[[], Engine],
        stack_of: Callable[[str], str | None],
        sink: Sink,
        updating: Callable[[str], bool] = lambda _stack: False,
    ) -> None:
        self.docker = docker
        self.stack_of = stack_of  # a compose project -> its stack's id, if it is one
        self.sink = sink
        #: Whether a stack is being updated now (its containers' troubles are its own).
        self.updating = updating
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._killed: dict[str, float] = {}
        #: The containers whose present life has failed (counted once).
        self._failed: set[str] = set()
        #: The times of each container's recent failures, one per life.
        self._exits: dict[str, collections.deque[float]] = {}
        self._loops: dict[str, ContainerEvent] = {}  # looping: the last failure of each

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
        elif action == "oom":  # (the killer may strike again, also after the engine said
            # the container died: each process of it that is killed is an event)
            self._failure(event, "container_oom", "was killed: out of memory")
        elif action == "health_status: unhealthy":
            self._say(event, "container_unhealthy", "is unhealthy")
        elif action == "health_status: healthy":
            self._say(event, "container_unhealthy", "is healthy again", ended=True)
        elif action == "die":
            self._died(event)
        elif action == "start":
            self._failed.discard(event.id)  # a new life
        elif action == "stop":  # (also of one waiting to be restarted: no kill, no exit)
            self._end_loop(event.id, "was stopped")
        elif action == "destroy":
            for known in (self._killed, self._exits):
                known.pop(event.id, None)
            self._failed.discard(event.id)
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
        if stack is not None and not ended and self.updating(stack):
            log.debug("%s %s: left to the update of %s", event.name, what, stack)
            return
        self.sink(Event(name, event.name, f"{event.name} {what}", state, stack, ended=ended))

    def _died(self, event: ContainerEvent) -> None:
        killed = self._killed.pop(event.id, None)
        if killed is not None and event.at - killed <= STOPPED_WITHIN:
            self._end_loop(event.id, "was stopped")
            return  # told to stop
        if event.exit_code in (None, 0):
            return  # ended by itself
        what = f"exited unexpectedly with code {event.exit_code}"
        self._failure(event, "container_exited", what)

    def _failure(self, event: ContainerEvent, name: EventName, what: str) -> None:
        """A life of the container failed (`what`): said when it begins a problem, or
        makes it a loop; else it is part of a problem said already."""
        if event.id in self._failed:
            return  # its life's failure is counted: the OOM kill and the death it caused
        self._failed.add(event.id)
        exits = self._exits.setdefault(event.id, collections.deque(maxlen=LOOP_EXITS))
        if exits and event.at - exits[-1] > LOOP_SECONDS:
            exits.clear()  # a problem of its own, long after the last
        exits.append(event.at)
        if event.id in self._loops:
            self._loops[event.id] = event  # still in its loop: no news
        elif len(exits) == 1:
            self._say(event, name, what, str(event.at))
        elif len(exits) == LOOP_EXITS:
            self._loops[event.id] = event
            often = f"{LOOP_EXITS} times within {LOOP_SECONDS / 60:g} minutes"
            how = (
                f"keeps being killed for want of memory ({often})"
                if name == "container_oom"
                else f"keeps exiting ({often}, the last with code {event.exit_code})"
            )
            self._say(event, "container_restarting", how)

    def _quiet(self, now: float) -> None:
        """The loops that have not exited for `LOOP_SECONDS` have ended."""
        for container, last in list(self._loops.items()):
            if now - last.at > LOOP_SECONDS:
                self._end_loop(container, f"has run {LOOP_SECONDS / 60:g} minutes without exiting")

    def _end_loop(self, container: str, why: str) -> None:
        last = self._loops.pop(container, None)
        if last is not None:
            self._say(last, "container_restarting", why, ended=True)
