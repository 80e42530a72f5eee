"""The service's own environment never reaches compose, nor another stack's `.secrets`:
a real `stackyard serve` whose secrets a stack's compose file names, and a stack that
reads another's `.secrets`, shows them in no response and no log line."""

import json
import uuid

import httpx
import pytest

from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
from tests.support.stacks import wait_run

pytestmark = pytest.mark.docker

COMPOSE = """services:
  web:
    image: "stackyard-test/busybox${STACKYARD_ADMIN_PASSWORD}:1"
    command: ["sleep", "600"]
    labels:
      stackyard.test: stack
      password: "x${STACKYARD_ADMIN_PASSWORD}"
      key: "x${STACKYARD_SECRET_KEY}"
      database: "x${DATABASE_URL}"
"""

#: A stack that reads another stack's `.secrets` into an image name and a label.
PEEK = """services:
  web:
    image: "stackyard-test/busybox-${OTHER_TOKEN}:1"
    env_file: ../other/.secrets
    labels:
      token: "x${OTHER_TOKEN}"
"""


def test_service_secrets_never_reach_compose(tmp_path, docker_cleanup, docker_client):
    marker = uuid.uuid4().hex
    other_token = f"other-{uuid.uuid4().hex}"
    database_url = f"sqlite:///{tmp_path / 'data' / f'db-{marker}.sqlite'}"
    env = service_env(tmp_path, DATABASE_URL=database_url, STACKYARD_LOG_LEVEL="DEBUG")
    secrets = [ADMIN_PASSWORD, env["STACKYARD_SECRET_KEY"], marker, other_token]
    stacks = tmp_path / "stacks"
    (stacks / "by-hand").mkdir(parents=True)
    (stacks / "by-hand" / "compose.yaml").write_text(COMPOSE)
    (stacks / "other").mkdir()
    (stacks / "other" / "compose.yaml").write_text(COMPOSE)
    (stacks / "other" / ".secrets").write_text(f"OTHER_TOKEN={other_token}\n")
    (stacks / "peek").mkdir()
    (stacks / "peek" / "compose.yaml").write_text(PEEK)
    (stacks / "peek" / ".env").write_text("OTHER_TOKEN=\n")
    docker_cleanup.compose_project("by-hand")
    docker_cleanup.compose_project("leaky")

    server = start_server(tmp_path, env=env)
    bodies: list[str] = []
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)

            def call(method: str, path: str, **kwargs) -> httpx.Response:
                response = client.request(method, path, **kwargs)
                bodies.append(response.text)
                return response

            created = call("POST", "/api/stacks", json={"name": "leaky", "compose": COMPOSE})
            assert created.status_code == 201, created.text
            listing = call("GET", "/api/stacks")
            by_id = {s["id"]: s for s in listing.json()}
            assert set(by_id) == {"by-hand", "leaky", "other", "peek"}
            assert by_id["peek"]["state"] == "invalid"
            assert "outside the stack folder" in by_id["peek"]["error"]
            assert call("GET", "/api/stacks/peek").status_code == 200
            for stack_id in ("by-hand", "leaky"):
                detail = call("GET", f"/api/stacks/{stack_id}")
                assert detail.status_code == 200
                assert detail.json()["services"][0]["image"] == "stackyard-test/busybox:1"
            assert call("POST", "/api/stacks/updates/check").status_code == 200
            call("GET", "/api/stacks/updates")
            assert call("POST", "/api/stacks/leaky/actions/start").status_code == 202
            run = wait_run(client, "leaky")
            bodies.append(json.dumps(run))
            assert run["status"] == "succeeded", run
            call("GET", "/api/stacks/leaky/run")
            call("GET", "/api/stacks")
    finally:
        server.stop()

    (container,) = docker_client.containers.list(
        filters={"label": "com.docker.compose.project=leaky"}
    )
    labels = container.labels
    assert (labels["password"], labels["key"], labels["database"]) == ("x", "x", "x")
    log = server.log()
    for secret in secrets:
        for body in bodies:
            assert secret not in body
        assert secret not in log
