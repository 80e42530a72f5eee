from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from stackyard.db.models import LoginSession
from stackyard.db.types import utcnow
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, sign_in


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
    app.state.throttle.clock = lambda: clock[0]
    for _ in range(app.state.throttle.free_attempts):
        bad = client.post("/api/auth/login", json={"username": "admin", "password": "wrong-pass"})
        assert bad.status_code == 401
    blocked = client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) >= 1
    assert "Too many failed sign-ins" in blocked.json()["detail"]
    clock[0] += int(blocked.headers["Retry-After"])
    ok = client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
    assert ok.status_code == 200


def test_cookie_writes_need_the_csrf_token(app, client: TestClient):
    sign_in(client, "admin", ADMIN_PASSWORD)
    token = client.headers.pop("X-CSRF-Token")
    refused = client.post("/api/auth/tokens", json={"name": "ci"})
    assert refused.status_code == 403
    assert "X-CSRF-Token" in refused.json()["detail"]
    forged = client.post(
        "/api/auth/tokens", json={"name": "ci"}, headers={"X-CSRF-Token": "f" * 64}
    )
    assert forged.status_code == 403
    assert client.get("/api/auth/tokens").json() == []  # nothing was created
    ok = client.post("/api/auth/tokens", json={"name": "ci"}, headers={"X-CSRF-Token": token})
    assert ok.status_code == 201


def test_api_token_authenticates_without_cookie_or_csrf(app, admin_client: TestClient):
    created = admin_client.post("/api/auth/tokens", json={"name": "script"})
    assert created.status_code == 201
    secret = created.json()["token"]
    assert secret.startswith("sy_")
    bearer = TestClient(app)
    bearer.headers["Authorization"] = f"Bearer {secret}"
    assert bearer.get("/api/auth/me").json()["username"] == "admin"
    assert bearer.post("/api/auth/tokens", json={"name": "from-script"}).status_code == 201

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
    token_id = admin_client.post("/api/auth/tokens", json={"name": "a"}).json()["id"]
    assert user_client.delete(f"/api/auth/tokens/{token_id}").status_code == 404
    assert len(admin_client.get("/api/auth/tokens").json()) == 1


def test_sign_out_ends_the_session(admin_client: TestClient):
    cookie = admin_client.cookies["stackyard_session"]
    assert admin_client.post("/api/auth/logout").status_code == 204
    assert admin_client.get("/api/auth/me").status_code == 401
    admin_client.cookies.set("stackyard_session", cookie)  # a stolen copy is dead too
    assert admin_client.get("/api/auth/me").status_code == 401


def test_expired_session_is_refused(app, admin_client: TestClient):
    with app.state.db.session() as session:
        session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    response = admin_client.get("/api/auth/me")
    assert response.status_code == 401
    assert response.json() == {"detail": "Not signed in or the session has expired"}


def test_changing_password_needs_the_current_one_and_ends_sessions(app, user_client: TestClient):
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
    assert user_client.get("/api/auth/me").status_code == 401
    fresh = TestClient(app)
    sign_in(fresh, "alice", "a-brand-new-password")
