"""A stack's one state word, health included, as a user sees it in every place that shows
it: the stacks list, the stack's page, the side list beside it and the dashboard; and a
rolled-back update, said as such."""

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import act

pytestmark = pytest.mark.browser

STACK = "e2e-sick"
#: `web` fails its healthcheck within seconds; `slow` stays "starting" (its first check is
#: an hour away); both run.
COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
    healthcheck: {test: [CMD, "false"], interval: 1s, timeout: 1s, retries: 1}
  slow:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
    healthcheck: {test: [CMD, "true"], interval: 1h, start_period: 1h}
"""


def _colour(locator) -> str:
    return locator.evaluate("element => getComputedStyle(element).color")


def test_an_unhealthy_stack_is_unhealthy_everywhere_and_starting_is_no_alarm(
    page, live_server, docker_cleanup
):
    folder = Path(live_server.env["STACKS_DIR"]) / STACK
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(STACK)
    page.set_viewport_size({"width": 1600, "height": 1000})
    sign_in(page, live_server.url)
    page.goto(live_server.url + "/stacks")
    row = (
        page.get_by_role("table", name="Stacks")
        .get_by_role("row")
        .filter(has=page.get_by_role("link", name=STACK, exact=True))
    )
    row.get_by_role("group", name=f"Actions for {STACK}").get_by_role(
        "button", name="Start", exact=True
    ).click()

    # Both services run, and the list says the truth: unhealthy, in the alarm colour.
    state = row.get_by_test_id("stack-state")
    expect(state).to_have_text("Unhealthy")
    expect(row).to_contain_text("2 of 2 running, 1 unhealthy")
    assert "tone-bad" in (state.get_attribute("class") or "")

    row.get_by_role("link", name=STACK, exact=True).click()
    page.wait_for_url(f"{live_server.url}/stacks/{STACK}")
    expect(page.get_by_test_id("stack-state")).to_have_text("Unhealthy")
    side = page.get_by_role("navigation", name="Stacks of this host")
    expect(side.get_by_role("link", name=re.compile(rf"^{STACK} \(Unhealthy\)$"))).to_be_visible()

    # In the Services table, "starting" is not drawn in the colour of "unhealthy".
    services = page.get_by_role("table", name="Services")
    unhealthy = services.get_by_text("unhealthy", exact=True)
    starting = services.get_by_text("starting", exact=True)
    expect(unhealthy).to_be_visible()
    expect(starting).to_be_visible()
    assert _colour(starting) != _colour(unhealthy)

    page.goto(live_server.url + "/")
    legend = page.get_by_role("list", name="Stacks by state")
    expect(legend).to_contain_text(re.compile(r"Unhealthy: [1-9]"))


def test_a_rolled_back_update_is_said_with_when_and_offers_no_blue_update(
    page, live_server, docker_cleanup, registry, docker_client, images
):
    """A real update whose new image fails its health gate, rolled back by the service:
    the stack's state is "Rolled back", its Update button is no call to action, and the
    row says when the last update was rolled back."""
    stack = "e2e-rolled"
    repo = f"{registry.host}/e2e/{uuid.uuid4().hex[:8]}"
    registry.push(images.ref("good"), repo.split("/", 1)[1], "1")
    folder = Path(live_server.env["STACKS_DIR"]) / stack
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(f"services:\n  web:\n    image: {repo}:1\n")
    docker_cleanup.compose_project(stack)
    with httpx.Client(base_url=live_server.url, timeout=60) as api:
        api_sign_in(api, "admin", ADMIN_PASSWORD)
        quick = {"health_timeout": 30, "settle": 2}
        assert api.put(f"/api/stacks/{stack}/update-policy", json=quick).status_code == 204
        assert act(api, stack, "start")["status"] == "succeeded"
        # The next release is sick; this host still tags 1 as the good one it runs.
        local = docker_client.images.get(f"{repo}:1").id
        registry.push(images.ref("sick"), repo.split("/", 1)[1], "1")
        docker_client.api.tag(local, repo, "1")
        assert api.post("/api/stacks/updates/check").status_code == 200
        run = act(api, stack, "update")
        assert run["status"] == "failed" and run["rollback"] == "done", run["progress"]

    sign_in(page, live_server.url)
    page.goto(live_server.url + "/stacks")
    row = (
        page.get_by_role("table", name="Stacks")
        .get_by_role("row")
        .filter(has=page.get_by_role("link", name=stack, exact=True))
    )
    expect(row.get_by_test_id("stack-state")).to_have_text("Rolled back")
    update = row.get_by_role("group", name=f"Actions for {stack}").get_by_role(
        "button", name="Update", exact=True
    )
    expect(update).to_be_visible()
    expect(update).not_to_have_class(re.compile(r"\bprimary\b"))
    expect(update).to_have_attribute("title", re.compile(r"was rolled back: web is unhealthy"))
    expect(row.get_by_test_id("rolled-back-note")).to_have_text(
        re.compile(r"^Last update rolled back (just now|\d+ min ago)\.$")
    )
