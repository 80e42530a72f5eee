"""The host's containers that no stack owns: listed for everyone, started, stopped and
read by admins (audited), on a real server and engine, beside a stack whose containers
never show there."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from stackyard.docker.helper import HELPER_LABEL
from tests.containers.sse import events
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, sign_in
from tests.support.stacks import compose

BUSYBOX = "stackyard-test/busybox:1"
COUNTER = "i=0; while true; do echo line-$i; i=$((i+1)); sleep 0.2; done"
COMPOSE = f"""\
services:
  app:
    image: {BUSYBOX}
    command: ["sleep", "600"]
    init: true
"""


@pytest.fixture
def server(shared_server):
    return shared_server


@contextlib.contextmanager
def _client(
    server, username: str = "admin", password: str = ADMIN_PASSWORD
) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        sign_in(client, username, password)
        yield client


def _listed(client: httpx.Client) -> dict[str, dict]:
    answer = client.get("/api/containers")
    assert answer.status_code == 200, answer.text
    return {container["name"]: container for container in answer.json()}


def test_containers_outside_the_stacks_are_listed_run_and_read(
    server, docker_client, docker_cleanup, docker_labels, tmp_path
):
    tag = uuid.uuid4().hex[:6]
    stack_id = f"inside-{tag}"
    folder = Path(server.env["STACKS_DIR"]) / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    compose(folder.parent, stack_id, "up", "-d")
    other = f"elsewhere-{tag}"  # a compose project whose folder is no stack here
    (tmp_path / other).mkdir()
    (tmp_path / other / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(other)
    compose(tmp_path, other, "up", "-d")
    loose = f"loose-{tag}"
    docker_client.containers.run(
        BUSYBOX, ["sh", "-c", COUNTER], name=loose, labels=docker_labels, detach=True, init=True
    )
    helper = docker_client.containers.create(
        BUSYBOX, ["true"], labels={**docker_labels, HELPER_LABEL: "stackyard"}
    )

    with _client(server) as admin:
        for role in ("operator", "viewer"):
            made = admin.post(
                "/api/users",
                json={"username": f"{role}-{tag}", "password": USER_PASSWORD, "role": role},
            )
            assert made.status_code == 201, made.text

        listed = _listed(admin)
        assert listed[loose] == {
            "name": loose,
            "image": BUSYBOX,
            "state": "running",
            "status": listed[loose]["status"],
            "health": None,
            "ports": [],
            "project": None,
        }
        assert listed[loose]["status"].startswith("Up")
        assert listed[f"{other}-app-1"]["project"] == other
        assert f"{stack_id}-app-1" not in listed  # the stack's own
        assert helper.name not in listed  # Stackyard's helpers are its own business

        stopped = admin.post(f"/api/containers/{loose}/actions/stop")
        assert stopped.status_code == 200, stopped.text
        assert stopped.json()["state"] == "exited"
        assert docker_client.containers.get(loose).status == "exited"
        started = admin.post(f"/api/containers/{loose}/actions/start")
        assert started.status_code == 200 and started.json()["state"] == "running"

        # A stack's container is the stack's: not reachable here, and left running.
        refused = admin.post(f"/api/containers/{stack_id}-app-1/actions/stop")
        assert refused.status_code == 404 and "outside the stacks" in refused.json()["detail"]
        assert docker_client.containers.get(f"{stack_id}-app-1").status == "running"
        assert admin.post("/api/containers/nope/actions/stop").status_code == 404
        assert admin.post(f"/api/containers/{loose}/actions/kill").status_code == 422

        audit = admin.get("/api/audit", params={"limit": 20}).json()["items"]
        done = [(e["action"], e["target"], e["outcome"]) for e in audit]
        assert ("container.stop", loose, "success") in done
        assert ("container.start", loose, "success") in done
        assert ("container.stop", f"{stack_id}-app-1", "failure") in done

        # The logs: the tail, then lines as they come.
        url = f"/api/containers/{loose}/logs"
        with admin.stream("GET", url, params={"tail": 3}, timeout=30) as response:
            assert response.status_code == 200, response.read()
            stream = events(response)
            _, first = next(stream)
            assert len(first["lines"]) == 3
            seen = list(first["lines"])
            while len(seen) < 8:
                seen += next(stream)[1]["lines"]
        assert all(line["container"] == loose for line in seen)
        numbers = [int(line["text"].removeprefix("line-")) for line in seen]
        assert numbers[3:] == list(range(numbers[3], numbers[3] + len(numbers) - 3))
        # No such container: a 404 that says so before any stream starts.
        missing = admin.get("/api/containers/nope-none/logs", timeout=30)
        assert missing.status_code == 404
        assert "No container 'nope-none'" in missing.json()["detail"]

    for role in ("operator", "viewer"):  # they see the list, and act on none of it
        with _client(server, f"{role}-{tag}", USER_PASSWORD) as user:
            assert loose in _listed(user)
            assert user.post(f"/api/containers/{loose}/actions/stop").status_code == 403
            assert user.get(f"/api/containers/{loose}/logs").status_code == 403
    assert docker_client.containers.get(loose).status == "running"


def test_the_service_s_own_container_is_not_stopped_from_its_own_page(
    admin_client, docker_client, docker_labels, docker_cleanup, monkeypatch
):
    """Run in a container, the service lists its own container among those outside the
    stacks, but refuses to stop it (nothing would be left to start it again). Here this
    process is not in a container: a `docker run` container stands in for its own."""
    own = docker_client.containers.run(
        BUSYBOX,
        ["sleep", "600"],
        name=f"own-{uuid.uuid4().hex[:6]}",
        labels=docker_labels,
        detach=True,
        init=True,
    )
    monkeypatch.setattr("stackyard.containers.outside.own_container_id", lambda: own.id)
    assert own.name in {c["name"] for c in admin_client.get("/api/containers").json()}
    refused = admin_client.post(f"/api/containers/{own.name}/actions/stop")
    assert refused.status_code == 409 and "own container" in refused.json()["detail"]
    own.reload()
    assert own.status == "running"
