"""Channels and rules through the API: admins only, audited (a failed test as a failure),
secrets sealed at rest and never sent back, bad input refused with a detail and nothing
changed, and the catalogue the forms are drawn from."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.events import EVENT_NAMES
from stackyard.notifications.channels import CHANNEL_KINDS
from tests.notifications.conftest import add_webhook
from tests.support.receivers import HttpReceiver
from tests.support.service import client_with_role

NTFY = {
    "name": "phone",
    "kind": "ntfy",
    "settings": {"server": "https://ntfy.example.com", "topic": "ops"},
    "secrets": {"token": "tk_very_secret_token"},
}


def test_the_catalogue_lists_every_event_and_every_kind_with_its_fields(admin: TestClient):
    catalogue = admin.get("/api/notifications/catalogue").json()
    assert [e["name"] for e in catalogue["events"]] == list(EVENT_NAMES)
    kinds = {c["kind"]: c for c in catalogue["channels"]}
    assert list(kinds) == list(CHANNEL_KINDS)
    email = {f["name"]: f for f in kinds["email"]["fields"]}
    assert email["password"]["secret"] and not email["host"]["secret"]
    assert email["security"]["choices"] == ["starttls", "tls", "none"]


def test_secrets_are_write_only_and_sealed_at_rest(notifying: FastAPI, admin: TestClient):
    created = admin.post("/api/notifications/channels", json=NTFY)
    assert created.status_code == 201, created.text
    channel = created.json()
    assert channel["secrets_set"] == ["token"]
    assert "tk_very_secret_token" not in created.text
    listed = admin.get("/api/notifications/channels").text
    assert "tk_very_secret_token" not in listed
    database = notifying.state.settings.data_dir / "stackyard.db"
    with sqlite3.connect(database) as db:
        (stored,) = db.execute("SELECT secrets FROM notification_channels").fetchone()
    assert "tk_very_secret_token" not in stored
    # Left out: kept; an empty string: removed.
    url = f"/api/notifications/channels/{channel['id']}"
    kept = admin.patch(url, json={"settings": {"server": "https://ntfy.example.com", "topic": "x"}})
    assert kept.json()["secrets_set"] == ["token"]
    assert kept.json()["settings"]["topic"] == "x"
    removed = admin.patch(url, json={"secrets": {"token": ""}})
    assert removed.json()["secrets_set"] == []


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"kind": "gotify", "secrets": {"token": "x"}}, "Server is required"),
        ({"kind": "ntfy", "settings": {"server": "ftp://x", "topic": "x"}}, "http:// or https://"),
        (
            {"kind": "ntfy", "settings": {"server": "https://x", "topic": "x", "tokn": "1"}},
            "no settings field 'tokn'",
        ),
        (
            {"kind": "ntfy", "settings": {"server": "https://x", "topic": "x", "token": "1"}},
            "Access token is a secret: send it in secrets",
        ),
        (
            {
                "kind": "discord",
                "secrets": {"webhook_url": "https://evil.example.com/api/webhooks/1/x"},
            },
            "Not a Discord webhook URL",
        ),
        (
            {
                "kind": "email",
                "settings": {
                    "host": "h",
                    "port": "99999",
                    "sender": "a@example.com",
                    "recipients": "b@example.com",
                },
            },
            "Port",
        ),
        (
            {
                "kind": "email",
                "settings": {"host": "h", "sender": "a@example.com", "recipients": "nobody"},
            },
            "email addresses",
        ),
    ],
)
def test_bad_channels_are_refused_with_why_and_nothing_is_saved(
    admin: TestClient, body: dict, said: str
):
    answer = admin.post("/api/notifications/channels", json={"name": "bad", **body})
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["detail"]
    assert admin.get("/api/notifications/channels").json() == []


def test_an_unknown_kind_or_event_is_refused(admin: TestClient):
    assert (
        admin.post("/api/notifications/channels", json={"name": "x", "kind": "fax"}).status_code
        == 422
    )
    rule = {"name": "x", "events": ["backup_exploded"]}
    assert admin.post("/api/notifications/rules", json=rule).status_code == 422
    answer = admin.post("/api/notifications/rules", json={"name": "x", "channels": [999]})
    assert answer.status_code == 400
    assert "No notification channel 999" in answer.json()["detail"]


def test_a_rule_names_only_stacks_there_are(notifying: FastAPI, admin: TestClient):
    """A stack name is one of the stacks of the hosts the rule covers: a typo is refused
    with the stacks there are, not kept as a rule that never matches."""
    shop = notifying.state.settings.stacks_dir / "shop"
    shop.mkdir()
    (shop / "compose.yaml").write_text("services:\n  web:\n    image: busybox\n")
    typo = admin.post("/api/notifications/rules", json={"name": "x", "stacks": ["shpo"]})
    assert typo.status_code == 400
    assert typo.json() == {
        "detail": "No stack named 'shpo' on the hosts this rule covers (their stacks: shop)"
    }
    made = admin.post("/api/notifications/rules", json={"name": "x", "stacks": ["shop"]})
    assert made.status_code == 201, made.text
    changed = admin.put(
        f"/api/notifications/rules/{made.json()['id']}", json={"name": "x", "stacks": ["gone"]}
    )
    assert changed.status_code == 400 and "'gone'" in changed.json()["detail"]


def test_the_default_rules_can_be_changed_and_stay_removed(notifying: FastAPI, admin: TestClient):
    rules = admin.get("/api/notifications/rules").json()
    assert [(r["name"], r["min_severity"], r["events"]) for r in rules] == [
        ("Failures and warnings", "warning", []),
        ("Image updates", "info", ["stack_update"]),
    ]
    for rule in rules:
        assert admin.delete(f"/api/notifications/rules/{rule['id']}").status_code == 204
    notifying.state.services.notifications.rules.ensure_defaults()  # as at the next start
    assert admin.get("/api/notifications/rules").json() == []


def test_a_test_shows_the_services_answer_and_is_audited_with_its_outcome(admin: TestClient):
    with HttpReceiver() as receiver:
        # Disabled: a test is sent all the same, and nothing else is (no other test's
        # container, on the shared engine, takes the failure arranged below).
        channel = add_webhook(admin, f"{receiver.url}/hook", enabled=False)
        url = f"/api/notifications/channels/{channel['id']}/test"
        sent = admin.post(url).json()
        assert sent == {"ok": True, "detail": "Sent: the service accepted the test message"}
        (request,) = receiver.wait_for(1)
        assert request.json()["test"] is True
        receiver.fail_next(1, 403, "token revoked")
        failed = admin.post(url).json()
    assert failed == {"ok": False, "detail": "Answered 403: token revoked"}
    entries = admin.get("/api/audit").json()["items"]
    tests = [e for e in entries if e["action"] == "notification.channel.test"]
    assert [e["outcome"] for e in tests] == ["failure", "success"]
    assert tests[0]["detail"] == "Answered 403: token revoked"
    assert any(e["action"] == "notification.channel.create" for e in entries)
    shown = admin.get(f"/api/notifications/channels/{channel['id']}").json()
    assert shown["last_error"] == "Answered 403: token revoked"


def test_an_unsaved_channel_can_be_tried(admin: TestClient):
    with HttpReceiver() as receiver:
        body = {
            "kind": "webhook",
            "name": "ops hook",
            "secrets": {"url": receiver.url, "signing_key": "k"},
        }
        answer = admin.post("/api/notifications/channels/test", json=body)
        assert answer.json()["ok"] is True
        (request,) = receiver.wait_for(1)
    assert request.headers["x-stackyard-signature"].startswith("sha256=")
    # The message names the channel as typed (not yet saved).
    assert request.json()["text"].endswith("reach the channel 'ops hook'.")
    assert admin.get("/api/notifications/channels").json() == []


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_only_admins_reach_notifications(notifying: FastAPI, admin: TestClient, role: str):
    client = client_with_role(notifying, admin, f"n-{role}", role)
    for method, path in [
        ("GET", "/api/notifications/channels"),
        ("GET", "/api/notifications/catalogue"),
        ("GET", "/api/notifications/rules"),
        ("POST", "/api/notifications/channels/test"),
    ]:
        assert client.request(method, path, json={}).status_code == 403, path


def test_an_edit_is_tried_with_the_saved_secrets_it_leaves_out(admin: TestClient):
    with HttpReceiver() as receiver:
        channel = add_webhook(admin, receiver.url, secrets={"signing_key": "kept-key"})
        body = {
            "kind": "webhook",
            "secrets": {"url": f"{receiver.url}/edited"},
            "channel_id": channel["id"],
        }
        assert admin.post("/api/notifications/channels/test", json=body).json()["ok"] is True
        (request,) = receiver.wait_for(1)
        other = admin.post("/api/notifications/channels/test", json=body | {"kind": "ntfy"})
    assert request.path == "/edited"
    assert request.headers["x-stackyard-signature"].startswith("sha256=")  # signed: the key
    assert other.status_code == 400  # the saved channel is of another kind


def test_a_deleted_channel_leaves_no_rule_sending_elsewhere(admin: TestClient):
    first = add_webhook(admin, "http://127.0.0.1:1/a", "a")
    second = add_webhook(admin, "http://127.0.0.1:1/b", "b")
    both = {"name": "both", "channels": [first["id"], second["id"]]}
    alone = {"name": "alone", "channels": [first["id"]]}
    for rule in (both, alone):
        assert admin.post("/api/notifications/rules", json=rule).status_code == 201
    assert admin.delete(f"/api/notifications/channels/{first['id']}").status_code == 204
    rules = {r["name"]: r for r in admin.get("/api/notifications/rules").json()}
    assert (rules["both"]["channels"], rules["both"]["enabled"]) == ([second["id"]], True)
    # Named alone: not "every channel" now, but off until someone chooses again.
    assert (rules["alone"]["channels"], rules["alone"]["enabled"]) == ([], False)


def test_a_webhooks_url_is_sealed_never_shown_and_sealed_at_start_when_saved_in_clear(
    central_app: FastAPI, tmp_path
):
    """A webhook's URL holds its token: a secret like any other. One saved in clear by an
    older version (in the channel's settings) is moved into the sealed secrets once, at
    the next start, and the channel still sends."""
    import json

    from tests.notifications.conftest import TIMING
    from tests.support.service import ADMIN_PASSWORD, new_client, settings_in, sign_in, started
    from tests.support.waiting import wait_until

    settings = settings_in(tmp_path, **TIMING)
    database = settings.data_dir / "stackyard.db"

    def stored() -> tuple[str, str | None]:
        with sqlite3.connect(database) as db:
            return db.execute("SELECT config, secrets FROM notification_channels").fetchone()

    def admin_of(app: FastAPI) -> TestClient:
        client = new_client(app)
        sign_in(client, "admin", ADMIN_PASSWORD)
        return client

    with HttpReceiver() as receiver:
        url = f"{receiver.url}/hooks/tk_9f8e7d6c5b4a"
        with started(central_app, settings):
            admin = admin_of(central_app)
            channel = add_webhook(admin, url)
            assert (channel["settings"], channel["secrets_set"]) == ({}, ["url"])
            assert "tk_9f8e7d6c5b4a" not in admin.get("/api/notifications/channels").text
            assert all("tk_9f8e7d6c5b4a" not in (column or "") for column in stored())
        with sqlite3.connect(database) as db:  # as an older version saved it
            db.execute(
                "UPDATE notification_channels SET config = ?, secrets = NULL",
                (json.dumps({"url": url}),),
            )
        with started(central_app, settings):
            admin = admin_of(central_app)
            wait_until(lambda: "tk_9f8e7d6c5b4a" not in stored()[0], what="the URL sealed")
            config, sealed = stored()
            assert json.loads(config) == {} and "tk_9f8e7d6c5b4a" not in (sealed or "")
            shown = admin.get(f"/api/notifications/channels/{channel['id']}").json()
            assert (shown["settings"], shown["secrets_set"]) == ({}, ["url"])
            tried = admin.post(f"/api/notifications/channels/{channel['id']}/test")
            assert tried.json()["ok"] is True, tried.text
            (request,) = receiver.wait_for(1)
    assert request.path == "/hooks/tk_9f8e7d6c5b4a"
