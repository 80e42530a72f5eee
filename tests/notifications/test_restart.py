"""What is queued survives the service: a real `stackyard serve` killed (SIGKILL) while
its channel fails delivers the event once after it starts again. And the CLI lists the
channels and sends a test."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.notifications.conftest import events_of, watching
from tests.support.receivers import HttpReceiver
from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    STACKYARD_BIN,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import HELPER
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_queued_event_is_delivered_once_after_a_kill(tmp_path: Path):
    (tmp_path / "stacks").mkdir()
    env = service_env(
        tmp_path, STACKYARD_NOTIFY_RETRY_SECONDS="0.3", STACKYARD_NOTIFY_WINDOW_SECONDS="0.3"
    )
    name = f"sy-restart-{secrets.token_hex(4)}"
    with HttpReceiver() as receiver:
        receiver.fail_next(10_000, 503, "down for maintenance")
        server = start_server(tmp_path, env=env)
        try:
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}}
                assert client.post("/api/notifications/channels", json=body).status_code == 201
            watching(receiver)
            subprocess.run(
                ["docker", "run", "-d", "--name", name, HELPER, "sh", "-c", "exit 9"],
                check=True,
                capture_output=True,
            )
            # Tried, refused, tried again: it is queued.
            wait_until(lambda: len(events_of(receiver.requests, {name})) >= 2, what="two tries")
            server.process.kill()
            server.process.wait()
        finally:
            server.stop()
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        receiver.stop_failing()
        receiver.clear()
        again = start_server(tmp_path, env=env)
        try:
            (event,) = wait_until(lambda: events_of(receiver.requests, {name}))
            assert event["name"] == "container_exited"
            with httpx.Client(base_url=again.url, timeout=ANSWER_WITHIN) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                # No second delivery follows: the service's record of the channel has the
                # event's delivery sent and nothing of it left to send.
                recorded = wait_until(
                    lambda: settled(deliveries_of(client, name)), what="the delivery settled"
                )
                assert [d["status"] for d in recorded] == ["sent"]
                assert len(events_of(receiver.requests, {name})) == 1
                listed = cli(env, "notifications", "list").stdout
                assert listed.startswith("1\thook\twebhook\tenabled\t2")  # its last success
                # (A test still goes out; other tests' containers do not.)
                changed = client.patch("/api/notifications/channels/1", json={"enabled": False})
                assert changed.status_code == 200
            receiver.clear()
            tested = cli(env, "notifications", "test", "hook")
            assert tested.returncode == 0
            assert "accepted the test message" in tested.stdout
            assert wait_until(lambda: [r for r in receiver.requests if r.json().get("test")])
            receiver.fail_next(1, 401, "who are you")
            refused = cli(env, "notifications", "test", "1")
            assert refused.returncode == 1
            assert "Answered 401: who are you" in refused.stdout
        finally:
            again.stop()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STACKYARD_BIN), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=ANSWER_WITHIN,
    )


def deliveries_of(client: httpx.Client, subject: str) -> list[dict]:
    """What the service recorded of its deliveries to channel 1 of events about
    `subject` (a container's events say its name first)."""
    answer = client.get("/api/notifications/channels/1/deliveries")
    assert answer.status_code == 200, answer.text
    return [d for d in answer.json() if d["text"].startswith(f"{subject} ")]


def settled(deliveries: list[dict]) -> list[dict] | None:
    """`deliveries`, once there are some and none is left to send."""
    if deliveries and all(d["status"] != "pending" for d in deliveries):
        return deliveries
    return None


def signin_failures(receiver: HttpReceiver, account: str | None) -> list[dict]:
    """The news of `account`'s failed sign-ins the receiver got (None: of names that are
    no account's)."""
    subject = "unknown account" if account is None else f"account {account}"
    events = events_of(receiver.requests, {subject})
    return [e for e in events if e["name"] == "signin_failures"]


def test_the_cli_says_when_there_is_no_such_channel(tmp_path: Path):
    env = service_env(tmp_path)
    done = cli(env, "notifications", "test", "nope")
    assert done.returncode != 0
    assert "No notification channel 'nope'" in done.stdout + done.stderr


def test_repeated_failed_sign_ins_for_one_account_are_said_once(tmp_path: Path):
    """Guesses at one account from ever new addresses (behind a trusted proxy, so that the
    address of each is believed): the account's tenth failure in a row is news, once."""
    env = service_env(tmp_path, STACKYARD_TRUSTED_PROXIES="127.0.0.1/32")
    with HttpReceiver() as receiver:
        server = start_server(tmp_path, env=env)
        try:
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}}
                assert client.post("/api/notifications/channels", json=body).status_code == 201
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as guesser:
                for n in range(12):  # (the eleventh is the tenth failure in a row)
                    guess(guesser, "admin", f"203.0.113.{n + 1}")
                (event,) = wait_until(lambda: signin_failures(receiver, "admin"))
                assert event["text"].startswith("10 failed sign-ins in a row for account 'admin'")
                assert (event["severity"], event["link"]) == ("warning", "/settings")
                # The twelfth is not news again. Another account's tenth failure in a row,
                # raised after it, marks the point: the service records and sends events in
                # the order they were raised, so once this news has come, the twelfth's
                # would have come before it.
                for n in range(11):
                    guess(guesser, "nobody", f"198.51.100.{n + 1}")
                wait_until(lambda: signin_failures(receiver, None), what="the mark's news")
                assert len(signin_failures(receiver, "admin")) == 1
        finally:
            server.stop()


#: What anyone may type as a username at the sign-in form: Markdown and HTML that a chat
#: or an e-mail would render (a link, an image, a mention).
CRAFTED = "[Reset](https://evil.example) <img src=x onerror=1> @here"


def test_a_name_typed_at_sign_in_never_reaches_the_channels(tmp_path: Path):
    """Guesses at a name no account has: the news says "an unknown account", and nothing
    of what was typed (which anyone may send into the admins' channels)."""
    env = service_env(tmp_path, STACKYARD_TRUSTED_PROXIES="127.0.0.1/32")
    with HttpReceiver() as receiver:
        server = start_server(tmp_path, env=env)
        try:
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}}
                assert client.post("/api/notifications/channels", json=body).status_code == 201
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as guesser:
                for n in range(11):
                    guess(guesser, CRAFTED, f"192.0.2.{n + 1}")
                (event,) = wait_until(lambda: signin_failures(receiver, None))
            assert event["text"].startswith("10 failed sign-ins in a row for an unknown account")
            sent = json.dumps([r.json() for r in receiver.requests])
            for typed in ("evil.example", "[Reset]", "<img", "onerror", "@here", "]("):
                assert typed not in sent
        finally:
            server.stop()


def test_an_accounts_name_is_shown_inert_and_clipped():
    """A known account's name as stored (a provider's account may be named by the provider):
    nothing Markdown or HTML reads, at most 64 characters."""
    from stackyard.notifications.monitor import signin_failures as news

    said = []
    stored = "ops_[team](x)<b>" + "y" * 100
    news(said.append, lambda typed: stored if typed == "OPS" else None, "OPS", 10)
    (event,) = said
    assert "ops_?team??x??b?yyy" in event.text and "[" not in event.text
    assert "<" not in event.subject and len(event.subject) <= len("account ") + 64


def guess(client: httpx.Client, username: str, address: str) -> None:
    """A wrong password for `username`, from `address` (a trusted proxy says so)."""
    answer = client.post(
        "/api/auth/login",
        json={"username": username, "password": "a guess"},
        headers={"X-Forwarded-For": address},
    )
    assert answer.status_code == 401, answer.text
