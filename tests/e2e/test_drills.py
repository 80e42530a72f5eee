"""A restore drill in a real browser: an archive of a running stack (made through the
API), drilled from the Backups page, the run followed to its end, and the stack's last
drill shown as "Restore verified", its archive marked; the stack itself untouched and
nothing of the drill left on the engine."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import wait_run

pytestmark = pytest.mark.browser

COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    command: ["sh", "-c", "while true; do sleep 1; done"]
    labels: [stackyard.test=stack]
    volumes: ['db:/db', './data:/data']
volumes:
  db:
"""


def test_drill_an_archive_and_see_the_restore_verified(
    page, live_server, docker_cleanup, docker_client
):
    stack_id = f"e2e-drill-{uuid.uuid4().hex[:6]}"
    folder = Path(live_server.env["STACKS_DIR"]) / stack_id
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "notes.txt").write_text("keep me\n")
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    subprocess.run(
        ["docker", "compose", "up", "-d"], cwd=folder, check=True, capture_output=True, timeout=120
    )
    original = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    assert len(original) == 1
    with httpx.Client(base_url=live_server.url, timeout=30) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        started = admin.post(f"/api/stacks/{stack_id}/backups", json={})
        assert started.status_code == 202, started.text
        backed_up = wait_run(admin, stack_id, timeout=120)
    assert backed_up["status"] == "succeeded", backed_up["progress"]["errors"]
    archive = backed_up["artifact"]
    running_since = docker_client.containers.get(original[0].id).attrs["State"]["StartedAt"]

    sign_in(page, live_server.url)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Backups").click()
    drills = page.get_by_role("region", name="Restore drills")
    last = drills.get_by_role("listitem", name=f"Last drill of {stack_id}")
    expect(last).to_contain_text("No restore drill yet.")
    # (A row whose columns do not fit has a second row of details under it: the one with
    # the actions is the archive's.)
    row = (
        page.get_by_role("table", name="Archives")
        .get_by_role("row")
        .filter(has_text=archive)
        .filter(has=page.get_by_role("button", name="Drill", exact=True))
    )
    expect(row).to_have_count(1)
    expect(row.get_by_text("verified", exact=True)).to_have_count(0)
    row.get_by_role("button", name="Drill", exact=True).click()

    dialog = page.get_by_role("dialog", name=f"Restore drill of {archive}")
    settle = dialog.get_by_label("Settle time (seconds)")
    expect(settle).to_have_value("30")
    settle.fill("2")
    dialog.get_by_role("button", name="Start the drill").click()

    console = page.get_by_role("region", name=f"Deploy {stack_id}")
    expect(console.get_by_role("heading", name=f"Restore drill of {archive}")).to_be_visible()
    expect(console.get_by_role("status")).to_have_text(
        re.compile(r"^drill succeeded: restore verified: 2 volumes and folders, "), timeout=180_000
    )
    expect(last).to_contain_text(
        re.compile(r"Restore verified (just now|\d+ min ago): 2 volumes and folders, \d+ files?, ")
    )
    expect(last).to_contain_text("app: running")
    expect(row.get_by_text("verified", exact=True)).to_be_visible()

    # The stack ran on, untouched; nothing of the drill is left on the engine.
    assert docker_client.containers.get(original[0].id).attrs["State"]["StartedAt"] == running_since
    assert docker_client.containers.list(all=True, filters={"label": "stackyard.drill"}) == []
    assert not [
        v.name for v in docker_client.volumes.list() if v.name.startswith("stackyard-drill-")
    ]
