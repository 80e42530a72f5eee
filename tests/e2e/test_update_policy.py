"""Update policies in a real browser: an admin sets a stack's policy on its page (the
service keeps it, refuses what does not hold in its own words, and the stack can follow
the host's default again); an operator may set one too; a viewer reads it only; an admin
sets the host's default in Settings. Real built UI, real server, real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser

COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
"""


def make_stack(server, name: str) -> str:
    """A stack on disk, never started (nothing in Docker to clean up)."""
    folder = Path(server.env["STACKS_DIR"]) / name
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    return name


@contextmanager
def admin_client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url) as client:
        api_sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def add_user(url: str, username: str, role: str) -> None:
    with admin_client(url) as admin:
        made = admin.post(
            "/api/users", json={"username": username, "password": USER_PASSWORD, "role": role}
        )
        assert made.status_code == 201, made.text


def update_of(url: str, stack: str) -> dict:
    """The stack's entry of `GET /api/stacks/updates`, as the service answers it."""
    with admin_client(url) as client:
        answer = client.get("/api/stacks/updates")
        assert answer.status_code == 200, answer.text
    (entry,) = [s for s in answer.json()["stacks"] if s["stack"] == stack]
    return entry


def open_stack(page, url: str, stack: str):
    page.goto(f"{url}/stacks/{stack}")
    page.get_by_role("heading", level=1, name=stack).wait_for()
    return page.get_by_role("region", name="Updates")


def test_an_admin_sets_a_stacks_policy_from_its_page(page, shared_server):
    url = shared_server.url
    stack = make_stack(shared_server, "e2e-policy-admin")
    sign_in(page, url)
    updates = open_stack(page, url, stack)

    source = updates.get_by_test_id("policy-source")
    expect(source).to_have_text("This stack follows the host's default policy.")
    form = updates.get_by_role("form", name="Update policy")
    expect(form.get_by_role("combobox", name="Mode", exact=True)).to_have_value("notify")
    expect(form.get_by_role("button", name="Use host default")).to_have_count(0)

    form.get_by_role("combobox", name="Mode", exact=True).select_option("auto")
    form.get_by_label("Settle time (seconds)").fill("5")
    form.get_by_role("button", name="Save policy").click()
    # (The form says two things: its next windows, which may still be read, and the save.)
    expect(form.get_by_role("status").filter(has_text="Policy saved.")).to_be_visible()
    expect(source).to_have_text("This stack has its own policy.")

    saved = update_of(url, stack)
    assert saved["policy_inherited"] is False
    assert saved["auto_update"] is True
    assert saved["policy"]["mode"] == "auto"
    assert saved["policy"]["settle"] == 5
    assert saved["policy"]["health_timeout"] == 120
    # One control, saved one way: the card says what the policy's Mode is; the next
    # windows of a maintenance window are shown before it is saved.
    expect(updates.get_by_test_id("auto-update-state")).to_have_text(
        "Auto-update is on (the update policy's Mode, below)."
    )
    expect(updates.get_by_role("checkbox", name="Auto-update")).to_have_count(0)
    form.get_by_label("Maintenance window (cron)").fill("daily")
    windows = form.get_by_role("list", name="Next maintenance windows")
    expect(windows.get_by_role("listitem")).to_have_count(5)
    expect(windows.get_by_role("listitem").first).to_contain_text("03:00 \u2013 05:00")
    form.get_by_label("Maintenance window (cron)").fill("")

    # A settle time no shorter than the timeout: the service's refusal, in its words;
    # nothing changes.
    form.get_by_label("Settle time (seconds)").fill("200")
    form.get_by_role("button", name="Save policy").click()
    expect(form.get_by_role("alert")).to_contain_text("must be shorter than health_timeout")
    expect(form.get_by_label("Settle time (seconds)")).to_have_value("200")
    assert update_of(url, stack)["policy"]["settle"] == 5

    # Kept: a new page shows it.
    updates = open_stack(page, url, stack)
    form = updates.get_by_role("form", name="Update policy")
    expect(form.get_by_role("combobox", name="Mode", exact=True)).to_have_value("auto")
    expect(form.get_by_label("Settle time (seconds)")).to_have_value("5")

    # Back to the host's default.
    form.get_by_role("button", name="Use host default").click()
    expect(updates.get_by_test_id("policy-source")).to_have_text(
        "This stack follows the host's default policy."
    )
    with admin_client(url) as client:
        default = client.get("/api/stacks/update-policy").json()
    expect(form.get_by_role("combobox", name="Mode", exact=True)).to_have_value(default["mode"])
    expect(form.get_by_label("Settle time (seconds)")).to_have_value(str(default["settle"]))
    inherited = update_of(url, stack)
    assert inherited["policy_inherited"] is True
    assert inherited["policy"] == default


def test_an_operator_sets_a_policy_a_viewer_only_reads_it(page, shared_server):
    url = shared_server.url
    stack = make_stack(shared_server, "e2e-policy-roles")
    add_user(url, "e2e-policy-operator", "operator")
    add_user(url, "e2e-policy-viewer", "viewer")

    sign_in(page, url, "e2e-policy-operator", USER_PASSWORD)
    form = open_stack(page, url, stack).get_by_role("form", name="Update policy")
    form.get_by_role("combobox", name="Mode", exact=True).select_option("auto")
    form.get_by_role("combobox", name="What counts as an update").select_option("patch")
    form.get_by_label("Cooldown (hours)").fill("48")
    form.get_by_label("Maintenance window (cron)").fill("0 3 * * *")
    form.get_by_label("Time zone").fill("Europe/Berlin")
    form.get_by_role("button", name="Save policy").click()
    expect(form.get_by_role("status").filter(has_text="Policy saved.")).to_be_visible()
    policy = update_of(url, stack)["policy"]
    assert (policy["mode"], policy["track"], policy["cooldown_hours"]) == ("auto", "patch", 48)
    assert (policy["window"], policy["timezone"]) == ("0 3 * * *", "Europe/Berlin")
    page.context.clear_cookies()  # signed out: the viewer signs in afresh

    sign_in(page, url, "e2e-policy-viewer", USER_PASSWORD)
    updates = open_stack(page, url, stack)
    expect(updates.get_by_test_id("policy-source")).to_have_text("This stack has its own policy.")
    expect(updates.get_by_text("Auto: applied, health-gated")).to_be_visible()
    expect(updates.get_by_text("48 h after a new image appears")).to_be_visible()
    expect(updates).to_contain_text("0 3 * * * for 2 h (Europe/Berlin)")
    expect(page.get_by_role("form")).to_have_count(0)
    expect(page.get_by_role("combobox", name="Mode", exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Save policy")).to_have_count(0)
    expect(page.get_by_role("button", name="Use host default")).to_have_count(0)

    # The server refuses a viewer too: the page hides only what would be refused.
    with httpx.Client(base_url=url) as viewer:
        api_sign_in(viewer, "e2e-policy-viewer", USER_PASSWORD)
        refused = viewer.put(f"/api/stacks/{stack}/update-policy", json=policy | {"mode": "off"})
        assert refused.status_code == 403, refused.text
    assert update_of(url, stack)["policy"]["mode"] == "auto"


def test_an_admin_sets_the_default_policy_in_settings(page, shared_server):
    url = shared_server.url
    stack = make_stack(shared_server, "e2e-policy-default")
    sign_in(page, url)
    page.goto(url + "/settings")
    region = page.get_by_role("region", name="Default update policy")
    expect(region).to_contain_text("every stack on this host")
    form = region.get_by_role("form", name="Default update policy")

    form.get_by_label("Health gate timeout (seconds)").fill("300")
    form.get_by_label("Settle time (seconds)").fill("60")
    form.get_by_label("Pre-releases count").check()
    form.get_by_role("combobox", name="What counts as an update").select_option("minor")
    form.get_by_label("Maintenance window (cron)").fill("daily")
    form.get_by_label("Window length (minutes)").fill("90")
    form.get_by_role("button", name="Save default policy").click()
    expect(form.get_by_role("status").filter(has_text="Default policy saved.")).to_be_visible()
    # The service keeps the window as a cron expression; the form shows it so.
    with admin_client(url) as client:
        default = client.get("/api/stacks/update-policy").json()
    assert default["health_timeout"] == 300
    assert default["settle"] == 60
    assert default["prereleases"] is True
    assert default["track"] == "minor"
    assert default["window_minutes"] == 90
    assert default["window"]
    expect(form.get_by_label("Maintenance window (cron)")).to_have_value(default["window"])

    # A stack without a policy of its own follows it.
    entry = update_of(url, stack)
    assert entry["policy_inherited"] is True
    assert entry["policy"] == default

    # A refusal is shown in the service's words, and nothing changes.
    form.get_by_label("Time zone").fill("Mars/Olympus_Mons")
    form.get_by_role("button", name="Save default policy").click()
    expect(form.get_by_role("alert")).to_contain_text("Mars/Olympus_Mons")
    with admin_client(url) as client:
        assert client.get("/api/stacks/update-policy").json() == default


def test_the_default_policy_is_for_admins_only(page, shared_server):
    url = shared_server.url
    add_user(url, "e2e-policy-op2", "operator")
    sign_in(page, url, "e2e-policy-op2", USER_PASSWORD)
    page.goto(url + "/settings")
    expect(page.get_by_role("region", name="API tokens")).to_be_visible()
    expect(page.get_by_role("region", name="Default update policy")).to_have_count(0)
    with httpx.Client(base_url=url) as operator:
        api_sign_in(operator, "e2e-policy-op2", USER_PASSWORD)
        current = operator.get("/api/stacks/update-policy")
        assert current.status_code == 200, current.text
        refused = operator.put("/api/stacks/update-policy", json=current.json())
        assert refused.status_code == 403, refused.text
