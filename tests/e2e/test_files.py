"""The Files page against a real server: show-hidden persists, uploads ask before
overwriting, folder uploads report files done, folder downloads are valid zips."""

from __future__ import annotations

import base64
import shutil
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def test_folder(live_server) -> Iterator[tuple[str, Path]]:
    """A folder of its own in the shared server's stacks folder, removed afterwards."""
    name = f"e2e-files-{uuid.uuid4().hex[:8]}"
    folder = Path(live_server.env["STACKS_DIR"]) / name
    folder.mkdir(parents=True)
    yield name, folder
    shutil.rmtree(folder, ignore_errors=True)


def open_folder(page, url: str, name: str):
    page.goto(f"{url}/files?path={name}")
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    current = crumbs.get_by_role("link", name=name, exact=True)
    expect(current).to_have_attribute("aria-current", "page")
    return page.get_by_role("table", name="Files")


def test_show_hidden_survives_a_reload(page, live_server, test_folder):
    name, folder = test_folder
    (folder / ".hidden.txt").write_text("not listed by default\n")
    (folder / "plain.txt").write_text("listed\n")

    sign_in(page, live_server.url)
    table = open_folder(page, live_server.url, name)
    expect(table.get_by_role("link", name="plain.txt", exact=True)).to_be_visible()
    expect(table.get_by_role("link", name=".hidden.txt", exact=True)).to_have_count(0)

    toggle = page.get_by_role("checkbox", name="Show hidden")
    expect(toggle).not_to_be_checked()
    toggle.check()
    expect(table.get_by_role("link", name=".hidden.txt", exact=True)).to_be_visible()

    page.reload()
    expect(page.get_by_role("checkbox", name="Show hidden")).to_be_checked()
    table = page.get_by_role("table", name="Files")
    expect(table.get_by_role("link", name=".hidden.txt", exact=True)).to_be_visible()
    saved = page.evaluate(
        "() => [localStorage.getItem('stackyard.files.showHidden'),"
        " localStorage.getItem('svc.files.showHidden')]"
    )
    assert saved == ["true", "true"]


def test_uploading_an_existing_file_asks_then_overwrites(page, live_server, test_folder, tmp_path):
    name, folder = test_folder
    target = folder / "notes.txt"
    target.write_bytes(b"old contents\n")
    source = tmp_path / "notes.txt"
    source.write_bytes(b"new contents, uploaded from the browser\n")

    sign_in(page, live_server.url)
    table = open_folder(page, live_server.url, name)
    expect(table.get_by_role("link", name="notes.txt", exact=True)).to_be_visible()

    page.get_by_test_id("upload-files-input").set_input_files(str(source))
    dialog = page.get_by_role("alertdialog", name="notes.txt already exists")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Already exists")
    assert target.read_bytes() == b"old contents\n"  # nothing replaced before the user agrees

    dialog.get_by_role("button", name="Overwrite").click()
    upload = page.get_by_role("region", name="Upload")
    expect(upload.get_by_role("status")).to_have_text("Uploaded notes.txt")
    expect(dialog).to_be_hidden()
    assert target.read_bytes() == b"new contents, uploaded from the browser\n"


def test_folder_upload_reports_files_done_out_of_total(page, live_server, test_folder, tmp_path):
    name, folder = test_folder
    source = tmp_path / "site"
    files = {
        "index.html": b"<h1>hello</h1>\n",
        "css/app.css": b"body { color: red; }\n",
        "img/logo.bin": bytes(range(256)) * 1024,  # 256 KiB of binary data
    }
    for relative, data in files.items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    sign_in(page, live_server.url)
    open_folder(page, live_server.url, name)
    page.get_by_test_id("upload-folder-input").set_input_files(str(source))

    upload = page.get_by_role("region", name="Upload")
    expect(upload.get_by_test_id("upload-detail")).to_contain_text("3 of 3 files", timeout=30_000)
    expect(upload.get_by_role("status")).to_have_text("Uploaded 3 files")
    expect(upload.get_by_role("progressbar", name="Upload progress")).to_have_attribute(
        "aria-valuenow", "100"
    )
    for relative, data in files.items():
        assert (folder / "site" / relative).read_bytes() == data, relative
    # The listing shows the new folder.
    table = page.get_by_role("table", name="Files")
    expect(table.get_by_role("link", name="site", exact=True)).to_be_visible()


#: A save picker that writes into the page's origin-private file system, so the test can
#: read back what the streamed download wrote (headless Chromium has no picker dialog).
OPFS_PICKER = """
window.showSaveFilePicker = async ({ suggestedName }) => {
  const root = await navigator.storage.getDirectory();
  window.__picked = suggestedName;
  return root.getFileHandle(suggestedName, { create: true });
};
"""

READ_OPFS = """async (name) => {
  const root = await navigator.storage.getDirectory();
  const file = await (await root.getFileHandle(name)).getFile();
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}"""


def make_download_folder(folder: Path) -> None:
    (folder / "compose.yaml").write_text("services: {}\n")
    (folder / "conf").mkdir()
    (folder / "conf" / "app.ini").write_bytes(b"[app]\nname = demo\n" * 1000)
    (folder / "empty").mkdir()


def check_zip(saved: Path, name: str) -> None:
    with zipfile.ZipFile(saved) as archive:
        assert archive.testzip() is None
        names = set(archive.namelist())
        assert {f"{name}/compose.yaml", f"{name}/conf/app.ini", f"{name}/empty/"} <= names
        assert all(n.startswith(f"{name}/") for n in names)
        assert archive.read(f"{name}/conf/app.ini") == b"[app]\nname = demo\n" * 1000


def test_folder_download_streams_into_the_picked_file(page, live_server, test_folder, tmp_path):
    name, folder = test_folder
    make_download_folder(folder)
    page.add_init_script(OPFS_PICKER)

    sign_in(page, live_server.url)
    open_folder(page, live_server.url, name)
    page.get_by_role("button", name="Download folder").click()

    status = page.get_by_role("region", name="Downloads").get_by_role("status")
    expect(status).to_contain_text(f"{name}.zip: ", timeout=30_000)
    expect(status).to_contain_text("saved")
    assert page.evaluate("() => window.__picked") == f"{name}.zip"
    saved = tmp_path / "download.zip"
    saved.write_bytes(base64.b64decode(page.evaluate(READ_OPFS, f"{name}.zip")))
    check_zip(saved, name)


def test_folder_download_without_a_picker_is_a_browser_download(
    page, live_server, test_folder, tmp_path
):
    name, folder = test_folder
    make_download_folder(folder)
    page.add_init_script("window.showSaveFilePicker = undefined;")

    sign_in(page, live_server.url)
    open_folder(page, live_server.url, name)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download folder").click()
    download = info.value
    assert download.suggested_filename == f"{name}.zip"
    saved = tmp_path / "download.zip"
    download.save_as(saved)

    expect(page.get_by_role("region", name="Downloads").get_by_role("status")).to_contain_text(
        f"{name}.zip: handed to the browser"
    )
    check_zip(saved, name)


def test_a_narrow_screen_folds_the_sidebar_and_keeps_the_actions_in_view(
    page, live_server, test_folder
):
    """At 800 px the sidebar becomes a Menu button, and the Files row actions stay inside
    the window without scrolling sideways; the menu closes with Escape."""
    name, folder = test_folder
    (folder / "a-rather-long-file-name-for-a-narrow-window.yaml").write_text("x: 1\n")
    page.set_viewport_size({"width": 800, "height": 900})
    sign_in(page, live_server.url)
    table = open_folder(page, live_server.url, name)

    nav = page.get_by_role("navigation", name="Main")
    menu = page.get_by_role("button", name="Menu")
    expect(menu).to_be_visible()
    expect(nav).to_be_hidden()
    menu.click()
    expect(nav).to_be_visible()
    page.keyboard.press("Escape")
    expect(nav).to_be_hidden()
    expect(menu).to_be_focused()

    file_name = "a-rather-long-file-name-for-a-narrow-window.yaml"
    for action in ("Download", "Rename", "Delete"):
        button = table.get_by_role("button", name=f"{action} {file_name}")
        expect(button).to_be_visible()
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 800, action
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 800
