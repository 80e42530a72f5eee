"""Stacks: status, files, lifecycle actions with live progress, image updates."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    OperatorDep,
    PrincipalDep,
    StacksDep,
    current_principal,
    existing_stack,
    signed_in_stream,
)
from stackyard.api.models import Body
from stackyard.auth.permissions import allows
from stackyard.auth.principal import Principal
from stackyard.compose.dockerrun import Converted, convert
from stackyard.stacks.policy import UpdatePolicy
from stackyard.stacks.removal import DeletePlan, DeleteResult
from stackyard.stacks.runs import RunState, ended_by, without_output
from stackyard.stacks.service import ACTIONS, StackDetail, StackView
from stackyard.stacks.updates import UpdateSummary, without_logs

router = APIRouter(prefix="/stacks", tags=["stacks"], dependencies=[Depends(current_principal)])

Action = Literal["start", "stop", "restart", "down", "pull", "update"]
assert set(Action.__args__) == set(ACTIONS)  # type: ignore[attr-defined]


class StackCreate(Body):
    name: str = Field(max_length=200)
    compose: str
    env: str = ""


class DockerRunIn(Body):
    command: str = Field(max_length=20_000, description="A `docker run` command")


class FileContent(Body):
    content: str


class SecretsOut(BaseModel):
    content: str


class AutoUpdateIn(Body):
    enabled: bool


#: Typed once in the capability (stacks/service.py, stacks/removal.py, stacks/runs.py,
#: compose/progress.py, stacks/updates.py) and served as it is: the schema's StackView,
#: DeletePlan, RunState, ProgressState, UpdateSummary, ... are those dataclasses.
RunOut = RunState
UpdateSummaryOut = UpdateSummary


@router.get(
    "/updates",
    operation_id="stackUpdates",
    response_model=UpdateSummaryOut,
    responses={200: {"model": UpdateSummaryOut}},
)
def stack_updates(principal: PrincipalDep, stacks: StacksDep) -> Response:
    """Per stack, whether an image has a newer registry digest: read from the cache only.
    The last log lines of a failed update are null for whoever may not read the stack's
    logs. The UI polls it; it is encoded once per change of the summary, not per request."""
    logs = allows(principal.role, "stacks.logs")
    return Response(stacks.updates.summary_json(logs), media_type="application/json")


@router.post("/updates/check", operation_id="checkStackUpdates")
async def check_updates(operator: OperatorDep, stacks: StacksDep) -> UpdateSummaryOut:
    """Ask the registries now (each distinct image once) and return the new summary."""
    summary = await stacks.updates.check()
    return summary if allows(operator.role, "stacks.logs") else without_logs(summary)


@router.get("/update-policy", operation_id="defaultUpdatePolicy")
def default_update_policy(stacks: StacksDep) -> UpdatePolicy:
    """The policy of every stack of this host that has none of its own."""
    return stacks.machine.prefs.default_policy()


@router.put(
    "/update-policy",
    operation_id="setDefaultUpdatePolicy",
    status_code=status.HTTP_204_NO_CONTENT,
)
def set_default_update_policy(
    body: UpdatePolicy, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> None:
    with audit(admin, "stack.update_policy", "*") as note:
        stacks.set_default_policy(body)
        note.detail = "the host's default"


@router.get("", operation_id="listStacks")
def list_stacks(stacks: StacksDep) -> list[StackView]:
    return stacks.list()


@router.post("", operation_id="createStack", status_code=status.HTTP_201_CREATED)
def create_stack(
    body: StackCreate, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> StackDetail:
    with audit(admin, "stack.create", body.name) as note:
        stack_id = stacks.create(body.name, body.compose, body.env)
        note.target = stack_id  # the id, not the name as typed
    return stacks.detail(stack_id, admin)


@router.post("/convert", operation_id="convertDockerRun")
def convert_docker_run(body: DockerRunIn, _admin: AdminDep) -> Converted:
    """A `docker run` command as a compose file (for a new stack; nothing is made)."""
    return convert(body.command)


@router.get("/{stack_id}", operation_id="getStack")
def get_stack(stack_id: str, principal: PrincipalDep, stacks: StacksDep) -> StackDetail:
    return stacks.detail(stack_id, principal)


@router.put("/{stack_id}/compose", operation_id="saveCompose")
def save_compose(
    stack_id: str, body: FileContent, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> StackDetail:
    """Validated with `docker compose config` first; refused (old file kept) when invalid."""
    with audit(admin, "stack.compose", stack_id):
        stacks.save(stack_id, "compose", body.content)
    return stacks.detail(stack_id, admin)


@router.put("/{stack_id}/env", operation_id="saveEnv")
def save_env(
    stack_id: str, body: FileContent, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> StackDetail:
    with audit(admin, "stack.env", stack_id):
        stacks.save(stack_id, "env", body.content)
    return stacks.detail(stack_id, admin)


@router.get("/{stack_id}/secrets", operation_id="getSecrets")
def get_secrets(stack_id: str, admin: AdminDep, stacks: StacksDep) -> SecretsOut:
    return SecretsOut(content=stacks.secrets(stack_id))


@router.put(
    "/{stack_id}/secrets", operation_id="saveSecrets", status_code=status.HTTP_204_NO_CONTENT
)
def save_secrets(
    stack_id: str, body: FileContent, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> None:
    with audit(admin, "stack.secrets", stack_id):
        stacks.save(stack_id, "secrets", body.content)


@router.get("/{stack_id}/delete-plan", operation_id="stackDeletePlan")
def stack_delete_plan(stack_id: str, _admin: AdminDep, stacks: StacksDep) -> DeletePlan:
    """What deleting the stack does, before it is done: the containers and networks
    `compose down` removes, the named volumes (kept unless `remove_volumes=true`), and the
    folder, which is moved aside to `.trash/<id>-<UTC time>` in the stacks folder with
    everything in it (bind-mounted data included), never erased."""
    return stacks.delete_plan(stack_id)


@router.delete("/{stack_id}", operation_id="deleteStack")
async def delete_stack(
    stack_id: str,
    admin: AdminDep,
    audit: AuditDep,
    stacks: StacksDep,
    confirm: Annotated[
        str | None,
        Query(description="The stack's id, typed by the user: anything else is refused (400)"),
    ] = None,
    remove_volumes: Annotated[bool, Query(description="Also remove named volumes")] = False,
) -> DeleteResult:
    """`compose down` (named volumes only when asked), then the folder is moved aside to
    `.trash/<id>-<UTC time>` in the stacks folder (see `delete-plan`). Refused with 400
    unless `confirm` is exactly the stack's id."""
    with audit(admin, "stack.delete", stack_id) as note:
        result = await stacks.delete(stack_id, remove_volumes, confirm)
        note.detail = result.summary()
    return result


@router.post(
    "/{stack_id}/actions/{action}", operation_id="stackAction", status_code=status.HTTP_202_ACCEPTED
)
async def stack_action(
    stack_id: str, action: Action, operator: OperatorDep, audit: AuditDep, stacks: StacksDep
) -> RunOut:
    """Start an action; 409 while another runs. Follow it at `/run/events`. An update is
    audited with its outcome (rolled back, say)."""
    if action != "update":
        return stacks.start(stack_id, action).state()
    with audit(operator, "stack.update", stack_id) as note:
        run = stacks.start(stack_id, action)
        note.ends = ended_by(run)
    return run.state()


def _readable(state: RunState, principal: Principal) -> RunState:
    """A run as `principal` may read it: its output only for those who may read logs."""
    return state if allows(principal.role, "stacks.logs") else without_output(state)


@router.get("/{stack_id}/run", operation_id="stackRun")
def stack_run(stack_id: str, principal: PrincipalDep, stacks: StacksDep) -> RunOut | None:
    """The current or last run, with its output (for those who may read the stack's
    logs; others get its state and stages); null when the stack never ran anything."""
    state = stacks.last_run(stack_id)
    return None if state is None else _readable(state, principal)


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
    states = (_readable(state, principal) async for state in stacks.follow(stack_id))
    async for event in run_events(request, principal, states):
        yield event


async def run_events(
    request: Request, principal: Principal, states: AsyncIterator[RunState]
) -> AsyncIterator[ServerSentEvent]:
    """A run followed as Server-Sent Events (stacks' runs, agents' transfers): `state`
    with each state, then `end`."""

    async def events() -> AsyncIterator[ServerSentEvent]:
        async for state in states:
            yield ServerSentEvent(event="state", data=state)
        yield ServerSentEvent(event="end", data={})  # browsers drop events without data

    # A revoked credential cuts the stream short: no `end`, which would say the run is over.
    async for event in signed_in_stream(request, principal, events()):
        yield event


@router.put(
    "/{stack_id}/auto-update", operation_id="setAutoUpdate", status_code=status.HTTP_204_NO_CONTENT
)
def set_auto_update(
    stack_id: str, body: AutoUpdateIn, _operator: OperatorDep, stacks: StacksDep
) -> None:
    """The stack's update policy with its mode set to auto, or notify."""
    stacks.set_auto_update(stack_id, body.enabled)


@router.put(
    "/{stack_id}/update-policy",
    operation_id="setUpdatePolicy",
    status_code=status.HTTP_204_NO_CONTENT,
)
def set_update_policy(
    stack_id: str, body: UpdatePolicy, operator: OperatorDep, audit: AuditDep, stacks: StacksDep
) -> None:
    """The stack's own update policy (its mode, what counts as an update, the health
    gate, cooldown and window)."""
    with audit(operator, "stack.update_policy", stack_id):
        stacks.set_policy(stack_id, body)


@router.delete(
    "/{stack_id}/update-policy",
    operation_id="inheritUpdatePolicy",
    status_code=status.HTTP_204_NO_CONTENT,
)
def inherit_update_policy(
    stack_id: str, operator: OperatorDep, audit: AuditDep, stacks: StacksDep
) -> None:
    """The stack follows the host's default update policy again."""
    with audit(operator, "stack.update_policy", stack_id) as note:
        stacks.set_policy(stack_id, None)
        note.detail = "the host's default"
