"""A central started for notification tests: short digest window and retry delays (the
production ones are seconds), and a webhook channel helper."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.events import Event
from tests.support.receivers import HttpReceiver
from tests.support.service import ADMIN_PASSWORD, new_client, settings_in, sign_in, started
from tests.support.stacks import HELPER
from tests.support.waiting import wait_until

#: The timing of the services these tests start (seconds).
TIMING = {"notify_window_seconds": 0.5, "notify_retry_seconds": 0.2}


@pytest.fixture
def notifying(central_app: FastAPI, tmp_path: Path) -> Iterator[FastAPI]:
    with started(central_app, settings_in(tmp_path, **TIMING)):
        yield central_app


@pytest.fixture
def admin(notifying: FastAPI) -> TestClient:
    client = new_client(notifying)
    sign_in(client, "admin", ADMIN_PASSWORD)
    return client


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with HttpReceiver() as running:
        yield running


def add_webhook(admin: TestClient, url: str, name: str = "hook", **extra: Any) -> dict:
    """A webhook channel to `url` (a secret: such a URL holds its token)."""
    secrets = {"url": url} | extra.pop("secrets", {})
    answer = admin.post(
        "/api/notifications/channels",
        json={"name": name, "kind": "webhook", "secrets": secrets, **extra},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def emit(app: FastAPI, event: Event) -> None:
    """An event raised on the central's host, as its sources raise them (any thread)."""
    app.state.services.notifications.emit(event)


def events_of(requests: list, subjects: set[str] | None = None) -> list[dict]:
    """The events the webhook requests carried, in order: all, or those about `subjects`
    (the engine is shared: other tests' containers come and go, and say so)."""
    events = [event for request in requests for event in request.json()["events"]]
    return [e for e in events if subjects is None or e["subject"] in subjects]


def watching(receiver: HttpReceiver, host_id: int | None = None) -> None:
    """Until the host `host_id` (None: the central's own) has said a probe container's
    exit to the channel of `receiver`: it watches its engine from then on. A service
    begins to watch once its warm-up is done, which on a loaded machine is seconds after it
    first answers, and reads the engine's events from then: an exit before passes unseen."""
    probes: list[str] = []

    def seen() -> bool:
        if any(e["host_id"] == host_id for e in events_of(receiver.requests, set(probes))):
            return True
        probes.append(f"sy-probe-{secrets.token_hex(4)}")
        probe = ["docker", "run", "-d", "--rm", "--name", probes[-1], HELPER, "sh", "-c", "exit 6"]
        subprocess.run(probe, check=True, capture_output=True)
        return False

    wait_until(seen, what=f"host {host_id or 'central'} watching its engine", interval=1)


def only(admin: TestClient, *names: str) -> None:
    """The rules replaced by one that sends `names` alone (no container of another
    test's: the engine is shared)."""
    for rule in admin.get("/api/notifications/rules").json():
        assert admin.delete(f"/api/notifications/rules/{rule['id']}").status_code == 204
    answer = admin.post("/api/notifications/rules", json={"name": "only", "events": list(names)})
    assert answer.status_code == 201, answer.text
