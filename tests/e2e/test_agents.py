"""Agents in a real browser against a real server and a real `stackyard agent` over HTTPS:
added through the dialog with its certificate's fingerprint confirmed, listed with its
version, then chosen with the host switcher: its own stacks on the Stacks page, its own
stacks folder on the Files page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from stackyard import __version__
from tests.support.browser import sign_in
from tests.support.stacks import compose_text, service

pytestmark = [
    pytest.mark.browser,
    pytest.mark.direct_only("adding a direct agent in the browser: URL, token, fingerprint"),
]

AGENT = "e2e-remote"
STACK = "only-on-the-agent"


def test_add_an_https_agent_then_use_its_stacks_and_files(page, server, agent_processes):
    agent = agent_processes(name=AGENT)
    folder = agent.stacks_dir / STACK
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(compose_text(app=service()))
    (folder / "notes.txt").write_text("kept on the agent's host\n")
    assert agent.fingerprint, agent.server.log()
    nav = page.get_by_role("navigation", name="Main")

    # Add the agent: the test shows its version and the fingerprint it logged at start.
    sign_in(page, server.url)
    nav.get_by_role("link", name="Agents").click()
    page.get_by_role("button", name="Add an agent", exact=True).click()
    dialog = page.get_by_role("dialog", name="Add an agent", exact=True)
    dialog.get_by_label("Name", exact=True).fill(AGENT)
    dialog.get_by_label("URL", exact=True).fill(agent.url)
    dialog.get_by_label("Token", exact=True).fill(agent.token)
    save = dialog.get_by_role("button", name="Add the agent")
    expect(save).to_be_disabled()
    dialog.get_by_role("button", name="Test", exact=True).click()
    result = dialog.get_by_role("status")
    expect(result).to_contain_text("Test passed")
    expect(result).to_contain_text(f"Version {__version__}, compatible")
    expect(result).to_contain_text(agent.fingerprint)
    dialog.get_by_role("checkbox", name=re.compile("fingerprint the agent printed")).check()
    save.click()
    expect(dialog).to_be_hidden()

    table = page.get_by_role("table", name="Agents")
    row = table.get_by_role("row").filter(has_text=AGENT)
    expect(row.get_by_test_id("agent-status")).to_have_text("Online")
    expect(row).to_contain_text(f"{__version__} Compatible")
    expect(row).to_contain_text(f"Pinned: {agent.fingerprint}")

    # The Stacks page on the agent: a stack only its stacks folder holds.
    nav.get_by_role("link", name="Stacks").click()
    stacks = page.get_by_role("table", name="Stacks")
    expect(stacks.get_by_role("link", name=STACK, exact=True)).to_have_count(0)
    page.get_by_role("combobox", name="Host").select_option(label=AGENT)
    expect(page).to_have_url(re.compile(r"/stacks\?host=\d+$"))
    link = stacks.get_by_role("link", name=STACK, exact=True)
    expect(link).to_be_visible()
    expect(page.get_by_text(f"On agent {AGENT}")).to_be_visible()
    page.reload()  # the host is in the address
    expect(stacks.get_by_role("link", name=STACK, exact=True)).to_be_visible()

    # Files on the agent: its stacks folder, and the file only it has.
    nav.get_by_role("link", name="Files").click()
    page.get_by_role("combobox", name="Host").select_option(label=AGENT)
    files = page.get_by_role("table", name="Files")
    files.get_by_role("link", name=STACK, exact=True).click()
    expect(files.get_by_role("link", name="notes.txt", exact=True)).to_be_visible()
    expect(files.get_by_role("link", name="compose.yaml", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(rf"/files\?path={STACK}&host=\d+$"))

    # Ended at once: a stop waits up to 10 s for the central's idle keep-alive connection.
    agent.server.process.kill()
    agent.server.process.wait(10)
