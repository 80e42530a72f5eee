"""Routes of agent mode, under /agent: the agent's token instead of a user session."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from stackyard.api.deps import SettingsDep, require_agent_token

router = APIRouter(tags=["agent"], dependencies=[Depends(require_agent_token)])


class AgentHealth(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    mode: Literal["agent"] = "agent"


@router.get("/health", operation_id="agentHealth")
def agent_health(settings: SettingsDep) -> AgentHealth:
    return AgentHealth(version=settings.app_version)
