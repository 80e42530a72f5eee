"""What is queued survives the service: a real `stackyard serve` killed (SIGKILL) while
its channel fails delivers the event once after it starts again. And the CLI lists the
channels and sends a test."""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.notifications.conftest import events_of
from tests.support.receivers import HttpReceiver
from tests.support.service import (
    ADMIN_PASSWORD,
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
            with httpx.Client(base_url=server.url) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {"name": "hook", "kind": "webhook", "settings": {"url": receiver.url}}
                assert client.post("/api/notifications/channels", json=body).status_code == 201
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
            time.sleep(2)  # no second delivery follows
            assert len(events_of(receiver.requests, {name})) == 1
            listed = cli(env, "notifications", "list").stdout
            assert listed.startswith("1\thook\twebhook\tenabled\t2")  # its last success
            with httpx.Client(base_url=again.url) as client:  # (a test still goes out;
                sign_in(client, "admin", ADMIN_PASSWORD)  # other tests' containers do not)
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
        [str(STACKYARD_BIN), *args], env=env, capture_output=True, text=True, timeout=60
    )


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
            with httpx.Client(base_url=server.url) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {"name": "hook", "kind": "webhook", "settings": {"url": receiver.url}}
                assert client.post("/api/notifications/channels", json=body).status_code == 201
            with httpx.Client(base_url=server.url, timeout=30) as guesser:
                for n in range(12):
                    answer = guesser.post(
                        "/api/auth/login",
                        json={"username": "admin", "password": f"guess-{n}"},
                        headers={"X-Forwarded-For": f"203.0.113.{n + 1}"},
                    )
                    assert answer.status_code == 401, answer.text
            (event,) = wait_until(
                lambda: [
                    e
                    for r in receiver.requests
                    for e in r.json()["events"]
                    if e["name"] == "signin_failures"
                ]
            )
            assert event["text"].startswith("10 failed sign-ins in a row for account 'admin'")
            assert (event["severity"], event["link"]) == ("warning", "/settings")
            time.sleep(1)  # the eleventh and twelfth are not news again
            said = [e for r in receiver.requests for e in r.json()["events"]]
            assert [e["name"] for e in said].count("signin_failures") == 1
        finally:
            server.stop()
