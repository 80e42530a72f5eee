"""The rough edges a new user met, each as the browser shows it: a save that deploys is
called a deploy; a channel, an identity provider or an S3 endpoint that cannot be used
says why in words; a rule offers the stacks there are; a viewer is told a page is not
for their role (no Retry that can only fail); the Containers page does not repeat on
every row what it lists; a page left ends its streams rather than cutting them. Real
built UI, real server, real Chromium."""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

import docker
import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.docker import TEST_LABEL
from tests.support.receivers import HttpReceiver
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import BUSYBOX, act

pytestmark = pytest.mark.browser

COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
"""


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_stack(server, name: str) -> str:
    folder = Path(server.env["STACKS_DIR"]) / name
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    return name


def test_save_and_deploy_is_followed_as_a_deploy(page, live_server, docker_cleanup):
    stack = make_stack(live_server, "e2e-deploy-word")
    docker_cleanup.compose_project(stack)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{stack}")
    page.get_by_role("form", name="compose.yaml").get_by_role(
        "button", name="Save and deploy"
    ).click()
    console = page.get_by_role("region", name=f"Deploy {stack}")
    expect(console.get_by_role("status")).to_have_text("deploy succeeded", timeout=60_000)


def test_what_cannot_be_reached_is_said_in_words_and_a_rule_offers_the_stacks(page, live_server):
    stack = make_stack(live_server, "e2e-rule-target")
    port = closed_port()
    sign_in(page, live_server.url)
    nav = page.get_by_role("navigation", name="Main")

    # A webhook to a port where nothing listens.
    nav.get_by_role("link", name="Notifications").click()
    page.get_by_role("button", name="Add a channel").click()
    dialog = page.get_by_role("dialog", name="Add a channel")
    dialog.get_by_role("combobox", name="Kind").select_option(label="Webhook")
    dialog.get_by_label("Name", exact=True).fill("e2e closed hook")
    dialog.get_by_label("URL", exact=True).fill(f"http://127.0.0.1:{port}/hook")
    dialog.get_by_role("button", name="Send test").click()
    said = dialog.get_by_role("status")
    expect(said).to_contain_text(
        f"Test failed: Cannot be reached: connection refused at 127.0.0.1:{port}: "
        "nothing listens there"
    )
    expect(said).not_to_contain_text("Errno")
    dialog.get_by_role("button", name="Cancel").click()

    # A rule names stacks there are, picked from a list.
    page.get_by_role("button", name="Add a rule").click()
    rule = page.get_by_role("dialog", name="Add a rule")
    stacks = rule.get_by_role("group", name="Stacks")
    expect(stacks.get_by_role("checkbox", name=stack, exact=True)).to_be_visible()
    rule.get_by_role("button", name="Cancel").click()

    # An identity provider at that port: Test says why, nothing is saved.
    nav.get_by_role("link", name="Settings").click()
    provider = page.get_by_role("form", name="Identity provider")
    provider.get_by_label("Issuer").fill(f"http://127.0.0.1:{port}")
    provider.get_by_role("button", name="Test", exact=True).click()
    expect(provider.get_by_role("alert")).to_contain_text(
        f"cannot be reached: connection refused at 127.0.0.1:{port}: nothing listens there"
    )


def test_an_s3_test_against_a_web_server_says_it_is_no_s3_service(page, live_server):
    with HttpReceiver() as web:
        web.respond(".*", 404, text="<html><body>Not Found</body></html>")
        sign_in(page, live_server.url)
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Destinations").click()
        page.get_by_role("button", name="Add a destination").click()
        dialog = page.get_by_role("dialog", name="Add a destination")
        dialog.get_by_role("combobox", name="Type").select_option("s3")
        dialog.get_by_label("Name", exact=True).fill("e2e not s3")
        dialog.get_by_label("Endpoint URL", exact=True).fill(web.url)
        dialog.get_by_label("Bucket", exact=True).fill("backups")
        dialog.get_by_label("Access key", exact=True).fill("key")
        dialog.get_by_label("Secret key", exact=True).fill("secret")
        dialog.get_by_role("button", name="Test", exact=True).click()
        said = dialog.get_by_role("alert")
        expect(said).to_contain_text(f"{web.url} does not answer as an S3 service")
        expect(said).not_to_contain_text("bucket does not exist")


def test_a_viewer_opening_backups_is_told_it_is_not_for_their_role(page, live_server):
    with httpx.Client(base_url=live_server.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        made = admin.post(
            "/api/users",
            json={"username": "e2e-edges-viewer", "password": USER_PASSWORD, "role": "viewer"},
        )
        assert made.status_code == 201, made.text
    sign_in(page, live_server.url, "e2e-edges-viewer", USER_PASSWORD)
    page.goto(f"{live_server.url}/backups")
    refused = page.get_by_role("alert")
    expect(refused).to_contain_text("Your role does not allow it")
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)


def test_the_containers_page_does_not_say_on_each_row_what_it_lists(
    page, live_server, docker_client, docker_run_id
):
    name = f"e2e-outside-{docker_run_id.rsplit('-', 1)[-1]}"
    container = docker_client.containers.run(
        BUSYBOX, ["sleep", "3600"], name=name, detach=True, labels={TEST_LABEL: docker_run_id}
    )
    try:
        sign_in(page, live_server.url)
        page.goto(f"{live_server.url}/containers")
        table = page.get_by_role("table", name="Containers outside stacks")
        expect(table.get_by_role("row").filter(has_text=name)).to_be_visible()
        expect(table).not_to_contain_text("not in a stack")
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


TALKING = """\
services:
  talk:
    image: stackyard-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do echo hello; sleep 1 & wait $$!; done"]
"""


def test_leaving_a_page_ends_its_streams_rather_than_cutting_them(
    page, live_server, docker_cleanup
):
    """The logs a stack's page follows are ended by the server when the page is left
    (the page asks), so the browser reports no failed request (net::ERR_ABORTED) for it."""
    stack = "e2e-streams-end"
    folder = Path(live_server.env["STACKS_DIR"]) / stack
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(TALKING)
    docker_cleanup.compose_project(stack)
    with httpx.Client(base_url=live_server.url, timeout=60) as api:
        api_sign_in(api, "admin", ADMIN_PASSWORD)
        assert act(api, stack, "start")["status"] == "succeeded"
    failed: list[tuple[str, str | None]] = []
    page.on("requestfailed", lambda request: failed.append((request.url, request.failure)))
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{stack}")
    logs = page.get_by_role("log").filter(has_text="hello")
    expect(logs.first).to_be_visible()

    with page.expect_event(
        "requestfinished", lambda request: f"/api/stacks/{stack}/logs" in request.url
    ):
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Stacks").click()
        page.get_by_role("heading", level=1, name="Stacks").wait_for()
    assert [url for url, _ in failed if "/logs" in url or "/events" in url] == [], failed
