"""Deleting a stack that has run, from its page: the browser ends on the Stacks page with
the success message, and nothing asks for the deleted stack after."""

from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in

pytestmark = pytest.mark.browser

COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
"""


def test_deleting_a_stack_that_ran_ends_on_the_stacks_page_and_asks_for_it_no_more(
    page, live_server, docker_cleanup
):
    """(It ended on a red "Stack ... does not exist" every time, polled every 5 s.)"""
    stack = "e2e-gone"
    folder = Path(live_server.env["STACKS_DIR"]) / stack
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack)
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{stack}")
    expect(page.get_by_test_id("stack-state")).to_have_text("Stopped")  # (the page loaded)
    page.get_by_role("group", name=f"Actions for {stack}").get_by_role(
        "button", name="Start", exact=True
    ).click()
    expect(page.get_by_test_id("stack-state")).to_have_text("Running")

    # In the order the browser did them: each request for the stack, and the answer to
    # the deletion.
    seen: list[str] = []
    mine = f"/api/stacks/{stack}"
    page.on("request", lambda r: seen.append(r.url) if mine in r.url else None)
    page.on(
        "response",
        lambda r: (
            seen.append("deleted") if r.request.method == "DELETE" and mine in r.url else None
        ),
    )
    page.get_by_role("button", name=f"Delete stack {stack}").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label(f"Type the stack's name, {stack}, to confirm").fill(stack)
    dialog.get_by_role("button", name="Delete stack").click()

    page.wait_for_url(f"{live_server.url}/stacks")
    expect(page.get_by_role("status").filter(has_text=f"Stack {stack} deleted")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)  # no red "does not exist"
    # Two polls of the list later (10 s of the page's life), nothing was asked for the
    # stack since it was deleted.
    for _ in range(2):
        page.wait_for_event("request", lambda request: urlparse(request.url).path == "/api/stacks")
    assert "deleted" in seen
    assert seen[seen.index("deleted") + 1 :] == []
    expect(page.get_by_role("alert")).to_have_count(0)
