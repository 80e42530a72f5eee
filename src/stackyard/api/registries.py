"""Registry credentials for update checks (admin only, audited; passwords never returned)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field

from stackyard.api.deps import AdminDep, AuditDep, StacksDep, require_admin
from stackyard.api.models import Body

router = APIRouter(prefix="/registries", tags=["registries"], dependencies=[Depends(require_admin)])


class RegistryOut(BaseModel):
    registry: str
    username: str


class RegistryIn(Body):
    registry: str = Field(max_length=255, description="Host[:port], e.g. ghcr.io or docker.io")
    username: str = Field(max_length=255)
    password: str = Field(max_length=4096)


@router.get("", operation_id="listRegistries")
def list_registries(stacks: StacksDep) -> list[RegistryOut]:
    return [RegistryOut(registry=r, username=u) for r, u in stacks.registries.list()]


@router.put("", operation_id="setRegistry")
def set_registry(
    body: RegistryIn, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> RegistryOut:
    with audit(admin, "registry.set", body.registry):
        host = stacks.registries.set(body.registry, body.username, body.password)
    return RegistryOut(registry=host, username=body.username)


@router.delete("/{registry}", operation_id="deleteRegistry", status_code=status.HTTP_204_NO_CONTENT)
def delete_registry(registry: str, admin: AdminDep, audit: AuditDep, stacks: StacksDep) -> None:
    with audit(admin, "registry.delete", registry):
        stacks.registries.delete(registry)
