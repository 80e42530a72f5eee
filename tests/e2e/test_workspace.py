"""The stack page as a workspace at laptop sizes, and the data pages that must hide nothing,
measured as a user's walk through the UI measured them (issue 38): where the editor and the
console are at 1024, 1280, 1440 and 1600 px, where "Save and deploy" shows its output,
whether any table cell is covered, clipped or out of reach, how wide a log message is on a
phone, what the resource charts say, and the one date format. Real built UI, real server,
real containers, real Chromium."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import open_page, sign_in
from tests.support.processes import free_port
from tests.support.service import ADMIN_PASSWORD, ServerProcess, start_server
from tests.support.service import sign_in as api_sign_in
from tests.support.stacks import wait_run

pytestmark = pytest.mark.browser

#: Each test process has stacks of its own (compose projects are the engine's, and the
#: module's server is made again in each process that runs some of its tests).
RUN = uuid.uuid4().hex[:4]
#: Long names, as compose projects have them: they are what pushed columns out of reach.
STACK = f"e2e-ws-{RUN}-a-stack-with-a-long-name"
SERVICE = "web-with-a-long-service-name"
#: A stack that runs nothing until "Save and deploy" starts it.
DEPLOYED = f"e2e-ws-{RUN}-deployed"
COMPOSE = """\
services:
  {service}:
    image: stackyard-test/busybox:1
    command:
      - sh
      - -c
      - |
        trap 'exit 0' TERM
        while true; do
          echo "GET /index.html 200 a request line long enough to need a phone's whole width"
          sleep 1 & wait $$!
        done
    ports: ["127.0.0.1:{port}:80"]
    volumes: [data:/data]
  db:
    image: stackyard-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do echo ready; sleep 2 & wait $$!; done"]
volumes:
  data:
"""
SMALL = """\
services:
  app:
    image: stackyard-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]
"""
LAPTOPS = [(1024, 768), (1280, 800), (1440, 900), (1600, 1000)]
PHONE = {"width": 390, "height": 844}

#: What is wrong with the table named `label` as drawn: two cells of a row whose boxes
#: overlap (a sticky cell over another), a text outside the table's box when that box does
#: not scroll with a scroll bar one can see, a text under something else at its place, a
#: text cut by its own box, a port broken over two lines. Each row is scrolled into view to
#: be looked at.
TABLE_WRONGS = """
(label) => {
  const table = document.querySelector(`table[aria-label="${label}"]`);
  if (!table) return [`no table "${label}"`];
  const wrap = table.closest(".table-wrap");
  const wrong = [];
  const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
  const bar = wrap.offsetHeight - wrap.clientHeight;
  if (scrolls && bar <= 0) wrong.push(`${label}: scrolls sideways, with no scroll bar`);
  const say = (el) => (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 50);
  for (const row of table.rows) {
    row.scrollIntoView({ block: "center" });
    const cells = Array.from(row.cells).filter((c) => c.getBoundingClientRect().width > 0);
    for (let i = 0; i < cells.length; i++) {
      for (let j = i + 1; j < cells.length; j++) {
        const a = cells[i].getBoundingClientRect();
        const b = cells[j].getBoundingClientRect();
        const across = a.left < b.right - 1 && b.left < a.right - 1;
        if (across && a.top < b.bottom - 1 && b.top < a.bottom - 1)
          wrong.push(`${label}: "${say(cells[i])}" and "${say(cells[j])}" overlap`);
      }
    }
    const box = wrap.getBoundingClientRect();
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || el.closest(".visually-hidden")) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        if (rect.width < 1) continue;
        const inside = rect.left >= box.left - 1 && rect.right <= box.right + 1;
        if (!inside) {
          if (!(scrolls && bar > 0)) wrong.push(`${label}: "${say(el)}" outside the table's box`);
          continue;
        }
        const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
        const hit = document.elementFromPoint(x, y);
        const cell = el.closest("td, th");
        if (!hit || !(cell.contains(hit) || hit.contains(el))) {
          const over = hit ? `${hit.tagName}.${hit.className}` : "nothing";
          wrong.push(`${label}: "${say(el)}" under ${over}`);
        }
      }
    }
    for (const el of row.querySelectorAll("*")) {
      if (el.closest(".visually-hidden")) continue; // for screen readers: drawn in one pixel
      const style = getComputedStyle(el);
      const clips = style.overflowX === "hidden" || style.overflowX === "clip";
      if (clips && el.scrollWidth > el.clientWidth + 1)
        wrong.push(`${label}: "${say(el)}" cut by its box`);
    }
    for (const port of row.querySelectorAll("ul.ports code"))
      if (port.getClientRects().length > 1)
        wrong.push(`${label}: port "${say(port)}" broken over lines`);
  }
  return wrong;
}
"""


def _compose_down(folder: Path) -> None:
    subprocess.run(
        ["docker", "compose", "down", "--volumes", "--remove-orphans", "--timeout", "1"],
        cwd=folder,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def yard(tmp_path_factory) -> Iterator[ServerProcess]:
    """A server of its own with a running stack (two services, a published port, a
    volume, logs) backed up once, and a stack that runs nothing yet."""
    tmp_path = tmp_path_factory.mktemp("workspace")
    folders = {STACK: tmp_path / "stacks" / STACK, DEPLOYED: tmp_path / "stacks" / DEPLOYED}
    for folder in folders.values():
        folder.mkdir(parents=True)
    (folders[STACK] / "compose.yaml").write_text(COMPOSE.format(service=SERVICE, port=free_port()))
    (folders[DEPLOYED] / "compose.yaml").write_text(SMALL)
    server = start_server(tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as admin:
            api_sign_in(admin, "admin", ADMIN_PASSWORD)
            assert admin.post(f"/api/stacks/{STACK}/actions/start").status_code == 202
            assert wait_run(admin, STACK)["status"] == "succeeded"
            assert admin.post(f"/api/stacks/{STACK}/backups", json={}).status_code == 202
            assert wait_run(admin, STACK)["status"] == "succeeded"
        yield server
    finally:
        server.stop()
        for folder in folders.values():
            _compose_down(folder)


@pytest.fixture
def admin_page(browser, yard) -> Iterator:
    page = open_page(browser, viewport={"width": 1280, "height": 800})
    sign_in(page, yard.url)
    yield page
    page.context.close()


def _box(locator) -> dict:
    box = locator.bounding_box()
    assert box, f"{locator} is not drawn"
    return box


def test_the_editor_beside_the_console_with_the_stacks_at_every_laptop_width(admin_page, yard):
    """From 1024 px the host's stacks, the console and the compose editor are in the
    window together, the editor beside the console; on a phone one column."""
    page = admin_page
    page.goto(f"{yard.url}/stacks/{STACK}")
    files = page.get_by_role("region", name="Files")
    expect(files.locator("[data-editor=codemirror]").first).to_be_visible()
    for width, height in LAPTOPS:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("window.scrollTo(0, 0)")
        pane = _box(page.get_by_role("navigation", name="Stacks of this host"))
        console = _box(page.get_by_role("region", name="Console"))
        editor = _box(files.locator(".cm-editor").first)
        at = f"at {width}x{height}: console {console}, editor {editor}"
        assert pane["x"] >= 0 and pane["y"] < height, f"{at}: the stacks' list {pane}"
        for box in (console, editor):
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, at
            # In the window, with room to read: its top and 200 px of it.
            assert box["y"] >= 0 and box["y"] + 200 <= height, at
        assert console["x"] + console["width"] <= editor["x"], f"{at}: not side by side"
        assert editor["y"] < console["y"] + console["height"], f"{at}: not side by side"
        assert console["y"] < editor["y"] + editor["height"], f"{at}: not side by side"
        assert editor["width"] >= 260, f"{at}: the editor is too narrow to write in"

    page.set_viewport_size(PHONE)
    expect(page.get_by_role("navigation", name="Stacks of this host")).to_be_hidden()
    console = _box(page.get_by_role("region", name="Console"))
    assert _box(files)["y"] > console["y"] + console["height"]  # one column: files below


def test_save_and_deploy_shows_the_deploy_beside_the_editor(admin_page, yard, docker_client):
    """The file saved, the deploy's output comes up in the console beside the editor, in
    view, and the editor's message says what became of it."""
    page = admin_page
    page.goto(f"{yard.url}/stacks/{DEPLOYED}")
    form = page.get_by_role("form", name="compose.yaml")
    editor = form.get_by_role("textbox", name="compose.yaml")
    expect(form.locator("[data-editor=codemirror]")).to_be_visible()
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# deployed from the editor\n")
    form.get_by_role("button", name="Save and deploy").click()

    console = page.get_by_role("region", name="Console")
    expect(console.get_by_role("tab", name="Deploy")).to_have_attribute("aria-selected", "true")
    output = console.get_by_role("region", name=f"Deploy {DEPLOYED}").get_by_role(
        "log", name="Output"
    )
    expect(output).to_contain_text(f"Container {DEPLOYED}-app-1")
    expect(form.get_by_role("status")).to_have_text(
        "compose.yaml saved and deployed: compose up succeeded."
    )
    shown, beside = _box(output), _box(form.locator(".cm-editor"))
    assert shown["y"] >= 0 and shown["y"] + shown["height"] <= 800, shown  # in view
    assert shown["x"] + shown["width"] <= beside["x"], (shown, beside)  # beside the editor
    assert (
        "# deployed from the editor"
        in (Path(yard.env["STACKS_DIR"]) / DEPLOYED / "compose.yaml").read_text()
    )
    containers = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={DEPLOYED}"}
    )
    assert [c.status for c in containers] == ["running"]


@pytest.mark.parametrize("width", [1280, 1600])
def test_no_table_hides_a_value(admin_page, yard, width):
    """Services, resource use, image updates and backups: every value in reach, none under
    another cell, none cut, no port broken at the hyphen of its arrow."""
    page = admin_page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{yard.url}/stacks/{STACK}")
    for name in ("Services", "Resource use", "Image updates"):
        expect(page.get_by_role("table", name=name)).to_be_visible()
    expect(page.get_by_role("table", name="Services")).to_contain_text("->80/tcp")
    wrong = [
        line
        for name in ("Services", "Resource use", "Image updates")
        for line in page.evaluate(TABLE_WRONGS, name)
    ]
    page.goto(f"{yard.url}/backups")
    expect(page.get_by_role("table", name="Archives")).to_contain_text(STACK)
    wrong += page.evaluate(TABLE_WRONGS, "Archives")
    assert not wrong, "\n".join(wrong)


def test_a_log_message_has_the_phone_s_width(browser, yard):
    """On a phone the time and the container go above the message, which gets the log's
    whole width (it had 52 px beside them, a word a line)."""
    page = open_page(browser, viewport=PHONE)
    sign_in(page, yard.url)
    page.goto(f"{yard.url}/stacks/{STACK}")
    console = page.get_by_role("region", name="Console")
    console.get_by_role("tab", name="Logs").click()
    view = console.get_by_role("log", name="Log lines")
    message = view.locator(".log-text", has_text="a request line long enough").last
    expect(message).to_be_visible()
    width = view.evaluate("v => v.clientWidth - parseFloat(getComputedStyle(v).paddingLeft) * 2")
    line_height = message.evaluate("m => parseFloat(getComputedStyle(m).lineHeight)")
    box = _box(message)
    assert box["width"] >= 0.9 * width, (box, width)
    assert box["height"] <= 4 * line_height, box  # a few lines, not a word a line
    page.context.close()


def test_resource_charts_have_axes_times_values_and_the_peak(admin_page, yard):
    """Each container's CPU and memory drawn by a chart library, with the figure now and
    its peak and time in words, and the value under the cursor read out."""
    page = admin_page
    page.goto(f"{yard.url}/stacks/{STACK}")
    chart = page.locator(".time-chart", has_text=f"CPU of {STACK}-db-1").first
    # Two samples 10 s apart are needed for a line: the history starts when someone looks.
    expect(chart.locator(".time-chart-plot[data-chart=ready] canvas").first).to_be_visible()
    expect(chart.locator("figcaption")).to_have_text(
        re.compile(r"^CPU of .+: now \d+\.\d %, peak \d+\.\d % at \d\d:\d\d:\d\d$")
    )
    canvas = chart.locator(".time-chart-plot canvas").first
    canvas.scroll_into_view_if_needed()
    box = _box(canvas)
    assert box["width"] >= 250 and box["height"] >= 150, box
    plot = _box(chart.locator(".u-over"))  # the plot within its axes
    page.mouse.move(plot["x"] + plot["width"] * 0.9, plot["y"] + plot["height"] / 2, steps=5)
    values = chart.locator(".u-legend .u-value")
    expect(values.nth(0)).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    expect(values.nth(1)).to_have_text(re.compile(r"^\d+\.\d %$"))
    memory = page.locator(".time-chart", has_text=f"Memory of {STACK}-db-1").first
    expect(memory.locator("figcaption")).to_have_text(re.compile(r"peak \d+\.\d [kMG]?B at "))


def test_dates_and_times_are_written_one_way(admin_page, yard):
    """An archive's date, a run's times and a log line's time, in one format."""
    page = admin_page
    page.goto(f"{yard.url}/backups")
    archives = page.get_by_role("table", name="Archives")
    expect(archives).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"))
    page.goto(f"{yard.url}/stacks/{STACK}")
    console = page.get_by_role("region", name="Console")
    console.get_by_role("tab", name="Deploy").click()
    expect(console.locator(".console-times")).to_have_text(
        re.compile(r"^Started \d\d:\d\d:\d\d · finished \d\d:\d\d:\d\d")
    )
    console.get_by_role("tab", name="Logs").click()
    expect(console.locator(".log-time").first).to_have_text(re.compile(r"^\d\d:\d\d:\d\d\.\d{3}$"))


def test_settings_has_links_to_its_sections(admin_page, yard):
    page = admin_page
    page.goto(f"{yard.url}/settings")
    links = page.get_by_role("navigation", name="Settings sections")
    expect(links).to_be_in_viewport()
    # The sections read what they show (users, tokens, the audit log...): once they have,
    # the page is as long as it stays (5,000 px and more).
    page.wait_for_load_state("networkidle")
    expect(page.locator("[aria-busy=true]")).to_have_count(0)
    expect(page.get_by_role("table", name="Audit log")).to_be_attached()
    links.get_by_role("link", name="Audit log").click()
    heading = page.get_by_role("heading", level=2, name="Audit log")
    expect(heading).to_be_in_viewport()
    expect(heading).to_be_focused()
    expect(links).to_be_in_viewport()  # it stays beside the sections


def test_the_empty_dashboard_offers_new_stack_in_the_code_editor(browser, server):
    """No stack yet: the dashboard says where to begin; New stack opens the editor the
    stack page has, empty (no grey example that reads as content)."""
    page = open_page(browser, viewport={"width": 1280, "height": 800})
    sign_in(page, server.url)
    first = page.get_by_role("region", name="No stacks yet")
    first.get_by_role("link", name="New stack").click()
    page.wait_for_url(f"{server.url}/stacks?new=1")
    form = page.get_by_role("form", name="New stack")
    expect(form.locator("[data-editor=codemirror] .cm-editor")).to_have_count(2)  # compose, .env
    compose = form.get_by_role("textbox", name="Compose file")
    expect(compose).to_have_text("")
    expect(form.locator("textarea[placeholder]")).to_have_count(1)  # the docker run command's only
    form.get_by_role("button", name="start from an example").click()
    expect(compose).to_contain_text("image: nginx:1.27")
    page.context.close()
