"""The agent's own routes under /agent (beside the host capabilities it shares with the
central): its health, which tells a central what it is talking to, and its events, which
the central follows to notify of them."""

from __future__ import annotations

import asyncio
import functools
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from stackyard.agents.health import AgentHealth, own_health
from stackyard.api.deps import SettingsDep, agent_services, require_agent_token
from stackyard.errors import Invalid
from stackyard.fleet.report import host_report

router = APIRouter(tags=["agent"], dependencies=[Depends(require_agent_token)])


@router.get("/health", operation_id="agentHealth")
def agent_health(settings: SettingsDep) -> AgentHealth:
    return own_health(settings.app_version)


@router.get(
    "/notifications/events",
    operation_id="agentEvents",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
def agent_events(
    request: Request,
    settings: SettingsDep,
    after: Annotated[int, Query(ge=0)] = 0,
    boot: Annotated[str | None, Query(max_length=64)] = None,
    reports: bool = False,
) -> StreamingResponse:
    """This host's events after number `after` of the start `boot` (every one kept, when
    `boot` is not this start's), then each as it comes: JSON lines, a keep-alive line
    every 15 s. The central follows it to notify of them. With `reports`, this host's
    fleet report too, when it changed (a line every 5 s)."""
    started = agent_services(request)
    report = None
    if reports:
        report = functools.partial(
            asyncio.to_thread, host_report, started.stacks, settings.app_version, started.disk
        )
    return StreamingResponse(
        started.events.follow(after, boot, report), media_type="application/x-ndjson"
    )


class Rotated(BaseModel):
    public_key: str


@router.post("/tunnel/rotate", operation_id="agentRotateKey")
async def rotate_key(request: Request) -> Rotated:
    """A new SSH key for this agent's tunnel (its public half, for the central to
    expect): dialed with at once in a second tunnel, kept once that one is up."""
    dialer = agent_services(request).dialer
    if dialer is None:
        raise Invalid("This agent does not dial its central: it has no tunnel key")
    return Rotated(public_key=await dialer.rotate())
