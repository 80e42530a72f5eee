"""Schedules for real: a per-minute schedule fires on its minute, pushes, and applies
retention here and at the destination; a missed run runs once after a restart; two
services sharing one PostgreSQL database fire a run once."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import create_engine, text
from tests.support.receivers import HttpReceiver
from tests.support.service import (
    ADMIN_PASSWORD,
    embedded_database_url,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import compose, compose_text, service, wait_run
from tests.support.waiting import PATIENCE, wait_until

from stackyard.backups.names import archive_name
from stackyard.docker.containers import PROJECT

pytestmark = pytest.mark.docker


database_url = embedded_database_url


def wait_history(client, schedule_id: int, count: int, timeout: float = 120) -> list[dict]:
    """The schedule's runs, newest first, once `count` of them have ended."""

    def ended() -> list[dict] | None:
        runs = client.get(f"/api/schedules/{schedule_id}/runs").json()
        if len(runs) >= count and all(r["outcome"] != "running" for r in runs):
            return runs
        return None

    return wait_until(ended, timeout, f"{count} ended runs of schedule {schedule_id}")


def settled(client, schedule_id: int, after: datetime) -> dict:
    """The schedule once its run is over and its claim has moved on past `after`: the
    claim is one conditional UPDATE of `next_run_at`, so nothing fires that time again."""
    view = client.get(f"/api/schedules/{schedule_id}").json()
    assert not view["running"], view
    assert datetime.fromisoformat(view["next_run_at"]) > after, view
    return view


def test_bad_schedules_are_refused_and_timetables_previewed(admin_client, user_client):
    bad = admin_client.post("/api/schedules", json={"name": "x", "cron": "61 * * * *"})
    assert bad.status_code == 400 and "cron expression" in bad.json()["detail"]
    zone = admin_client.post(
        "/api/schedules", json={"name": "x", "cron": "daily", "timezone": "Mars/Olympus"}
    )
    assert zone.status_code == 400 and "time zone" in zone.json()["detail"]
    keep = admin_client.post("/api/schedules", json={"name": "x", "cron": "daily", "keep_last": 0})
    assert keep.status_code == 422
    nowhere = admin_client.post(
        "/api/schedules", json={"name": "x", "cron": "daily", "destination_id": 999}
    )
    assert nowhere.status_code == 404
    assert admin_client.get("/api/schedules").json() == []

    preview = admin_client.get(
        "/api/timetable", params={"cron": "daily", "timezone": "Europe/Berlin"}
    ).json()
    assert preview["cron"] == "0 3 * * *" and len(preview["next"]) == 5
    first = datetime.fromisoformat(preview["next"][0])
    assert first.astimezone(ZoneInfo("Europe/Berlin")).hour == 3

    made = admin_client.post("/api/schedules", json={"name": "nightly", "cron": "daily"})
    assert made.status_code == 201, made.text
    assert made.json()["stacks"] is None and made.json()["next_run_at"]
    assert user_client.get("/api/schedules").status_code == 403
    # What a timetable means is for anyone signed in (an operator's update policy window).
    assert user_client.get("/api/timetable", params={"cron": "daily"}).status_code == 200
    audit = {e["action"] for e in admin_client.get("/api/audit").json()["items"]}
    assert "schedule.create" in audit


@pytest.mark.parametrize("cron", ["0 0 31 2 *", "0 0 30 2 *", "0 0 * 2 1#5"])
def test_a_timetable_that_never_comes_is_refused_where_it_is_accepted(admin_client, cron):
    """Well formed, but no time matches it (or not within years): 400 with a reason,
    where croniter's error was a 500."""
    for enabled in (True, False):
        made = admin_client.post(
            "/api/schedules", json={"name": "never", "cron": cron, "enabled": enabled}
        )
        assert made.status_code == 400, made.text
        assert "it would never come" in made.json()["detail"]
    preview = admin_client.get("/api/timetable", params={"cron": cron})
    assert preview.status_code == 400 and "never come" in preview.json()["detail"]
    assert admin_client.get("/api/schedules").json() == []
    made = admin_client.post("/api/schedules", json={"name": "ok", "cron": "daily"})
    changed = admin_client.put(
        f"/api/schedules/{made.json()['id']}", json={"name": "ok", "cron": cron}
    )
    assert changed.status_code == 400 and "never come" in changed.json()["detail"]
    assert admin_client.get("/api/schedules").json()[0]["cron"] == "0 3 * * *"


def test_a_per_minute_schedule_fires_on_time_pushes_and_prunes(
    admin_client, make_stack, s3_server, settings
):
    stack = make_stack("tick", compose_text(app=service()))
    other = make_stack("other", compose_text(app=service()))
    host = admin_client.get("/api/backups").json()  # nothing yet
    assert host == []
    bucket = s3_server.bucket()
    dest = admin_client.post(
        "/api/destinations",
        json=s3_server.destination(bucket, "bucket"),
    ).json()

    # Older archives here and there: this stack's (three days ago, two two days ago),
    # another stack's, and files that are not ours.
    label = _host_label(admin_client, make_stack, settings)
    now = datetime.now(UTC)
    old = [
        archive_name(stack, label, now - timedelta(days=3)),
        archive_name(stack, label, now - timedelta(days=2, hours=5)),
        archive_name(stack, label, now - timedelta(days=2, hours=1)),
    ]
    others = [archive_name(other, label, now - timedelta(days=3)), "notes.txt"]
    backups_dir = Path(settings.data_dir) / "backups"
    backups_dir.mkdir(parents=True, exist_ok=True)
    client = s3_server.client()
    for name in old + others:
        (backups_dir / name).write_bytes(b"old")
        client.put_object(Bucket=bucket, Key=name, Body=b"old")

    asked = datetime.now(UTC)
    made = admin_client.post(
        "/api/schedules",
        json={
            "name": "every minute",
            "stacks": [stack],
            "cron": "* * * * *",
            "destination_id": dest["id"],
            "keep_last": 1,
            "keep_daily": 2,
        },
    )
    assert made.status_code == 201, made.text
    schedule = made.json()
    due = datetime.fromisoformat(schedule["next_run_at"])
    assert due.second == 0 and timedelta(0) < due - asked <= timedelta(minutes=1)

    (run,) = wait_history(admin_client, schedule["id"], 1)
    assert run["outcome"] == "succeeded", run
    started = datetime.fromisoformat(run["started_at"])
    assert timedelta(0) <= started - due < timedelta(seconds=10)  # on its minute
    new = run["archive"]
    assert new.startswith(f"{stack}--") and run["size"] > 0
    # Kept: the new one (newest, and today's) and the newest of two days ago (the second
    # day with a backup); gone: the rest of this stack's, here and at the destination.
    assert run["pruned"] == 4
    kept = {new, old[2]}
    assert set(p.name for p in backups_dir.iterdir() if not p.name.startswith(".")) == kept | set(
        others
    )
    remote = {o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])}
    assert remote == kept | set(others)

    view = admin_client.get(f"/api/schedules/{schedule['id']}").json()
    assert view["last_status"] == "succeeded" and not view["running"]
    assert datetime.fromisoformat(view["next_run_at"]) > started

    # Run now: a second run at once, out of the timetable.
    disabled = admin_client.put(
        f"/api/schedules/{schedule['id']}", json={**_spec(schedule), "enabled": False}
    )
    assert disabled.status_code == 200 and disabled.json()["next_run_at"] is None
    assert admin_client.post(f"/api/schedules/{schedule['id']}/run").status_code == 202
    runs = wait_history(admin_client, schedule["id"], 2)
    assert runs[0]["outcome"] == "succeeded" and runs[0]["archive"] != new


def _spec(view: dict) -> dict:
    fields = (
        "name",
        "stacks",
        "cron",
        "timezone",
        "destination_id",
        "capture",
        "keep_last",
        "keep_daily",
        "keep_weekly",
        "keep_monthly",
        "enabled",
    )
    return {k: view[k] for k in fields}


def _host_label(admin_client, make_stack, settings) -> str:
    """The host part of this service's archive names (from a backup it makes)."""
    probe = make_stack("probe", compose_text(app=service()))
    assert admin_client.post(f"/api/stacks/{probe}/backups", json={}).status_code == 202
    assert wait_run(admin_client, probe)["status"] == "succeeded"
    (made,) = admin_client.get("/api/backups").json()
    admin_client.delete(f"/api/backups/{made['name']}")
    return made["name"].split("--")[1]


# -- across restarts and services -----------------------------------------------------
@contextlib.contextmanager
def _admin(server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def _stack(tmp_path: Path, docker_cleanup) -> str:
    stack = f"sched-{uuid.uuid4().hex[:6]}"
    (tmp_path / "stacks" / stack).mkdir(parents=True)
    (tmp_path / "stacks" / stack / "compose.yaml").write_text(compose_text(app=service()))
    docker_cleanup.compose_project(stack)
    return stack


def _set_due(url: str, schedule_id: int, due: datetime) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text("update schedules set next_run_at = :due where id = :id"),
            {
                "due": due.replace(tzinfo=None) if url.startswith("sqlite") else due,
                "id": schedule_id,
            },
        )
    engine.dispose()


def test_a_run_missed_while_down_runs_once_after_a_restart(tmp_path, docker_cleanup):
    stack = _stack(tmp_path, docker_cleanup)
    env = service_env(tmp_path)
    url = f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"
    server = start_server(tmp_path, env=env)
    receiver = HttpReceiver()
    with _admin(server) as client:
        yearly = {"name": "yearly", "stacks": [stack], "cron": "0 0 1 1 *"}
        recent = client.post("/api/schedules", json=yearly).json()
        too_old = client.post("/api/schedules", json={**yearly, "name": "old"}).json()
        hook = {"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}}
        assert client.post("/api/notifications/channels", json=hook).status_code == 201
    server.stop()

    now = datetime.now(UTC)
    _set_due(url, recent["id"], now - timedelta(minutes=5))  # within the hour of grace
    _set_due(url, too_old["id"], now - timedelta(hours=3))
    server = start_server(tmp_path, env=env)
    try:
        with _admin(server) as client:
            (ran,) = wait_history(client, recent["id"], 1)
            assert ran["outcome"] == "succeeded" and ran["stack_id"] == stack
            (missed,) = wait_history(client, too_old["id"], 1)
            assert missed["outcome"] == "missed" and "missed" in missed["error"]
            # And nothing more: each ran once, and each claim moved on to the next 1 January.
            settled(client, recent["id"], now + timedelta(days=1))
            settled(client, too_old["id"], now + timedelta(days=1))
            assert len(client.get(f"/api/schedules/{recent['id']}/runs").json()) == 1
            assert len(client.get("/api/backups").json()) == 1
        # The missed run is news (a warning: the default rules send it).
        said = wait_until(
            lambda: [
                e
                for r in receiver.requests
                for e in r.json()["events"]
                if e["name"] == "schedule_missed"
            ]
        )
        assert [e["text"] for e in said] == [f"Schedule 'old': {missed['error']}"]
        assert said[0]["link"] == "/schedules"
    finally:
        server.stop()
        receiver.close()


@pytest.mark.postgres
def test_two_services_on_one_postgresql_fire_a_run_once(
    tmp_path, docker_cleanup, postgres_database
):
    stack = _stack(tmp_path, docker_cleanup)
    first_env = service_env(tmp_path, DATABASE_URL=postgres_database)
    first = start_server(tmp_path, env=first_env)
    with _admin(first) as client:
        made = client.post(
            "/api/schedules", json={"name": "once", "stacks": [stack], "cron": "0 0 1 1 *"}
        ).json()
    first.stop()
    _set_due(postgres_database, made["id"], datetime.now(UTC) - timedelta(minutes=1))

    # Both start together; each looks for due runs as it starts.
    second_dir = tmp_path / "second"
    (second_dir / "stacks").mkdir(parents=True)
    second_env = service_env(
        second_dir,
        DATABASE_URL=postgres_database,
        STACKS_DIR=str(tmp_path / "stacks"),
        STACKYARD_SECRET_KEY=first_env["STACKYARD_SECRET_KEY"],
    )
    # Each service claims what is due before it first answers, so once both have answered
    # and the run is over, the one claim that moved the schedule on is all there was.
    servers = [start_server(tmp_path, env=first_env), start_server(second_dir, env=second_env)]
    try:
        with _admin(servers[0]) as client:
            (run,) = wait_history(client, made["id"], 1)
            assert run["outcome"] == "succeeded"
            settled(client, made["id"], datetime.now(UTC) + timedelta(days=1))
            assert len(client.get(f"/api/schedules/{made['id']}/runs").json()) == 1
        archives = [
            p
            for d in (tmp_path / "data", second_dir / "data")
            for p in (d / "backups").glob("*.tar")
        ]
        assert len(archives) == 1
    finally:
        for server in servers:
            server.stop()


HELD = """services:
  app:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
    stop_signal: SIGKILL  # (sleep as pid 1 ignores SIGTERM: 10 s for each stop)
    labels:
      stackyard.test: stack
      stackyard.backup.pre: "while [ -e /hold ]; do sleep 0.2; done"
"""


def test_a_run_cut_short_by_a_killed_service_is_recorded_as_interrupted(
    tmp_path, docker_cleanup, docker_client
):
    """The service is killed (SIGKILL) while a scheduled backup waits in its hook: once it
    is back the run is "interrupted", not "running" for ever; the schedule is free at
    once (not when its lease expires), nothing of the run is left, and the next run
    succeeds."""
    stack = f"sched-{uuid.uuid4().hex[:6]}"
    (tmp_path / "stacks" / stack).mkdir(parents=True)
    (tmp_path / "stacks" / stack / "compose.yaml").write_text(HELD)
    docker_cleanup.compose_project(stack)
    assert compose(tmp_path / "stacks", stack, "up", "-d").returncode == 0
    (container,) = docker_client.containers.list(filters={"label": f"{PROJECT}={stack}"})
    container.exec_run(["touch", "/hold"])
    env = service_env(tmp_path)
    server = start_server(tmp_path, env=env)
    try:
        with _admin(server) as client:
            made = client.post(
                "/api/schedules", json={"name": "held", "stacks": [stack], "cron": "0 0 1 1 *"}
            ).json()
            assert client.post(f"/api/schedules/{made['id']}/run").status_code == 202
            wait_until(
                lambda: client.get(f"/api/schedules/{made['id']}/runs").json(),
                PATIENCE,
                "the run to begin",
            )
            wait_until(
                lambda: (
                    "Hook stackyard.backup.pre"
                    in str(client.get(f"/api/stacks/{stack}/run").json())
                ),
                PATIENCE,
                "the run to wait in its hook",
            )
        server.process.kill()
        server.process.wait()

        server = start_server(tmp_path, env=env)
        with _admin(server) as client:
            (cut,) = wait_history(client, made["id"], 1)
            assert cut["outcome"] == "interrupted" and "killed or restarted" in cut["error"]
            view = client.get(f"/api/schedules/{made['id']}").json()
            assert not view["running"] and view["last_status"] == "interrupted"
            backups = tmp_path / "data" / "backups"
            assert not backups.exists() or list(backups.iterdir()) == []

            container.exec_run(["rm", "/hold"])
            assert client.post(f"/api/schedules/{made['id']}/run").status_code == 202
            done, cut_again = wait_history(client, made["id"], 2)
            assert done["outcome"] == "succeeded", done
            assert cut_again == cut
            assert [p.name for p in backups.iterdir()] == [done["archive"]]
    finally:
        server.stop()
