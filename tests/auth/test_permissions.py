"""What each role may do, as `GET /api/auth/me` lists it for the signed-in user."""

from fastapi.testclient import TestClient

from stackyard.auth.permissions import PERMISSIONS

OPERATOR = [
    "stacks.run",
    "stacks.checkUpdates",
    "stacks.autoUpdate",
    "stacks.logs",
    "backups.create",
    "disk.stackImages",
]
ADMIN_ONLY = [
    "stacks.shell",
    "backups.administer",
    "destinations.manage",
    "schedules.manage",
    "agents.manage",
    "stacks.editFiles",
    "stacks.create",
    "stacks.delete",
    "containers.manage",
    "disk.manage",
    "files",
    "notifications.manage",
    "system.update",
    "admin.users",
    "admin.registries",
    "admin.audit",
]


def _permissions(client: TestClient) -> list[str]:
    response = client.get("/api/auth/me")
    assert response.status_code == 200
    permissions: list[str] = response.json()["permissions"]
    return permissions


def test_every_permission_belongs_to_operators_or_admins():
    assert sorted(PERMISSIONS) == sorted(OPERATOR + ADMIN_ONLY)


def test_admins_may_do_everything(admin_client: TestClient):
    assert sorted(_permissions(admin_client)) == sorted(OPERATOR + ADMIN_ONLY)


def test_operators_run_and_back_up(user_client: TestClient):
    assert user_client.get("/api/auth/me").json()["role"] == "operator"
    assert sorted(_permissions(user_client)) == sorted(OPERATOR)


def test_viewers_may_only_read(viewer_client: TestClient):
    assert viewer_client.get("/api/auth/me").json()["role"] == "viewer"
    assert _permissions(viewer_client) == []
