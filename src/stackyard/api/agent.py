"""The agent's own routes under /agent (beside the host capabilities it shares with the
central): its health, which tells a central what it is talking to."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from stackyard.agents.compat import CAPABILITIES
from stackyard.api.deps import SettingsDep, require_agent_token

router = APIRouter(tags=["agent"], dependencies=[Depends(require_agent_token)])


class AgentHealth(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    mode: Literal["agent"] = "agent"
    capabilities: list[str] = Field(description="What this agent serves under /agent")


@router.get("/health", operation_id="agentHealth")
def agent_health(settings: SettingsDep) -> AgentHealth:
    return AgentHealth(version=settings.app_version, capabilities=list(CAPABILITIES))
