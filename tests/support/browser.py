"""A real Chromium (Debian's), driven by Playwright. Never `playwright install`."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.service import ADMIN_PASSWORD
from tests.support.waiting import PATIENCE

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Milliseconds a page's actions and `expect` wait for what they expect: a server and a
#: Chromium on a loaded machine (load 30 on two cores) take many times what they take on
#: a quiet one, and a test that passes never waits the limit out (`waiting.PATIENCE`).
PAGE_PATIENCE = PATIENCE * 1000


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Per test module: Playwright's sync API holds an event loop in the main thread
    while it runs, which later tests that use asyncio.run would trip over."""
    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `scripts/setup.sh --test`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator:
    """A fresh browser context (no cookies, no local storage) and page."""
    page = open_page(browser, accept_downloads=True)
    yield page
    page.context.close()


def open_page(browser, **options: Any) -> Any:
    """A page in a browser context of its own (made with `options`); close its
    `context` when done. Every test's pages are made here, so that each gets the same
    time limit and goes through the machine's network changes."""
    from playwright.sync_api import expect

    context = browser.new_context(**options)
    context.set_default_timeout(PAGE_PATIENCE)
    expect.set_options(timeout=PAGE_PATIENCE)  # (Playwright's global: its own is 5 s)
    page = context.new_page()
    page.goto = _through_network_changes(page.goto)
    return page


NETWORK_CHANGED = ("ERR_NETWORK_CHANGED", 'interrupted by another navigation to "chrome-error://')


def _through_network_changes(goto: Callable[..., Any]) -> Callable[..., Any]:
    """`page.goto`, again when Chromium dropped it for a network change: it does so when
    an interface comes or goes on the machine, as the Docker engine's do while other test
    processes start and remove containers. Chromium says it as ERR_NETWORK_CHANGED, or,
    when its error page came first, as the navigation "interrupted by another navigation
    to chrome-error://", or, when it loaded the page again on its own, "interrupted by
    another navigation to" the same address (each seen in CI)."""

    def again(*args: Any, **kwargs: Any) -> Any:
        from playwright.sync_api import Error

        url = args[0] if args else kwargs.get("url", "")
        signs = (*NETWORK_CHANGED, f'interrupted by another navigation to "{url}"')
        for _ in range(2):
            try:
                return goto(*args, **kwargs)
            except Error as exc:
                if not any(sign in str(exc) for sign in signs):
                    raise
        return goto(*args, **kwargs)

    return again


def sign_in(page, url: str, username: str = "admin", password: str = ADMIN_PASSWORD) -> None:
    """Sign in through the sign-in page and wait for the dashboard."""
    page.goto(url + "/")
    submit_sign_in(page, username, password)
    page.get_by_role("heading", name="Dashboard").wait_for()


def submit_sign_in(page, username: str, password: str) -> None:
    """On the sign-in page: the password form filled in and sent."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()


#: Checks the page as it is drawn: the page no wider than the window, every visible
#: button inside the window and inside any box that scrolls it sideways, and an open
#: dialog inside the window. Returns what is wrong, one line each.
FITS = """
() => {
  const wrong = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1)
    wrong.push(`the page is ${doc.scrollWidth} px wide in a ${doc.clientWidth} px window`);
  const name = (el) => (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40);
  for (const button of document.querySelectorAll("button, a.button")) {
    const box = button.getBoundingClientRect();
    if (box.width === 0 || getComputedStyle(button).visibility === "hidden") continue;
    if (box.left < -1 || box.right > innerWidth + 1)
      wrong.push(`button "${name(button)}" at x ${Math.round(box.left)}-${Math.round(box.right)}`);
    for (let up = button.parentElement; up; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow !== "auto" && overflow !== "scroll") continue;
      const scroller = up.getBoundingClientRect();
      if (box.left < scroller.left - 1 || box.right > scroller.right + 1)
        wrong.push(`button "${name(button)}" hidden in a box that scrolls sideways`);
      break;
    }
  }
  for (const dialog of document.querySelectorAll("[role=dialog], [role=alertdialog]")) {
    const box = dialog.getBoundingClientRect();
    if (box.left < -1 || box.top < -1 || box.right > innerWidth + 1 || box.bottom > innerHeight + 1)
      wrong.push(`dialog "${dialog.getAttribute("aria-label") || ""}" outside the window: ` +
        `${Math.round(box.left)},${Math.round(box.top)}-${Math.round(box.right)},${Math.round(box.bottom)}`);
  }
  return wrong;
}
"""
