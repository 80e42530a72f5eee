"""An agent that connects to us, in a real browser against a real server and a real
`stackyard agent --connect`: the admin adds it and sees its one-time token and command
once, the host runs exactly that command, and the Agents page shows it connected; its key
rotated, it is connected again with its new key; removed, it is gone for good."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import sign_in
from tests.support.processes import free_port, stop_process
from tests.support.service import (
    ADMIN_PASSWORD,
    STACKYARD_BIN,
    ServerProcess,
    service_env,
)
from tests.support.service import sign_in as api_sign_in
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.browser

AGENT = "e2e-behind-nat"
TITLE = "Add an agent that connects to us"
#: An SSH key's SHA-256 fingerprint as the list shows it.
KEY = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")


@pytest.fixture
def agent_host(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The agent processes the test starts on "its host" (a folder of its own on
    loopback), each stopped at the end, however the test ended."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        stop_process(process)


def run_on_the_host(folder: Path, command: str, started: list[subprocess.Popen[bytes]]) -> Path:
    """The command the page showed, run as shown (`stackyard` is this checkout's), on a
    free port of its own; its log's path."""
    words = shlex.split(command)
    assert words[:4] == ["stackyard", "agent", "--connect", words[3]], command
    folder.mkdir(parents=True)
    (folder / "stacks").mkdir()
    log_path = folder / "agent.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(STACKYARD_BIN), *words[1:], "--port", str(free_port())],
            env=service_env(folder, STACKYARD_HOST_NAME=AGENT),
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    started.append(process)
    return log_path


def test_an_agent_that_connects_is_enrolled_rotated_and_revoked(
    page: Page, server: ServerProcess, tmp_path: Path, agent_host: list[subprocess.Popen[bytes]]
) -> None:
    sign_in(page, server.url)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Agents").click()

    # The admin adds it by name and is shown its token, with the command, once.
    page.get_by_role("button", name=TITLE).click()
    dialog = page.get_by_role("dialog", name=TITLE)
    dialog.get_by_label("Name", exact=True).fill(AGENT)
    dialog.get_by_role("button", name="Make its token").click()
    command_box = dialog.get_by_test_id("enrol-command")
    expect(command_box).to_contain_text(f"stackyard agent --connect {server.url} --enrol ")
    token = dialog.get_by_test_id("enrol-token").inner_text().strip()
    command = command_box.inner_text().strip()
    assert command == f"stackyard agent --connect {server.url} --enrol {token}"
    expect(dialog.get_by_test_id("enrol-compose")).to_contain_text(f"--enrol, {token}]")
    expect(dialog).to_contain_text("its token is not shown again")
    expect(dialog.get_by_role("status")).to_contain_text("Waiting for its host to enrol")
    table = page.get_by_role("table", name="Agents")
    row = table.get_by_role("row").filter(has_text=AGENT)
    expect(row.get_by_test_id("agent-kind")).to_have_text("Connects to us")
    expect(row.get_by_test_id("agent-status")).to_have_text("Not enrolled yet")

    # Its host runs the command: the dialog, then the list, see it enrol and connect.
    log = run_on_the_host(tmp_path / "agent-host", command, agent_host)
    try:
        expect(dialog.get_by_role("status")).to_contain_text(f"{AGENT} enrolled and connected")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nThe agent's log:\n{log.read_text(errors='replace')}") from exc
    dialog.get_by_role("button", name="Close").click()  # used: nothing to warn of
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("alertdialog")).to_have_count(0)
    expect(row.get_by_test_id("agent-status")).to_have_text("Connected")
    expect(row.get_by_test_id("agent-status-note")).to_contain_text("since ")
    key = row.get_by_test_id("agent-key").inner_text().strip()
    assert KEY.match(key), key
    expect(row).not_to_contain_text(token)
    page.reload()  # shown once: never again
    expect(row.get_by_test_id("agent-status")).to_have_text("Connected")
    assert token not in page.content()

    # Its key rotated: it dials again with the new one, and is connected again.
    row.get_by_role("button", name=f"Rotate the key of {AGENT}").click()
    expect(row.get_by_test_id("agent-key")).not_to_have_text(key)
    expect(row.get_by_role("button", name=f"Rotate the key of {AGENT}")).to_have_text("Rotate key")
    expect(row).not_to_contain_text("Rotating its key")
    expect(row.get_by_test_id("agent-status")).to_have_text("Connected")
    new_key = row.get_by_test_id("agent-key").inner_text().strip()
    assert KEY.match(new_key) and new_key != key

    # Removed: revoked, said so before; its tunnel is cut and it cannot come back.
    failed = log.read_text(errors="replace").count("failed")
    row.get_by_role("button", name=f"Remove {AGENT}").click()
    confirm = page.get_by_role("alertdialog", name=f"Remove and revoke agent {AGENT}?")
    expect(confirm).to_contain_text("Its tunnel is cut at once and its key forgotten")
    confirm.get_by_role("button", name="Remove and revoke").click()
    expect(confirm).to_be_hidden()
    expect(row).to_have_count(0)
    expect(page.get_by_text(f"Agent {AGENT} removed and revoked.")).to_be_visible()
    # It dials again and is refused (its log says the tunnel failed), and stays gone.
    wait_until(
        lambda: log.read_text(errors="replace").count("failed") > failed,
        PATIENCE,
        "the revoked agent's dial refused",
    )
    with httpx.Client(base_url=server.url, timeout=60) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        assert admin.get("/api/agents").json() == []
