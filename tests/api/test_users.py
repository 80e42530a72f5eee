from fastapi.testclient import TestClient

from tests.support.service import USER_PASSWORD, sign_in


def _audit(admin_client: TestClient) -> list[dict]:
    """The admin actions in the audit log, newest first (sign-ins left out)."""
    response = admin_client.get("/api/audit")
    assert response.status_code == 200
    return [e for e in response.json()["items"] if not e["action"].startswith("auth.")]


def test_admin_creates_a_user_who_can_sign_in_and_it_is_audited(app, admin_client):
    response = admin_client.post(
        "/api/users", json={"username": "bob", "password": "bob-password-1", "role": "operator"}
    )
    assert response.status_code == 201
    assert response.json()["role"] == "operator"
    sign_in(TestClient(app), "bob", "bob-password-1")
    entry = _audit(admin_client)[0]
    assert entry["actor"] == "admin"
    assert entry["action"] == "user.create"
    assert entry["target"] == "bob"
    assert entry["outcome"] == "success"
    assert "bob-password-1" not in str(_audit(admin_client))


def test_failed_admin_action_is_audited_as_failure_and_changes_nothing(admin_client):
    admin_client.post("/api/users", json={"username": "bob", "password": "bob-password-1"})
    again = admin_client.post("/api/users", json={"username": "bob", "password": "other-pass-1"})
    assert again.status_code == 409
    assert again.json() == {"detail": "User 'bob' already exists"}
    entry = _audit(admin_client)[0]
    assert (entry["action"], entry["target"], entry["outcome"]) == ("user.create", "bob", "failure")
    assert entry["detail"] == "User 'bob' already exists"
    assert [u["username"] for u in admin_client.get("/api/users").json()] == ["admin", "bob"]


def test_bad_user_input_is_refused_with_detail(admin_client):
    bad_name = admin_client.post("/api/users", json={"username": "../x", "password": "long-enough"})
    assert bad_name.status_code == 400 and "Username must be" in bad_name.json()["detail"]
    bad_role = admin_client.post(
        "/api/users", json={"username": "x", "password": "long-enough", "role": "root"}
    )
    assert bad_role.status_code == 422 and "role" in bad_role.json()["detail"]
    assert [u["username"] for u in admin_client.get("/api/users").json()] == ["admin"]


def test_operators_and_viewers_cannot_reach_admin_routes(user_client, viewer_client):
    for client in (user_client, viewer_client):
        for method, path in [
            ("get", "/api/users"),
            ("post", "/api/users"),
            ("patch", "/api/users/admin"),
            ("delete", "/api/users/admin"),
            ("put", "/api/users/admin/password"),
            ("get", "/api/users/admin/tokens"),
            ("delete", "/api/users/admin/tokens/1"),
            ("get", "/api/audit"),
        ]:
            response = (
                getattr(client, method)(path)
                if method in ("get", "delete")
                else getattr(client, method)(path, json={"username": "x", "password": "y" * 10})
            )
            assert response.status_code == 403, (method, path)
            assert response.json() == {"detail": "This action needs the admin role"}


def _token_of(app, client: TestClient) -> TestClient:
    created = client.post("/api/auth/tokens", json={"name": "t", "password": USER_PASSWORD})
    assert created.status_code == 201, created.text
    bearer = TestClient(app, raise_server_exceptions=False)
    bearer.headers["Authorization"] = f"Bearer {created.json()['token']}"
    assert bearer.get("/api/auth/me").status_code == 200
    return bearer


def test_admin_resets_a_password_and_the_users_sessions_and_tokens_end(
    app, admin_client, user_client
):
    bearer = _token_of(app, user_client)
    response = admin_client.put("/api/users/alice/password", json={"password": "reset-by-admin"})
    assert response.status_code == 204
    assert user_client.get("/api/auth/me").status_code == 401
    assert bearer.get("/api/auth/me").status_code == 401
    sign_in(TestClient(app), "alice", "reset-by-admin")
    assert _audit(admin_client)[0]["action"] == "user.set_password"


def test_delete_rules(app, admin_client, user_client):
    bearer = _token_of(app, user_client)
    assert admin_client.delete("/api/users/admin").status_code == 403
    assert admin_client.delete("/api/users/nobody").status_code == 404
    assert admin_client.delete("/api/users/alice").status_code == 204
    assert user_client.get("/api/auth/me").status_code == 401
    assert bearer.get("/api/auth/me").status_code == 401
    assert [u["username"] for u in admin_client.get("/api/users").json()] == ["admin"]


def test_last_admin_cannot_be_deleted(app, admin_client):
    admin_client.post(
        "/api/users", json={"username": "root2", "password": USER_PASSWORD, "role": "admin"}
    )
    other = TestClient(app, raise_server_exceptions=False)
    sign_in(other, "root2", USER_PASSWORD)
    assert other.delete("/api/users/admin").status_code == 204
    refused = other.delete("/api/users/root2")
    assert refused.status_code == 403  # own account


def test_audit_log_pages_newest_first(admin_client):
    for i in range(3):
        admin_client.post("/api/users", json={"username": f"u{i}", "password": USER_PASSWORD})
    page = admin_client.get("/api/audit", params={"limit": 2, "offset": 0}).json()
    assert page["total"] == 4  # and the admin's sign-in
    assert [e["target"] for e in page["items"]] == ["u2", "u1"]
    rest = admin_client.get("/api/audit", params={"limit": 2, "offset": 2}).json()
    assert [(e["action"], e["target"]) for e in rest["items"]] == [
        ("user.create", "u0"),
        ("auth.sign_in", "admin"),
    ]
    assert admin_client.get("/api/audit", params={"limit": 0}).status_code == 422
    huge = admin_client.get("/api/audit", params={"offset": "99999999999999999999"})
    assert huge.status_code == 422 and "offset" in huge.json()["detail"]


def test_admin_lists_and_revokes_any_users_tokens(app, admin_client, user_client):
    bearer = _token_of(app, user_client)
    listed = admin_client.get("/api/users/alice/tokens")
    assert listed.status_code == 200
    [token] = listed.json()
    assert token["name"] == "t" and "token" not in token
    assert admin_client.delete(f"/api/users/admin/tokens/{token['id']}").status_code == 404
    assert admin_client.delete(f"/api/users/alice/tokens/{token['id']}").status_code == 204
    assert bearer.get("/api/auth/me").status_code == 401
    assert admin_client.get("/api/users/alice/tokens").json() == []
    entry = _audit(admin_client)[0]
    assert (entry["action"], entry["target"], entry["outcome"]) == (
        "token.revoke",
        f"alice/{token['id']}",
        "success",
    )


def test_disabling_a_user_ends_everything_they_hold(app, admin_client, user_client):
    bearer = _token_of(app, user_client)
    disabled = admin_client.patch("/api/users/alice", json={"disabled": True})
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True
    assert user_client.get("/api/auth/me").status_code == 401
    assert bearer.get("/api/auth/me").status_code == 401
    assert admin_client.get("/api/users/alice/tokens").json() == []
    refused = TestClient(app).post(
        "/api/auth/login", json={"username": "alice", "password": USER_PASSWORD}
    )
    assert refused.status_code == 403 and "disabled" in refused.json()["detail"]
    assert admin_client.patch("/api/users/alice", json={"disabled": False}).status_code == 200
    sign_in(TestClient(app), "alice", USER_PASSWORD)
    assert [e["action"] for e in _audit(admin_client)[:2]] == ["user.update", "user.update"]


def test_role_changes_and_their_rules(app, admin_client, user_client):
    assert admin_client.patch("/api/users/admin", json={"role": "viewer"}).status_code == 403
    assert admin_client.patch("/api/users/admin", json={"disabled": True}).status_code == 403
    changed = admin_client.patch("/api/users/alice", json={"role": "viewer"})
    assert changed.status_code == 200 and changed.json()["role"] == "viewer"
    assert user_client.get("/api/auth/me").status_code == 401  # signs in again with the new role
    not_a_bool = admin_client.patch("/api/users/alice", json={"disabled": 0})
    assert not_a_bool.status_code == 422 and "disabled" in not_a_bool.json()["detail"]
    assert admin_client.patch("/api/users/alice", json={"role": "root"}).status_code == 422
