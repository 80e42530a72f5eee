"""`stackyard agent`: /agent routes behind the agent's token, no users, no UI."""

import secrets
import subprocess

import httpx
import pytest

from stackyard import __version__
from stackyard.agents.compat import CAPABILITIES
from tests.support.service import STACKYARD_BIN, service_env, start_server


@pytest.fixture
def agent_token() -> str:
    return secrets.token_urlsafe(32)


def test_agent_health_needs_the_token_and_reports_the_version(tmp_path, agent_token):
    env = service_env(tmp_path, STACKYARD_AGENT_TOKEN=agent_token, STACKYARD_AGENT_TLS="false")
    good = {"Authorization": f"Bearer {agent_token}"}
    agent = start_server(tmp_path, "agent", env=env, wait_path="/agent/health", headers=good)
    try:
        response = httpx.get(f"{agent.url}/agent/health", headers=good)
        assert response.json() == {
            "status": "ok",
            "version": __version__,
            "mode": "agent",
            "capabilities": list(CAPABILITIES),
        }
        assert httpx.get(f"{agent.url}/agent/health").status_code == 401
        wrong = httpx.get(f"{agent.url}/agent/health", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json() == {
            "detail": "Missing or invalid agent token"
        }
        # No user API, no UI, no user database in agent mode.
        assert httpx.get(f"{agent.url}/api/health").status_code == 404
        assert httpx.get(f"{agent.url}/").status_code == 404
        assert not (tmp_path / "data" / "stackyard.db").exists()
    finally:
        agent.stop()
    assert agent_token not in agent.log()


def test_agent_refuses_to_start_without_a_token(tmp_path):
    done = subprocess.run(
        [str(STACKYARD_BIN), "agent", "--port", "1"],
        env=service_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "STACKYARD_AGENT_TOKEN must be set" in done.stderr


def test_agent_token_command_prints_a_strong_token():
    out = subprocess.run([str(STACKYARD_BIN), "agent", "token"], capture_output=True, text=True)
    assert len(out.stdout.strip()) >= 32
