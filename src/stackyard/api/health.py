"""GET /api/health: no sign-in needed."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from stackyard.api.deps import SettingsDep

router = APIRouter(tags=["system"])


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    mode: Literal["central", "agent"]


@router.get("/health", operation_id="health")
def health(settings: SettingsDep) -> Health:
    return Health(version=settings.app_version, mode="central")
