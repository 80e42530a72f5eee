"""An open event stream ends when the credential that opened it is revoked."""

import asyncio
import time

from stackyard.auth import sessions
from stackyard.auth.streams import while_valid
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, sign_in


async def _forever():
    n = 0
    while True:
        await asyncio.sleep(0.05)
        n += 1
        yield n


def _principal(app, client):
    with app.state.db.session() as session:
        return sessions.principal_from_session(session, client.cookies["stackyard_session"])


def _drain(app, principal, revoke) -> tuple[int, float]:
    """Follow a never-ending stream, revoke after a moment; (items seen, seconds)."""

    async def follow() -> tuple[int, float]:
        seen = 0
        started = time.monotonic()
        async for _ in while_valid(app.state.db, principal, _forever(), every=0.2):
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
    with app.state.db.session() as session:
        principal = sessions.principal_from_token(session, secret)
    _drain(app, principal, lambda: admin_client.delete(f"/api/users/alice/tokens/{token_id}"))


def test_stream_goes_on_while_the_credential_works(app, admin_client):
    principal = _principal(app, admin_client)

    async def some() -> int:
        seen = 0
        async for _ in while_valid(app.state.db, principal, _forever(), every=0.1):
            seen += 1
            if seen == 20:
                return seen
        return seen

    assert asyncio.run(some()) == 20
    sign_in(admin_client, "admin", ADMIN_PASSWORD)
