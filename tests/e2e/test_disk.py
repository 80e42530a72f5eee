"""The Disk page in a real browser, against a Docker engine of the test's own (never the
shared engine of the run, whose images and volumes other tests need): what takes room and
what uses it, on a desktop and on a phone; a viewer reads it and is offered nothing to
remove; an admin previews a prune, removes exactly what it listed (the test's dangling
image, not the protected one kept beside it nor anything of the stack), removes a tagged
image from the table, and is told why the stack's volume cannot go while it is used.

`STACKYARD_SCREENSHOTS=<folder>` keeps a screenshot of each view checked for fit."""

from __future__ import annotations

import io
import os
import re
import tarfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker.errors
import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import FITS, open_page, sign_in
from tests.support.engines import Engine
from tests.support.service import (
    ADMIN_PASSWORD,
    USER_PASSWORD,
    ServerProcess,
    service_env,
    start_server,
)
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser

STACK = "e2e-disk-a-stack-with-a-rather-long-name"
COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    command: ["sh", "-c", "while true; do sleep 1; done"]
    volumes: ['data:/data']
volumes:
  data:
"""
VOLUME = f"{STACK}_data"
VIEWER = "e2e-disk-viewer"
JUNK = "e2e-disk-junk:1"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@dataclass
class DiskWorld:
    server: ServerProcess
    engine: Engine
    #: Untagged, of no stack: what a prune of dangling images takes.
    dangling: str
    #: Untagged too, but labelled stackyard.protect=true: kept, and said why.
    protected: str
    #: Tagged, of no stack: removed by hand from the images table.
    junk: str


def _layer(tmp_path: Path, size: int) -> Path:
    """A tar of one file of `size` random bytes: an image of its own, made offline."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("blob")
        info.size = size
        tar.addfile(info, io.BytesIO(os.urandom(size)))
    path = tmp_path / f"{uuid.uuid4().hex}.tar"
    path.write_bytes(out.getvalue())
    return path


@pytest.fixture(scope="module")
def world(shared_engines, tmp_path_factory) -> Iterator[DiskWorld]:
    """A server on an engine of its own with a running stack (its image and named volume),
    two dangling images (one protected) and a tagged one of no stack, and a viewer."""
    (engine,) = shared_engines(1)
    tmp_path = tmp_path_factory.mktemp("disk")
    folder = engine.stacks_dir / STACK
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    engine.compose(folder, "up", "-d")
    before = {i.id for i in engine.client.images.list(all=True)}
    engine.docker("import", str(_layer(tmp_path, 700_000)))
    engine.docker(
        "import", "--change", "LABEL stackyard.protect=true", str(_layer(tmp_path, 300_000))
    )
    engine.docker("import", str(_layer(tmp_path, 400_000)), JUNK)
    made = {i.id: i for i in engine.client.images.list(all=True) if i.id not in before}
    junk = engine.client.images.get(JUNK).id
    protected = next(i for i, image in made.items() if image.labels.get("stackyard.protect"))
    (dangling,) = set(made) - {junk, protected}

    env = service_env(tmp_path, DOCKER_HOST=engine.docker_host, STACKS_DIR=str(engine.stacks_dir))
    server = start_server(tmp_path, env=env)
    with httpx.Client(base_url=server.url, timeout=60) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        made_user = admin.post(
            "/api/users", json={"username": VIEWER, "password": USER_PASSWORD, "role": "viewer"}
        )
        assert made_user.status_code == 201, made_user.text
    yield DiskWorld(server, engine, dangling, protected, junk)
    server.stop()


def _short(image_id: str) -> str:
    return image_id.removeprefix("sha256:")[:12]


def _fits(page, what: str) -> list[str]:
    page.wait_for_load_state("networkidle")
    expect(page.locator("[aria-busy=true]")).to_have_count(0)
    if folder := os.environ.get("STACKYARD_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^a-z0-9]+", "-", f"disk {what}".lower()).strip("-")
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
    return [f"{what}: {line}" for line in page.evaluate(FITS)]


def _gone(engine: Engine, image_id: str) -> bool:
    try:
        engine.client.images.get(image_id)
    except docker.errors.ImageNotFound:
        return True
    return False


def test_a_viewer_reads_the_disk_on_a_desktop_and_a_phone(browser, world: DiskWorld):
    page = open_page(browser, viewport=VIEWPORTS["desktop"])
    sign_in(page, world.server.url, VIEWER, USER_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Disk").click()
    expect(page.get_by_role("heading", level=1, name="Disk")).to_be_visible()

    figures = page.get_by_role("region", name="Disk summary")
    expect(figures).to_contain_text("Reclaimable")
    expect(figures).to_contain_text(re.compile(r"[1-9]\d* images"))
    images = page.get_by_role("table", name="Images")
    expect(images).to_contain_text(_short(world.dangling))
    busybox = images.get_by_role("row").filter(has_text="stackyard-test/busybox:1").first
    expect(busybox.get_by_role("link", name=STACK)).to_have_attribute("href", f"/stacks/{STACK}")
    expect(busybox).to_contain_text(f"{STACK}-app-1")
    # Nothing to remove, prune or pull: the server would refuse it.
    expect(page.get_by_role("button", name=re.compile("^(Remove|Prune)"))).to_have_count(0)
    expect(page.get_by_role("form", name="Pull an image")).to_have_count(0)

    wrong: list[str] = []
    for size_name, size in VIEWPORTS.items():
        page.set_viewport_size(size)
        page.get_by_role("tab", name=re.compile("^Images")).click()
        wrong += _fits(page, f"{size_name} images")
        page.get_by_role("tab", name=re.compile("^Volumes")).click()
        volume = (
            page.get_by_role("table", name="Volumes").get_by_role("row").filter(has_text=VOLUME)
        )
        expect(volume.first).to_contain_text("protected")
        expect(page.get_by_role("button", name=re.compile("^Remove"))).to_have_count(0)
        wrong += _fits(page, f"{size_name} volumes")
    page.context.close()
    assert not wrong, "\n".join(wrong)


def test_an_admin_prunes_exactly_what_the_preview_lists_and_removes_by_hand(
    browser, world: DiskWorld
):
    page = open_page(browser, viewport=VIEWPORTS["desktop"])
    sign_in(page, world.server.url)
    page.goto(f"{world.server.url}/disk")
    expect(page.get_by_role("table", name="Images")).to_contain_text(_short(world.dangling))

    # Narrow options: the dangling images only.
    page.get_by_role("button", name="Prune…").click()
    dialog = page.get_by_role("dialog", name="Prune this host")
    expect(
        dialog.get_by_role("group", name="Images").get_by_role(
            "radio", name="Dangling (untagged) images"
        )
    ).to_be_checked()
    for option in (
        "Stopped containers of no stack",
        "Networks no container uses",
        "Build cache no build uses",
    ):
        dialog.get_by_role("checkbox", name=option).uncheck()
    volumes = dialog.get_by_role("group", name="Volumes")
    expect(volumes.get_by_role("radio", name="None")).to_be_checked()
    expect(dialog).to_contain_text("Never taken, whatever is chosen")
    dialog.get_by_role("button", name="Preview").click()

    items = dialog.get_by_role("table", name="To remove")
    rows = items.get_by_role("row").filter(has_not=page.get_by_role("columnheader"))
    expect(rows).to_have_count(1)  # the engine is the test's: its one unprotected dangling image
    expect(rows.first).to_contain_text(_short(world.dangling))
    expect(rows.first).to_contain_text(re.compile(r"\d+\.\d kB"))
    kept = dialog.get_by_role("list", name="Kept")
    expect(kept).to_contain_text(_short(world.protected))
    expect(kept).to_contain_text("labelled stackyard.protect=true")
    page.set_viewport_size(VIEWPORTS["phone"])
    wrong = _fits(page, "phone prune preview")
    page.set_viewport_size(VIEWPORTS["desktop"])
    assert not wrong, "\n".join(wrong)

    dialog.get_by_role("button", name="Remove this 1 object").click()
    expect(dialog.get_by_role("status")).to_contain_text("Removed 1 object")
    assert _gone(world.engine, world.dangling)
    assert not _gone(world.engine, world.protected)
    assert not _gone(world.engine, "stackyard-test/busybox:1")
    assert world.engine.client.volumes.get(VOLUME)
    dialog.get_by_role("button", name="Close").click()
    expect(page.get_by_role("list", name="Prunes of this host")).to_contain_text("1 object removed")
    expect(page.get_by_role("list", name="Prunes of this host")).to_contain_text("by admin")
    expect(page.get_by_role("table", name="Images")).not_to_contain_text(_short(world.dangling))

    # A tagged image of no stack, removed from the table.
    page.get_by_role("button", name=f"Remove image {JUNK}").click()
    confirm = page.get_by_role("alertdialog", name=f"Remove image {JUNK}?")
    confirm.get_by_role("button", name="Remove the image").click()
    expect(confirm).to_have_count(0)
    expect(page.get_by_role("table", name="Images")).not_to_contain_text(JUNK)
    assert _gone(world.engine, world.junk)

    # The stack's volume: its stack named, the name typed, and the engine's refusal shown.
    page.get_by_role("tab", name=re.compile("^Volumes")).click()
    page.get_by_role("button", name=f"Remove volume {VOLUME}").click()
    remove = page.get_by_role("dialog", name=f"Remove volume {VOLUME}?")
    expect(remove).to_contain_text(f"It belongs to the stack {STACK}")
    button = remove.get_by_role("button", name="Remove the volume")
    expect(button).to_be_disabled()
    remove.get_by_label(f"Type the volume's name, {VOLUME}, to confirm").fill(VOLUME)
    button.click()
    expect(remove.get_by_role("alert")).to_contain_text("Containers use this volume")
    remove.get_by_role("button", name="Cancel").click()
    assert world.engine.client.volumes.get(VOLUME)
    page.context.close()

    with httpx.Client(base_url=world.server.url, timeout=60) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        actions = {e["action"] for e in admin.get("/api/audit").json()["items"]}
    assert {"disk.prune", "disk.image.remove", "disk.volume.remove"} <= actions
