"""The audit log, readable by admins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from stackyard.api.deps import DbDep, require_admin
from stackyard.api.models import Offset
from stackyard.auth import audit

router = APIRouter(prefix="/audit", tags=["audit"], dependencies=[Depends(require_admin)])


class AuditRow(BaseModel):
    id: int
    at: datetime
    actor: str
    action: str
    target: str | None
    outcome: Literal["success", "failure", "started"]
    detail: str | None


class AuditPage(BaseModel):
    items: list[AuditRow]
    total: int


@router.get("", operation_id="listAudit")
def list_audit(
    db: DbDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Offset = 0,
) -> AuditPage:
    rows, total = audit.list_entries(db, limit, offset)
    return AuditPage(
        items=[AuditRow.model_validate(r, from_attributes=True) for r in rows], total=total
    )
