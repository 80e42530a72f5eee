"""Request bodies: authenticated before they are read, capped, valid Unicode."""

import contextlib
import json
import socket
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.service import ADMIN_PASSWORD, sign_in


@pytest.fixture
def server(shared_server):
    """These tests change nothing: one real server serves them all."""
    return shared_server


def _raw_request(url: str, head: str, body_bytes: int) -> tuple[str, int]:
    """Send a request head announcing `body_bytes`, then as much of the body as the
    server takes before it answers; returns (status line, bytes it took)."""
    host, port = url.removeprefix("http://").split(":")
    sent = 0
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        chunk = b"x" * 65536
        sock.settimeout(0.2)
        deadline = time.monotonic() + 10
        reply = b""
        while sent < body_bytes and time.monotonic() < deadline:
            with contextlib.suppress(BlockingIOError, TimeoutError, OSError):
                sent += sock.send(chunk)
            try:
                reply += sock.recv(65536)
            except (TimeoutError, BlockingIOError):
                continue
            if reply:
                break
        sock.settimeout(5)
        while b"\r\n" not in reply:
            more = sock.recv(65536)
            if not more:
                break
            reply += more
    return reply.split(b"\r\n", 1)[0].decode(), sent


def test_unauthenticated_body_is_refused_before_it_is_read(server):
    """A 200 MB body to a signed-in route is answered 401 without the server reading it."""
    size = 200 * 1024 * 1024
    head = (
        "POST /api/stacks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    status, sent = _raw_request(server.url, head, size)
    assert status.startswith("HTTP/1.1 401"), status
    assert sent < 32 * 1024 * 1024  # answered long before the body went over


def test_sign_in_body_is_capped(server):
    size = 200 * 1024 * 1024
    head = (
        "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    status, sent = _raw_request(server.url, head, size)
    assert status.startswith("HTTP/1.1 413"), status
    assert sent < 32 * 1024 * 1024


def test_chunked_body_over_the_limit_is_refused(server):
    with httpx.Client(base_url=server.url) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)

        def chunks():
            for _ in range(8):
                yield b" " * (1024 * 1024)

        response = client.post(
            "/api/auth/tokens", content=chunks(), headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 413
    assert "too large" in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/api/stacks", {"name": "s\ud800", "compose": "services: {}\n"}),
        ("post", "/api/stacks", {"name": "ok", "compose": "x: '\udfff'\n"}),
        ("put", "/api/files/content", {"path": "a.txt", "content": "\ud800", "version": None}),
        ("post", "/api/users", {"username": "x", "password": "\ud800" * 10}),
    ],
)
def test_lone_surrogates_are_refused_and_change_nothing(
    admin_client, stacks_dir, method, path, body
):
    escaped = json.dumps(body)  # ASCII with \\uXXXX escapes, as a client may send it
    response = admin_client.request(
        method.upper(), path, content=escaped, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text
    assert "surrogate" in response.json()["detail"]
    assert list(stacks_dir.iterdir()) == []


def test_valid_surrogate_pairs_are_fine(admin_client: TestClient):
    response = admin_client.post(
        "/api/users", json={"username": "emoji", "password": "pass-\U0001f600-word"}
    )
    assert response.status_code == 201
