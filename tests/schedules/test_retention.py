from datetime import UTC, datetime, timedelta

import pytest

from stackyard.backups.names import archive_name
from stackyard.errors import Invalid
from stackyard.schedules.retention import Retention, to_prune

START = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)


def daily(days: int, stack: str = "web", host: str = "nas") -> list[str]:
    return [archive_name(stack, host, START + timedelta(days=d)) for d in range(days)]


def test_keeps_the_newest_n():
    names = daily(10)
    assert to_prune(names, "web", "nas", Retention(keep_last=3)) == names[:7]


def test_only_its_own_names_of_this_stack_and_host_are_candidates():
    mine = daily(5)
    others = daily(5, stack="db") + daily(5, host="other")
    foreign = ["web--nas--notatime.tar", "web.tar", "notes.txt", "web--nas--20250101T000000Z.tgz"]
    pruned = to_prune(mine + others + foreign, "web", "nas", Retention(keep_last=1))
    assert pruned == mine[:4]


def test_tiers_keep_the_newest_of_each_period_with_a_backup():
    # Four backups a day (03:00, 09:00, 15:00, 21:00) for 60 days, to 1 March 21:00.
    names = [
        archive_name("web", "nas", START + timedelta(days=d, hours=h))
        for d in range(60)
        for h in (0, 6, 12, 18)
    ]
    rule = Retention(keep_last=2, daily=7, weekly=4, monthly=3)
    kept = sorted(set(names) - set(to_prune(names, "web", "nas", rule)))
    last = START + timedelta(days=59, hours=18)
    expected = {
        archive_name("web", "nas", last - timedelta(hours=6)),
        archive_name("web", "nas", last),
    }
    # daily: the 21:00 backup of each of the last 7 days
    expected |= {archive_name("web", "nas", last - timedelta(days=d)) for d in range(7)}
    # weekly: the newest of each of the last 4 ISO weeks (1 March 2026 is a Sunday)
    expected |= {archive_name("web", "nas", last - timedelta(weeks=w)) for w in range(4)}
    # monthly: the newest of March (1 March), of February and of January
    expected |= {
        archive_name("web", "nas", datetime(2026, 2, 28, 21, 0, tzinfo=UTC)),
        archive_name("web", "nas", datetime(2026, 1, 31, 21, 0, tzinfo=UTC)),
    }
    assert set(kept) == expected


def test_a_missed_day_costs_no_older_archive():
    # offen #631: an age rule deleted everything but one after a day without backups.
    names = [*daily(3), archive_name("web", "nas", START + timedelta(days=10))]
    assert to_prune(names, "web", "nas", Retention(keep_last=1, daily=4)) == []


def test_never_all_and_never_the_newest():
    names = daily(4)
    pruned = to_prune(names, "web", "nas", Retention(keep_last=1))
    assert names[-1] not in pruned and len(pruned) == 3
    assert to_prune(names[:1], "web", "nas", Retention(keep_last=1)) == []


def test_a_suffixed_name_counts_by_its_time():
    first = archive_name("web", "nas", START)
    second = first.replace(".tar", "-2.tar")
    assert to_prune([first, second], "web", "nas", Retention(keep_last=1)) == [first]


@pytest.mark.parametrize(
    "rule",
    [{"keep_last": 0}, {"keep_last": -1}, {"daily": -1}, {"monthly": 10_001}],
)
def test_a_rule_that_would_keep_nothing_is_refused(rule):
    with pytest.raises(Invalid):
        Retention(**rule)
