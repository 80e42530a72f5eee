"""The floor news goes through: the catalogue of event names and severities
(`catalogue`), the event type (`event`) and the hub producers raise events on (`hub`).

Every capability may raise events; none imports a listener. Notifications, the fleet's
attention list and whatever comes later subscribe to the hub."""

from stackyard.events.catalogue import (
    EVENT_NAMES,
    KINDS,
    RANK,
    SEVERITIES,
    EventName,
    Kind,
    Severity,
    event_name,
    severity,
)
from stackyard.events.event import TEXT_LENGTH, Event, clip
from stackyard.events.hub import EventHub, Sink

__all__ = [
    "EVENT_NAMES",
    "KINDS",
    "RANK",
    "SEVERITIES",
    "TEXT_LENGTH",
    "Event",
    "EventHub",
    "EventName",
    "Kind",
    "Severity",
    "Sink",
    "clip",
    "event_name",
    "severity",
]
