"""A host's disk: what takes room and what uses it (everyone signed in sees it), the
removals (operators on the images of their stacks' repositories, admins on everything),
and the prune with its preview (admins). Removals and prunes are audited. Every host
serves these; the central proxies `/api/agents/{id}/disk/...`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import Field

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    OperatorDep,
    current_principal,
    require_admin,
    services,
)
from stackyard.api.models import Body
from stackyard.auth.principal import Principal
from stackyard.disk.model import DiskReport, PruneIn, PruneOptions, PrunePreview, PruneReport
from stackyard.disk.service import DiskService
from stackyard.errors import Forbidden

router = APIRouter(prefix="/disk", tags=["disk"], dependencies=[Depends(current_principal)])


def get_disk(request: Request) -> DiskService:
    return services(request).disk


DiskDep = Annotated[DiskService, Depends(get_disk)]


class PullIn(Body):
    reference: str = Field(min_length=1, max_length=512, description="`repository:tag`")


async def _may_touch(principal: Principal, disk: DiskService, image: str) -> None:
    if not principal.is_admin and not await disk.of_a_stack(image):
        raise Forbidden("Operators act on the images of their stacks' repositories only")


@router.get("", operation_id="diskReport")
async def disk_report(disk: DiskDep) -> DiskReport:
    """Images, volumes, networks, containers of no stack and the build cache: sizes, what
    uses each, why a prune never takes it; and the host's summary."""
    return await disk.report()


@router.post("/images/pull", operation_id="pullImage", status_code=status.HTTP_204_NO_CONTENT)
async def pull_image(body: PullIn, operator: OperatorDep, audit: AuditDep, disk: DiskDep) -> None:
    with audit(operator, "disk.image.pull", body.reference):
        await _may_touch(operator, disk, body.reference)
        await disk.pull(body.reference)


@router.delete(
    "/images/{image_id}", operation_id="removeImage", status_code=status.HTTP_204_NO_CONTENT
)
async def remove_image(
    image_id: str, operator: OperatorDep, audit: AuditDep, disk: DiskDep
) -> None:
    """Remove an image (each of its tags); 409 while a container uses it."""
    with audit(operator, "disk.image.remove", image_id):
        await _may_touch(operator, disk, image_id)
        await disk.remove_image(image_id)


@router.delete(
    "/volumes/{name}", operation_id="removeVolume", status_code=status.HTTP_204_NO_CONTENT
)
async def remove_volume(
    name: str,
    admin: AdminDep,
    audit: AuditDep,
    disk: DiskDep,
    confirm: Annotated[str, Query(max_length=255, description="The volume's name, typed")] = "",
) -> None:
    """Remove a volume and its data, once `confirm` is its name; 409 while a container
    uses it."""
    with audit(admin, "disk.volume.remove", name) as note:
        stack = await disk.remove_volume(name, confirm)
        note.detail = f"of the stack {stack}" if stack else None


@router.delete(
    "/networks/{network_id}", operation_id="removeNetwork", status_code=status.HTTP_204_NO_CONTENT
)
async def remove_network(network_id: str, admin: AdminDep, audit: AuditDep, disk: DiskDep) -> None:
    with audit(admin, "disk.network.remove", network_id):
        await disk.remove_network(network_id)


@router.post("/prune/preview", operation_id="previewPrune", dependencies=[Depends(require_admin)])
async def preview_prune(body: PruneOptions, disk: DiskDep) -> PrunePreview:
    """Every object a prune with these options would remove, with the bytes each frees,
    and what the options name that a prune never takes (and why). Nothing is removed."""
    return await disk.preview(body)


@router.post("/prune", operation_id="prune")
async def run_prune(body: PruneIn, admin: AdminDep, audit: AuditDep, disk: DiskDep) -> PruneReport:
    """Remove the objects of a preview (`ids`, as `kind:id`) that are candidates still:
    nothing else. What was freed, and each item not removed with why."""
    with audit(admin, "disk.prune", f"{len(body.ids)} objects") as note:
        origin = body.origin or f"by {admin.username}"
        report = await disk.prune(body.options, body.ids, origin)
        note.detail = f"{len(report.removed)} removed, {report.total} bytes freed"
    return report


@router.get("/prunes", operation_id="listPrunes")
def list_prunes(disk: DiskDep) -> list[PruneReport]:
    """The host's last prunes, newest first."""
    return disk.history()
