"""The page of the UI that shows what an event is about, made when a message is composed:
the event itself knows its subject (a stack, a container, an agent), not the UI's routes."""

from __future__ import annotations


def page_of(name: str, stack: str | None, host_id: int | None) -> str:
    """The path of the page for the event `name` about `stack` on host `host_id` (None or
    0: the central's own host)."""
    host = f"?host={host_id}" if host_id else ""
    if name.startswith("agent_"):
        return "/agents"
    if name.startswith(("self_update", "release", "signin")):
        return "/settings"
    if name in ("schedule_missed", "retention_skipped"):
        return "/schedules"
    if stack:
        return f"/stacks/{stack}{host}"
    if name.startswith("container_"):
        return f"/containers{host}"
    return "/"
