"""Destinations and schedules in a real browser: an S3 destination (moto on loopback)
added and tested through the UI, an archive pushed to it from the Backups page and found
there, and a schedule whose next runs the form previews."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import compose_text, service, wait_run

pytestmark = pytest.mark.browser


def make_archive(url: str, stacks_dir: Path, docker_cleanup) -> tuple[str, str]:
    """A small stack that is never started, and an archive of it (made through the API:
    backing up through the UI is test_backups's)."""
    stack_id = f"e2e-dest-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(compose_text(app=service()))
    docker_cleanup.compose_project(stack_id)
    with httpx.Client(base_url=url, timeout=30) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        started = admin.post(f"/api/stacks/{stack_id}/backups", json={})
        assert started.status_code == 202, started.text
        assert wait_run(admin, stack_id, timeout=60)["status"] == "succeeded"
        names = [a["name"] for a in admin.get("/api/backups").json() if a["stack_id"] == stack_id]
    assert len(names) == 1, names
    return stack_id, names[0]


def test_push_an_archive_to_s3_and_schedule_backups(page, live_server, s3_server, docker_cleanup):
    stack_id, archive = make_archive(
        live_server.url, Path(live_server.env["STACKS_DIR"]), docker_cleanup
    )
    bucket = s3_server.bucket()
    name = f"moto {bucket}"
    nav = page.get_by_role("navigation", name="Main")

    # Add the destination, trying the unsaved settings first.
    sign_in(page, live_server.url)
    nav.get_by_role("link", name="Destinations").click()
    page.get_by_role("button", name="Add a destination").click()
    dialog = page.get_by_role("dialog", name="Add a destination")
    dialog.get_by_role("combobox", name="Type").select_option("s3")
    dialog.get_by_label("Name", exact=True).fill(name)
    dialog.get_by_label("Endpoint URL", exact=True).fill(s3_server.url)
    dialog.get_by_label("Bucket", exact=True).fill(bucket)
    dialog.get_by_label("Access key", exact=True).fill(s3_server.access_key)
    dialog.get_by_label("Secret key", exact=True).fill(s3_server.secret_key)
    dialog.get_by_role("button", name="Test", exact=True).click()
    expect(dialog.get_by_role("status")).to_contain_text("Test passed")
    dialog.get_by_role("button", name="Add the destination").click()
    expect(dialog).to_be_hidden()

    row = page.get_by_role("table", name="Destinations").get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text(f"{bucket} at {s3_server.url}")
    row.get_by_role("button", name=f"Test {name}").click()
    expect(row.get_by_role("status")).to_contain_text("Test passed")

    # Push the archive from the Backups page and follow the run.
    nav.get_by_role("link", name="Backups").click()
    archive_row = (
        page.get_by_role("table", name="Archives").get_by_role("row").filter(has_text=archive)
    )
    archive_row.get_by_role("button", name="Push…").click()
    push = page.get_by_role("dialog", name=f"Push {archive}")
    push.get_by_role("combobox", name="Destination").select_option(label=f"{name} (S3)")
    push.get_by_role("button", name="Push", exact=True).click()
    console = page.get_by_role("region", name=f"Deploy {stack_id}")
    expect(console.get_by_role("heading", name=f"Pushing {archive} to {name}")).to_be_visible()
    expect(console.get_by_role("status")).to_have_text("push succeeded", timeout=30_000)

    # The destination holds it now.
    nav.get_by_role("link", name="Destinations").click()
    page.get_by_role("button", name=f"Browse {name}").click()
    remote = page.get_by_role("table", name=f"Archives on {name}")
    expect(remote.get_by_role("row").filter(has_text=archive)).to_have_count(1)
    listed = s3_server.client().list_objects_v2(Bucket=bucket)
    assert [o["Key"] for o in listed.get("Contents", [])] == [archive]

    # A schedule to it: the form previews the timetable's next runs.
    nav.get_by_role("link", name="Schedules").click()
    page.get_by_role("button", name="Add a schedule").click()
    form = page.get_by_role("dialog", name="Add a schedule")
    schedule = f"nightly {bucket}"
    form.get_by_label("Name", exact=True).fill(schedule)
    form.get_by_role("combobox", name="Runs").select_option("custom")
    form.get_by_label("Cron expression (minute hour day month weekday)").fill("15 4 * * 1-5")
    form.get_by_label("Time zone", exact=True).fill("Europe/Berlin")
    expect(form.get_by_text("Cron expression: 15 4 * * 1-5, in Europe/Berlin")).to_be_visible()
    expect(form.get_by_role("list", name="Next runs").get_by_role("listitem")).to_have_count(5)
    form.get_by_role("combobox", name="Destination").select_option(label=f"{name} (S3)")
    # Saved disabled: it must not fire in the shared server while other tests run.
    form.get_by_role("checkbox", name="Enabled (runs on its timetable)").uncheck()
    form.get_by_role("button", name="Add the schedule").click()
    expect(form).to_be_hidden()
    schedule_row = (
        page.get_by_role("table", name="Schedules").get_by_role("row").filter(has_text=schedule)
    )
    expect(schedule_row).to_contain_text("15 4 * * 1-5 (Europe/Berlin)")
    expect(schedule_row).to_contain_text(name)
    expect(schedule_row.get_by_role("switch", name=f"{schedule} enabled")).not_to_be_checked()
