"""What the end of a run is news of: an update applied, failed or rolled back, a backup or
push that failed (or succeeded), a restore, a restore drill, work a stop of the service
cut short."""

from __future__ import annotations

from stackyard.events import Event, EventName
from stackyard.stacks.runs import RunState

_DONE = ("succeeded", "partial")
#: (action, ended well) -> the event.
_NAMES: dict[tuple[str, bool], EventName] = {
    ("update", True): "update_applied",
    ("update", False): "update_failed",
    ("deploy", True): "git_deployed",
    ("deploy", False): "git_deploy_failed",
    ("backup", True): "backup_succeeded",
    ("backup", False): "backup_failed",
    ("push", False): "backup_failed",
    ("restore", True): "restore_finished",
    ("restore", False): "restore_failed",
    ("drill", True): "drill_verified",
    ("drill", False): "drill_failed",
}
_WHAT = {
    "deploy": "Deploy",
    "update": "Update",
    "backup": "Backup",
    "push": "Push",
    "restore": "Restore",
    "drill": "Restore drill",
}


def run_event(state: RunState, origin: str | None = None) -> Event | None:
    """The news of a run that ended, or None when it is none."""
    by = f" ({origin})" if origin else ""
    error = state.progress.errors[-1] if state.progress.errors else state.status
    if state.status == "interrupted":
        text = f"The {state.action} of {state.stack} was interrupted{by}: {error}"
        return Event("run_interrupted", state.stack, text, state.id, state.stack, origin=origin)
    name = _NAMES.get((state.action, state.status in _DONE))
    if name is None:
        return None
    what = f"{_WHAT[state.action]} of {state.stack}{by}"
    if state.rollback is not None:
        # The error says the service that failed, why, and (when it failed too) what runs.
        text = f"{what}: {error}"
        return Event("update_rolled_back", state.stack, text, state.id, state.stack, origin=origin)
    if state.status in _DONE:
        said = f": {state.summary}" if state.summary else ""
        partial = " with parts left out (see the run)" if state.status == "partial" else ""
        text = f"{what} finished{partial}{said}"
    else:
        text = f"{what} failed: {error}"
    return Event(name, state.stack, text, state.id, state.stack, origin=origin)
