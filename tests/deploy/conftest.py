"""The service deployed as users deploy it: the image built from deploy/Dockerfile by
`scripts/setup.sh --test` (scripts/stackyard-image.sh), started with deploy/compose.yaml
in a compose project of its own, with the Docker socket and a stacks folder mounted."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import docker
import httpx
import pytest

from tests.support.docker import TEST_LABEL, DockerCleanup
from tests.support.service import ADMIN_PASSWORD, free_port, sign_in
from tests.support.stacks import HELPER

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
#: The image scripts/stackyard-image.sh builds (STACKYARD_TEST_IMAGE to try another).
IMAGE = os.environ.get("STACKYARD_TEST_IMAGE", "stackyard/stackyard:test")
HEALTHY_WITHIN = 60.0

#: What the tests add to deploy/compose.yaml, as a user's override file would: a fast
#: health check (the image's test, checked every second), nothing that reaches out of
#: the machine, and this run's label for the cleanup. (The local helper image is a
#: setting in the deployment's variables, as a user sets it.)
OVERRIDE = """\
services:
  stackyard:
    environment:
      STACKYARD_UPDATE_CHECK_INTERVAL: "0"
    healthcheck:
      interval: 1s
      timeout: 5s
    labels:
      {label}: "{run_id}"
"""
#: Added for a deployment on the host's network: the service then reaches registries on
#: this machine's loopback (where the test registry listens) as the engine does, and
#: listens on a port of its own.
HOST_NETWORK = """\
services:
  stackyard:
    network_mode: host
    ports: !reset []
    environment:
      STACKYARD_HOST: 127.0.0.1
      STACKYARD_PORT: "{port}"
    healthcheck:
      test:
        - CMD
        - python
        - -c
        - import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/api/health')
"""


@dataclass
class Deployment:
    project: str
    url: str
    env: dict[str, str]
    files: list[Path]
    docker: docker.DockerClient
    env_files: list[Path] = field(default_factory=list)

    def compose_command(self) -> list[str]:
        """`docker compose` for this deployment: its project, files and env files."""
        command = ["docker", "compose", "-p", self.project]
        for file in self.files:
            command += ["-f", str(file)]
        for env_file in self.env_files:
            command += ["--env-file", str(env_file)]
        return command

    def compose(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.compose_command(), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
        )

    def container(self):
        found = self.docker.containers.list(
            all=True,
            filters={
                "label": [
                    f"com.docker.compose.project={self.project}",
                    "com.docker.compose.service=stackyard",
                ]
            },
        )
        assert len(found) == 1, found
        return found[0]

    def logs(self) -> str:
        return self.compose("logs", "--no-color", timeout=30).stdout

    def wait_healthy(self, timeout: float = HEALTHY_WITHIN) -> None:
        """Until the container's own health check (the image's HEALTHCHECK) says so."""
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            container = self.container()
            state = container.attrs["State"]
            status = (state.get("Health") or {}).get("Status")
            if status == "healthy":
                return
            if state["Status"] in ("exited", "dead") or state.get("Restarting"):
                break
            time.sleep(0.5)
        pytest.fail(
            f"the service container did not become healthy (health: {status}, "
            f"state: {state['Status']}):\n{self.logs()[-4000:]}",
            pytrace=False,
        )

    @contextlib.contextmanager
    def client(self) -> Iterator[httpx.Client]:
        """Signed in as the first admin (the password the deployment was given)."""
        with httpx.Client(base_url=self.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            yield client


@pytest.fixture(scope="session")
def stackyard_image(docker_client: docker.DockerClient) -> str:
    try:
        docker_client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(
            f"the image {IMAGE} is missing: run `scripts/setup.sh --test` "
            "(it builds it with scripts/stackyard-image.sh)",
            pytrace=False,
        )
    return IMAGE


@pytest.fixture
def deploy(
    tmp_path: Path,
    stackyard_image: str,
    docker_client: docker.DockerClient,
    docker_cleanup: DockerCleanup,
) -> Iterator[Callable[..., Deployment]]:
    """deploy(**variables) -> a started, healthy deployment of deploy/compose.yaml with
    these compose variables (STACKS_DIR, STACKS_HOST_DIR, ...); `down -v` at the end."""
    started: list[Deployment] = []

    def start(env_file: bool = False, host_network: bool = False, **variables: str) -> Deployment:
        """With `env_file`, the variables are given to compose in a file of their own
        (`--env-file`), as a self-update must find them again; with `host_network`, the
        service runs on the host's network (HOST_NETWORK)."""
        project = docker_cleanup.compose_project(f"sy-deploy-{uuid.uuid4().hex[:8]}")
        override = tmp_path / f"{project}.override.yaml"
        override.write_text(OVERRIDE.format(label=TEST_LABEL, run_id=docker_cleanup.run_id))
        overrides = [override]
        port = free_port()
        if host_network:
            overrides.append(tmp_path / f"{project}.host-network.yaml")
            overrides[-1].write_text(HOST_NETWORK.format(port=port))
        name, _, version = stackyard_image.rpartition(":")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("STACKS_", "STACKYARD_", "COMPOSE_"))
        }
        env.update(
            STACKYARD_IMAGE=name,
            STACKYARD_VERSION=version,
            STACKYARD_PORT=f"127.0.0.1:{port}",
            STACKYARD_ADMIN_PASSWORD=ADMIN_PASSWORD,
            BACKUP_HELPER_IMAGE=HELPER,
        )
        env.update(variables)
        env_files = []
        if env_file:
            names = ("STACKYARD_", "STACKS_", "BACKUP_")
            written = tmp_path / f"{project}.env"
            written.write_text("".join(f"{k}={v}\n" for k, v in env.items() if k.startswith(names)))
            env_files.append(written)
        deployment = Deployment(
            project=project,
            url=f"http://{env['STACKYARD_PORT']}",
            env=env,
            files=[DEPLOY / "compose.yaml", *overrides],
            docker=docker_client,
            env_files=env_files,
        )
        started.append(deployment)
        # --no-build: the image is the one setup built; nothing is pulled either.
        done = deployment.compose("up", "-d", "--no-build", "--pull", "never")
        assert done.returncode == 0, done.stderr
        deployment.wait_healthy()
        return deployment

    yield start
    for deployment in started:
        deployment.compose("down", "-v", "--remove-orphans", "-t", "5")
