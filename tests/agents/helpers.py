"""Adding real agents to the central under test, as a user does in the UI."""

from __future__ import annotations

from tests.support.agents import AgentProcess, current_kind
from tests.support.waiting import PATIENCE, wait_until


def add_agent(admin_client, agent: AgentProcess, name: str) -> dict:
    """Add `agent` as this test's kind of agent (tests/support/agents.py) and return its
    record. Direct: test the unsaved agent, confirm the fingerprint it shows, save it.
    Tunnel: make an agent that dials in, start the agent process again dialing the
    central with the one-time token, and wait until its tunnel is up."""
    if current_kind().name == "tunnel":
        return _add_tunnel_agent(admin_client, agent, name)
    agent.direct()  # (a shared agent a test before made a tunnel agent)
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


def _add_tunnel_agent(admin_client, agent: AgentProcess, name: str) -> dict:
    made = admin_client.post("/api/agents/tunnel", json={"name": name})
    assert made.status_code == 201, made.text
    agent_id = made.json()["agent"]["id"]
    agent.dial(current_kind().central_url(admin_client), made.json()["token"])

    def connected() -> dict | None:  # (and asked what it is, as it came up)
        view = admin_client.get(f"/api/agents/{agent_id}").json()
        return view if view["tunnel"] == "connected" and view["version"] else None

    return wait_until(connected, PATIENCE, f"agent {name}'s tunnel, and its version known")
