"""Backup destinations (SFTP, S3, NFS) and the archives on them. Admin only; every
change, test and transfer is audited. Secrets are write-only: an answer says which are
set, never what they are. Push and pull run as the archive's stack's run: follow them at
`/api/stacks/{id}/run/events`."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, status
from pydantic import BaseModel, Field

from stackyard.api.deps import AdminDep, AuditDep, central_services, require_admin
from stackyard.api.models import Body, DbId
from stackyard.backups.capture import Selection
from stackyard.destinations.model import RemoteArchive, RepositorySettings, Secrets, Settings
from stackyard.destinations.repository import RepositoryUse
from stackyard.destinations.service import UNSET, Destinations, DestinationView, TestResult
from stackyard.destinations.transfers import Transfers
from stackyard.errors import Invalid
from stackyard.jsonmodel import JsonInt
from stackyard.stacks.runs import RunState, ended_by

router = APIRouter(tags=["destinations"], dependencies=[Depends(require_admin)])


def get_destinations(request: Request) -> Destinations:
    return central_services(request).destinations


def get_transfers(request: Request) -> Transfers:
    return central_services(request).transfers


DestinationsDep = Annotated[Destinations, Depends(get_destinations)]
TransfersDep = Annotated[Transfers, Depends(get_transfers)]


class DestinationOut(BaseModel):
    id: int
    name: str
    type: str
    settings: Settings
    secrets_set: list[str] = Field(description="Which secrets are stored (never their values)")
    host_key_fingerprint: str | None = Field(description="The pinned SSH host key (SFTP)")
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def of(cls, view: DestinationView) -> DestinationOut:
        return cls(
            id=view.id,
            name=view.name,
            type=view.type,
            settings=view.settings,
            secrets_set=view.secrets_set,
            host_key_fingerprint=view.host_key_fingerprint,
            created_at=view.created_at,
            updated_at=view.updated_at,
        )


class DestinationIn(Body):
    name: str = Field(min_length=1, max_length=100)
    settings: Settings
    secrets: Secrets = Field(default_factory=Secrets)
    host_key: str | None = Field(
        None,
        max_length=16384,
        description="SFTP: the host key to pin (as a test of the unsaved settings showed "
        "it); null: pinned by the first test",
    )


class DestinationPatch(Body):
    name: str | None = Field(None, min_length=1, max_length=100)
    settings: Settings | None = None
    secrets: Secrets | None = Field(
        None, description="Secrets left out are kept; an empty string removes one"
    )
    host_key: str | None = Field(
        None, max_length=16384, description="A key to pin; null (given): forget the pinned key"
    )


class UnsavedTestIn(Body):
    settings: Settings
    secrets: Secrets = Field(default_factory=Secrets)


class TestOut(BaseModel):
    ok: bool
    detail: str
    host_key: str | None = None
    host_key_fingerprint: str | None = None

    @classmethod
    def of(cls, result: TestResult) -> TestOut:
        key = result.host_key
        return cls(
            ok=result.ok,
            detail=result.detail,
            host_key=key.key if key else None,
            host_key_fingerprint=key.fingerprint if key else None,
        )


class PushIn(Body):
    destination_id: JsonInt = Field(ge=1, le=2**31 - 1)


class BackupInto(Body, Selection):
    stack: str = Field(min_length=1, max_length=200, description="The stack of this host")


@router.get("/destinations", operation_id="listDestinations")
def list_destinations(destinations: DestinationsDep) -> list[DestinationOut]:
    return [DestinationOut.of(v) for v in destinations.all()]


@router.post("/destinations", operation_id="createDestination", status_code=status.HTTP_201_CREATED)
def create_destination(
    body: DestinationIn, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> DestinationOut:
    with audit(admin, "destination.create", body.name):
        view = destinations.create(body.name, body.settings, body.secrets, body.host_key)
    return DestinationOut.of(view)


class RepositoryIn(Body):
    name: str = Field(min_length=1, max_length=100)
    settings: RepositorySettings
    secrets: Secrets = Field(default_factory=Secrets)
    recovery_key: str | None = Field(
        None,
        max_length=1024,
        description="To recover: the recovery key of the repository at this location (it "
        "is opened with it and given a key of this instance's); null: a new repository",
    )


class RepositoryOut(BaseModel):
    destination: DestinationOut
    recovery_key: str | None = Field(
        description="Shown this once: write it down; with the location it opens every "
        "backup of the repository from a fresh install. Null when recovered"
    )
    recovery_key_id: str | None = Field(description="restic's id of the recovery key")


@router.post(
    "/destinations/repositories",
    operation_id="createRepository",
    status_code=status.HTTP_201_CREATED,
)
async def create_repository(
    body: RepositoryIn, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> RepositoryOut:
    """A repository destination (restic: deduplicated, compressed, encrypted): a new one
    made at the location, or, with `recovery_key`, the one there recovered."""
    with audit(admin, "destination.create", body.name) as note:
        made = await destinations.create_repository(
            body.name, body.settings, body.secrets, body.recovery_key
        )
        note.detail = "recovered" if body.recovery_key else "new repository"
    return RepositoryOut(
        destination=DestinationOut.of(made.destination),
        recovery_key=made.recovery_key,
        recovery_key_id=made.recovery_key_id,
    )


@router.post("/destinations/test", operation_id="testUnsavedDestination")
async def test_unsaved_destination(
    body: UnsavedTestIn, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> TestOut:
    """Try settings before saving them; for SFTP the server's host key is shown."""
    with audit(admin, "destination.test", body.settings.type) as note:
        tested = TestOut.of(await destinations.test_unsaved(body.settings, body.secrets))
        note.failed_unless(tested.ok, tested.detail)
        return tested


@router.get("/destinations/{destination_id}", operation_id="getDestination")
def get_destination(destination_id: DbId, destinations: DestinationsDep) -> DestinationOut:
    return DestinationOut.of(destinations.get(destination_id))


@router.patch("/destinations/{destination_id}", operation_id="updateDestination")
def update_destination(
    destination_id: DbId,
    body: DestinationPatch,
    admin: AdminDep,
    audit: AuditDep,
    destinations: DestinationsDep,
) -> DestinationOut:
    changes: dict[str, Any] = {"name": body.name, "settings": body.settings}
    if body.secrets is not None:
        changes["secrets"] = Secrets.model_validate(body.secrets.model_dump(exclude_unset=True))
    changes["host_key"] = body.host_key if "host_key" in body.model_fields_set else UNSET
    with audit(admin, "destination.update", str(destination_id)):
        view = destinations.update(destination_id, **changes)
    return DestinationOut.of(view)


@router.delete(
    "/destinations/{destination_id}",
    operation_id="deleteDestination",
    status_code=status.HTTP_204_NO_CONTENT,
)
def delete_destination(
    destination_id: DbId, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> None:
    """Forget the destination; the archives it holds stay there."""
    with audit(admin, "destination.delete", str(destination_id)) as note:
        note.target = destinations.delete(destination_id)


@router.post("/destinations/{destination_id}/test", operation_id="testDestination")
async def test_destination(
    destination_id: DbId, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> TestOut:
    """Reach it, write and remove a small file; an SFTP server's key is pinned by the
    first success."""
    with audit(admin, "destination.test", str(destination_id)) as note:
        tested = TestOut.of(await destinations.test(destination_id))
        note.failed_unless(tested.ok, tested.detail)
        return tested


@router.get("/destinations/{destination_id}/archives", operation_id="listRemoteArchives")
async def list_remote_archives(
    destination_id: DbId, destinations: DestinationsDep
) -> list[RemoteArchive]:
    """The archives Stackyard made that the destination holds, newest first."""
    return await destinations.archives(destination_id)


@router.get("/destinations/{destination_id}/repository", operation_id="repositoryUse")
async def repository_use(destination_id: DbId, destinations: DestinationsDep) -> RepositoryUse:
    """A repository destination's use: what it takes on its storage against what its
    backups would take as archives (the saving), its backups per stack."""
    return await destinations.repository_use(destination_id)


@router.delete(
    "/destinations/{destination_id}/archives/{name}",
    operation_id="deleteRemoteArchive",
    status_code=status.HTTP_204_NO_CONTENT,
)
async def delete_remote_archive(
    destination_id: DbId, name: str, admin: AdminDep, audit: AuditDep, destinations: DestinationsDep
) -> None:
    with audit(admin, "destination.archive.delete", name) as note:
        note.detail = f"from destination {destination_id}"
        await destinations.delete_archive(destination_id, name)


@router.post(
    "/destinations/{destination_id}/archives/{name}/pull",
    operation_id="pullRemoteArchive",
    status_code=status.HTTP_202_ACCEPTED,
)
async def pull_remote_archive(
    destination_id: DbId, name: str, admin: AdminDep, audit: AuditDep, transfers: TransfersDep
) -> RunState:
    """Download the archive into this host's archives (to restore or download it from
    there); 409 when it is here already or its stack is busy."""
    with audit(admin, "backup.pull", name) as note:
        note.detail = f"from destination {destination_id}"
        run = await transfers.pull(destination_id, name)
        note.ends = ended_by(run)
    return run.state()


@router.post(
    "/destinations/{destination_id}/backups",
    operation_id="backUpInto",
    status_code=status.HTTP_202_ACCEPTED,
)
async def back_up_into(
    destination_id: DbId,
    body: BackupInto,
    request: Request,
    admin: AdminDep,
    audit: AuditDep,
    destinations: DestinationsDep,
) -> RunState:
    """Back up a stack of this host straight into a repository destination (its parts go
    to restic as they are read: no archive on the host). A run of the stack: follow it at
    its `/run/events`; 400 for a destination that is not a repository."""
    with audit(admin, "backup.create", body.stack) as note:
        note.detail = f"into destination {destination_id}"
        if destinations.get(destination_id).type != "repository":
            raise Invalid("Only a repository takes a backup straight into it: back up, then push")
        into = await asyncio.to_thread(destinations.open, destination_id)
        backups = central_services(request).backups
        run = await backups.create(body.stack, body, into)
        note.ends = ended_by(run)
    return run.state()


@router.post(
    "/backups/{name}/push", operation_id="pushBackup", status_code=status.HTTP_202_ACCEPTED
)
async def push_backup(
    name: str, body: PushIn, admin: AdminDep, audit: AuditDep, transfers: TransfersDep
) -> RunState:
    """Upload a local archive to a destination; 409 when it is there already (checked as
    the run starts) or its stack is busy."""
    with audit(admin, "backup.push", name) as note:
        note.detail = f"to destination {body.destination_id}"
        run = transfers.push(name, body.destination_id)
        note.ends = ended_by(run)
    return run.state()
