"""Notifications in a real browser: an admin adds a webhook channel pointing at a loopback
receiver, tries it from the dialog (a signed JSON body arrives; the receiver's refusal is
shown in its own words), saves it and finds it listed with its secret kept write-only.
Roles without the permission see neither the link nor the page. Real built UI, real
server, real Chromium."""

from __future__ import annotations

import hashlib
import hmac
import uuid

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import sign_in
from tests.support.receivers import HttpReceiver
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser

SIGNING_KEY = "a-signing-key-for-the-test"


def test_an_admin_adds_a_webhook_channel_and_tests_it(page, shared_server):
    name = f"e2e hook {uuid.uuid4().hex[:6]}"
    nav = page.get_by_role("navigation", name="Main")
    with HttpReceiver() as receiver:
        sign_in(page, shared_server.url)
        nav.get_by_role("link", name="Notifications").click()
        page.wait_for_url(shared_server.url + "/notifications")
        # The rules of a first start send to every channel.
        rules = page.get_by_role("table", name="Rules")
        expect(rules.get_by_role("row").filter(has_text="Failures and warnings")).to_contain_text(
            "Every channel"
        )

        page.get_by_role("button", name="Add a channel").click()
        dialog = page.get_by_role("dialog", name="Add a channel")
        dialog.get_by_role("combobox", name="Kind").select_option(label="Webhook")
        dialog.get_by_label("Name", exact=True).fill(name)
        dialog.get_by_label("URL", exact=True).fill(f"{receiver.url}/hook")
        key = dialog.get_by_label("Signing key", exact=True)
        expect(key).to_have_attribute("type", "password")
        key.fill(SIGNING_KEY)

        # The unsaved values are tried: a signed JSON body reaches the receiver.
        dialog.get_by_role("button", name="Send test").click()
        passed = dialog.get_by_role("status")
        expect(passed).to_contain_text("Test passed")
        expect(passed).to_have_class("success")
        (request,) = receiver.wait_for(1)
        assert (request.method, request.path) == ("POST", "/hook")
        assert request.json()["title"] == "Stackyard: test message"
        signature = request.headers["x-stackyard-signature"]
        assert signature.startswith("sha256=")
        signed = request.headers["x-stackyard-timestamp"].encode() + b"." + request.body
        assert (
            signature
            == "sha256=" + hmac.new(SIGNING_KEY.encode(), signed, hashlib.sha256).hexdigest()
        )

        # A refusal is shown in the receiver's own words.
        receiver.fail_next(1, 500, "receiver says no")
        dialog.get_by_role("button", name="Send test").click()
        failed = dialog.get_by_role("status")
        expect(failed).to_contain_text("Test failed")
        expect(failed).to_contain_text("receiver says no")
        expect(failed).to_have_class("error")
        assert len(receiver.wait_for(2)) == 2

        dialog.get_by_role("button", name="Add the channel").click()
        expect(dialog).to_be_hidden()
        row = page.get_by_role("table", name="Channels").get_by_role("row").filter(has_text=name)
        expect(row).to_contain_text("Webhook")
        expect(row.get_by_role("switch", name=f"{name} enabled")).to_be_checked()

        # Saved: the key is stored, never shown; a test from the list still signs with it.
        row.get_by_role("button", name=f"Edit channel {name}").click()
        edit = page.get_by_role("dialog", name=f"Edit {name}")
        stored = edit.get_by_label("Signing key", exact=True)
        expect(stored).to_have_value("")
        expect(stored).to_have_attribute("placeholder", "stored — leave empty to keep")
        # The URL holds its token: a secret too, never shown again.
        url = edit.get_by_label("URL", exact=True)
        expect(url).to_have_value("")
        expect(url).to_have_attribute("placeholder", "stored — leave empty to keep")
        expect(edit).not_to_contain_text(f"{receiver.url}/hook")
        edit.get_by_role("button", name="Cancel").click()
        expect(edit).to_be_hidden()
        row.get_by_role("button", name=f"Send test to {name}").click()
        expect(row.get_by_role("status")).to_contain_text("Test passed")
        # (A real event may reach the saved channel too: the test message is the one marked so.)
        tests = [r for r in receiver.wait_for(3)[2:] if r.json().get("test") is True]
        assert tests and tests[0].headers["x-stackyard-signature"].startswith("sha256=")
        expect(row).not_to_contain_text("Never")  # its last success is shown

        # Nothing else should reach a closed receiver once the test is over.
        # (The switch follows the server's answer: clicked, not `uncheck`ed.)
        row.get_by_role("switch", name=f"{name} enabled").click()
        expect(row.get_by_role("switch", name=f"{name} enabled")).not_to_be_checked()


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_other_roles_have_no_notifications(page, shared_server, role):
    username = f"e2e-notify-{role}"
    with httpx.Client(base_url=shared_server.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        made = admin.post(
            "/api/users", json={"username": username, "password": USER_PASSWORD, "role": role}
        )
        assert made.status_code == 201, made.text
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/notifications" in r.url else None)

    sign_in(page, shared_server.url, username, USER_PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Stacks")).to_be_visible()
    expect(nav.get_by_role("link", name="Notifications")).to_have_count(0)

    page.goto(shared_server.url + "/notifications")
    expect(page.get_by_role("heading", level=1, name="Notifications")).to_be_visible()
    expect(page.get_by_text("Only admins manage notifications.")).to_be_visible()
    expect(page.get_by_role("table")).to_have_count(0)
    expect(page.get_by_role("button", name="Add a channel")).to_have_count(0)
    assert asked == []

    # The server refuses too: the page hides only what would be refused.
    with httpx.Client(base_url=shared_server.url) as client:
        api_sign_in(client, username, USER_PASSWORD)
        assert client.get("/api/notifications/channels").status_code == 403
