"""The real deployment: the image built from deploy/Dockerfile, started with
deploy/compose.yaml, driving the host's engine through the mounted socket."""

from __future__ import annotations

import contextlib
import shutil
import uuid
from pathlib import Path

import docker
import httpx
import pytest

from tests.support.docker import DockerCleanup
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

BUSYBOX = "stackyard-test/busybox:1"


def create_and_start(client: httpx.Client, cleanup: DockerCleanup, name: str, compose: str):
    """Create a stack through the API, start it, wait until it runs; returns its id."""
    created = client.post("/api/stacks", json={"name": name, "compose": compose})
    assert created.status_code == 201, created.text
    stack_id = cleanup.compose_project(created.json()["id"])
    started = client.post(f"/api/stacks/{stack_id}/actions/start")
    assert started.status_code == 202, started.text

    def state() -> str:
        stack = client.get(f"/api/stacks/{stack_id}")
        assert stack.status_code == 200, stack.text
        return str(stack.json()["state"])

    wait_until(lambda: state() == "running", what=f"stack {stack_id} running")
    return stack_id


def stack_containers(docker_client: docker.DockerClient, stack_id: str):
    return docker_client.containers.list(
        all=True, filters={"label": f"com.docker.compose.project={stack_id}"}
    )


def test_the_deployed_service_starts_a_stack_on_its_host(
    deploy, tmp_path: Path, docker_client: docker.DockerClient, docker_cleanup: DockerCleanup
):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    deployment = deploy(STACKS_DIR=str(stacks))

    service = deployment.container()
    assert service.attrs["State"]["Health"]["Status"] == "healthy"
    assert service.image.tags and deployment.env["STACKYARD_VERSION"] in service.image.tags[0]
    with deployment.client() as client:
        assert client.get("/api/health").status_code == 200
        compose = f'services:\n  web:\n    image: {BUSYBOX}\n    command: ["sleep", "600"]\n'
        stack_id = create_and_start(
            client, docker_cleanup, f"deploy-{uuid.uuid4().hex[:6]}", compose
        )

    # On the host's engine, beside the service's own container.
    (container,) = stack_containers(docker_client, stack_id)
    assert container.status == "running"
    assert container.attrs["Config"]["Image"] == BUSYBOX
    assert container.labels["com.docker.compose.service"] == "web"
    assert container.labels["com.docker.compose.project.working_dir"] == str(stacks / stack_id)
    assert (stacks / stack_id / "compose.yaml").read_text() == compose
    # What stacks from git and repository destinations run.
    for tool in (["git", "--version"], ["ssh", "-V"], ["gpg", "--version"], ["restic", "version"]):
        code, output = service.exec_run(tool)
        assert code == 0, (tool, output)


#: The stacks folder inside the container, when it differs from the host's.
IN_CONTAINER = Path("/stacks")


def test_a_stacks_folder_at_another_host_path_binds_host_folders(
    deploy, tmp_path: Path, docker_client: docker.DockerClient, docker_cleanup: DockerCleanup
):
    """STACKS_DIR=/stacks in the container, STACKS_HOST_DIR=<a host folder>: a stack's
    relative bind mount must name the host folder, which the engine resolves."""
    host_dir = tmp_path / "host-stacks"
    host_dir.mkdir()
    deployment = deploy(STACKS_DIR=str(IN_CONTAINER), STACKS_HOST_DIR=str(host_dir))
    assert any(
        m["Source"] == str(host_dir) and m["Destination"] == str(IN_CONTAINER)
        for m in deployment.container().attrs["Mounts"]
    )
    compose = (
        "services:\n"
        "  app:\n"
        f"    image: {BUSYBOX}\n"
        '    command: ["sh", "-c", "echo written-inside > /data/hello.txt && exec sleep 600"]\n'
        '    volumes: ["./data:/data"]\n'
    )
    stack_id = f"binds-{uuid.uuid4().hex[:6]}"
    had_in_container_path = IN_CONTAINER.exists()
    try:
        with deployment.client() as client:
            assert create_and_start(client, docker_cleanup, stack_id, compose) == stack_id

        assert (host_dir / stack_id / "compose.yaml").read_text() == compose
        (container,) = stack_containers(docker_client, stack_id)
        binds = {m["Destination"]: m["Source"] for m in container.attrs["Mounts"]}
        assert binds["/data"] == str(host_dir / stack_id / "data")
        written = host_dir / stack_id / "data" / "hello.txt"
        wait_until(written.exists, what=f"{written} written")
        assert written.read_text() == "written-inside\n"
    finally:
        # A wrong bind source is created on the host by the engine: never leave it.
        shutil.rmtree(IN_CONTAINER / stack_id, ignore_errors=True)
        if not had_in_container_path:
            with contextlib.suppress(OSError):
                IN_CONTAINER.rmdir()
