"""When a schedule runs: a five-field cron expression (or a preset) in a time zone.

Times are computed in the schedule's zone (so "03:00 daily" stays 03:00 across daylight
saving changes) and stored in UTC.

An expression can be well formed and still name no time at all (`0 0 31 2 *`, the 31st of
February): every timetable the service accepts (a backup schedule, an update policy's
maintenance window) is checked with `check_fires` where it is accepted, and a timetable
stored before that check says so as `Invalid` when it is read, never croniter's error.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, croniter

from stackyard.errors import Invalid

#: How far ahead an accepted timetable must name a time: 29 February comes at least every
#: eight years (2096, then 2104); what comes more rarely is taken for a mistake.
HORIZON_YEARS = 8

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


def _never(expression: str) -> Invalid:
    return Invalid(
        f"{expression!r} names no time within {HORIZON_YEARS} years (a day that does not "
        "exist, such as 31 February?): it would never come"
    )


def check_fires(expression: str, zone: str, now: datetime | None = None) -> str:
    """The expression (a preset resolved), once it is known to name a time within
    `HORIZON_YEARS` of `now`: what every timetable the service accepts goes through.
    Invalid when it is no cron expression, or names no such time."""
    cron = cron_of(expression)
    local = (now or datetime.now(UTC)).astimezone(zone_of(zone))
    try:
        croniter(cron, local, max_years_between_matches=HORIZON_YEARS).get_next(datetime)
    except CroniterBadDateError as exc:
        raise _never(cron) from exc
    return cron


def zone_of(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise Invalid(f"{name!r} is not a time zone (e.g. UTC, Europe/Berlin)") from exc


def next_run(expression: str, zone: str, after: datetime) -> datetime:
    """The first time after `after` that the timetable names, in UTC (Invalid when it names
    none: one stored before `check_fires`)."""
    local = after.astimezone(zone_of(zone))
    cron = cron_of(expression)
    try:
        following = croniter(cron, local).get_next(datetime)
    except CroniterBadDateError as exc:
        raise _never(cron) from exc
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
    """The last time at or before `at` that the timetable names, in UTC (Invalid when it
    names none: one stored before `check_fires`)."""
    local = at.astimezone(zone_of(zone))
    cron = cron_of(expression)
    try:
        began = croniter(cron, local + timedelta(seconds=1)).get_prev(datetime)
    except CroniterBadDateError as exc:
        raise _never(cron) from exc
    assert isinstance(began, datetime)
    return began.astimezone(UTC)
