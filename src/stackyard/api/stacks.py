"""Stacks: status, files, lifecycle actions with live progress, image updates."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field

from stackyard.api.deps import (
    AdminDep,
    DbDep,
    OperatorDep,
    PrincipalDep,
    StacksDep,
    current_principal,
    existing_stack,
    signed_in_stream,
)
from stackyard.api.models import Body
from stackyard.auth.audit import audited
from stackyard.auth.principal import Principal
from stackyard.stacks.service import ACTIONS, StackView
from stackyard.stacks.updates import UpdateSummary

router = APIRouter(prefix="/stacks", tags=["stacks"], dependencies=[Depends(current_principal)])

Action = Literal["start", "stop", "restart", "down", "pull", "update"]
assert set(Action.__args__) == set(ACTIONS)  # type: ignore[attr-defined]


class ContainerOut(BaseModel):
    name: str
    state: str
    status: str
    health: str | None
    image: str
    ports: list[str]


class ServiceOut(BaseModel):
    name: str
    image: str | None
    running: bool
    containers: list[ContainerOut]


class StackOut(BaseModel):
    id: str
    state: Literal["running", "partial", "stopped", "invalid"]
    error: str | None = Field(description="Why the compose file could not be read")
    busy: str | None = Field(description="The action in progress, if any")
    auto_update: bool
    services: list[ServiceOut]


class StackDetail(StackOut):
    compose_file: str
    compose: str
    env: str | None = Field(description="The `.env` file; null for roles below admin")
    has_secrets: bool


class StackCreate(Body):
    name: str = Field(max_length=200)
    compose: str
    env: str = ""


class FileContent(Body):
    content: str


class SecretsOut(BaseModel):
    content: str


class AutoUpdateIn(Body):
    enabled: bool


class ImageProgressOut(BaseModel):
    id: str
    status: str
    percent: float
    bytes_done: int
    bytes_total: int
    layers_done: int
    layers_total: int


class ContainerProgressOut(BaseModel):
    id: str
    status: str
    done: bool


class LineOut(BaseModel):
    id: str | None
    text: str
    level: Literal["info", "warning", "error"]


class ProgressOut(BaseModel):
    mode: Literal["json", "text"]
    percent: float | None = Field(description="null: indeterminate (plain text output)")
    bytes_done: int
    bytes_total: int
    layers_done: int
    layers_total: int
    images: list[ImageProgressOut]
    containers: list[ContainerProgressOut]
    lines: list[LineOut]
    errors: list[str]


class RunOut(BaseModel):
    id: str
    stack: str
    action: str
    status: Literal["running", "succeeded", "failed"]
    started_at: datetime
    finished_at: datetime | None
    exit_code: int | None
    progress: ProgressOut


class ImageUpdateOut(BaseModel):
    service: str
    image: str
    state: Literal["update_available", "up_to_date", "pinned", "local", "unknown", "error"]
    local_digest: str | None
    remote_digest: str | None
    checked_at: datetime | None
    error: str | None


class AutoUpdateOutcomeOut(BaseModel):
    at: datetime
    outcome: Literal["updated", "failed", "skipped"]
    detail: str | None


class StackUpdateOut(BaseModel):
    stack: str
    has_update: bool
    auto_update: bool
    last_auto_update: AutoUpdateOutcomeOut | None
    images: list[ImageUpdateOut]


class UpdateSummaryOut(BaseModel):
    last_check: datetime | None
    stacks: list[StackUpdateOut]


def _stack(view: StackView) -> dict:
    s = view.status
    return {
        "id": s.id,
        "state": s.state,
        "error": s.error,
        "busy": view.busy,
        "auto_update": view.auto_update,
        "services": [
            {
                "name": svc.name,
                "image": svc.image,
                "running": svc.running,
                "containers": [
                    {
                        "name": c.name,
                        "state": c.state,
                        "status": c.status,
                        "health": c.health,
                        "image": c.image,
                        "ports": list(c.ports),
                    }
                    for c in svc.containers
                ],
            }
            for svc in s.services
        ],
    }


def _summary(summary: UpdateSummary) -> UpdateSummaryOut:
    return UpdateSummaryOut.model_validate(asdict(summary))


_summary_json: tuple[UpdateSummary, bytes] | None = None


@router.get(
    "/updates",
    operation_id="stackUpdates",
    response_model=UpdateSummaryOut,
    responses={200: {"model": UpdateSummaryOut}},
)
def stack_updates(stacks: StacksDep) -> Response:
    """Per stack, whether an image has a newer registry digest: read from the cache only.
    The UI polls it; it is encoded once per change of the summary, not per request."""
    global _summary_json
    summary = stacks.updates.summary()
    if _summary_json is None or _summary_json[0] is not summary:
        _summary_json = (summary, _summary(summary).model_dump_json().encode())
    return Response(_summary_json[1], media_type="application/json")


@router.post("/updates/check", operation_id="checkStackUpdates")
async def check_updates(_operator: OperatorDep, stacks: StacksDep) -> UpdateSummaryOut:
    """Ask the registries now (each distinct image once) and return the new summary."""
    return _summary(await stacks.updates.check())


@router.get("", operation_id="listStacks")
def list_stacks(stacks: StacksDep) -> list[StackOut]:
    return [StackOut.model_validate(_stack(view)) for view in stacks.list()]


@router.post("", operation_id="createStack", status_code=status.HTTP_201_CREATED)
def create_stack(body: StackCreate, admin: AdminDep, db: DbDep, stacks: StacksDep) -> StackDetail:
    with audited(db, admin.username, "stack.create", body.name):
        stack_id = stacks.create(body.name, body.compose, body.env)
    return _detail(stacks, stack_id, admin)


def _detail(stacks, stack_id: str, principal: Principal) -> StackDetail:
    view, files = stacks.get(stack_id)
    return StackDetail.model_validate(
        {
            **_stack(view),
            "compose_file": files.compose_name,
            "compose": files.compose,
            "env": files.env if principal.is_admin else None,
            "has_secrets": files.has_secrets,
        }
    )


@router.get("/{stack_id}", operation_id="getStack")
def get_stack(stack_id: str, principal: PrincipalDep, stacks: StacksDep) -> StackDetail:
    return _detail(stacks, stack_id, principal)


@router.put("/{stack_id}/compose", operation_id="saveCompose")
def save_compose(
    stack_id: str, body: FileContent, admin: AdminDep, db: DbDep, stacks: StacksDep
) -> StackDetail:
    """Validated with `docker compose config` first; refused (old file kept) when invalid."""
    with audited(db, admin.username, "stack.compose", stack_id):
        stacks.save(stack_id, "compose", body.content)
    return _detail(stacks, stack_id, admin)


@router.put("/{stack_id}/env", operation_id="saveEnv")
def save_env(
    stack_id: str, body: FileContent, admin: AdminDep, db: DbDep, stacks: StacksDep
) -> StackDetail:
    with audited(db, admin.username, "stack.env", stack_id):
        stacks.save(stack_id, "env", body.content)
    return _detail(stacks, stack_id, admin)


@router.get("/{stack_id}/secrets", operation_id="getSecrets")
def get_secrets(stack_id: str, admin: AdminDep, stacks: StacksDep) -> SecretsOut:
    return SecretsOut(content=stacks.secrets(stack_id))


@router.put(
    "/{stack_id}/secrets", operation_id="saveSecrets", status_code=status.HTTP_204_NO_CONTENT
)
def save_secrets(
    stack_id: str, body: FileContent, admin: AdminDep, db: DbDep, stacks: StacksDep
) -> None:
    with audited(db, admin.username, "stack.secrets", stack_id):
        stacks.save(stack_id, "secrets", body.content)


@router.delete("/{stack_id}", operation_id="deleteStack", status_code=status.HTTP_204_NO_CONTENT)
async def delete_stack(
    stack_id: str,
    admin: AdminDep,
    db: DbDep,
    stacks: StacksDep,
    remove_volumes: Annotated[bool, Query(description="Also remove named volumes")] = False,
) -> None:
    """`compose down` (named volumes only when asked), then remove the folder."""
    with audited(db, admin.username, "stack.delete", stack_id) as note:
        note.detail = "with volumes" if remove_volumes else None
        await stacks.delete(stack_id, remove_volumes)


@router.post(
    "/{stack_id}/actions/{action}", operation_id="stackAction", status_code=status.HTTP_202_ACCEPTED
)
async def stack_action(
    stack_id: str, action: Action, _operator: OperatorDep, stacks: StacksDep
) -> RunOut:
    """Start an action; 409 while another runs. Follow it at `/run/events`."""
    return RunOut.model_validate(stacks.start(stack_id, action).state())


@router.get("/{stack_id}/run", operation_id="stackRun")
def stack_run(stack_id: str, stacks: StacksDep) -> RunOut:
    """The current or last run, with its output."""
    return RunOut.model_validate(stacks.last_run(stack_id))


@router.get(
    "/{stack_id}/run/events", operation_id="stackRunEvents", response_class=EventSourceResponse
)
async def stack_run_events(
    stack_id: Annotated[str, Depends(existing_stack)],
    request: Request,
    principal: PrincipalDep,
    stacks: StacksDep,
) -> AsyncIterator[ServerSentEvent]:
    """Server-Sent Events: `state` with the run's state now and after each change, then
    `end` when it is over. A page opened mid-run catches up with the first event. The
    stream ends early when the credential that opened it is revoked."""
    async for state in signed_in_stream(request, principal, stacks.follow(stack_id)):
        yield ServerSentEvent(event="state", data=state)
    yield ServerSentEvent(event="end", data={})  # browsers drop events without data


@router.put(
    "/{stack_id}/auto-update", operation_id="setAutoUpdate", status_code=status.HTTP_204_NO_CONTENT
)
def set_auto_update(
    stack_id: str, body: AutoUpdateIn, _operator: OperatorDep, stacks: StacksDep
) -> None:
    stacks.set_auto_update(stack_id, body.enabled)
