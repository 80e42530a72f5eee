"""The Stackyard version in Settings, in a real browser against a real server: the running
version, and for a server that does not run in a container made by compose, why it cannot
update itself (the reason the API gives) and no Update button."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from stackyard import __version__
from tests.support.browser import sign_in
from tests.support.service import ADMIN_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser


def test_settings_shows_the_version_and_why_it_cannot_update_itself(page, live_server):
    with httpx.Client(base_url=live_server.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        status = admin.get("/api/system/update").json()
    assert status["update_supported"] is False, status
    assert status["reason"], status

    sign_in(page, live_server.url)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()

    section = page.get_by_role("region", name="Stackyard version")
    expect(section.get_by_test_id("running-version")).to_have_text(__version__)
    expect(section.get_by_role("note")).to_have_text(
        f"Self-update is not available here: {status['reason']}."
    )
    expect(section.get_by_role("button")).to_have_count(0)
    # Nothing to announce beside the version in the sidebar either.
    expect(page.get_by_test_id("app-version")).to_have_text(f"v{__version__}")
    expect(page.get_by_role("link", name="Update available")).to_have_count(0)
