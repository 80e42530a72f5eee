"""`stackyard agents`, `stackyard fleet` and `stackyard stack ... --agent` on the command
line, against a real agent on an engine of its own."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.service import STACKYARD_BIN, service_env
from tests.support.stacks import BUSYBOX, compose_text, service

#: The command line adds direct agents (a URL, a token, a certificate to confirm); a tunnel
#: agent's tunnel ends in the running central, which a command is not.
pytestmark = pytest.mark.direct_only("the command line reaches direct agents only")


def test_agents_and_remote_stacks_from_the_command_line(tmp_path, docker_engines, agent_processes):
    (engine,) = docker_engines(1)
    agent = agent_processes(engine, name="remote")
    folder = agent.stacks_dir / "web"
    folder.mkdir()
    (folder / "compose.yaml").write_text(
        compose_text(app=service(BUSYBOX, command='["sleep", "3600"]'))
    )
    central = tmp_path / "central"
    (central / "stacks").mkdir(parents=True)
    env = service_env(central)

    def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(STACKYARD_BIN), *args],
            env=env,
            cwd=central,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
        )

    refused = cli("agents", "add", "remote", agent.url, "--token", agent.token, stdin="n\n")
    assert refused.returncode == 1 and agent.fingerprint in refused.stdout
    assert cli("agents", "list").stdout == ""

    added = cli("agents", "add", "remote", agent.url, "--token", agent.token, stdin="y\n")
    assert added.returncode == 0, added.stderr
    assert "Added agent 1 (remote)" in added.stdout
    listed = cli("agents", "list").stdout
    assert "remote" in listed and agent.url in listed and "incompatible" not in listed
    tested = cli("agents", "test", "remote")
    assert tested.returncode == 0 and "stacks" in tested.stdout

    up = cli("stack", "up", "web", "--agent", "remote")
    assert up.returncode == 0, up.stderr
    running = engine.client.containers.list(filters={"label": "com.docker.compose.project=web"})
    assert [c.status for c in running] == ["running"]
    assert cli("stack", "list", "--agent", "remote").stdout.split("\t")[:2] == ["web", "running"]
    assert cli("stack", "list").stdout == ""  # the central's own host has none

    fleet = cli("fleet")
    assert fleet.returncode == 0, fleet.stderr
    assert "remote\tonline" in fleet.stdout

    missing = cli("stack", "up", "nope", "--agent", "remote")
    assert missing.returncode == 1 and "nope" in missing.stderr
    agent.stop()
    offline = cli("stack", "list", "--agent", "remote")
    assert offline.returncode == 1 and "unreachable" in offline.stderr
    assert "remote is offline" in cli("fleet").stdout
    removed = cli("agents", "remove", "remote")
    assert removed.returncode == 0 and cli("agents", "list").stdout == ""
