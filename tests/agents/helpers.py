"""Adding real agents to the central under test, as a user does in the UI."""

from __future__ import annotations

from tests.support.agents import AgentProcess


def add_agent(admin_client, agent: AgentProcess, name: str) -> dict:
    """Test the unsaved agent, confirm the fingerprint it shows, save it."""
    body = {"name": name, "url": agent.url, "token": agent.token}
    probe = admin_client.post("/api/agents/test", json=body)
    assert probe.status_code == 200, probe.text
    assert probe.json()["ok"], probe.json()
    if agent.url.startswith("https://"):
        assert probe.json()["fingerprint"] == agent.fingerprint  # what the agent logged
        body["fingerprint"] = probe.json()["fingerprint"]
    created = admin_client.post("/api/agents", json=body)
    assert created.status_code == 201, created.text
    return created.json()
