"""When a schedule runs: a five-field cron expression (or a preset) in a time zone.

Times are computed in the schedule's zone (so "03:00 daily" stays 03:00 across daylight
saving changes) and stored in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from stackyard.errors import Invalid

PRESETS = {
    "hourly": "0 * * * *",
    "daily": "0 3 * * *",
    "weekly": "0 3 * * 0",
    "monthly": "0 3 1 * *",
}


def cron_of(expression: str) -> str:
    """A preset's expression, or the expression itself when it is valid; Invalid else."""
    expression = " ".join(expression.split())
    expression = PRESETS.get(expression, expression)
    if len(expression.split(" ")) != 5 or not croniter.is_valid(expression):
        raise Invalid(
            f"{expression!r} is not a cron expression of five fields (minute hour day month "
            f"weekday) or one of {', '.join(PRESETS)}"
        )
    return expression


def zone_of(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise Invalid(f"{name!r} is not a time zone (e.g. UTC, Europe/Berlin)") from exc


def next_run(expression: str, zone: str, after: datetime) -> datetime:
    """The first time after `after` that the timetable names, in UTC."""
    local = after.astimezone(zone_of(zone))
    following = croniter(cron_of(expression), local).get_next(datetime)
    assert isinstance(following, datetime)
    return following.astimezone(UTC)


def next_runs(expression: str, zone: str, after: datetime, count: int) -> list[datetime]:
    """The next `count` times (what the schedule form shows)."""
    times: list[datetime] = []
    for _ in range(count):
        after = next_run(expression, zone, after)
        times.append(after)
    return times


def last_run(expression: str, zone: str, at: datetime) -> datetime:
    """The last time at or before `at` that the timetable names, in UTC."""
    local = at.astimezone(zone_of(zone))
    began = croniter(cron_of(expression), local + timedelta(seconds=1)).get_prev(datetime)
    assert isinstance(began, datetime)
    return began.astimezone(UTC)
