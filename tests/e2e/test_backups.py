"""Backing up a stack and restoring it as a clone, in a real browser."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in

pytestmark = pytest.mark.browser

COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes: ['db:/db', './data:/data', '{outside}:/outside']
volumes:
  db:
"""


def test_back_up_a_stack_and_restore_it_as_a_clone(page, live_server, docker_cleanup, tmp_path):
    """The clone's bind folder outside the stack folder goes where the user moves it in
    the dialog (shown beside the original's, "will be created"); the original's is
    never written."""
    stack_id = f"e2e-bk-{uuid.uuid4().hex[:6]}"
    clone = f"{stack_id}-copy"
    folder = Path(live_server.env["STACKS_DIR"]) / stack_id
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "notes.txt").write_text("keep me\n")
    outside, chosen = tmp_path / "outside", tmp_path / "chosen"
    outside.mkdir()
    (outside / "media.txt").write_text("outside\n")
    (folder / "compose.yaml").write_text(COMPOSE.format(outside=outside))
    docker_cleanup.compose_project(stack_id)
    docker_cleanup.compose_project(clone)
    subprocess.run(["docker", "compose", "up", "-d"], cwd=folder, check=True, capture_output=True)

    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{stack_id}")
    page.get_by_role("button", name="Back up").click()
    dialog = page.get_by_role("dialog", name=f"Back up {stack_id}")
    expect(dialog.get_by_role("checkbox", name="Back up db")).to_be_checked(timeout=20_000)
    expect(dialog.get_by_role("checkbox", name="Back up ./data")).to_be_checked()
    dialog.get_by_role("checkbox", name=f"Back up {outside}").check()
    dialog.get_by_role("button", name="Start backup").click()
    console = page.get_by_role("region", name=f"Deploy {stack_id}")
    # Its outcome, with the archive's size (compressed: said for what it is).
    expect(console.get_by_role("status")).to_have_text(
        re.compile(r"^backup succeeded: archive \S+\.tar \([\d.]+ (B|kB|MB)\)$"), timeout=60_000
    )
    expect(console.get_by_test_id("deploy-counter")).to_contain_text("3 of 3 volumes and folders")
    expect(page.get_by_test_id("stack-state")).to_have_text("Running")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Backups").click()
    table = page.get_by_role("table", name="Archives")
    # (A row whose columns do not fit has a second row of details under it: the one
    # with the actions is the archive's.)
    row = (
        table.get_by_role("row")
        .filter(has_text=stack_id)
        .filter(has=page.get_by_role("button", name="Verify"))
    )
    expect(row).to_have_count(1)
    row.get_by_role("button", name="Verify").click()
    expect(row.get_by_role("status")).to_contain_text("every checksum right", timeout=30_000)
    row.get_by_role("button", name="Restore").click()
    restore = page.get_by_role("dialog").filter(has_text="Restore as")
    restore.get_by_label("Restore as (empty: as itself)").fill(clone)
    plan = restore.get_by_role("region", name="What the restore writes")
    moved = plan.get_by_label(f"{outside} for {clone}")
    expect(moved).to_have_value(f"{outside}-{clone}", timeout=20_000)
    expect(plan).to_contain_text("will be created")
    moved.fill(str(chosen))
    moved.blur()
    expect(plan.get_by_label(f"{outside} for {clone}")).to_have_value(str(chosen))
    page.screenshot(path=tmp_path / "restore-dialog.png")
    restore.get_by_role("button", name="Restore", exact=True).click()
    progress = page.get_by_role("region", name=f"Deploy {clone}")
    expect(progress.get_by_role("status")).to_have_text(
        re.compile(r"^restore succeeded: wrote "), timeout=60_000
    )
    assert (
        Path(live_server.env["STACKS_DIR"]) / clone / "data" / "notes.txt"
    ).read_text() == "keep me\n"
    assert (chosen / "media.txt").read_text() == "outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["media.txt"]
    assert not Path(f"{outside}-{clone}").exists()

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Stacks").click()
    expect(
        page.get_by_role("table", name="Stacks").get_by_role("link", name=clone, exact=True)
    ).to_be_visible()
