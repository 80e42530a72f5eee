"""Backups: a stack's inventory, creating archives, the archives kept here, restoring.

Creating and checking backups (also by a restore drill) is an operator's action;
downloading (archives hold the stacks' `.secrets`), uploading, deleting and restoring
(which replaces data) are admins'. Creating, drilling, downloading, uploading, deleting
and restoring are audited. A backup, a drill or a restore runs as the stack's run: follow
it at `/api/stacks/{id}/run/events`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.responses import FileResponse
from pydantic import Field

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    OperatorDep,
    current_principal,
    require_admin,
    require_operator,
    services,
)
from stackyard.api.files import content_disposition
from stackyard.api.models import Body
from stackyard.backups.capture import Selection
from stackyard.backups.drill import SETTLE, DrillRecord
from stackyard.backups.model import Inventory, Manifest
from stackyard.backups.restore import RestorePreview
from stackyard.backups.service import BackupService, RestoreRequest
from stackyard.backups.store import ArchiveInfo, VerifyReport
from stackyard.jsonmodel import JsonInt
from stackyard.stacks.runs import RunState, ended_by

router = APIRouter(tags=["backups"], dependencies=[Depends(current_principal)])


def get_backups(request: Request) -> BackupService:
    return services(request).backups


BackupsDep = Annotated[BackupService, Depends(get_backups)]


class BackupIn(Body, Selection):
    pass


class RestoreIn(Body):
    stack: str | None = Field(
        None, max_length=200, description="Restore under this name (a clone); null: its own"
    )
    overwrite: bool = Field(
        False, description="Restore over an existing stack: its volumes are wiped first"
    )
    restore_binds: bool = Field(True, description="Write bind folders back to their paths")
    assets: list[str] | None = Field(
        None, description="Only these volumes or binds (key, name or path); null: all"
    )
    special_files: bool = Field(
        False,
        description="Write device nodes and setuid/setgid files into the stack folder and "
        "bind folders too (refused otherwise; `verify` lists them; volumes always keep them)",
    )
    bind_paths: (
        dict[Annotated[str, Field(max_length=4096)], Annotated[str, Field(max_length=4096)]] | None
    ) = Field(
        None,
        max_length=100,
        description="A clone's bind folders outside the stack folder: original host path to "
        "the clone's (default: beside the original, named for the clone)",
    )
    confirm_paths: list[Annotated[str, Field(max_length=4096)]] | None = Field(
        None,
        max_length=100,
        description="The host paths outside the stack folder that the restore writes, as its "
        "preview listed them: required when there are any",
    )

    def request(self) -> RestoreRequest:
        return RestoreRequest(
            self.stack,
            self.overwrite,
            self.restore_binds,
            self.assets,
            self.special_files,
            self.bind_paths,
            self.confirm_paths,
        )


@router.get(
    "/stacks/{stack_id}/backup/inventory",
    operation_id="backupInventory",
    dependencies=[Depends(require_operator)],
)
async def backup_inventory(stack_id: str, backups: BackupsDep) -> Inventory:
    """The stack's volumes and binds with their sizes, what a backup takes by default
    and why not, and how the stacks folder's paths map between service and host."""
    return await backups.inventory(stack_id)


@router.post(
    "/stacks/{stack_id}/backups",
    operation_id="createBackup",
    status_code=status.HTTP_202_ACCEPTED,
)
async def create_backup(
    stack_id: str, body: BackupIn, operator: OperatorDep, audit: AuditDep, backups: BackupsDep
) -> RunState:
    """Start a backup; 409 while the stack is busy. Follow it at `/run/events`."""
    with audit(operator, "backup.create", stack_id) as note:
        run = await backups.create(stack_id, body)
        note.ends = ended_by(run)
    return run.state()


@router.get("/backups", operation_id="listBackups", dependencies=[Depends(require_operator)])
def list_backups(backups: BackupsDep) -> list[ArchiveInfo]:
    """The archives kept on this host, newest first."""
    return backups.store.list()


@router.get("/backups/{name}", operation_id="getBackup", dependencies=[Depends(require_operator)])
def get_backup(name: str, backups: BackupsDep) -> Manifest:
    """An archive's manifest: what it holds and how each asset was captured."""
    return backups.manifest(name)


@router.get(
    "/backups/{name}/download",
    operation_id="downloadBackup",
    response_class=FileResponse,
    responses={200: {"content": {"application/x-tar": {}}}},
)
def download_backup(
    name: str, admin: AdminDep, audit: AuditDep, backups: BackupsDep
) -> FileResponse:
    with audit(admin, "backup.download", name):
        path = backups.store.path(name)
    return FileResponse(
        path,
        media_type="application/x-tar",
        headers={"Content-Disposition": content_disposition(name)},
    )


@router.put(
    "/backups/upload",
    operation_id="uploadBackup",
    status_code=status.HTTP_201_CREATED,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-tar": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def upload_backup(
    request: Request,
    admin: AdminDep,
    audit: AuditDep,
    backups: BackupsDep,
    keep_both: Annotated[
        bool, Query(description="When an archive of its name is here: keep both (else 409)")
    ] = False,
) -> ArchiveInfo:
    """An archive made elsewhere (the body is its bytes): checked through, then kept
    under the name archives get; a damaged or unsafe one is refused and not kept. One
    whose name is taken is a 409 (nothing kept) unless `keep_both`."""
    with audit(admin, "backup.upload") as note:
        info = await backups.store.upload(request.stream(), keep_both)
        note.target = info.name
    return info


@router.delete(
    "/backups/{name}", operation_id="deleteBackup", status_code=status.HTTP_204_NO_CONTENT
)
def delete_backup(name: str, admin: AdminDep, audit: AuditDep, backups: BackupsDep) -> None:
    with audit(admin, "backup.delete", name):
        backups.store.delete(name)


@router.post(
    "/backups/{name}/verify",
    operation_id="verifyBackup",
    dependencies=[Depends(require_operator)],
)
async def verify_backup(name: str, backups: BackupsDep) -> VerifyReport:
    """Read every member through: checksums, and each entry safe to restore."""
    return await backups.verify(name)


class DrillIn(Body):
    settle_seconds: JsonInt = Field(
        SETTLE,
        ge=0,
        le=3600,
        description="How long the clone's services without a health check must keep running",
    )


@router.post(
    "/backups/{name}/drill",
    operation_id="drillBackup",
    status_code=status.HTTP_202_ACCEPTED,
)
async def drill_backup(
    name: str, body: DrillIn, operator: OperatorDep, audit: AuditDep, backups: BackupsDep
) -> RunState:
    """Start a restore drill of the archive: restored into a scratch clone (its own
    volumes, no network, no published ports, nothing of the original's), compared with
    the archive, started, then removed. A run of the archive's stack: follow it at its
    `/run/events`; its record is at `/stacks/{id}/drills`."""
    with audit(operator, "backup.drill", name) as note:
        run = await backups.drill(name, body.settle_seconds)
        note.ends = ended_by(run)
    return run.state()


@router.get(
    "/stacks/{stack_id}/drills",
    operation_id="listDrills",
    dependencies=[Depends(require_operator)],
)
def list_drills(stack_id: str, backups: BackupsDep) -> list[DrillRecord]:
    """The stack's restore drills on this host, newest first."""
    return backups.drills.of(stack_id)


@router.post(
    "/backups/{name}/restore/preview",
    operation_id="previewRestore",
    dependencies=[Depends(require_admin)],
)
async def preview_restore(name: str, body: RestoreIn, backups: BackupsDep) -> RestorePreview:
    """What a restore with this body would write, nothing written: its volumes and
    folders, every host path outside the stack folder (made or replaced), and what is
    left out and why. A restore that writes outside the stack folder takes `outside`'s
    paths as `confirm_paths`."""
    return await backups.preview(backups.store.path(name), body.request())


@router.post(
    "/backups/{name}/restore",
    operation_id="restoreBackup",
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: {"description": "The stack exists and overwrite was not asked for"}},
)
async def restore_backup(
    name: str, body: RestoreIn, admin: AdminDep, audit: AuditDep, backups: BackupsDep
) -> RunState:
    """Start a restore into the archive's stack (or `stack`, a clone). Follow it at the
    target stack's `/run/events`."""
    with audit(admin, "backup.restore", name) as note:
        run = await backups.restore(backups.store.path(name), body.request())
        note.ends = ended_by(run)
        note.detail = (
            f"into {run.stack}"
            + (" (overwrite)" if body.overwrite else "")
            + (" with device nodes and setuid/setgid files" if body.special_files else "")
            + (
                f"; outside the stack folder: {', '.join(body.confirm_paths)}"
                if body.confirm_paths
                else ""
            )
        )
    return run.state()
