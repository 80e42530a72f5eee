"""A repository destination in a real browser: a restic repository made on a folder, its
recovery key shown once (and the very key that opens the repository with restic itself),
an archive pushed to it from the Backups page and found there, and the repository
recovered with that key (a wrong one refused, saying why)."""

from __future__ import annotations

import json
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
from tests.support.stacks import compose_text, service, wait_run

pytestmark = pytest.mark.browser

#: How Stackyard prints a recovery key: twelve groups of four base32 letters and digits.
RECOVERY_KEY = re.compile(r"^([A-Z2-7]{4}-){11}[A-Z2-7]{4}$")


def make_archive(url: str, stacks_dir: Path, docker_cleanup) -> tuple[str, str]:
    """A small stack that is never started, and an archive of it (made through the API:
    backing up through the UI is test_backups's)."""
    stack_id = f"e2e-repo-{uuid.uuid4().hex[:6]}"
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


def restic_snapshots(repo: Path, key: str) -> list[dict]:
    """The repository's snapshots as restic itself reads them, opened with `key`."""
    listed = subprocess.run(
        ["restic", "-r", str(repo), "snapshots", "--json", "--no-lock", "--no-cache"],
        env={"RESTIC_PASSWORD": key, "PATH": "/usr/bin:/bin", "HOME": str(repo.parent)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(listed.stdout)


def test_make_a_repository_see_its_key_once_push_to_it_and_recover_it(
    page, live_server, docker_cleanup, tmp_path
):
    stack_id, archive = make_archive(
        live_server.url, Path(live_server.env["STACKS_DIR"]), docker_cleanup
    )
    name = f"vault-{uuid.uuid4().hex[:6]}"
    repo = tmp_path / "repository"
    nav = page.get_by_role("navigation", name="Main")

    # Make the repository on a folder.
    sign_in(page, live_server.url)
    nav.get_by_role("link", name="Destinations").click()
    page.get_by_role("button", name="New repository").click()
    dialog = page.get_by_role("dialog", name="New repository")
    dialog.get_by_label("Name", exact=True).fill(name)
    expect(dialog.get_by_role("combobox", name="Location")).to_have_value("folder")
    dialog.get_by_label("Folder", exact=True).fill(str(repo))
    dialog.get_by_role("button", name="Make the repository").click()

    # Its recovery key, shown once: it stays until the user says it is written down.
    shown = page.get_by_role("dialog", name=f"Recovery key of {name}")
    key_text = shown.get_by_role("figure", name="Recovery key").locator("p")
    expect(key_text).to_have_text(RECOVERY_KEY)
    key = key_text.inner_text().strip()
    expect(shown).to_contain_text("It is not shown again.")
    close = shown.get_by_role("button", name="Close")
    expect(close).to_be_disabled()
    page.keyboard.press("Escape")
    expect(shown).to_be_visible()
    shown.get_by_role("checkbox", name="I have written it down").check()
    close.click()
    expect(shown).to_be_hidden()
    expect(page.get_by_text(key)).to_have_count(0)

    row = page.get_by_role("table", name="Destinations").get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text("Repository (restic)")
    expect(row).to_contain_text(str(repo))

    # Push the archive from the Backups page and follow the run.
    nav.get_by_role("link", name="Backups").click()
    archive_row = (
        page.get_by_role("table", name="Archives").get_by_role("row").filter(has_text=archive)
    )
    archive_row.get_by_role("button", name="Push…").click()
    push = page.get_by_role("dialog", name=f"Push {archive}")
    push.get_by_role("combobox", name="Destination").select_option(
        label=f"{name} (restic repository)"
    )
    push.get_by_role("button", name="Push", exact=True).click()
    console = page.get_by_role("region", name=f"Deploy {stack_id}")
    expect(console.get_by_role("heading", name=f"Pushing {archive} to {name}")).to_be_visible()
    expect(console.get_by_role("status")).to_have_text("push succeeded")

    # The repository holds it: in its archives, and for restic opened with the key shown.
    nav.get_by_role("link", name="Destinations").click()
    page.get_by_role("button", name=f"Browse {name}").click()
    remote = page.get_by_role("table", name=f"Archives on {name}")
    expect(remote.get_by_role("row").filter(has_text=archive)).to_have_count(1)
    assert restic_snapshots(repo, key), "restic finds no snapshot with the recovery key shown"

    # Recovered with the key written down (as a person copies it: lower case, spaces), after
    # a wrong one: the same location opens as another destination, the archive in it.
    found = f"{name}-found"
    page.get_by_role("button", name="Recover from a repository").click()
    recover = page.get_by_role("dialog", name="Recover from a repository")
    recover.get_by_label("Name", exact=True).fill(found)
    recover.get_by_label("Folder", exact=True).fill(str(repo))
    recover.get_by_label("Recovery key", exact=True).fill("AAAA-" * 11 + "AAAA")
    recover.get_by_role("button", name="Recover the repository").click()
    expect(recover.get_by_role("alert")).to_contain_text("The key does not open the repository")
    recover.get_by_label("Recovery key", exact=True).fill(key.lower().replace("-", " "))
    recover.get_by_role("button", name="Recover the repository").click()
    expect(recover).to_be_hidden()
    recovered = page.get_by_role("table", name=f"Archives on {found}")
    expect(recovered.get_by_role("row").filter(has_text=archive)).to_have_count(1)
