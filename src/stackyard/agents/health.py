"""What an agent says of itself at `/agent/health`: one type, served by the agent and
read by the central (checked where the answer enters: another shape is an error)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from stackyard.agents.compat import CAPABILITIES, Capabilities


class AgentHealth(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    mode: Literal["agent"] = "agent"
    #: An agent older than the capabilities lists none.
    capabilities: Capabilities = Field(
        default_factory=list, description="What this agent serves under /agent"
    )


def own_health(version: str) -> AgentHealth:
    """This agent's health, as it serves it."""
    return AgentHealth(version=version, capabilities=list(CAPABILITIES))
