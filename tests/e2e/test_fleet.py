"""The fleet dashboard in a real browser: an agent that was added and then stopped is the
first thing that needs attention, and each host has its card; when the fleet cannot be
read, the API's detail is shown with a Retry button that recovers."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import expect

from tests.agents.helpers import add_agent
from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.direct_only("a direct agent offline at once (a tunnel agent reconnects first)"),
]

AGENT = "e2e-gone"


def test_an_offline_agent_needs_attention_and_every_host_has_a_card(page, server, agent_processes):
    agent = agent_processes(name=AGENT)
    with httpx.Client(base_url=server.url, timeout=30) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        add_agent(admin, agent, AGENT)
        local_name = admin.get("/api/fleet/host").json()["name"]
    # Gone at once (a stop waits up to 10 s for the central's idle keep-alive connection).
    agent.server.process.kill()
    agent.server.process.wait(10)

    sign_in(page, server.url)
    attention = page.get_by_role("list", name="Needs attention")
    first = attention.get_by_role("listitem").first
    expect(first).to_contain_text("Critical")
    expect(first).to_contain_text(f"{AGENT} is offline")
    expect(first.get_by_role("link", name="See the agent")).to_have_attribute("href", "/agents")

    hosts = page.get_by_role("region", name="Hosts")
    gone = hosts.get_by_role("region", name=AGENT)
    expect(gone.get_by_test_id("host-status")).to_have_text("Offline")
    expect(gone).to_contain_text("Last seen")
    # Why, in words (never Python's "Connect call failed (...)" or "[Errno 111]").
    expect(gone).to_contain_text(
        f"is unreachable: connection refused at {agent.url.split('://')[1].rstrip('/')}"
    )
    expect(gone).not_to_contain_text("Connect call failed")
    local = hosts.get_by_role("region", name=local_name)
    expect(local.get_by_test_id("host-status")).to_have_text("Online")
    expect(local.get_by_role("progressbar", name="Memory")).to_be_visible()
    expect(page.get_by_role("region", name="Headline figures")).to_contain_text(
        "Hosts online1 of 2"
    )


def test_the_fleet_error_is_shown_with_retry(page, live_server):
    failing = {"on": True}
    detail = "The fleet payload could not be computed: RuntimeError: boom (fleet/dashboard.py:42)"

    def fleet(route):
        if failing["on"]:
            route.fulfill(
                status=500, content_type="application/json", body=json.dumps({"detail": detail})
            )
        else:
            route.continue_()

    page.route("**/api/dashboard/fleet", fleet)
    sign_in(page, live_server.url)
    banner = page.get_by_role("alert").filter(has_text="could not be computed")
    expect(banner).to_contain_text(detail, timeout=20_000)  # after the client's own retries
    expect(page.get_by_role("region", name="Hosts")).to_have_count(0)

    failing["on"] = False
    banner.get_by_role("button", name="Retry").click()
    expect(page.get_by_role("region", name="Hosts")).to_be_visible()
    expect(banner).to_have_count(0)
