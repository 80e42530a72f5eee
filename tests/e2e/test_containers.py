"""A stack's containers in a real browser: the log view (colours, search, pause), a shell in
a container (type, read, resize, exit), and the guard that keeps unsaved edits."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser

COMPOSE = """services:
  talk:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    command:
      - sh
      - -c
      - |
        trap 'exit 0' TERM
        i=0
        while true; do
          i=$$((i+1))
          printf '\\033[31mred-%s\\033[0m plain-%s\\n' $$i $$i
          echo "warn-$$i" >&2
          sleep 0.2 & wait $$!
        done
"""


@pytest.fixture
def talking(live_server, docker_cleanup) -> str:
    stack_id = f"e2e-ops-{uuid.uuid4().hex[:6]}"
    folder = Path(live_server.env["STACKS_DIR"]) / stack_id
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    subprocess.run(["docker", "compose", "up", "-d"], cwd=folder, check=True, capture_output=True)
    return stack_id


def test_the_log_view_colours_finds_and_pauses(page, live_server, talking):
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{talking}")
    card = page.get_by_role("region", name="Logs")
    view = card.get_by_role("log", name="Log lines")
    expect(view).to_contain_text("plain-3", timeout=20_000)
    red = view.locator(".ansi-red-fg").first
    expect(red).to_have_text("red-1")
    expect(red).to_have_css("color", "rgb(255, 107, 107)")  # drawn red, not as escape codes
    assert "\x1b" not in view.inner_text() and "[31m" not in view.inner_text()
    expect(view.locator(".log-stderr").first).to_contain_text("warn-")

    # Only the lines that hold the term (warn-2, and warn-20... on a slow machine).
    card.get_by_role("searchbox", name="Search").fill("warn-2")
    expect(view).to_contain_text("warn-2")
    expect(view.locator(".log-line").filter(has_not_text="warn-2")).to_have_count(0)
    card.get_by_role("searchbox", name="Search").fill("")

    card.get_by_role("button", name="Pause").click()
    expect(card.get_by_role("status")).to_contain_text("paused")
    frozen = view.locator(".log-line").count()
    expect(card.get_by_role("status")).to_contain_text("new lines waiting", timeout=10_000)
    assert view.locator(".log-line").count() == frozen
    card.get_by_role("button", name="Resume").click()
    expect(card.get_by_role("status")).not_to_contain_text("paused")
    expect(view.locator(".log-line")).not_to_have_count(frozen)  # the held lines, drawn


def size_in_terminal(page, mark: str) -> tuple[int, int]:
    """(rows, columns) as the program in the container sees its terminal."""
    page.keyboard.type(f'echo "{mark}=$(stty size)"\n')
    pattern = re.compile(rf"{re.escape(mark)}=(\d+) (\d+)")
    expect(page.locator(".xterm-rows")).to_contain_text(pattern, timeout=10_000)
    found = pattern.findall(page.locator(".xterm-rows").inner_text())
    return int(found[-1][0]), int(found[-1][1])


def test_a_shell_in_the_browser(page, live_server, talking):
    container = f"{talking}-talk-1"
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{talking}")
    page.get_by_role("link", name=f"Shell in {container}").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(container)
    expect(page.get_by_test_id("shell-state")).to_contain_text("Connected", timeout=20_000)

    page.locator(".xterm").click()
    page.keyboard.type("echo answer-$((6*7))\n")
    expect(page.locator(".xterm-rows")).to_contain_text("answer-42", timeout=10_000)

    # Ctrl-C reaches the program in the terminal: a long sleep is interrupted.
    page.keyboard.type("sleep 300; echo after-sleep\n")
    page.wait_for_timeout(300)
    page.keyboard.press("Control+C")
    page.keyboard.type("echo interrupted-$((2+3))\n")
    expect(page.locator(".xterm-rows")).to_contain_text("interrupted-5", timeout=10_000)

    # The terminal follows the window: a narrower window, fewer columns in the container.
    first_cols = size_in_terminal(page, "first")[1]
    page.set_viewport_size({"width": 700, "height": 500})
    deadline = time.monotonic() + 10
    while True:
        rows, cols = size_in_terminal(page, f"after-{time.monotonic_ns()}")
        if cols < first_cols or time.monotonic() > deadline:
            break
        page.wait_for_timeout(300)
    assert cols < first_cols and rows > 5

    page.keyboard.type("exit\n")
    expect(page.get_by_test_id("shell-state")).to_contain_text("Closed", timeout=10_000)

    with httpx.Client(base_url=live_server.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        actions = [(e["action"], e["target"]) for e in admin.get("/api/audit").json()["items"]]
    assert ("container.shell", f"{talking}/{container}") in actions


def test_no_shell_for_an_operator_nor_without_sign_in(page, live_server, talking):
    name = f"e2e-op-{uuid.uuid4().hex[:6]}"
    with httpx.Client(base_url=live_server.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        made = admin.post(
            "/api/users", json={"username": name, "password": USER_PASSWORD, "role": "operator"}
        )
        assert made.status_code == 201, made.text
    container = f"{talking}-talk-1"
    page.goto(f"{live_server.url}/stacks/{talking}/shell/{container}")
    page.wait_for_url("**/login**")  # not signed in: sent to sign-in first

    sign_in(page, live_server.url, name, USER_PASSWORD)
    page.goto(f"{live_server.url}/stacks/{talking}")
    expect(page.get_by_role("table", name="Services")).to_contain_text(container)
    expect(page.get_by_role("link", name=f"Shell in {container}")).to_have_count(0)
    page.goto(f"{live_server.url}/stacks/{talking}/shell/{container}")
    expect(page.get_by_text("Only admins may open a shell")).to_be_visible()


def test_unsaved_compose_edits_are_not_lost(page, live_server, talking):
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/stacks/{talking}")
    form = page.get_by_role("form", name="compose.yaml")
    editor = form.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# my unsaved note")

    dialogs: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    assert dialogs and "not saved" in dialogs[0]
    assert page.url.endswith(f"/stacks/{talking}")
    expect(editor).to_contain_text("# my unsaved note")
