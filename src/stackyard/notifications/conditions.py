"""The fleet's attention list as events: each item a condition that holds, by its own
name, so that what the dashboard shows and what the notifications said are one thing.
A host's conditions are judged only as far as its report reaches: an offline agent's
containers have not recovered, they are not seen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from stackyard.events import KINDS, Event, EventName
from stackyard.fleet.dashboard import Attention, Fleet, HostCard, attention_of

#: A container restarting in a loop is judged from the engine's events alone: the fleet
#: sees it now restarting, now running, and would say its end at every run between.
STREAM_OWNED: Final[frozenset[EventName]] = frozenset({"container_restarting"})
CONDITIONS: Final[frozenset[EventName]] = (
    frozenset(n for n, k in KINDS.items() if k.condition) - STREAM_OWNED
)
#: What a host's card covers when its agent did not answer.
_AGENT: Final[frozenset[EventName]] = frozenset({"agent_offline", "agent_incompatible"})
#: ... and when its engine did not answer.
_HOST: Final[frozenset[EventName]] = frozenset({"engine_unreachable", "disk_full", "memory_full"})


def scope(card: HostCard) -> frozenset[EventName]:
    """The conditions a host's card says hold or not."""
    if card.status == "disabled":
        return frozenset()
    if card.report is None:
        return _AGENT
    if card.report.engine_error:
        return _AGENT | _HOST
    return CONDITIONS


def event_of(item: Attention) -> Event:
    return Event(
        item.kind,
        item.subject,
        item.message,
        item.state or "*",
        item.stack,
        item.severity,
        host_id=item.host_id,
        host=item.host,
    )


def observed(fleet: Fleet) -> Iterator[tuple[HostCard, list[Event], frozenset[EventName]]]:
    """Per host: the conditions that hold, and the names they were judged for."""
    for card in fleet.hosts:
        covered = scope(card)
        events = [event_of(i) for i in attention_of(card) if i.kind in covered]
        yield card, events, covered
