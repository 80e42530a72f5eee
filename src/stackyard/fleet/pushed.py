"""The reports agents push: an agent that a central follows (its event stream, asked with
`reports=1`) sends its host report over that stream when it changes, and a line at least
every `HEARTBEAT` seconds. The central keeps the last one of each agent here; the
dashboard shows it while the stream is live (a line came within `LIVE_FOR`) and asks the
agent itself otherwise. So a dashboard over 2,000 agents costs no request per agent, and an
agent that stops answering is asked again within `LIVE_FOR`, then shown offline as before.

What an agent pushes is at most `HEARTBEAT` seconds old when its state changed (its events
make it sooner), and its load and free memory at most `REFRESH`."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from stackyard.fleet.report import HostReport

#: Seconds between an agent's looks at its own report, and at most between two lines.
HEARTBEAT = 5.0
#: Seconds after which an agent sends its report even when only its load and memory moved.
REFRESH = 60.0
#: A stream that sent nothing for this long is not trusted any more: the agent is asked.
LIVE_FOR = 2 * HEARTBEAT + 2.0


def same_state(one: HostReport, other: HostReport | None) -> bool:
    """Whether two reports say the same but for the load and free memory, which move all
    the time (sent every `REFRESH`, not at each look)."""
    if other is None:
        return False

    def steady(report: HostReport) -> HostReport:
        resources = dataclasses.replace(report.resources, load=(0.0, 0.0, 0.0), memory_available=0)
        return dataclasses.replace(report, resources=resources)

    return steady(one) == steady(other)


@dataclass(frozen=True)
class Pushed:
    report: HostReport
    #: When the stream last sent a line: the agent's look then found the same (every line
    #: after a report says so), but for load and free memory (at most `REFRESH` old).
    at: datetime


class PushedReports:
    """The last report each agent pushed, and when its stream last sent a line (the
    event loop's: no lock)."""

    def __init__(self, live_for: float = LIVE_FOR) -> None:
        self.live_for = live_for
        self._reports: dict[int, HostReport] = {}
        self._heard: dict[int, tuple[float, datetime]] = {}

    def heard(self, agent_id: int, report: HostReport | None = None) -> None:
        """A line came on the agent's stream (with a report, its newest)."""
        self._heard[agent_id] = (time.monotonic(), datetime.now(UTC))
        if report is not None:
            self._reports[agent_id] = report

    def lost(self, agent_id: int) -> None:
        """The agent's stream ended: its reports are not trusted until it sends anew."""
        self._heard.pop(agent_id, None)
        self._reports.pop(agent_id, None)

    def fresh(self, agent_id: int) -> Pushed | None:
        """The agent's last report, while its stream is live."""
        heard = self._heard.get(agent_id)
        report = self._reports.get(agent_id)
        if heard is None or report is None or time.monotonic() - heard[0] > self.live_for:
            return None
        return Pushed(report, heard[1])
