import asyncio
from datetime import timedelta

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from stackyard.clock import utcnow
from stackyard.db.models import LoginSession
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, settings_in, sign_in, started


def test_sign_in_sets_an_httponly_session_cookie(client: TestClient):
    response = client.post(
        "/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD}
    )
    assert response.status_code == 200
    assert response.json()["user"] == {"id": 1, "username": "admin", "role": "admin"}
    cookies = response.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("stackyard_session="))
    csrf = next(c for c in cookies if c.startswith("stackyard_csrf="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert "HttpOnly" not in csrf
    assert client.get("/api/auth/me").json()["username"] == "admin"


def test_wrong_password_and_unknown_user_look_the_same(client: TestClient):
    wrong = client.post("/api/auth/login", json={"username": "admin", "password": "nope-nope-nope"})
    unknown = client.post("/api/auth/login", json={"username": "ghost", "password": "nope-nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "Invalid username or password"}
    assert "stackyard_session" not in client.cookies


def test_repeated_failures_are_slowed_down(app, client: TestClient):
    clock = [5000.0]
    app.state.services.throttle.clock = lambda: clock[0]
    for _ in range(app.state.services.throttle.free_attempts):
        bad = client.post("/api/auth/login", json={"username": "admin", "password": "wrong-pass"})
        assert bad.status_code == 401
    blocked = client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) >= 1
    assert "Too many failed sign-ins" in blocked.json()["detail"]
    clock[0] += int(blocked.headers["Retry-After"])
    ok = client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
    assert ok.status_code == 200


def _login_from(client: TestClient, address: str, password: str) -> int:
    return client.post(
        "/api/auth/login",
        json={"username": "admin", "password": password},
        headers={"X-Forwarded-For": address},
    ).status_code


@pytest.fixture
def behind_proxy(central_app, tmp_path):
    """The service behind a reverse proxy at the test client's address."""
    settings = settings_in(tmp_path, trusted_proxies="127.0.0.1")
    with started(central_app, settings, client=("127.0.0.1", 50000)) as client:
        central_app.state.services.throttle.account_delay = 0.05
        yield client


def test_an_attacker_cannot_lock_the_owner_out(behind_proxy: TestClient):
    """Guesses from many addresses: each guessing address is refused, while the owner,
    from an address of their own, still signs in with the right password."""
    throttle = behind_proxy.app.state.services.throttle
    throttle.clock = lambda: 5000.0  # the attack is quick: no wait runs out meanwhile
    statuses = [
        _login_from(behind_proxy, f"203.0.113.{i % 3}", "guess-guess-guess") for i in range(18)
    ]
    assert statuses.count(401) == 15 and statuses.count(429) == 3  # 5 guesses per address
    assert _login_from(behind_proxy, "203.0.113.1", "guess-guess-guess") == 429
    assert throttle._wait(("account", "admin"), 5000.0) > 0  # the account is under attack
    assert _login_from(behind_proxy, "198.51.100.7", ADMIN_PASSWORD) == 200


def test_concurrent_guesses_get_no_more_tries_than_sequential_ones(behind_proxy: TestClient):
    """Fifty wrong guesses sent at once from one address: five are tried, the rest are
    refused before any password check; the owner elsewhere is not stuck behind them."""
    app = behind_proxy.app
    app.state.services.throttle.clock = lambda: 5000.0

    async def attack() -> tuple[list[int], int]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:

            async def login(address: str, password: str) -> int:
                answer = await client.post(
                    "/api/auth/login",
                    json={"username": "admin", "password": password},
                    headers={"X-Forwarded-For": address},
                )
                return answer.status_code

            guesses = [login("203.0.113.9", "guess-guess-guess") for _ in range(50)]
            *statuses, owner = await asyncio.gather(*guesses, login("198.51.100.7", ADMIN_PASSWORD))
            return statuses, owner

    statuses, owner = asyncio.run(attack())
    assert statuses.count(401) == app.state.services.throttle.free_attempts
    assert statuses.count(429) == 50 - app.state.services.throttle.free_attempts
    assert owner == 200


def test_forwarded_for_counts_only_from_trusted_proxies(app, client: TestClient):
    """Without STACKYARD_TRUSTED_PROXIES, a client cannot pick a fresh address per guess
    with X-Forwarded-For: all its guesses count against its real address."""
    app.state.services.throttle.clock = lambda: 5000.0  # no wait runs out between the guesses
    for i in range(app.state.services.throttle.free_attempts):
        assert _login_from(client, f"203.0.113.{i}", "guess-guess-guess") == 401
    assert _login_from(client, "203.0.113.200", ADMIN_PASSWORD) == 429


def test_cookie_writes_need_the_csrf_token(app, client: TestClient):
    sign_in(client, "admin", ADMIN_PASSWORD)
    token = client.headers.pop("X-CSRF-Token")
    body = {"name": "ci", "password": ADMIN_PASSWORD}
    refused = client.post("/api/auth/tokens", json=body)
    assert refused.status_code == 403
    assert "X-CSRF-Token" in refused.json()["detail"]
    forged = client.post("/api/auth/tokens", json=body, headers={"X-CSRF-Token": "f" * 64})
    assert forged.status_code == 403
    assert client.get("/api/auth/tokens").json() == []  # nothing was created
    ok = client.post("/api/auth/tokens", json=body, headers={"X-CSRF-Token": token})
    assert ok.status_code == 201


def _token(client: TestClient, name: str = "script", password: str = ADMIN_PASSWORD) -> dict:
    created = client.post("/api/auth/tokens", json={"name": name, "password": password})
    assert created.status_code == 201, created.text
    return created.json()


def _bearer(app, secret: str) -> TestClient:
    bearer = TestClient(app, raise_server_exceptions=False)
    bearer.headers["Authorization"] = f"Bearer {secret}"
    return bearer


def test_api_token_authenticates_without_cookie_or_csrf(app, admin_client: TestClient):
    secret = _token(admin_client)["token"]
    assert secret.startswith("sy_")
    bearer = _bearer(app, secret)
    assert bearer.get("/api/auth/me").json()["username"] == "admin"
    # A token alone cannot mint more tokens: the password is asked again.
    without = bearer.post("/api/auth/tokens", json={"name": "from-script"})
    assert without.status_code == 403
    wrong = bearer.post("/api/auth/tokens", json={"name": "x", "password": "guessed-wrong"})
    assert wrong.status_code == 403 and wrong.json() == {"detail": "The password is not correct"}
    _token(bearer, "from-script")

    listed = admin_client.get("/api/auth/tokens").json()
    assert [t["name"] for t in listed] == ["script", "from-script"]
    assert all("token" not in t for t in listed)  # the secret is shown once only
    assert listed[0]["last_used_at"] is not None

    assert admin_client.delete(f"/api/auth/tokens/{listed[0]['id']}").status_code == 204
    assert bearer.get("/api/auth/me").status_code == 401


def test_malformed_or_unknown_bearer_is_refused(app):
    client = TestClient(app)
    assert (
        client.get("/api/auth/me", headers={"Authorization": "Basic YWRtaW46eA=="}).status_code
        == 401
    )
    assert (
        client.get("/api/auth/me", headers={"Authorization": "Bearer sy_nope"}).status_code == 401
    )


def test_users_cannot_revoke_each_others_tokens(admin_client, user_client):
    token_id = _token(admin_client, "a")["id"]
    assert user_client.delete(f"/api/auth/tokens/{token_id}").status_code == 404
    assert len(admin_client.get("/api/auth/tokens").json()) == 1


def test_sign_out_ends_the_session(admin_client: TestClient):
    cookie = admin_client.cookies["stackyard_session"]
    response = admin_client.post("/api/auth/logout")
    assert response.status_code == 200
    assert response.json() == {"provider_logout_url": None}  # a password sign-in
    assert admin_client.get("/api/auth/me").status_code == 401
    admin_client.cookies.set("stackyard_session", cookie)  # a stolen copy is dead too
    assert admin_client.get("/api/auth/me").status_code == 401


def test_expired_session_is_refused(app, admin_client: TestClient):
    with app.state.services.db.session() as session:
        session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    response = admin_client.get("/api/auth/me")
    assert response.status_code == 401
    assert response.json() == {"detail": "Not signed in or the session has expired"}


def test_changing_password_needs_the_current_one_and_ends_other_credentials(
    app, user_client: TestClient
):
    other = TestClient(app)
    sign_in(other, "alice", USER_PASSWORD)
    bearer = _bearer(app, _token(user_client, "script", USER_PASSWORD)["token"])
    wrong = user_client.put(
        "/api/auth/password", json={"current_password": "not-it-at-all", "new_password": "x" * 12}
    )
    assert wrong.status_code == 400
    short = user_client.put(
        "/api/auth/password", json={"current_password": USER_PASSWORD, "new_password": "short"}
    )
    assert short.status_code == 400 and "at least 8" in short.json()["detail"]
    ok = user_client.put(
        "/api/auth/password",
        json={"current_password": USER_PASSWORD, "new_password": "a-brand-new-password"},
    )
    assert ok.status_code == 204
    assert user_client.get("/api/auth/me").status_code == 200  # this sign-in stays
    assert other.get("/api/auth/me").status_code == 401  # other sign-ins end
    assert bearer.get("/api/auth/me").status_code == 401  # tokens are revoked
    assert user_client.get("/api/auth/tokens").json() == []
    fresh = TestClient(app)
    sign_in(fresh, "alice", "a-brand-new-password")
