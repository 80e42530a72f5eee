"""Facts about this host for the dashboard, and self-update (on an agent too, through
the central's proxy: `/api/agents/{id}/system/update`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import BaseModel

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    PrincipalDep,
    SettingsDep,
    current_principal,
    services,
)
from stackyard.auth.permissions import allows
from stackyard.system.info import host_info
from stackyard.system.self_update import SelfUpdate, UpdateStarted, UpdateStatus, without_output

router = APIRouter(prefix="/system", tags=["system"], dependencies=[Depends(current_principal)])


class DockerOut(BaseModel):
    reachable: bool
    version: str | None
    api_version: str | None
    error: str | None


class ComposeOut(BaseModel):
    version: str | None
    json_progress: bool


class SystemInfo(BaseModel):
    version: str
    docker: DockerOut
    compose: ComposeOut
    stacks_dir: str


@router.get("/info", operation_id="systemInfo")
def system_info(settings: SettingsDep) -> SystemInfo:
    info = host_info(settings)
    return SystemInfo(
        version=info.version,
        docker=DockerOut(
            reachable=info.engine is not None,
            version=info.engine.version if info.engine else None,
            api_version=info.engine.api_version if info.engine else None,
            error=info.engine_error,
        ),
        compose=ComposeOut(version=info.compose.version, json_progress=info.compose.json_progress),
        stacks_dir=info.stacks_dir,
    )


def get_self_update(request: Request) -> SelfUpdate:
    return services(request).self_update


SelfUpdateDep = Annotated[SelfUpdate, Depends(get_self_update)]


@router.get("/update", operation_id="systemUpdateStatus")
async def update_status(
    principal: PrincipalDep,
    updates: SelfUpdateDep,
    fresh: Annotated[
        bool, Query(description="Ask the registry now, not the 10-minute cache")
    ] = False,
) -> UpdateStatus:
    """The running version, the latest release of the service's image repository (its
    highest `X.Y.Z` tag), whether this installation can update itself (and why not), and
    the outcome of the last update (null while an update is under way; its output, which
    holds the new release's last log lines, null for whoever may not read logs)."""
    status = await updates.status(fresh)
    return status if allows(principal.role, "stacks.logs") else without_output(status)


@router.post(
    "/update",
    operation_id="startSystemUpdate",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        400: {"description": "This installation is not compose-based"},
        409: {"description": "The running version is the latest release"},
        503: {"description": "The registry or the new image could not be reached"},
    },
)
async def start_update(admin: AdminDep, audit: AuditDep, updates: SelfUpdateDep) -> UpdateStarted:
    """Pull the latest release, then recreate the service from it (admins). The service
    goes away for a few seconds: poll `/api/health` until it answers the new version."""
    with audit(admin, "system.update") as note:
        started = await updates.start(admin.username)
        note.detail = f"{started.from_version} -> {started.to_version}"
        # Recorded as started: the process that runs after the update (the new release, or
        # the previous one rolled back) records how it ended (SelfUpdate.record_outcome).
        note.ends = lambda _ended: None
    return started
