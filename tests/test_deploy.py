"""The deployment files, checked with the real compose tool (base images cannot be
pulled on test machines, so the image build itself is not run here)."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
ROOT = DEPLOY.parent

pytestmark = pytest.mark.docker


def compose_config(file: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["docker", "compose", "-f", str(DEPLOY / file), "config", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def _binds(service: dict) -> dict[str, str]:
    return {v["source"]: v["target"] for v in service["volumes"] if v["type"] == "bind"}


def test_service_compose_mounts_the_socket_and_the_stacks_folder_at_the_same_path():
    done = compose_config("compose.yaml", STACKS_DIR="/srv/stacks")
    assert done.returncode == 0, done.stderr
    service = json.loads(done.stdout)["services"]["stackyard"]
    binds = _binds(service)
    assert binds["/var/run/docker.sock"] == "/var/run/docker.sock"
    assert binds["/srv/stacks"] == "/srv/stacks"
    assert service["environment"]["STACKS_DIR"] == "/srv/stacks"
    assert service["environment"]["STACKS_HOST_DIR"] == "/srv/stacks"
    assert any(v["type"] == "volume" and v["target"] == "/data" for v in service["volumes"])
    assert service["ports"][0]["target"] == 8080


def test_agent_compose_needs_a_token_and_runs_agent_mode():
    missing = compose_config("agent.compose.yaml")
    assert missing.returncode != 0 and "STACKYARD_AGENT_TOKEN" in missing.stderr
    done = compose_config("agent.compose.yaml", STACKYARD_AGENT_TOKEN="t" * 40)
    assert done.returncode == 0, done.stderr
    agent = json.loads(done.stdout)["services"]["agent"]
    assert agent["command"] == ["stackyard", "agent"]
    assert _binds(agent)["/var/run/docker.sock"] == "/var/run/docker.sock"


def test_dockerfile_copies_only_what_exists_and_serves_by_default():
    text = (DEPLOY / "Dockerfile").read_text()
    for line in text.splitlines():
        match = re.match(r"COPY (?!--from)(.+) (\S+)$", line)
        if match:
            for source in match.group(1).split():
                assert (ROOT / source).exists(), source
    assert 'CMD ["stackyard", "serve"]' in text
    assert "docker-compose /usr/local/lib/docker/cli-plugins/docker-compose" in text
