"""Facts about this host for the dashboard."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from stackyard.api.deps import SettingsDep, current_principal
from stackyard.system.info import host_info

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
