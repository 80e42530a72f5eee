"""An open event stream ends when the credential that opened it is revoked."""

import asyncio
import time
import uuid

import httpx
import pytest

from stackyard.auth import sessions
from stackyard.auth.streams import while_valid
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, sign_in
from tests.support.stacks import act, compose_text, service


async def _forever():
    n = 0
    while True:
        await asyncio.sleep(0.05)
        n += 1
        yield n


def _principal(app, client):
    with app.state.services.db.session() as session:
        return sessions.principal_from_session(session, client.cookies["stackyard_session"])


def _drain(app, principal, revoke) -> tuple[int, float]:
    """Follow a never-ending stream, revoke after a moment; (items seen, seconds)."""

    async def follow() -> tuple[int, float]:
        seen = 0
        started = time.monotonic()
        async for _ in while_valid(app.state.services.db, principal, _forever(), every=0.2):
            seen += 1
            if seen == 5:
                await asyncio.to_thread(revoke)
            assert time.monotonic() - started < 10, "the stream outlived its credential"
        return seen, time.monotonic() - started

    return asyncio.run(follow())


def test_stream_ends_when_the_session_signs_out(app, admin_client):
    principal = _principal(app, admin_client)
    seen, _ = _drain(app, principal, lambda: admin_client.post("/api/auth/logout"))
    assert seen >= 5


def test_stream_ends_when_the_user_is_disabled(app, admin_client, user_client):
    principal = _principal(app, user_client)
    seen, _ = _drain(
        app, principal, lambda: admin_client.patch("/api/users/alice", json={"disabled": True})
    )
    assert seen >= 5


def test_stream_ends_when_a_token_is_revoked(app, admin_client, user_client):
    created = user_client.post("/api/auth/tokens", json={"name": "t", "password": USER_PASSWORD})
    secret, token_id = created.json()["token"], created.json()["id"]
    with app.state.services.db.session() as session:
        principal = sessions.principal_from_token(session, secret)
    _drain(app, principal, lambda: admin_client.delete(f"/api/users/alice/tokens/{token_id}"))


def test_stream_goes_on_while_the_credential_works(app, admin_client):
    principal = _principal(app, admin_client)

    async def some() -> int:
        seen = 0
        async for _ in while_valid(app.state.services.db, principal, _forever(), every=0.1):
            seen += 1
            if seen == 20:
                return seen
        return seen

    assert asyncio.run(some()) == 20
    sign_in(admin_client, "admin", ADMIN_PASSWORD)


@pytest.mark.docker
def test_a_run_s_event_stream_ends_over_http_when_its_token_is_revoked(
    server, tmp_path, docker_cleanup
):
    """A real server, a stop that takes long (the container ignores SIGTERM), a script
    following the run with an API token: revoking the token ends the stream."""
    stack_id = f"slow-stop-{uuid.uuid4().hex[:6]}"
    folder = tmp_path / "stacks" / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(
        compose_text(
            web=service(
                command='["sh", "-c", "trap \\"\\" TERM; while true; do sleep 1; done"]',
                stop_grace_period="60s",
            )
        )
    )
    docker_cleanup.compose_project(stack_id)
    with httpx.Client(base_url=server.url, timeout=60) as admin:
        sign_in(admin, "admin", ADMIN_PASSWORD)
        assert act(admin, stack_id, "start")["status"] == "succeeded"
        token = admin.post("/api/auth/tokens", json={"name": "follow", "password": ADMIN_PASSWORD})
        assert token.status_code == 201, token.text
        bearer = {"Authorization": f"Bearer {token.json()['token']}"}
        assert admin.post(f"/api/stacks/{stack_id}/actions/stop").status_code == 202

        events: list[str] = []
        with httpx.stream(
            "GET", f"{server.url}/api/stacks/{stack_id}/run/events", headers=bearer, timeout=30
        ) as stream:
            assert stream.status_code == 200
            started = time.monotonic()
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    events.append(line.split(":", 1)[1].strip())
                    if len(events) == 1:  # following: now the token goes
                        revoked = admin.delete(f"/api/auth/tokens/{token.json()['id']}")
                        assert revoked.status_code == 204
            ended_after = time.monotonic() - started
        assert events and "end" not in events  # cut off, not the run's end
        assert ended_after < 15  # the stop itself would take 60 s
        assert admin.get(f"/api/stacks/{stack_id}/run").json()["status"] == "running"
