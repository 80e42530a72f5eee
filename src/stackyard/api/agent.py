"""The agent's own routes under /agent (beside the host capabilities it shares with the
central): its health, which tells a central what it is talking to."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from stackyard.agents.health import AgentHealth, own_health
from stackyard.api.deps import SettingsDep, require_agent_token

router = APIRouter(tags=["agent"], dependencies=[Depends(require_agent_token)])


@router.get("/health", operation_id="agentHealth")
def agent_health(settings: SettingsDep) -> AgentHealth:
    return own_health(settings.app_version)
