"""The outcome of each self-update is recorded (audit log and notification) once, by the
process that runs after it: the second update's too, though the first one's outcome,
marked recorded, was still in the result file when it started. (The whole update, on a
real deployment, is in tests/deploy/test_self_update.py.)"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from stackyard.system.self_update import RESULT_NAME, SelfUpdate, UpdateStarted


def helper_wrote(
    data_dir: Path, status: str, versions: tuple[str, str], helper: str, why: str = ""
) -> None:
    """The result file as the update helper leaves it when the update has ended."""
    from_version, to_version = versions
    result = {
        "status": status,
        "from_version": from_version,
        "to_version": to_version,
        "why": why,
        "by": "admin",
        "helper": helper,
        "finished_at": datetime.now(UTC).isoformat(),
        "output": "its last log lines",
    }
    (data_dir / RESULT_NAME).write_text(json.dumps(result))


def never_called() -> None:
    raise AssertionError("no engine nor registry is needed to record an outcome")


def test_a_second_update_is_recorded_and_told_once(tmp_path):
    audited: list[tuple[str, str, str]] = []
    told: list[tuple[str, str]] = []

    def recorder(actor, action, target, outcome, detail) -> None:
        audited.append((actor, outcome, detail))

    def service() -> SelfUpdate:
        """A process of the service, as started after an update."""
        updates = SelfUpdate("1.1.0", tmp_path, never_called, never_called, health_seconds=1)
        updates.events = lambda event: told.append((event.name, event.text))
        return updates

    # The first update: the new release records it.
    helper_wrote(tmp_path, "succeeded", ("1.0.0", "1.1.0"), "sy-self-update-1")
    asyncio.run(service().record_outcome(recorder))
    assert audited == [("admin", "success", "1.0.0 -> 1.1.0: updated")]

    # The second update starts: the first one's outcome is no longer the last one.
    first = service()
    first.begin(UpdateStarted("1.1.0", "1.2.0", "sy-self-update-2"), "admin")
    assert first.last_update() is None

    # The process that runs after it looks before the helper has written: it waits.
    assert service().record_once(recorder) is False
    why = "it exited (status 3)"
    helper_wrote(tmp_path, "rolled_back", ("1.1.0", "1.2.0"), "sy-self-update-2", why)
    asyncio.run(asyncio.wait_for(service().record_outcome(recorder), 30))
    rolled_back = "1.1.0 -> 1.2.0: rolled back (it exited (status 3))"
    assert audited[1:] == [("admin", "failure", rolled_back)]
    assert told[1:] == [("self_update_rolled_back", f"Stackyard {rolled_back}")]
    last = service().last_update()
    assert last is not None and (last.status, last.to_version) == ("rolled_back", "1.2.0")

    # Another process that starts later (a restart) does not tell it again.
    asyncio.run(service().record_outcome(recorder))
    assert len(audited) == 2 and len(told) == 2
