"""A shell in a running container over a WebSocket, against the real engine: output,
resize, exit; the session's processes end with it; admins only, audited."""

from __future__ import annotations

import json
import subprocess

import pytest
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from tests.support.stacks import compose, compose_text, service
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

ORIGIN = {"origin": "http://testserver"}


@pytest.fixture
def running(make_stack, stacks_dir) -> str:
    stack_id = make_stack("shell", compose_text(box=service()))
    compose(stacks_dir, stack_id, "up", "-d")
    return stack_id


def shell_url(stack_id: str, client, **params: str) -> str:
    query = {"csrf": client.headers.get("X-CSRF-Token", ""), **params}
    return f"/api/stacks/{stack_id}/containers/{stack_id}-box-1/shell?" + "&".join(
        f"{k}={v}" for k, v in query.items()
    )


def read_until(ws, needle: bytes, limit: int = 200) -> bytes:
    seen = b""
    for _ in range(limit):
        message = ws.receive()
        if message.get("bytes"):
            seen += message["bytes"]
        elif message.get("text"):
            seen += message["text"].encode()
        if needle in seen:
            return seen
        if message["type"] == "websocket.close":
            break
    raise AssertionError(f"{needle!r} not in {seen[-500:]!r}")


def audit_entry(client, action: str) -> dict:
    """The newest audit entry of `action` (written once the session has ended)."""

    def found() -> dict | None:
        entries = client.get("/api/audit").json()["items"]
        return next((e for e in entries if e["action"] == action), None)

    return wait_until(found, what=f"{action} in the audit log")


def processes(container: str) -> list[str]:
    done = subprocess.run(
        ["docker", "exec", container, "ps", "-o", "args"], capture_output=True, text=True
    )
    return [line.strip() for line in done.stdout.splitlines()[1:]]


def test_a_shell_runs_resizes_and_ends_with_everything_it_started(admin_client, running):
    container = f"{running}-box-1"
    with admin_client.websocket_connect(
        shell_url(running, admin_client, cols="100", rows="30"), headers=ORIGIN
    ) as ws:
        ws.send_bytes(b"echo answer-$((6*7))\n")
        assert b"answer-42" in read_until(ws, b"answer-42")
        ws.send_text(json.dumps({"type": "resize", "cols": 132, "rows": 43}))
        ws.send_bytes(b"stty size\n")
        assert b"43 132" in read_until(ws, b"43 132")
        ws.send_bytes(b"sleep 600 &\n")  # something the session started, still running
        wait_until(
            lambda: any("sleep 600" in p for p in processes(container)), what="the sleep started"
        )
    # The page closed: the shell and what it started are gone.
    wait_until(
        lambda: not any("sleep 600" in p for p in processes(container)), what="the sleep ended"
    )

    opened = audit_entry(admin_client, "container.shell")
    assert (opened["actor"], opened["target"], opened["outcome"]) == (
        "admin",
        f"{running}/{container}",
        "success",
    )
    ended = audit_entry(admin_client, "container.shell.end")
    assert ended["actor"] == "admin" and "closed after" in ended["detail"]


def test_exit_ends_the_session(admin_client, running):
    with admin_client.websocket_connect(shell_url(running, admin_client), headers=ORIGIN) as ws:
        ws.send_bytes(b"exit 7\n")
        with pytest.raises(WebSocketDisconnect):
            for _ in range(200):
                ws.receive_bytes()
    ended = audit_entry(admin_client, "container.shell.end")
    assert "exit code 7" in ended["detail"]


def test_only_admins_signed_in_from_this_service_get_a_shell(
    client, user_client, admin_client, running
):
    def refused(who, url, headers) -> int:
        with (
            pytest.raises((WebSocketDisconnect, WebSocketDenialResponse)) as caught,
            who.websocket_connect(url, headers=headers) as ws,
        ):
            ws.receive_bytes()
        error = caught.value
        return getattr(error, "code", None) or getattr(error, "status_code", 0)

    assert refused(client, shell_url(running, client), ORIGIN) == 4401
    assert refused(user_client, shell_url(running, user_client), ORIGIN) == 4403
    # Another site's page cannot use the admin's cookie, nor can a missing CSRF value.
    evil = {"origin": "http://evil.example"}
    assert refused(admin_client, shell_url(running, admin_client), evil) == 4403
    assert refused(admin_client, shell_url(running, admin_client, csrf="x"), ORIGIN) == 4403


def test_a_token_opens_a_shell_too(app, admin_client, running):
    from tests.support.service import ADMIN_PASSWORD, new_client

    made = admin_client.post("/api/auth/tokens", json={"name": "t", "password": ADMIN_PASSWORD})
    scripted = new_client(app)
    with scripted.websocket_connect(
        f"/api/stacks/{running}/containers/{running}-box-1/shell?command=sh",
        headers={"Authorization": f"Bearer {made.json()['token']}"},
    ) as ws:
        ws.send_bytes(b"echo via-token\n")
        assert b"via-token" in read_until(ws, b"via-token")
