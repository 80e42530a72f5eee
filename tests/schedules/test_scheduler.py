"""The scheduler's claim that fires a schedule, on the real database: one claimant per due
time, none while a run holds the lease (a long run never overlaps its next time), and
after a run that outlasted its next time, the next time counts from its end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from stackyard.db.models import Schedule as Row
from stackyard.schedules.scheduler import LEASE


@pytest.fixture
def scheduler(app, admin_client):
    return app.state.services.scheduler


def _set(scheduler, schedule_id: int, **values) -> None:
    with scheduler.db.session() as session:
        session.execute(update(Row).where(Row.id == schedule_id).values(**values))


def _row(scheduler, schedule_id: int) -> Row:
    with scheduler.db.session() as session:
        row = session.get(Row, schedule_id)
        session.expunge(row)
        return row


def test_one_claim_per_due_time_and_none_while_a_run_holds_the_lease(admin_client, scheduler):
    made = admin_client.post(
        "/api/schedules", json={"name": "claims", "stacks": ["nothing-here"], "cron": "0 0 1 1 *"}
    ).json()
    now = datetime.now(UTC)
    due = now - timedelta(seconds=5)

    # A run of this schedule is going on (its lease is held): the due time is not taken.
    _set(scheduler, made["id"], next_run_at=due, lease_until=now + LEASE)
    assert scheduler._claim(made["id"], due, now) is False
    assert _row(scheduler, made["id"]).next_run_at == due

    # Its lease ended (the run is over, or its service died): taken once, and only once.
    _set(scheduler, made["id"], lease_until=now - timedelta(seconds=1))
    assert scheduler._claim(made["id"], due, now) is True
    assert scheduler._claim(made["id"], due, now) is False
    claimed = _row(scheduler, made["id"])
    assert claimed.next_run_at > now + timedelta(days=1)  # the next 1 January
    assert claimed.lease_until is not None and claimed.lease_until > now

    # A run that outlasted a next time: released, the next time is the next after its end.
    _set(scheduler, made["id"], cron="* * * * *", next_run_at=now - timedelta(minutes=3))
    scheduler._release(made["id"], "succeeded")
    released = _row(scheduler, made["id"])
    assert released.lease_until is None and released.last_status == "succeeded"
    assert datetime.now(UTC) < released.next_run_at <= datetime.now(UTC) + timedelta(minutes=1)


def test_run_now_is_refused_while_the_schedule_runs(admin_client, scheduler):
    made = admin_client.post(
        "/api/schedules", json={"name": "busy", "stacks": ["nothing-here"], "cron": "daily"}
    ).json()
    _set(scheduler, made["id"], lease_until=datetime.now(UTC) + LEASE)
    refused = admin_client.post(f"/api/schedules/{made['id']}/run")
    assert refused.status_code == 409 and "is running" in refused.json()["detail"]
    assert admin_client.get(f"/api/schedules/{made['id']}/runs").json() == []
