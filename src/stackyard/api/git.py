"""Stacks from git: repositories (admins), the stacks made of their folders, syncs,
reviews and applies of pending changes, and the git hosts' push webhooks.

Every host serves these (an agent's stacks fetch from the agent's host; the central
proxies `/api/agents/{id}/git/...`). The webhook routes are the central's, the ones
without a signed-in user: `/api/git/hooks/{repo}` for its own host's repositories and
`/api/git/hooks/agents/{agent}/{repo}` for an agent's (passed on to the agent, which
judges it: an agent behind a firewall still gets its pushes). Each answers 401 for
anything not signed with the repository's webhook secret, without saying why, and 202
once a push of the repository's ref has started a sync."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import BaseModel, Field, TypeAdapter

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    OperatorDep,
    central_services,
    current_principal,
    is_agent,
    services,
)
from stackyard.errors import Unauthorized
from stackyard.git.hooks import SIGNATURE_HEADERS
from stackyard.git.model import (
    Delivery,
    GitPolicy,
    GitStackIn,
    GitStackView,
    Preview,
    Repository,
    RepositoryIn,
    SyncOutcome,
    SyncReport,
    Webhook,
)
from stackyard.git.service import GitService
from stackyard.jsonmodel import StrictModel

router = APIRouter(prefix="/git", tags=["git"], dependencies=[Depends(current_principal)])
#: The git hosts' deliveries: signed with the webhook's secret, not by a user.
hooks = APIRouter(prefix="/git", tags=["git"])
#: An agent's: the deliveries its central passes on (with the agent's token).
deliveries = APIRouter(
    prefix="/git", tags=["git"], dependencies=[Depends(current_principal)], include_in_schema=False
)
HOOKS_PATH = "/git/hooks"
_DELIVERY = TypeAdapter(Delivery)


def get_git(request: Request) -> GitService:
    return services(request).git


GitDep = Annotated[GitService, Depends(get_git)]


class GitStackCreate(GitStackIn):
    name: str = Field(max_length=200, description="The new stack's name")


class GitAdopt(GitStackIn):
    commit: str = Field(
        min_length=40, max_length=64, description="The commit the adoption's preview showed"
    )


class GitStackChange(StrictModel):
    policy: GitPolicy | None = None
    local_edits: bool | None = None


class GitApply(StrictModel):
    commit: str = Field(min_length=40, max_length=64)
    overwrite: bool = Field(
        False,
        description="Overwrite the files edited here (copies are kept in the stacks "
        "folder's .trash first)",
    )


class HookOut(BaseModel):
    sync: bool = Field(description="Whether a sync began (false: another ref, or no push)")


# -- repositories -----------------------------------------------------------------------
@router.get("/repositories", operation_id="listGitRepositories")
def list_repositories(git: GitDep) -> list[Repository]:
    """The repositories (never their token, deploy key or webhook secret)."""
    return git.repositories.all()


@router.post(
    "/repositories", operation_id="createGitRepository", status_code=status.HTTP_201_CREATED
)
async def create_repository(
    body: RepositoryIn, admin: AdminDep, audit: AuditDep, git: GitDep
) -> Repository:
    """A repository. An SSH one gets a deploy key (add `public_key` to the repository at
    the git host, read access) and pins the server's host key now."""
    with audit(admin, "git.repository.create", body.name) as note:
        repository = await git.repositories.add(body)
        note.target = repository.id
    return repository


@router.put("/repositories/{repo_id}", operation_id="updateGitRepository")
async def update_repository(
    repo_id: str, body: RepositoryIn, admin: AdminDep, audit: AuditDep, git: GitDep
) -> Repository:
    """New settings; a null token keeps the one kept."""
    with audit(admin, "git.repository.update", repo_id):
        return await git.repositories.change(repo_id, body)


@router.delete(
    "/repositories/{repo_id}",
    operation_id="deleteGitRepository",
    status_code=status.HTTP_204_NO_CONTENT,
)
def delete_repository(repo_id: str, admin: AdminDep, audit: AuditDep, git: GitDep) -> None:
    """Refused (409) while stacks come from it."""
    with audit(admin, "git.repository.delete", repo_id):
        git.repositories.remove(repo_id)


@router.post("/repositories/{repo_id}/host-key", operation_id="pinGitHostKey")
async def pin_host_key(repo_id: str, admin: AdminDep, audit: AuditDep, git: GitDep) -> Repository:
    """The SSH server's host key as it is now, pinned (once the pinned one is forgotten)."""
    with audit(admin, "git.repository.key", repo_id) as note:
        note.detail = "host key pinned"
        return await git.repositories.pin_host_key(repo_id)


@router.delete("/repositories/{repo_id}/host-key", operation_id="forgetGitHostKey")
def forget_host_key(repo_id: str, admin: AdminDep, audit: AuditDep, git: GitDep) -> Repository:
    """Forget the pinned host key (after checking its change with the server's owner)."""
    with audit(admin, "git.repository.key", repo_id) as note:
        note.detail = "host key forgotten"
        return git.repositories.forget_host_key(repo_id)


@router.post("/repositories/{repo_id}/deploy-key", operation_id="newGitDeployKey")
def new_deploy_key(repo_id: str, admin: AdminDep, audit: AuditDep, git: GitDep) -> Repository:
    """A new deploy key: add its public half at the git host, remove the old one."""
    with audit(admin, "git.repository.key", repo_id) as note:
        note.detail = "new deploy key"
        return git.repositories.new_deploy_key(repo_id)


@router.post("/repositories/{repo_id}/webhook", operation_id="newGitWebhook")
def new_webhook(
    repo_id: str, request: Request, admin: AdminDep, audit: AuditDep, git: GitDep
) -> Webhook:
    """A new webhook secret, shown this once with the webhook's path under the central's
    `/api` (for an agent's repository the path has `{agent}` where the agent's id goes);
    the old secret stops working."""
    where = f"{HOOKS_PATH}/agents/{{agent}}" if is_agent(request) else HOOKS_PATH
    with audit(admin, "git.repository.webhook", repo_id):
        return git.repositories.new_webhook(repo_id, f"{where}/{repo_id}")


@router.post("/repositories/{repo_id}/sync", operation_id="syncGitRepository")
async def sync_repository(
    repo_id: str, operator: OperatorDep, audit: AuditDep, git: GitDep
) -> SyncReport:
    """Sync now: fetch, and each stack of the repository as its policy says."""
    with audit(operator, "git.sync", repo_id) as note:
        report = await git.sync(repo_id, operator.username)
        note.detail = report.error or (report.commit or "")[:12]
    return report


# -- git stacks -------------------------------------------------------------------------
@router.get("/stacks", operation_id="listGitStacks")
def list_git_stacks(git: GitDep) -> list[GitStackView]:
    return git.views()


@router.get("/stacks/{stack_id}", operation_id="getGitStack")
def get_git_stack(stack_id: str, git: GitDep) -> GitStackView | None:
    """The stack's repository, folder, deployed and pending commits, last sync; null
    when the stack is not from git."""
    return git.view(stack_id)


@router.post("/stacks", operation_id="createGitStack", status_code=status.HTTP_201_CREATED)
async def create_git_stack(
    body: GitStackCreate, admin: AdminDep, audit: AuditDep, git: GitDep
) -> GitStackView:
    """A new stack of a repository folder at its newest commit, deployed."""
    with audit(admin, "git.stack.create", body.name) as note:
        view = await git.create(body.name, body, admin.username)
        note.target = view.stack
        note.detail = view.last_sync.detail if view.last_sync else None
    return view


@router.post("/stacks/{stack_id}/adoption", operation_id="previewGitAdoption")
async def preview_adoption(
    stack_id: str, body: GitStackIn, _admin: AdminDep, git: GitDep
) -> Preview:
    """What pointing the existing stack at a repository folder would change (nothing
    is changed)."""
    return await git.adoption(stack_id, body)


@router.post("/stacks/{stack_id}/adopt", operation_id="adoptGitStack")
async def adopt_git_stack(
    stack_id: str, body: GitAdopt, admin: AdminDep, audit: AuditDep, git: GitDep
) -> GitStackView:
    """The stack made of the folder at the commit its preview showed, deployed."""
    with audit(admin, "git.stack.adopt", stack_id):
        return await git.adopt(stack_id, body, body.commit, admin.username)


@router.patch("/stacks/{stack_id}", operation_id="updateGitStack")
def update_git_stack(
    stack_id: str, body: GitStackChange, admin: AdminDep, audit: AuditDep, git: GitDep
) -> GitStackView:
    """The stack's policy, and whether its files may be edited here."""
    with audit(admin, "git.stack.update", stack_id):
        return git.configure(stack_id, body.policy, body.local_edits)


@router.delete(
    "/stacks/{stack_id}", operation_id="detachGitStack", status_code=status.HTTP_204_NO_CONTENT
)
def detach_git_stack(stack_id: str, admin: AdminDep, audit: AuditDep, git: GitDep) -> None:
    """The stack is no longer from git; its files stay, editable."""
    with audit(admin, "git.stack.detach", stack_id):
        git.detach(stack_id)


@router.get("/stacks/{stack_id}/preview", operation_id="previewGitChange")
async def preview_change(
    stack_id: str,
    git: GitDep,
    _operator: OperatorDep,
    commit: Annotated[str | None, Query(max_length=64)] = None,
) -> Preview:
    """What applying the pending commit (or `commit`) would change in the stack."""
    return await git.preview(stack_id, commit)


@router.post("/stacks/{stack_id}/apply", operation_id="applyGitChange")
async def apply_change(
    stack_id: str, body: GitApply, operator: OperatorDep, audit: AuditDep, git: GitDep
) -> SyncOutcome:
    """The commit deployed through the health gate (rolled back when it fails)."""
    with audit(operator, "git.apply", stack_id) as note:
        outcome = await git.apply(stack_id, body.commit, body.overwrite, operator.username)
        note.detail = f"{outcome.outcome} {body.commit[:12]}"
    return outcome


# -- webhooks -----------------------------------------------------------------------------
@hooks.post(
    "/hooks/{repo_id}",
    operation_id="gitWebhook",
    status_code=status.HTTP_202_ACCEPTED,
    responses={401: {"description": "Not signed with the webhook's secret"}},
)
async def git_webhook(repo_id: str, request: Request, git: GitDep) -> HookOut:
    """A git host's push (GitHub, GitLab, Gitea, Forgejo): a sync of the repository when
    it names the repository's ref; any other ref or delivery is answered and ignored."""
    body = await request.body()
    return HookOut(sync=await git.hook(repo_id, request.headers, body))


@hooks.post(
    "/hooks/agents/{agent_id}/{repo_id}",
    operation_id="gitAgentWebhook",
    status_code=status.HTTP_202_ACCEPTED,
    responses={401: {"description": "Not signed with the webhook's secret"}},
)
async def git_agent_webhook(agent_id: int, repo_id: str, request: Request) -> HookOut:
    """A git host's push for a repository of an agent's host: passed on to the agent
    (its signature headers and body, as they came), which judges and syncs it."""
    headers = {name: request.headers[name] for name in SIGNATURE_HEADERS if name in request.headers}
    agents = central_services(request).agents
    answer = await agents.deliver(
        agent_id, f"/git/deliveries/{repo_id}", headers, await request.body()
    )
    delivery = _DELIVERY.validate_json(answer)
    if not delivery.signed:
        raise Unauthorized("Not signed with this webhook's secret")
    return HookOut(sync=delivery.sync)


@deliveries.post("/deliveries/{repo_id}", operation_id="gitDelivery")
async def git_delivery(repo_id: str, request: Request, git: GitDep) -> Delivery:
    """(An agent's) a webhook delivery its central passed on: judged as the central's
    own webhook route judges its own."""
    try:
        return Delivery(
            signed=True, sync=await git.hook(repo_id, request.headers, await request.body())
        )
    except Unauthorized:
        return Delivery(signed=False)
