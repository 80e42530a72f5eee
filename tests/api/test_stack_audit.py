"""The audit log names a created stack by its id, not by the name as typed."""

import pytest

from tests.support.stacks import compose_text, service

pytestmark = pytest.mark.docker


def test_stack_creation_is_audited_with_the_stack_id(admin_client, docker_cleanup):
    docker_cleanup.compose_project("my-web-app")
    response = admin_client.post(
        "/api/stacks", json={"name": "My Web App", "compose": compose_text(web=service())}
    )
    assert response.status_code == 201, response.text
    assert response.json()["id"] == "my-web-app"
    entry = admin_client.get("/api/audit").json()["items"][0]
    assert (entry["action"], entry["target"], entry["outcome"]) == (
        "stack.create",
        "my-web-app",
        "success",
    )


def test_a_refused_creation_is_audited_with_the_name_as_typed(admin_client):
    response = admin_client.post("/api/stacks", json={"name": "Bad One", "compose": "nope: ["})
    assert response.status_code == 400
    entry = admin_client.get("/api/audit").json()["items"][0]
    assert (entry["action"], entry["target"], entry["outcome"]) == (
        "stack.create",
        "Bad One",
        "failure",
    )
