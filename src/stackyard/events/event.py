"""An event as it is raised, queued and sent: typed once, the same on every host.

`subject` names what the event is about on its host (a stack, a container, a run, an
account); with the host and the event's name it is the key under which a condition's
state is kept, so that the same news of the same thing is sent once (`subjects`).
`state` is what is news: a condition begins with "active" (or what makes it new again:
an image's newest digest), an occurrence carries what is its own (a run's id)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from stackyard.clock import utcnow
from stackyard.events.catalogue import KINDS, EventName, Severity

#: The longest text an event keeps (a run's error is cut there).
TEXT_LENGTH = 500


def clip(text: str, limit: int = TEXT_LENGTH) -> str:
    text = text.replace("\x00", "")
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


@dataclass(frozen=True)
class Event:
    name: EventName
    subject: str
    text: str
    state: str = "active"
    stack: str | None = None
    severity: Severity | None = None  # None: the kind's
    ended: bool = False  # the end of a condition
    host_id: int | None = None  # the agent's id; None: the central's own host
    host: str = ""
    at: datetime = field(default_factory=utcnow)
    #: Who started the work the event is of, when not a user ("auto-update").
    origin: str | None = None

    @property
    def level(self) -> Severity:
        return self.severity or KINDS[self.name].severity

    @property
    def key(self) -> str:
        """What the event is about, across hosts: the key of its subject's state."""
        return f"{self.host_id or 0}/{self.name}/{self.subject}"

    def on_host(self, host_id: int | None, host: str) -> Event:
        return replace(self, host_id=host_id, host=host)
