"""A compromised agent's answers opened in a real browser as an admin would open a link:
no script of the agent's runs in the central's origin and no request leaves the page
(refused pages show the central's error; data passes as sandboxed text)."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.agents.hostile import Answer, hostile_agent  # noqa: F401 (a fixture)
from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser


def payload(base: str) -> tuple[bytes, bytes]:
    """What a compromised agent would serve at `base` (its path on the central): a page
    that loads its script from the same origin (which the central's own CSP allows), and
    that script: it makes an admin behind the viewer's back, calls home through the proxy
    and leaves a mark."""
    page = (
        f"<html><body><script src='{base}/stacks/evil.js'></script>"
        "<script>document.title = 'ran'</script></body></html>"
    )
    script = (
        "document.title = 'ran'; console.log('agent script ran');"
        "fetch('/api/users', {method: 'POST', headers: {'content-type': 'application/json'},"
        "body: JSON.stringify({username: 'intruder', password: 'x'.repeat(20), role: 'admin'})});"
        f"fetch('{base}/stacks/beacon');"
    )
    return page.encode(), script.encode()


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [
        ("text/html", "routes never send"),  # refused: the central's 502, its detail
        ("image/svg+xml", "routes never send"),
        ("application/xhtml+xml", "routes never send"),
        ("text/plain", "<script>"),  # passed as data: shown as text, never run
        ("application/json", "<script>"),
    ],
    ids=["html", "svg", "xhtml", "plain", "json"],
)
def test_no_script_of_an_agent_runs_and_no_request_leaves(
    page,
    live_server,
    hostile_agent,  # noqa: F811
    content_type,
    shown,
):
    body = {"name": f"hostile-{uuid.uuid4().hex[:6]}", "url": hostile_agent.url}
    with httpx.Client(base_url=live_server.url, timeout=30) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        created = admin.post("/api/agents", json=body | {"token": hostile_agent.token})
        assert created.status_code == 201, created.text
        users_before = admin.get("/api/users").json()
        base = f"/api/agents/{created.json()['id']}"
        page_body, script = payload(base)
        hostile_agent.answers["stacks/looks-harmless"] = Answer(
            content_type=content_type, body=page_body
        )
        hostile_agent.answers["stacks/evil.js"] = Answer(
            content_type="application/javascript", body=script
        )

        sign_in(page, live_server.url)
        page.wait_for_load_state("networkidle")  # (the dashboard's own requests done)
        requests: list[str] = []
        console: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("console", lambda message: console.append(message.text))
        link = f"{live_server.url}{base}/stacks/looks-harmless"
        page.goto(link)
        page.wait_for_load_state("load")
        assert shown in page.locator("body").inner_text()

        assert page.title() != "ran"
        assert "agent script ran" not in console
        assert [url for url in requests if url != link and not url.endswith("/favicon.ico")] == []
        assert "beacon" not in [path for path, _ in hostile_agent.asked]
        assert admin.get("/api/users").json() == users_before
