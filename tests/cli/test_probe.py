"""`stackyard health`: what the self-update helper runs inside a new release's container
to know it serves, asked of a real central and a real HTTPS agent on loopback."""

from __future__ import annotations

import subprocess

import pytest

from stackyard import __version__
from stackyard.agents.tls import ensure_certificate
from tests.support.service import STACKYARD_BIN

pytestmark = pytest.mark.docker


def health(env: dict[str, str], cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(STACKYARD_BIN), "health", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def port_of(url: str) -> str:
    return url.rsplit(":", 1)[1]


def test_the_central_answers_its_version(server, tmp_path):
    done = health(server.env, tmp_path, "--port", port_of(server.url))
    assert (done.returncode, done.stdout) == (0, f"{__version__}\n"), done.stderr
    server.stop()
    gone = health(server.env, tmp_path, "--port", port_of(server.url))
    assert gone.returncode == 1 and "did not answer its health" in gone.stderr


@pytest.mark.direct_only("a direct agent's own certificate")
def test_an_agent_answers_over_its_own_pinned_certificate_with_its_token(agent_processes):
    agent = agent_processes()
    port = port_of(agent.url)
    done = health(agent.server.env, agent.folder, "--agent", "--port", port)
    assert (done.returncode, done.stdout) == (0, f"{__version__}\n"), done.stderr
    wrong = agent.server.env | {"STACKYARD_AGENT_TOKEN": "not-the-token-" * 4}
    refused = health(wrong, agent.folder, "--agent", "--port", port)
    assert refused.returncode == 1 and "401" in refused.stderr
    # Only the agent's own certificate (in its data folder) is trusted.
    elsewhere = agent.folder / "elsewhere"
    ensure_certificate(elsewhere)
    other = agent.server.env | {"STACKYARD_DATA_DIR": str(elsewhere)}
    impostor = health(other, agent.folder, "--agent", "--port", port)
    assert impostor.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in impostor.stderr
