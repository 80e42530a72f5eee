"""What each role sees: a viewer reads stacks with no control that would change them; an
operator runs actions but edits nothing. Real built UI, real server, real Chromium."""

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser

STACK = "e2e-roles"
COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
"""


def add_user(url: str, username: str, role: str) -> None:
    with httpx.Client(base_url=url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        created = admin.post(
            "/api/users", json={"username": username, "password": USER_PASSWORD, "role": role}
        )
        assert created.status_code == 201, created.text


@pytest.fixture
def stack(live_server, docker_client, docker_cleanup) -> str:
    """A stopped stack on disk (never started: nothing to clean up in Docker)."""
    folder = Path(live_server.env["STACKS_DIR"]) / STACK
    if not folder.exists():
        folder.mkdir(parents=True)
        (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(STACK)
    return STACK


def open_stacks(page, url: str):
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Stacks").click()
    page.wait_for_url(url + "/stacks")
    table = page.get_by_role("table", name="Stacks")
    row = table.get_by_role("row").filter(has=page.get_by_role("link", name=STACK, exact=True))
    expect(row.get_by_test_id("stack-state")).to_have_text("Stopped")
    return row


def open_detail(page, url: str, row) -> None:
    row.get_by_role("link", name=STACK, exact=True).click()
    page.wait_for_url(f"{url}/stacks/{STACK}")
    page.get_by_role("heading", level=1, name=STACK).wait_for()
    expect(page.get_by_role("table", name="Services")).to_be_visible()


def test_a_viewer_sees_no_control_that_changes_anything(page, live_server, stack):
    add_user(live_server.url, "e2e-viewer", "viewer")
    sign_in(page, live_server.url, "e2e-viewer", USER_PASSWORD)

    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Stacks")).to_be_visible()
    expect(nav.get_by_role("link", name="Files")).to_have_count(0)

    row = open_stacks(page, live_server.url)
    expect(page.get_by_test_id("last-check")).to_be_visible()
    expect(row.get_by_role("group", name=f"Actions for {STACK}")).to_have_count(0)
    expect(row.get_by_role("button")).to_have_count(0)
    expect(page.get_by_role("button", name="Check now")).to_have_count(0)
    expect(page.get_by_role("button", name="New stack")).to_have_count(0)

    open_detail(page, live_server.url, row)
    expect(page.get_by_label("compose.yaml")).to_have_attribute("readonly", "")
    expect(page.get_by_text("The .env file is shown to admins only.")).to_be_visible()
    expect(page.get_by_role("form")).to_have_count(0)
    expect(page.get_by_role("checkbox", name="Auto-update")).to_have_count(0)
    expect(page.get_by_role("button", name="Check now")).to_have_count(0)
    expect(page.get_by_role("region", name="Delete stack")).to_have_count(0)
    # The only button on the page is the user menu's.
    expect(page.get_by_role("button")).to_have_text(["Sign out"])


def test_an_operator_runs_actions_but_edits_nothing(page, live_server, stack):
    add_user(live_server.url, "e2e-operator", "operator")
    sign_in(page, live_server.url, "e2e-operator", USER_PASSWORD)

    navigation = page.get_by_role("navigation", name="Main")
    expect(navigation.get_by_role("link", name="Files")).to_have_count(0)

    row = open_stacks(page, live_server.url)
    actions = row.get_by_role("group", name=f"Actions for {STACK}")
    expect(actions.get_by_role("button", name="Start", exact=True)).to_be_enabled()
    expect(page.get_by_role("button", name="Check now")).to_be_visible()
    expect(page.get_by_role("button", name="New stack")).to_have_count(0)

    open_detail(page, live_server.url, row)
    expect(page.get_by_role("group", name=f"Actions for {STACK}")).to_be_visible()
    expect(page.get_by_role("combobox", name="Mode", exact=True)).to_be_enabled()
    expect(page.get_by_label("compose.yaml")).to_have_attribute("readonly", "")
    expect(page.get_by_role("form", name="compose.yaml")).to_have_count(0)
    expect(page.get_by_text("The .env file is shown to admins only.")).to_be_visible()
    expect(page.get_by_role("button", name="Show secrets")).to_have_count(0)
    expect(page.get_by_role("region", name="Delete stack")).to_have_count(0)
