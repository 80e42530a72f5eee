"""Every page and every dialog, for every role, on a laptop and on a phone: nothing wider
than the screen, every button and dialog within reach, no console error, and nothing
shown to a role that the server then refuses. Real built UI, real server, real Chromium.

`STACKYARD_SCREENSHOTS=<folder>` keeps a screenshot of each page and dialog seen."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import FITS, open_page, sign_in
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, ServerProcess, start_server
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import wait_run

pytestmark = pytest.mark.browser

STACK = "e2e-layout-a-stack-with-a-long-name"
COMPOSE = """\
services:
  web-with-a-long-service-name:
    image: stackyard-test/busybox:1
    ports: ["127.0.0.1:18080:80"]
    volumes: [data:/data]
volumes:
  data:
"""
VIEWPORTS = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
ROLES = ("admin", "operator", "viewer")
STACK_PAGE = f"/stacks/{STACK}"
#: A stack that never ran anything: its page must not log an error either.
FRESH = "e2e-layout-fresh"
#: The buttons that open a dialog, by page, and the least role that has them: shown to
#: that role and those above it (the dialog must fit), to no one else.
OPENERS: list[tuple[str, str, str]] = [
    (STACK_PAGE, "Back up", "operator"),
    (STACK_PAGE, f"Delete stack {STACK}", "admin"),
    (STACK_PAGE, "Deploy from git", "admin"),
    ("/settings", "Add a repository", "admin"),
    ("/settings", "Webhook and keys", "admin"),
    ("/backups", "Restore", "admin"),
    ("/backups", "Push", "admin"),
    ("/backups", "Pull from a destination", "admin"),
    ("/backups", "Delete", "admin"),
    ("/destinations", "Add a destination", "admin"),
    ("/destinations", "New repository", "admin"),
    ("/destinations", "Recover from a repository", "admin"),
    ("/destinations", "Edit", "admin"),
    ("/destinations", "Delete", "admin"),
    ("/schedules", "Add a schedule", "admin"),
    ("/schedules", "Edit", "admin"),
    ("/schedules", "Delete", "admin"),
    ("/agents", "Add an agent", "admin"),
    ("/files", "Delete", "admin"),
]


@pytest.fixture(scope="session")
def world(tmp_path_factory, docker_client, sftp_server) -> Iterator[ServerProcess]:
    """A server of its own with what the pages show: a stack with a port and a volume, an
    archive of it, a destination, a schedule, a git repository, and a user of each role.
    Not the browser tests' shared server: the agents other modules add there are gone by
    now, and their pages rightly say so. Per session: a worker may run this module's tests
    between other modules'."""
    tmp_path = tmp_path_factory.mktemp("layout")
    for name in (STACK, FRESH):
        folder = tmp_path / "stacks" / name
        folder.mkdir(parents=True)
        (folder / "compose.yaml").write_text(COMPOSE)
    server = start_server(tmp_path)
    with httpx.Client(base_url=server.url, timeout=60) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        for role in ROLES[1:]:
            made = admin.post(
                "/api/users",
                json={"username": f"layout-{role}", "password": USER_PASSWORD, "role": role},
            )
            assert made.status_code == 201, made.text
        started = admin.post(f"/api/stacks/{STACK}/backups", json={})
        assert started.status_code == 202, started.text
        assert wait_run(admin, STACK)["status"] == "succeeded"
        destination = admin.post(
            "/api/destinations",
            json={
                "name": "an sftp box with a long name",
                "settings": {
                    "type": "sftp",
                    "host": sftp_server.host,
                    "port": sftp_server.port,
                    "username": sftp_server.user,
                    "folder": f"layout-{uuid.uuid4().hex[:8]}",
                },
                "secrets": {"password": sftp_server.password},
            },
        )
        assert destination.status_code == 201, destination.text
        tested = admin.post(f"/api/destinations/{destination.json()['id']}/test")
        assert tested.status_code == 200, tested.text  # its host key pinned
        schedule = admin.post(
            "/api/schedules",
            json={
                "name": "nightly with a long name",
                "cron": "daily",
                "destination_id": destination.json()["id"],
                "keep_last": 7,
            },
        )
        assert schedule.status_code == 201, schedule.text
        # An address nothing is asked of: fetched only by hand (poll 0), over HTTPS (no key).
        repository = admin.post(
            "/api/git/repositories",
            json={
                "name": "a git repository with a long name",
                "url": "https://git.example.invalid/ops/a-repository-with-a-long-name.git",
                "poll_seconds": 0,
            },
        )
        assert repository.status_code == 201, repository.text
    yield server
    server.stop()
    for volume in docker_client.volumes.list(filters={"name": STACK}):
        volume.remove(force=True)


def _screenshot(page, what: str) -> None:
    if folder := os.environ.get("STACKYARD_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _network_changed(text: str) -> bool:
    """A request Chromium dropped because an interface of the machine came or went (the
    Docker engine's, as other test processes start containers): the page's queries ask
    again, so it is the machine's, not the page's."""
    return "net::ERR_NETWORK_CHANGED" in text


@pytest.mark.parametrize("role", ROLES)
def test_every_page_and_dialog_fits_and_shows_only_what_works(browser, world, role):
    """Each page is loaded once and looked at in both windows (a resize lays it out
    again), each dialog opened in both."""
    page = open_page(browser, viewport=VIEWPORTS["laptop"])
    username = "admin" if role == "admin" else f"layout-{role}"
    sign_in(page, world.url, username, ADMIN_PASSWORD if role == "admin" else USER_PASSWORD)
    errors: list[str] = []  # from here on: the sign-in page's first question is a 401
    page.on(
        "console",
        lambda m: (
            errors.append(f"{m.text} ({m.location['url']})")
            if m.type == "error" and not _network_changed(m.text)
            else None
        ),
    )
    page.on("pageerror", lambda e: errors.append(str(e)))
    refused: list[str] = []
    page.on(
        "response",
        lambda r: refused.append(f"{r.request.method} {r.url}") if r.status == 403 else None,
    )

    wrong: list[str] = []

    def look(what: str) -> None:
        page.wait_for_load_state("networkidle")
        expect(page.locator("[aria-busy=true]")).to_have_count(0)
        _screenshot(page, f"{role}-{what}")
        wrong.extend(f"{what}: {line}" for line in page.evaluate(FITS))

    links = page.eval_on_selector_all(
        "nav[aria-label=Main] a", "links => links.map(link => link.getAttribute('href'))"
    )
    for path in [*links, STACK_PAGE, f"/stacks/{FRESH}"]:
        page.goto(world.url + path)
        page.get_by_role("heading", level=1).first.wait_for()
        for viewport, size in VIEWPORTS.items():
            page.set_viewport_size(size)
            look(f"{viewport} {path}")
            for where, opener, least in OPENERS:
                if where != path:
                    continue
                buttons = page.get_by_role("button", name=re.compile(f"^{re.escape(opener)}"))
                if ROLES.index(role) > ROLES.index(least):
                    expect(buttons).to_have_count(0)
                    continue
                buttons.first.click()
                dialog = page.get_by_role("dialog").or_(page.get_by_role("alertdialog"))
                dialog.first.wait_for()
                look(f"{viewport} {path} {opener}")
                page.keyboard.press("Escape")
                expect(dialog).to_have_count(0)
    page.context.close()

    assert not wrong, "\n".join(wrong)
    assert not errors, "\n".join(errors)
    assert not refused, "\n".join(refused)  # nothing offered that the server then refuses
    admin_pages = {"/files", "/destinations", "/schedules"}
    assert admin_pages <= set(links) if role == "admin" else not admin_pages & set(links)
    assert ("/backups" in links) == (role != "viewer")


def test_the_stack_workspace_on_a_wide_screen(browser, world):
    """The host's stacks beside the stack (switching without going back), the compose
    editor beside the console; on a phone, one column and no list."""
    other = "e2e-layout-other"
    (Path(world.env["STACKS_DIR"]) / other).mkdir(exist_ok=True)
    (Path(world.env["STACKS_DIR"]) / other / "compose.yaml").write_text(COMPOSE)
    page = open_page(browser, viewport={"width": 1600, "height": 1000})
    sign_in(page, world.url)
    page.goto(f"{world.url}{STACK_PAGE}")

    pane = page.get_by_role("navigation", name="Stacks of this host")
    expect(pane.get_by_role("link", name=re.compile(f"^{STACK}"))).to_have_attribute(
        "aria-current", "page"
    )
    console = page.get_by_role("region", name="Console")
    files = page.get_by_role("region", name="Files")
    expect(files.get_by_role("textbox", name="compose.yaml")).to_be_visible()
    left, right = console.bounding_box(), files.bounding_box()
    assert left and right and right["x"] >= left["x"] + left["width"]  # side by side
    assert right["y"] < left["y"] + left["height"]
    _screenshot(page, "admin-wide-workspace")

    pane.get_by_role("link", name=re.compile(f"^{other}")).click()
    page.wait_for_url(f"{world.url}/stacks/{other}")
    page.get_by_role("heading", level=1, name=other).wait_for()
    expect(pane.get_by_role("link", name=re.compile(f"^{other}"))).to_have_attribute(
        "aria-current", "page"
    )

    page.set_viewport_size(VIEWPORTS["phone"])
    expect(pane).to_be_hidden()
    console, files = (
        page.get_by_role("region", name="Console"),
        page.get_by_role("region", name="Files"),
    )
    assert (
        files.bounding_box()["y"] > console.bounding_box()["y"] + console.bounding_box()["height"]
    )
    page.context.close()
