"""Stacks from git in a real browser: an admin adds a repository (a real `git daemon` on
loopback) in Settings, makes a stack of one of its folders, sees the commit it runs; a
push waits for review (policy notify) until someone syncs, reads its diff and applies
it; the container then runs the new commit's compose file; the stack's files stay
read-only in the editor. Real built UI, real server, real engine, real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.test_layout import FITS, VIEWPORTS
from tests.git.conftest import app_compose
from tests.support.browser import sign_in
from tests.support.git_servers import GitDaemon, Work, git_daemon
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser

STACK = "e2e-git-web"
REPOSITORY = "e2e-stacks"


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[tuple[Work, GitDaemon]]:
    """A repository with the stack's folder at its first commit, served by `git daemon`."""
    root = tmp_path / "served"
    work = Work.create(tmp_path / "work", root / "stacks.git")
    work.write("apps/web/compose.yaml", app_compose("1"))
    work.write("README.md", "Stacks of the e2e test\n")
    work.commit("web: first version")
    work.push()
    with git_daemon(root) as daemon:
        yield work, daemon


def version_running(docker_client) -> str:
    """The VERSION in the environment of the stack's one running container ("" when none)."""
    found = docker_client.containers.list(filters={"label": f"com.docker.compose.project={STACK}"})
    if len(found) != 1:
        return ""
    env = dict(e.split("=", 1) for e in found[0].attrs["Config"]["Env"])
    return str(env.get("VERSION", ""))


def test_a_stack_from_git_is_made_reviewed_and_applied(
    page, shared_server, origin, docker_client, docker_cleanup
):
    work, daemon = origin
    url = shared_server.url
    docker_cleanup.compose_project(STACK)
    with httpx.Client(base_url=url, timeout=60) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        # The health gate made short (the one-service stack is healthy at once anyway).
        quick = admin.put("/api/stacks/update-policy", json={"health_timeout": 20, "settle": 2})
        assert quick.status_code == 204, quick.text

    sign_in(page, url)

    # Settings: the repository added, fetched only by hand (poll 0).
    page.goto(url + "/settings")
    section = page.get_by_role("region", name="Git repositories")
    section.get_by_role("button", name="Add a repository").click()
    form = page.get_by_role("form", name="Add a repository")
    form.get_by_label("Name", exact=True).fill(REPOSITORY)
    form.get_by_label("Repository address").fill(daemon.url_for("stacks.git"))
    form.get_by_label("Poll every (seconds)").fill("0")
    form.get_by_role("button", name="Add the repository").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    row = section.get_by_role("table", name="Git repositories").get_by_role("row", name=REPOSITORY)
    expect(row).to_contain_text(daemon.url_for("stacks.git"))
    expect(row).to_contain_text("Only by webhook or by hand")

    # A new stack of the folder apps/web: the page waits for its deploy, then opens it.
    page.goto(url + "/stacks")
    page.get_by_role("button", name="New stack").click()
    page.get_by_role("radio", name="From git").check()
    form = page.get_by_role("form", name="New stack from git")
    form.get_by_label("Name", exact=True).fill(STACK)
    # (By its role: a label's text holds the options' too.)
    form.get_by_role("combobox", name="Repository", exact=True).select_option(
        label=f"{REPOSITORY} (main)"
    )
    form.get_by_label("Folder in the repository").fill("apps/web")
    form.get_by_role("radio", name="Notify").check()
    form.get_by_role("button", name="Create and deploy").click()
    page.wait_for_url(f"{url}/stacks/{STACK}")
    page.get_by_role("heading", level=1, name=STACK).wait_for()

    card = page.get_by_role("region", name="From git")
    expect(card).to_contain_text(REPOSITORY)
    expect(card).to_contain_text("apps/web")
    expect(card.get_by_test_id("git-deployed")).to_contain_text("web: first version")
    expect(card.get_by_test_id("git-last-sync")).to_contain_text("deployed")
    assert version_running(docker_client) == "1"

    # Its files come from git: a banner says so over editors that cannot be typed in.
    files = page.get_by_role("region", name="Files")
    expect(files.get_by_role("note", name="Files from git")).to_contain_text(
        f"These files come from {REPOSITORY} (folder apps/web, main): change them in git, "
        "or allow local edits."
    )
    compose = files.get_by_role("textbox", name="compose.yaml")
    expect(compose).not_to_be_editable()
    expect(compose).to_have_value(app_compose("1"))
    expect(files.get_by_role("button", name="Save compose.yaml")).to_have_count(0)

    # A push that changes the folder waits for review (notify) once synced.
    work.write("apps/web/compose.yaml", app_compose("2"))
    work.commit("web: version 2")
    work.push()
    card.get_by_role("button", name="Sync now").click()
    expect(card.get_by_role("status").filter(has_text="Fetched commit")).to_contain_text(
        "this stack waits for review"
    )
    pending = card.get_by_role("group", name="Pending commit")
    expect(pending).to_contain_text("web: version 2")
    assert version_running(docker_client) == "1"

    # Its diff, the new line added, the old one removed.
    pending.get_by_role("button", name="Review").click()
    diff = pending.get_by_label("Diff of compose.yaml")
    expect(diff.locator(".diff-added")).to_contain_text('"VERSION": "2"')
    expect(diff.locator(".diff-removed")).to_contain_text('"VERSION": "1"')
    # On a phone as on a laptop, the card, its diff and its buttons fit the window.
    for size in VIEWPORTS.values():
        page.set_viewport_size(size)
        assert page.evaluate(FITS) == []

    # Applied: deployed through the gate; the container runs the new compose file.
    pending.get_by_role("button", name="Apply").click()
    expect(card.get_by_role("status").filter(has_text="deployed.")).to_be_visible()
    expect(card.get_by_test_id("git-deployed")).to_contain_text("web: version 2")
    expect(pending).to_have_count(0)
    wait_until(lambda: version_running(docker_client) == "2", what="the new commit running")

    # Still read-only, now with the new commit's file.
    expect(compose).to_have_value(app_compose("2"))
    expect(compose).not_to_be_editable()
