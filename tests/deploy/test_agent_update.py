"""An agent deployed with deploy/agent.compose.yaml, updated from the central through its
routes: the same self-update, and its pinned certificate survives the recreation (it
lives in the agent's data volume). Also an agent that dials the central: updated through
its tunnel, it dials again with the key it enrolled with (kept in the same volume)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import uuid

import httpx
import pytest

from tests.agents.helpers import add_agent
from tests.deploy.conftest import DEPLOY
from tests.deploy.test_self_update import (  # noqa: F401 (broken, releases: fixtures)
    broken,
    deployed_settings,
    helpers,
    releases,
    update_entries,
)
from tests.support.agents import AgentProcess, current_kind
from tests.support.docker import TEST_LABEL
from tests.support.service import ServerProcess, embedded_database_url, free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

#: On the host's network (to reach the loopback registry), on a port of its own.
AGENT_OVERRIDE = """\
services:
  agent:
    network_mode: host
    ports: !reset []
    command: {command}
    environment:
      STACKYARD_PORT: "{port}"
      STACKYARD_UPDATE_CHECK_INTERVAL: "0"
    healthcheck:
      test:
        - CMD
        - python
        - -c
        - import socket; socket.create_connection(('127.0.0.1', {port}), 4)
      interval: 1s
    labels:
      {label}: "{run_id}"
"""


database_url = embedded_database_url


@pytest.fixture
def settings(settings):
    """A central of the agents' release line (1.x)."""
    return settings.model_copy(update={"app_version": "1.0.0"})


def agent_version(url: str, token: str) -> str | None:
    try:
        answer = httpx.get(
            f"{url}/agent/health",
            headers={"Authorization": f"Bearer {token}"},
            verify=False,
            timeout=1,
        )
        return str(answer.json()["version"])
    except (httpx.TransportError, ValueError, KeyError):
        return None


@pytest.mark.parametrize(
    ("broken", "agent_kind"),
    [(None, "direct"), ("exits", "direct"), (None, "tunnel")],
    indirect=True,
)
def test_an_agent_is_updated_from_the_central_or_rolled_back(
    releases,  # noqa: F811 (the fixture imported above)
    broken,  # noqa: F811
    agent_kind,
    admin_client,
    docker_client,
    docker_cleanup,
    tmp_path,
):
    repository, _, _ = releases
    project = docker_cleanup.compose_project(f"sy-agent-{uuid.uuid4().hex[:8]}")
    port, token = free_port(), secrets.token_urlsafe(32)
    command = ["stackyard", "agent", "--host", "127.0.0.1"]
    if agent_kind == "tunnel":  # (made on the central first: the agent enrols with it)
        made = admin_client.post("/api/agents/tunnel", json={"name": "deployed"})
        assert made.status_code == 201, made.text
        central = current_kind().central_url(admin_client)
        command = ["stackyard", "agent", "--connect", central, "--enrol", made.json()["token"]]
    override = tmp_path / "agent.override.yaml"
    override.write_text(
        AGENT_OVERRIDE.format(
            port=port,
            label=TEST_LABEL,
            run_id=docker_cleanup.run_id,
            command=json.dumps(command),
        )
    )
    (tmp_path / "agent-stacks").mkdir()
    env_file = tmp_path / "agent.env"
    env_file.write_text(
        f"STACKYARD_AGENT_TOKEN={token}\nSTACKYARD_IMAGE={repository}\n"
        f"STACKYARD_VERSION=1.0.0\nSTACKS_DIR={tmp_path / 'agent-stacks'}\n"
    )
    compose = [
        "docker",
        "compose",
        "-p",
        project,
        "-f",
        str(DEPLOY / "agent.compose.yaml"),
        "-f",
        str(override),
        "--env-file",
        str(env_file),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    up = subprocess.run(
        [*compose, "up", "-d", "--no-build", "--pull", "never"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert up.returncode == 0, up.stderr
    url = f"https://127.0.0.1:{port}"
    try:
        if agent_kind == "tunnel":
            base = f"/api/agents/{made.json()['agent']['id']}"
            # Its version is known through its tunnel (the central asks as it comes up).
            version_of = lambda: admin_client.get(base).json()["version"]  # noqa: E731
            wait_until(lambda: version_of() == "1.0.0", what="the agent 1.0.0 dialing in")
        else:
            version_of = lambda: agent_version(url, token)  # noqa: E731
            wait_until(lambda: version_of() == "1.0.0", what="the agent 1.0.0 answering")
        (container,) = docker_client.containers.list(
            filters={"label": f"com.docker.compose.project={project}"}
        )
        before, env_before = deployed_settings(container), env_file.read_bytes()
        image_before = container.image.id
        if agent_kind == "direct":
            logs = subprocess.run(
                [*compose, "logs", "--no-color"], env=env, capture_output=True, text=True
            ).stdout
            fake = tmp_path / "agent-log"
            fake.write_text(logs)
            agent = AgentProcess(ServerProcess(url, None, fake), token, tmp_path, None)  # type: ignore[arg-type]
            record = add_agent(admin_client, agent, "deployed")
            base = f"/api/agents/{record['id']}"

        status = admin_client.get(f"{base}/system/update").json()
        assert status["update_supported"] is True, status
        assert (status["current_version"], status["latest_version"]) == ("1.0.0", "1.1.0")
        started = admin_client.post(f"{base}/system/update")
        assert started.status_code == 202, started.text

        # The new release, or (broken) the previous one brought back by the helper.
        version = "1.0.0" if broken else "1.1.0"
        wait_until(lambda: helpers(docker_client) == [], 240, "the helper done")
        wait_until(lambda: version_of() == version, 120, f"the agent as {version}")
        # The central still trusts it: the same certificate (or key), kept in its volume.
        tested = admin_client.post(f"{base}/test").json()
        assert tested["ok"] and tested["version"] == version, tested
        assert admin_client.get(f"{base}/stacks").status_code == 200
        last = admin_client.get(f"{base}/system/update").json()["last_update"]
        assert last["status"] == ("rolled_back" if broken else "succeeded"), last
        if broken:
            assert last["why"].startswith("the new release is not healthy: it exited"), last
            assert "this release is broken" in last["output"]  # its last log lines
        # Started, then how it ended (the central follows the agent's update).
        updates = update_entries(admin_client, 2)
        assert [(actor, outcome) for actor, outcome, _ in updates] == [
            ("admin", "started"),
            ("admin", "failure" if broken else "success"),
        ]
        assert updates[1][2] == (
            f"1.0.0 -> 1.1.0; rolled back ({last['why']})" if broken else "1.0.0 -> 1.1.0; updated"
        )
        # Nothing of the agent's deployment changed but the image; the version sticks.
        (container,) = docker_client.containers.list(
            filters={"label": f"com.docker.compose.project={project}"}
        )
        assert container.attrs["Config"]["Image"] == f"{repository}:{version}"
        assert deployed_settings(container) == before
        if broken:
            assert container.image.id == image_before and env_file.read_bytes() == env_before
        else:
            assert env_file.read_bytes() == env_before.replace(b"=1.0.0\n", b"=1.1.0\n")
    finally:
        subprocess.run([*compose, "down", "-v", "-t", "5"], env=env, capture_output=True)
