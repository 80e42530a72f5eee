"""A user starts a stack from the Stacks page and watches the deploy progress reach 100%."""

from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from tests.support.browser import sign_in

pytestmark = pytest.mark.browser

STACK = "e2e-web"
COMPOSE = """\
services:
  web:
    image: stackyard-test/busybox:1
"""


def test_start_a_stack_and_follow_its_progress(page, live_server, docker_client, docker_cleanup):
    folder = Path(live_server.env["STACKS_DIR"]) / STACK
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(STACK)

    sign_in(page, live_server.url)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Stacks").click()
    page.wait_for_url(live_server.url + "/stacks")

    table = page.get_by_role("table", name="Stacks")
    row = table.get_by_role("row").filter(has=page.get_by_role("link", name=STACK, exact=True))
    expect(row.get_by_test_id("stack-state")).to_have_text("Stopped")

    actions = row.get_by_role("group", name=f"Actions for {STACK}")
    actions.get_by_role("button", name="Start", exact=True).click()

    console = page.get_by_role("region", name=f"Deploy {STACK}")
    bar = console.get_by_role("progressbar", name="Deploy progress")
    expect(bar).to_have_attribute("aria-valuenow", "100", timeout=60_000)
    expect(console.get_by_role("status")).to_have_text("start succeeded")
    expect(console.get_by_role("log", name="Output")).to_contain_text(f"Container {STACK}-web-1")

    # The run's end refreshes the list.
    expect(row.get_by_test_id("stack-state")).to_have_text("Running")
    expect(row).to_contain_text("1 of 1 running")

    containers = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={STACK}"}
    )
    assert [c.status for c in containers] == ["running"]

    # The detail page shows the finished run and the running container.
    row.get_by_role("link", name=STACK, exact=True).click()
    page.wait_for_url(f"{live_server.url}/stacks/{STACK}")
    page.get_by_role("heading", level=1, name=STACK).wait_for()
    # The run succeeded: the console beside the editor shows the logs; its Deploy tab the run.
    page.get_by_role("region", name="Console").get_by_role("tab", name="Deploy").click()
    detail_console = page.get_by_role("region", name=f"Deploy {STACK}")
    expect(detail_console.get_by_role("progressbar", name="Deploy progress")).to_have_attribute(
        "aria-valuenow", "100"
    )
    expect(page.get_by_role("table", name="Services")).to_contain_text(f"{STACK}-web-1")
    expect(page.get_by_test_id("stack-state")).to_have_text("Running")


def test_a_docker_run_command_becomes_a_new_stack(page, live_server):
    """Pasted as users keep it (continued lines, quotes), converted, created: the stack's
    folder holds the compose file the command means."""
    sign_in(page, live_server.url)
    page.goto(live_server.url + "/stacks")
    page.get_by_role("button", name="New stack").click()
    form = page.get_by_role("form", name="New stack")
    form.get_by_text("From a docker run command").click()
    form.get_by_label("docker run command").fill(
        "docker run -d --rm --name e2e-from-run \\\n"
        "  -p 127.0.0.1:18081:80 -e 'GREETING=hello world' \\\n"
        "  stackyard-test/busybox:1 httpd -f -p 80"
    )
    form.get_by_role("button", name="Convert to compose").click()
    expect(form.get_by_label("Name", exact=True)).to_have_value("e2e-from-run")
    expect(form.get_by_role("list", name="Left out")).to_contain_text("--rm")
    expect(form.get_by_role("list", name="Left out")).to_contain_text(
        "--name: 'e2e-from-run' names the stack and its service"
    )
    form.get_by_role("button", name="Create stack").click()

    page.wait_for_url(live_server.url + "/stacks/e2e-from-run")
    written = yaml.safe_load(
        (Path(live_server.env["STACKS_DIR"]) / "e2e-from-run" / "compose.yaml").read_text()
    )
    assert written == {
        "services": {
            "e2e-from-run": {
                "image": "stackyard-test/busybox:1",
                "command": ["httpd", "-f", "-p", "80"],
                "ports": ["127.0.0.1:18081:80"],
                "environment": ["GREETING=hello world"],
            }
        }
    }
