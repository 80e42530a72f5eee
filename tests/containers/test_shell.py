"""A shell in a running container over a WebSocket, against the real engine: output,
resize, exit; the session's processes end with it; admins only, audited; it ends when its
user's sign-in or role no longer allows it."""

from __future__ import annotations

import json
import subprocess

import pytest
from sqlalchemy import update
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from stackyard.db.models import User
from tests.support.service import client_with_role
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


def keep_printing(ws) -> None:
    """Start `sleep 600` in the shell's background (to see it end with the shell), then a
    tick every 0.2 s in the foreground: every read of the socket returns in a moment, so a
    test that waits for the socket to close waits no longer than its limit."""
    ws.send_bytes(b"sleep 600 &\n")
    ws.send_bytes(b"while true; do echo tick-$((6*7)); sleep 0.2; done\n")
    read_until(ws, b"tick-42")


def closed_by_the_service(ws, limit: float = 30) -> dict:
    """The close message the service sends, read past the shell's output (`keep_printing`);
    fails the test when none comes within `limit` seconds."""

    def closed() -> dict | None:
        message = ws.receive()
        return message if message["type"] == "websocket.close" else None

    return wait_until(closed, timeout=limit, what="the shell's socket closed", interval=0)


def sign_out(admin, user, username: str) -> None:
    """The user signs out (elsewhere: the shell's socket is not the page that does)."""
    assert user.post("/api/auth/logout").status_code == 200


def made_viewer(admin, user, username: str) -> None:
    """Another admin makes the user a viewer (which also ends their sign-ins)."""
    changed = admin.patch(f"/api/users/{username}", json={"role": "viewer"})
    assert changed.status_code == 200, changed.text


#: Ways a user's sign-in stops allowing a shell, through the API as users do it.
REVOKED = [sign_out, made_viewer]


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


@pytest.mark.parametrize("revoke", REVOKED, ids=lambda revoke: revoke.__name__)
def test_a_shell_ends_when_its_users_sign_in_is_revoked(app, admin_client, running, revoke):
    """The shell is closed (4401) within seconds, and what it started ends with it."""
    container = f"{running}-box-1"
    carol = client_with_role(app, admin_client, "carol", "admin")
    with carol.websocket_connect(shell_url(running, carol), headers=ORIGIN) as ws:
        keep_printing(ws)
        wait_until(
            lambda: any("sleep 600" in p for p in processes(container)), what="the sleep started"
        )
        revoke(admin_client, carol, "carol")
        closed = closed_by_the_service(ws)
    assert closed["code"] == 4401, closed
    assert "sign-in has ended" in closed["reason"]
    wait_until(
        lambda: not any("sleep 600" in p for p in processes(container)), what="the sleep ended"
    )
    ended = audit_entry(admin_client, "container.shell.end")
    assert ended["actor"] == "carol" and "sign-in has ended" in ended["detail"]


def test_a_shell_ends_when_its_users_role_no_longer_has_one(app, admin_client, running):
    """A role lowered while the sign-in goes on (the API revokes sign-ins with a change of
    role; this is the check beneath that, written in the database) closes the shell with
    4403."""
    carol = client_with_role(app, admin_client, "carol", "admin")
    with carol.websocket_connect(shell_url(running, carol), headers=ORIGIN) as ws:
        keep_printing(ws)
        with app.state.services.db.session() as session:
            session.execute(update(User).where(User.username == "carol").values(role="operator"))
        closed = closed_by_the_service(ws)
    assert (closed["code"], closed["reason"]) == (4403, "A shell needs the admin role")
    assert carol.get("/api/auth/me").status_code == 200  # still signed in, as an operator
