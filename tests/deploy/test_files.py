"""The deployment files, checked with the real compose tool. (The image itself is built
from deploy/Dockerfile by `scripts/setup.sh --test` and run in test_deployment.py.)"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ROOT = DEPLOY.parent

pytestmark = pytest.mark.docker

#: The public base images a user's `docker build -f deploy/Dockerfile .` pulls.
DEFAULT_BASES = {
    "NODE_IMAGE": "node:20-bookworm-slim",
    "PYTHON_IMAGE": "python:3.11-slim-bookworm",
    "DOCKER_CLI_IMAGE": "docker:28-cli",
    "COMPOSE_IMAGE": "docker/compose-bin:v2.40.3",
}


def compose_config(file: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("STACKS_", "STACKYARD_"))}
    return subprocess.run(
        ["docker", "compose", "-f", str(DEPLOY / file), "config", "--format", "json"],
        capture_output=True,
        text=True,
        env={**clean, **env},
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
    assert service["ports"][0]["published"] == "8080"
    assert "host_ip" not in service["ports"][0]  # every address, as before


def test_service_compose_can_mount_the_stacks_folder_at_another_host_path():
    done = compose_config(
        "compose.yaml",
        STACKS_DIR="/stacks",
        STACKS_HOST_DIR="/srv/elsewhere",
        STACKYARD_PORT="127.0.0.1:18080",
    )
    assert done.returncode == 0, done.stderr
    service = json.loads(done.stdout)["services"]["stackyard"]
    assert _binds(service)["/srv/elsewhere"] == "/stacks"
    assert service["environment"]["STACKS_DIR"] == "/stacks"
    assert service["environment"]["STACKS_HOST_DIR"] == "/srv/elsewhere"
    assert service["ports"][0]["host_ip"] == "127.0.0.1"
    assert service["ports"][0]["published"] == "18080"


def test_agent_compose_needs_a_token_and_runs_agent_mode():
    missing = compose_config("agent.compose.yaml")
    assert missing.returncode != 0 and "STACKYARD_AGENT_TOKEN" in missing.stderr
    done = compose_config("agent.compose.yaml", STACKYARD_AGENT_TOKEN="t" * 40)
    assert done.returncode == 0, done.stderr
    agent = json.loads(done.stdout)["services"]["agent"]
    assert agent["command"] == ["stackyard", "agent"]
    assert _binds(agent)["/var/run/docker.sock"] == "/var/run/docker.sock"
    assert _binds(agent)["/opt/stacks"] == "/opt/stacks"


def test_dockerfile_copies_only_what_exists_and_serves_by_default():
    text = (DEPLOY / "Dockerfile").read_text()
    copies = 0
    for line in text.splitlines():
        match = re.match(r"COPY (?!--from)(.+) (\S+)$", line)
        if match:
            copies += 1
            for source in match.group(1).split():
                assert (ROOT / source).exists(), source
    assert copies >= 4  # the UI's and the package's sources
    # Whatever a stage copies from is a stage of this file or a base-image argument.
    stages = set(re.findall(r"^FROM \S+ AS (\S+)$", text, re.M))
    for source in re.findall(r"COPY --from=(\S+)", text):
        assert source in stages, source
    assert 'CMD ["stackyard", "serve"]' in text
    assert "docker-compose /usr/local/lib/docker/cli-plugins/docker-compose" in text


def test_dockerfile_defaults_to_the_public_base_images():
    """`docker build -f deploy/Dockerfile .` keeps pulling what users pull; the local
    build (scripts/stackyard-image.sh) only overrides these arguments."""
    text = (DEPLOY / "Dockerfile").read_text()
    args = dict(re.findall(r"^ARG (\w+)=(\S+)$", text, re.M))
    for name, image in DEFAULT_BASES.items():
        assert args.get(name) == image, name
        assert re.search(rf"^FROM \${{{name}}}", text, re.M), name
    assert args["WHEELS_FROM"] == "wheels-build"
    assert re.search(r"^FROM \S+ AS wheels-build$", text, re.M)
    script = (ROOT / "scripts" / "stackyard-image.sh").read_text()
    for name in (*DEFAULT_BASES, "WHEELS_FROM"):
        if name != "NODE_IMAGE":  # the UI comes prebuilt inside the project's wheel
            assert f'--build-arg "{name}=' in script, name
