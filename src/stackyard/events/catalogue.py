"""Every event Stackyard notifies of: a stable name, a severity and what it means. The
fleet dashboard's attention items carry the same names (`fleet.dashboard`), so the
attention list and the notifications speak of one thing in one word.

A *condition* holds for a while (a container unhealthy, a disk full): it is announced
when it begins and, when `announces_end`, once more when it ends (the end goes wherever
its beginning went). Any other event is an occurrence (a backup that failed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

Severity = Literal["critical", "warning", "info"]
SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)
#: Higher is more pressing.
RANK: Final[dict[Severity, int]] = {"info": 0, "warning": 1, "critical": 2}

EventName = Literal[
    # Images and updates
    "stack_update",
    "update_applied",
    "update_failed",
    "update_rolled_back",
    # Stacks from git
    "git_deployed",
    "git_deploy_failed",
    "git_change_pending",
    "git_sync_failed",
    "git_commit_refused",
    # Backups, schedules, restores
    "backup_succeeded",
    "backup_failed",
    "schedule_missed",
    "run_interrupted",
    "retention_skipped",
    "restore_finished",
    "restore_failed",
    "drill_verified",
    "drill_failed",
    # Disk
    "prune_finished",
    # Containers and stacks
    "container_unhealthy",
    "container_exited",
    "container_oom",
    "container_restarting",
    "container_dead",
    "stack_partial",
    "stack_invalid",
    # Hosts
    "agent_offline",
    "agent_incompatible",
    "engine_unreachable",
    "disk_full",
    "memory_full",
    # Stackyard itself
    "release_available",
    "self_update_done",
    "self_update_failed",
    "self_update_rolled_back",
    "signin_failures",
]
EVENT_NAMES: Final[tuple[EventName, ...]] = get_args(EventName)


@dataclass(frozen=True)
class Kind:
    severity: Severity
    title: str  # what the event says, in a few words
    condition: bool = False  # it holds for a while; its end is known
    announces_end: bool = False  # the end of the condition is a message too
    #: An agent may report it of its own host (the rest only the central raises).
    from_agents: bool = False


KINDS: Final[dict[EventName, Kind]] = {
    "stack_update": Kind("info", "Newer images are available", condition=True),
    "update_applied": Kind("info", "Stack updated", from_agents=True),
    "update_failed": Kind("critical", "Update failed", from_agents=True),
    "update_rolled_back": Kind("critical", "Update rolled back", from_agents=True),
    "git_deployed": Kind("info", "Stack deployed from git", from_agents=True),
    "git_deploy_failed": Kind("critical", "Deploy from git failed", from_agents=True),
    "git_change_pending": Kind(
        "info", "A git change waits for review", condition=True, from_agents=True
    ),
    "git_sync_failed": Kind(
        "warning", "Sync from git failed", condition=True, announces_end=True, from_agents=True
    ),
    "git_commit_refused": Kind("critical", "Commit refused: not signed", from_agents=True),
    "backup_succeeded": Kind("info", "Backup succeeded", from_agents=True),
    "backup_failed": Kind("critical", "Backup failed", condition=True, from_agents=True),
    "schedule_missed": Kind("warning", "Scheduled backup missed"),
    "run_interrupted": Kind("warning", "Work interrupted", condition=True, from_agents=True),
    "retention_skipped": Kind("warning", "Retention pruned nothing"),
    "restore_finished": Kind("info", "Restore finished", from_agents=True),
    "restore_failed": Kind("critical", "Restore failed", from_agents=True),
    "drill_verified": Kind("info", "Restore verified by a drill", from_agents=True),
    "drill_failed": Kind("critical", "Restore drill failed", from_agents=True),
    "prune_finished": Kind("info", "Prune finished", from_agents=True),
    "container_unhealthy": Kind(
        "critical", "Container unhealthy", condition=True, announces_end=True, from_agents=True
    ),
    "container_exited": Kind("critical", "Container exited unexpectedly", from_agents=True),
    "container_oom": Kind("critical", "Container killed: out of memory", from_agents=True),
    "container_restarting": Kind(
        "critical",
        "Container restarting in a loop",
        condition=True,
        announces_end=True,
        from_agents=True,
    ),
    "container_dead": Kind("critical", "Container dead", condition=True, announces_end=True),
    "stack_partial": Kind("warning", "Only some services run", condition=True),
    "stack_invalid": Kind("warning", "Compose file cannot be read", condition=True),
    "agent_offline": Kind("critical", "Agent offline", condition=True, announces_end=True),
    "agent_incompatible": Kind("critical", "Agent incompatible", condition=True),
    "engine_unreachable": Kind(
        "critical", "Docker engine unreachable", condition=True, announces_end=True
    ),
    "disk_full": Kind("warning", "Disk almost full", condition=True, announces_end=True),
    "memory_full": Kind("warning", "Memory almost used up", condition=True, announces_end=True),
    "release_available": Kind("info", "New Stackyard release", condition=True),
    "self_update_done": Kind("info", "Stackyard updated"),
    "self_update_failed": Kind("critical", "Stackyard update failed"),
    "self_update_rolled_back": Kind("critical", "Stackyard update rolled back"),
    "signin_failures": Kind("warning", "Repeated failed sign-ins"),
}


def event_name(text: str) -> EventName | None:
    """`text` as an event name, or None when it is none (read from the database, say)."""
    return next((name for name in EVENT_NAMES if name == text), None)


def severity(text: str) -> Severity:
    """`text` as a severity ("info" when it is none)."""
    return next((s for s in SEVERITIES if s == text), "info")
