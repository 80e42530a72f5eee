"""The update summary for whoever may not read the stacks' logs (`without_logs`): the log
lines of a failed update are left out of both outcomes a stack carries, the last update
and the last auto-update, since what a failing image printed may hold secrets. Pure
logic, no engine."""

from datetime import UTC, datetime

from stackyard.stacks.prefs import UpdateOutcome
from stackyard.stacks.updates import StackUpdate, UpdateSummary, without_logs

AT = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def failed(by: str | None, line: str) -> UpdateOutcome:
    return UpdateOutcome(at=AT, outcome="rolled_back", detail="unhealthy", by=by, logs=(line,))


def stack(name: str, **outcomes: UpdateOutcome | None) -> StackUpdate:
    return StackUpdate(
        stack=name,
        has_update=True,
        auto_update=True,
        last_auto_update=outcomes.get("last_auto_update"),
        images=(),
        last_update=outcomes.get("last_update"),
    )


def test_the_logs_of_both_outcomes_are_left_out_and_the_rest_kept() -> None:
    by_hand = failed(None, "password=hunter2")
    by_pass = failed("auto-update", "token=s3cr3t")
    summary = UpdateSummary(
        last_check=AT,
        stacks=(
            stack("shop", last_update=by_hand, last_auto_update=by_pass),
            stack("blog", last_auto_update=by_pass),
            stack("wiki"),
        ),
    )

    hidden = without_logs(summary)

    shop, blog, wiki = hidden.stacks
    assert shop.last_update is not None and shop.last_auto_update is not None
    assert shop.last_update.logs is None
    assert shop.last_auto_update.logs is None
    assert blog.last_update is None
    assert blog.last_auto_update is not None and blog.last_auto_update.logs is None
    assert wiki.last_update is None and wiki.last_auto_update is None
    # Only the logs go: what happened, when and by whom stays to be shown.
    assert shop.last_update == UpdateOutcome(
        at=AT, outcome="rolled_back", detail="unhealthy", by=None, logs=None
    )
    assert shop.last_auto_update.by == "auto-update"
    assert [s.stack for s in hidden.stacks] == ["shop", "blog", "wiki"]
    assert hidden.last_check == AT
    # The summary given is left as it was (it is the cached one, shown to log readers).
    assert summary.stacks[0].last_update is not None
    assert summary.stacks[0].last_update.logs == ("password=hunter2",)
    assert by_pass.logs == ("token=s3cr3t",)
