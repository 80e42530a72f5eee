"""The roles: admins edit and administer, operators run actions, viewers read."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from stackyard.db import Database
from tests.support.service import USER_PASSWORD, settings_in, sign_in, started

COMPOSE = "services:\n  web:\n    image: stackyard-test/busybox:1\n"


@pytest.fixture
def stack(stacks_dir: Path) -> str:
    folder = stacks_dir / "demo"
    folder.mkdir()
    (folder / "compose.yaml").write_text(COMPOSE)
    (folder / ".env").write_text("DB_PASSWORD=hunter2-hunter2\n")
    return "demo"


EDITS = [
    ("put", "/api/stacks/demo/compose", {"content": COMPOSE}),
    ("put", "/api/stacks/demo/env", {"content": "A=1\n"}),
    ("put", "/api/stacks/demo/secrets", {"content": "S=1\n"}),
    ("get", "/api/stacks/demo/secrets", None),
    ("post", "/api/stacks", {"name": "new", "compose": COMPOSE}),
    ("delete", "/api/stacks/demo", None),
    ("get", "/api/files", None),
    ("get", "/api/registries", None),
]
OPERATIONS = [
    ("post", "/api/stacks/demo/actions/stop", None),
    ("put", "/api/stacks/demo/auto-update", {"enabled": True}),
    ("post", "/api/stacks/updates/check", None),
]


def _call(client: TestClient, method: str, path: str, body):
    return client.request(method.upper(), path, json=body)


@pytest.mark.docker
def test_operator_runs_actions_but_edits_nothing(user_client, stack, stacks_dir):
    for method, path, body in EDITS:
        response = _call(user_client, method, path, body)
        assert response.status_code == 403, (method, path, response.text)
        assert response.json() == {"detail": "This action needs the admin role"}
    for method, path, body in OPERATIONS:
        assert _call(user_client, method, path, body).status_code < 400, path
    assert (stacks_dir / "demo" / "compose.yaml").read_text() == COMPOSE
    assert not (stacks_dir / "new").exists()


@pytest.mark.docker
def test_booleans_must_be_booleans(user_client, stack):
    """`{"enabled": 0}` is not a boolean: refused, and nothing changes."""
    refused = user_client.put("/api/stacks/demo/auto-update", json={"enabled": 0})
    assert refused.status_code == 422 and "enabled" in refused.json()["detail"]
    assert user_client.get("/api/stacks/demo").json()["auto_update"] is False


@pytest.mark.docker
def test_viewer_reads_only(viewer_client, stack):
    assert viewer_client.get("/api/stacks").status_code == 200
    assert viewer_client.get("/api/stacks/updates").status_code == 200
    for method, path, body in [
        *EDITS,
        *OPERATIONS,
        ("post", "/api/stacks/demo/actions/stop", None),
    ]:
        response = _call(viewer_client, method, path, body)
        assert response.status_code == 403, (method, path, response.text)


@pytest.mark.docker
def test_env_is_shown_to_admins_only(admin_client, user_client, viewer_client, stack):
    assert "hunter2" in admin_client.get("/api/stacks/demo").json()["env"]
    for client in (user_client, viewer_client):
        detail = client.get("/api/stacks/demo")
        assert detail.status_code == 200
        assert detail.json()["env"] is None
        assert "hunter2" not in detail.text


def test_legacy_user_accounts_become_operators(central_app, tmp_path: Path):
    settings = settings_in(tmp_path)
    with started(central_app, settings) as client:
        sign_in(client, "admin", settings.admin_password)
        made = client.post(
            "/api/users", json={"username": "old", "password": USER_PASSWORD, "role": "operator"}
        )
        assert made.status_code == 201
    db = Database(settings.effective_database_url)
    with db.engine.begin() as conn:  # as an older version left it
        conn.execute(text("UPDATE users SET role = 'user' WHERE username = 'old'"))
    db.dispose()
    for _ in range(2):  # the reconcile is idempotent
        with started(central_app, settings) as client:
            sign_in(client, "old", USER_PASSWORD)
            assert client.get("/api/auth/me").json()["role"] == "operator"
