"""The shared timetable (src/stackyard/timetable.py): what it accepts, and what it says of
a timetable that never comes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stackyard.errors import Invalid
from stackyard.timetable import check_fires, last_run, next_run


def test_29_february_is_accepted_even_across_a_century_without_one():
    # 2100 is no leap year: from March 2097 the next 29 February is in 2104.
    after = datetime(2097, 3, 1, tzinfo=UTC)
    assert check_fires("0 0 29 2 *", "Europe/Berlin", now=after) == "0 0 29 2 *"


@pytest.mark.parametrize("cron", ["0 0 31 2 *", "0 0 31 4,6,9,11 *", "0 0 * 2 1#5"])
def test_a_timetable_that_never_comes_is_invalid_where_it_is_read_too(cron):
    now = datetime(2025, 1, 1, tzinfo=UTC)
    with pytest.raises(Invalid, match="never come"):
        check_fires(cron, "UTC", now=now)
    if "#" not in cron:  # (a fifth Monday of February comes, in decades: read, not accepted)
        with pytest.raises(Invalid, match="never come"):
            next_run(cron, "UTC", now)
        with pytest.raises(Invalid, match="never come"):
            last_run(cron, "UTC", now)
