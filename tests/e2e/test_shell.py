"""A user signs in, sees the dashboard shell and the running version, and signs out."""

import pytest

from stackyard import __version__
from tests.support.browser import submit_sign_in
from tests.support.service import ADMIN_PASSWORD

pytestmark = pytest.mark.browser


def test_sign_in_see_the_shell_and_sign_out(page, live_server, docker_client):
    page.goto(live_server.url + "/settings")
    page.wait_for_url("**/login**")  # not signed in: sent to sign-in

    submit_sign_in(page, "admin", "wrong-password")
    page.get_by_text("Invalid username or password").wait_for()

    submit_sign_in(page, "admin", ADMIN_PASSWORD)
    page.wait_for_url(live_server.url + "/settings")  # back where the user wanted to go

    page.get_by_role("link", name="Dashboard").click()
    page.get_by_role("heading", name="Dashboard").wait_for()
    assert __version__ in page.get_by_test_id("app-version").inner_text()
    nav = page.get_by_role("navigation")
    for name in [
        "Dashboard",
        "Stacks",
        "Files",
        "Backups",
        "Destinations",
        "Schedules",
        "Agents",
        "Settings",
    ]:
        assert nav.get_by_role("link", name=name).is_visible(), name
    engine = docker_client.version()["Version"]
    page.get_by_text(engine).first.wait_for()  # the real engine's version on the dashboard

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login**")
    page.goto(live_server.url + "/")
    page.wait_for_url("**/login**")  # the session is gone, not just hidden
    cookies = {c["name"] for c in page.context.cookies()}
    assert "stackyard_session" not in cookies
