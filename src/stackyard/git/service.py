"""Stacks from git on one host: its repositories, the stacks made of their folders, and
the sync that deploys exactly the stacks a commit changed.

A sync (a push webhook, the poll, "Sync now") fetches the repository's ref into this
host's mirror of it, then, for each stack of the repository: when its folder's tree is
the same in the new commit as in the deployed one, nothing is done to it (its deployed
commit moves on, unchanged); else the commit must be signed when the repository asks it,
the stack's files must be as the deployed commit left them (files edited here are never
overwritten without the user's word: the stack is "diverged"), and its policy says what
happens: off, nothing; notify, the change waits, shown with its diff, until a user
applies it; auto, the new files are deployed through the update's health gate
(`StackService.deploy`), which puts the previous commit's files back and runs them again
when the new ones fail.

The stack's `.env` belongs to the host: a repository's `.env` is its template (the keys
the host's file lacks are added to it; the host's values win), and `.secrets` never
comes from git."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from stackyard.clock import utcnow
from stackyard.errors import Conflict, GitError, Invalid, NotFound, StackyardError, Unauthorized
from stackyard.events import Event, EventHub, EventName
from stackyard.git import history, hooks, remote, signatures
from stackyard.git.env import layered_env
from stackyard.git.model import (
    Commit,
    FetchOutcome,
    GitPolicy,
    GitStack,
    GitStackIn,
    GitStackView,
    Preview,
    Repository,
    RepositoryIn,
    SyncOutcome,
    SyncReport,
    Webhook,
)
from stackyard.git.store import GitStore, Secrets
from stackyard.sshkeys import fingerprint_of, new_key_pair, server_host_key
from stackyard.stacks.service import StackService
from stackyard.stacks.tree import Tree

log = logging.getLogger(__name__)

#: How often the poll looks for repositories whose interval has passed.
POLL_TICK = 5.0
ENV = ".env"


class GitService:
    def __init__(self, stacks: StackService, store: GitStore, data_dir: Path) -> None:
        self.stacks = stacks
        self.store = store
        self.mirrors = data_dir / "git" / "repositories"
        self.scratch = data_dir / "git" / "scratch"
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[object]] = set()
        stacks.read_only = self.read_only
        stacks.deleted.append(self.forget)

    @property
    def events(self) -> EventHub:
        return self.stacks.machine.events

    def clean_up(self) -> None:
        """What a killed fetch left: its private folder (a deploy key, a known host)."""
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- repositories -----------------------------------------------------------------
    def repositories(self) -> list[Repository]:
        return sorted(self.store.repositories().values(), key=lambda r: r.name.lower())

    async def add(self, body: RepositoryIn) -> Repository:
        """A new repository; an SSH one gets its deploy key and pins the server's host
        key now (first contact, before any key is sent)."""
        _check_auth(body)
        repo_id = self.store.new_id()
        repository = Repository(
            id=repo_id,
            name=body.name,
            url=body.url,
            ref=body.ref,
            auth=body.auth,
            username=body.username,
            poll_seconds=body.poll_seconds,
            require_signed=body.require_signed,
            trusted_keys=tuple(signatures.check_keys(body.trusted_keys)),
            has_token=bool(body.token),
        )
        private = None
        if body.auth == "ssh_key":
            private, public = new_key_pair(f"stackyard-deploy-{repo_id}")
            repository = replace(repository, public_key=public)
        if remote.is_ssh(body.url):
            repository = await self._pinned(repository)
        if body.auth == "token" and not body.token:
            raise Invalid("A token is needed for auth 'token'")
        token = body.token if body.auth == "token" else None
        await asyncio.to_thread(
            self.store.change_secrets, repo_id, lambda _: Secrets(token, private, None)
        )
        await asyncio.to_thread(self.store.put_repository, repository)
        return repository

    async def change(self, repo_id: str, body: RepositoryIn) -> Repository:
        """New settings; the token is kept when none is given; a new SSH address pins
        the host key again."""
        _check_auth(body)
        old = self.store.repository(repo_id)
        kept = await asyncio.to_thread(self.store.secrets, repo_id)
        private, public = kept.private_key, old.public_key
        if body.auth == "ssh_key" and private is None:
            private, public = new_key_pair(f"stackyard-deploy-{repo_id}")
        token = (body.token or kept.token) if body.auth == "token" else None
        if body.auth == "token" and not token:
            raise Invalid("A token is needed for auth 'token'")
        repository = replace(
            old,
            name=body.name,
            url=body.url,
            ref=body.ref,
            auth=body.auth,
            username=body.username,
            poll_seconds=body.poll_seconds,
            require_signed=body.require_signed,
            trusted_keys=tuple(signatures.check_keys(body.trusted_keys)),
            has_token=bool(token),
            public_key=public if body.auth == "ssh_key" else None,
        )
        if remote.is_ssh(body.url) and (
            old.host_key is None or remote.ssh_address(old.url) != remote.ssh_address(body.url)
        ):
            repository = await self._pinned(replace(repository, host_key=None))
        elif not remote.is_ssh(body.url):
            repository = replace(repository, host_key=None, host_key_fingerprint=None)
        secret = kept.webhook_secret
        await asyncio.to_thread(
            self.store.change_secrets,
            repo_id,
            lambda _: Secrets(token, private if body.auth == "ssh_key" else None, secret),
        )
        await asyncio.to_thread(self.store.put_repository, repository)
        return repository

    def remove(self, repo_id: str) -> None:
        """Refused while a stack is made of it (detach those first)."""
        self.store.repository(repo_id)
        using = sorted(s.stack for s in self.store.stacks().values() if s.repository == repo_id)
        if using:
            raise Conflict(
                f"Stacks {', '.join(using)} come from this repository: detach them first"
            )
        self.store.remove_repository(repo_id)
        shutil.rmtree(self._mirror(repo_id), ignore_errors=True)

    async def pin_host_key(self, repo_id: str) -> Repository:
        """The server's host key as it is now, pinned (after a forget)."""
        repository = self.store.repository(repo_id)
        if repository.host_key is not None:
            raise Conflict("A host key is pinned: forget it first, once its change is checked")
        pinned = await self._pinned(repository)
        return self.store.change_repository(
            repo_id, host_key=pinned.host_key, host_key_fingerprint=pinned.host_key_fingerprint
        )

    def forget_host_key(self, repo_id: str) -> Repository:
        self.store.repository(repo_id)
        return self.store.change_repository(repo_id, host_key=None, host_key_fingerprint=None)

    def new_deploy_key(self, repo_id: str) -> Repository:
        """A new deploy key (the old one no longer works here: remove it at the git host)."""
        repository = self.store.repository(repo_id)
        if repository.auth != "ssh_key":
            raise Invalid("Only a repository signed in to with a deploy key has one")
        private, public = new_key_pair(f"stackyard-deploy-{repo_id}")
        self.store.change_secrets(repo_id, lambda s: replace(s, private_key=private))
        return self.store.change_repository(repo_id, public_key=public)

    def new_webhook(self, repo_id: str, path: str) -> Webhook:
        """A new webhook secret (the old one no longer works): shown this once."""
        self.store.repository(repo_id)
        secret = self.store.new_webhook_secret()
        self.store.change_secrets(repo_id, lambda s: replace(s, webhook_secret=secret))
        self.store.change_repository(repo_id, webhook=True)
        return Webhook(path, secret)

    async def _pinned(self, repository: Repository) -> Repository:
        host, port = remote.ssh_address(repository.url)
        try:
            key = await server_host_key(host, port, remote.CONNECT_SECONDS)
        except (OSError, TimeoutError, Exception) as exc:
            raise remote.classified(f"could not connect: {exc}", self._access(repository)) from exc
        if key is None:
            raise GitError(f"{host}:{port} offered no SSH host key")
        return replace(repository, host_key=key.key, host_key_fingerprint=key.fingerprint)

    # -- git stacks -------------------------------------------------------------------
    def view(self, stack_id: str) -> GitStackView | None:
        stack = self.store.stack(stack_id)
        return None if stack is None else self._view(stack)

    def views(self) -> list[GitStackView]:
        return [self._view(s) for s in sorted(self.store.stacks().values(), key=_by_name)]

    def read_only(self, stack_id: str) -> str | None:
        """Why the stack's files may not be edited here, or None when they may."""
        stack = self.store.stack(stack_id)
        if stack is None or stack.local_edits:
            return None
        name = self.store.repositories().get(stack.repository)
        return (
            f"Stack {stack_id!r} comes from git ({name.name if name else stack.repository}"
            f", folder {stack.path or '/'}): change it there, or allow local edits"
        )

    async def create(self, name: str, body: GitStackIn, by: str | None) -> GitStackView:
        """A new stack of a repository's folder at its newest commit, deployed."""
        repository = self.store.repository(body.repository)
        async with self._lock(repository.id):
            sha = await self._fetch(repository)
            files, _ = await asyncio.to_thread(
                history.files_at, self._mirror(repository.id), sha, body.path
            )
        stack_id = await asyncio.to_thread(self.stacks.create_from, name, _stack_files(files, None))
        self.store.put_stack(
            GitStack(stack_id, repository.id, body.path, body.policy, body.local_edits)
        )
        await self._deploy(repository, stack_id, sha, {}, by)
        return self._view(self._stack(stack_id))

    async def adoption(self, stack_id: str, body: GitStackIn) -> Preview:
        """What pointing an existing stack at a repository folder would change in it."""
        repository = self.store.repository(body.repository)
        if self.store.stack(stack_id) is not None:
            raise Conflict(f"Stack {stack_id!r} comes from git already")
        async with self._lock(repository.id):
            sha = await self._fetch(repository)
        new, _ = await asyncio.to_thread(
            history.files_at, self._mirror(repository.id), sha, body.path
        )
        now = await asyncio.to_thread(self.stacks.machine.store.read_files, stack_id, list(new))
        wanted = _stack_files(new, now.get(ENV))
        changes = history.file_changes({p: d for p, d in now.items() if d is not None}, wanted)
        return Preview(stack_id, self._commit(repository, sha), changes)

    async def adopt(
        self, stack_id: str, body: GitStackIn, commit: str, by: str | None
    ) -> GitStackView:
        """The stack made of the repository folder at `commit` (the one its preview
        showed), deployed through the gate; its files not in the folder stay as they are."""
        repository = self.store.repository(body.repository)
        preview = await self.adoption(stack_id, body)
        if preview.commit.sha != commit:
            raise Conflict(
                f"The repository moved on to {preview.commit.short} since the preview: "
                "look at its changes again"
            )
        self.store.put_stack(
            GitStack(stack_id, repository.id, body.path, body.policy, body.local_edits)
        )
        writes: Tree = {c.path: None for c in preview.changes if c.change == "removed"}
        new, _ = await asyncio.to_thread(
            history.files_at, self._mirror(repository.id), commit, body.path
        )
        now = await asyncio.to_thread(self.stacks.machine.store.read_files, stack_id, [ENV])
        writes = {
            p: d
            for p, d in _stack_files(new, now.get(ENV)).items()
            if p in {c.path for c in preview.changes}
        }
        await self._deploy(repository, stack_id, commit, writes, by)
        return self._view(self._stack(stack_id))

    def configure(
        self, stack_id: str, policy: GitPolicy | None, local_edits: bool | None
    ) -> GitStackView:
        def apply(stack: GitStack) -> None:
            if policy is not None:
                stack.policy = policy
            if local_edits is not None:
                stack.local_edits = local_edits

        return self._view(self.store.change_stack(stack_id, apply))

    def detach(self, stack_id: str) -> None:
        """The stack is no longer from git: its files stay, editable."""
        stack = self._stack(stack_id)
        self.store.remove_stack(stack_id)
        with contextlib.suppress(StackyardError):
            remote.keep(self._mirror(stack.repository), _kept_ref(stack_id), None)

    def forget(self, stack_id: str) -> None:
        """A stack deleted: it is no longer from git."""
        if self.store.stack(stack_id) is not None:
            self.detach(stack_id)

    # -- sync -------------------------------------------------------------------------
    async def sync(self, repo_id: str, by: str | None) -> SyncReport:
        """Fetch, then each stack of the repository as its folder and policy say."""
        repository = self.store.repository(repo_id)
        async with self._lock(repo_id):
            try:
                sha = await self._fetch(repository)
            except StackyardError as exc:
                for stack in self._stacks_of(repo_id):
                    self._said(stack.stack, "git_sync_failed", exc.detail)
                return SyncReport(repo_id, None, exc.detail)
            outcomes = {}
            for stack in self._stacks_of(repo_id):
                if stack.policy == "off":
                    continue
                try:
                    outcome = await self._sync_stack(repository, stack, sha, by)
                except StackyardError as exc:
                    outcome = self._kept(stack.stack, "failed", sha, exc.detail, by)
                outcomes[stack.stack] = outcome
        return SyncReport(repo_id, sha, None, outcomes)

    def sync_soon(self, repo_id: str, by: str) -> None:
        """A sync in the background (a webhook is answered before it runs)."""
        task = asyncio.create_task(self.sync(repo_id, by))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def hook(self, repo_id: str, headers: Mapping[str, str], body: bytes) -> bool:
        """A push webhook: Unauthorized (the same for every reason) unless it is signed
        with the repository's secret; True when it names the repository's ref and a
        sync began, False for another ref or a delivery that is no push."""
        repository = self.store.repositories().get(repo_id)
        secret = (
            (await asyncio.to_thread(self.store.secrets, repo_id)).webhook_secret
            if repository
            else None
        )
        if repository is None or secret is None or not hooks.signed(headers, body, secret):
            raise Unauthorized("Not signed with this webhook's secret")
        pushed = hooks.pushed_ref(body)
        if pushed is None or not hooks.names(pushed, repository.ref):
            return False
        self.sync_soon(repo_id, "webhook")
        return True

    async def poll(self) -> None:
        """Each repository fetched every `poll_seconds` (never when 0)."""
        while True:
            now = utcnow()
            for repository in self.store.repositories().values():
                last = repository.last_fetch.at if repository.last_fetch else None
                due = repository.poll_seconds and (
                    last is None or (now - last).total_seconds() >= repository.poll_seconds
                )
                if due and not self._lock(repository.id).locked():
                    try:
                        await self.sync(repository.id, "poll")
                    except StackyardError as exc:
                        log.warning("Git poll of %s failed: %s", repository.name, exc.detail)
                    except Exception:
                        log.exception("Git poll of %s failed", repository.name)
            await asyncio.sleep(POLL_TICK)

    async def _sync_stack(
        self, repository: Repository, stack: GitStack, sha: str, by: str | None
    ) -> SyncOutcome:
        mirror = self._mirror(repository.id)
        if stack.deployed == sha:
            return self._kept(stack.stack, "unchanged", sha, None, by, quiet=True)
        if stack.deployed is not None:
            changed = await asyncio.to_thread(
                history.changed, mirror, stack.deployed, sha, {stack.path}
            )
            if not changed:
                await self._moved_on(repository, stack.stack, sha)
                return self._kept(stack.stack, "unchanged", sha, None, by, quiet=True)
        if stack.failed == sha:
            return stack.last_sync or self._kept(stack.stack, "rolled_back", sha, None, by)
        if repository.require_signed:
            try:
                await asyncio.to_thread(
                    signatures.verify, mirror, sha, repository.trusted_keys, self.scratch
                )
            except signatures.Unsigned as exc:
                self._pending(stack.stack, sha)
                if stack.pending != sha or (
                    stack.last_sync and stack.last_sync.outcome != "refused"
                ):
                    self._said(stack.stack, "git_commit_refused", exc.detail, sha)
                return self._kept(stack.stack, "refused", sha, exc.detail, by)
        edited = await asyncio.to_thread(self._edited, repository, stack)
        if edited:
            self._pending(stack.stack, sha)
            detail = (
                f"Not deployed: {', '.join(edited)} were edited here since commit "
                f"{(stack.deployed or '')[:12]}; look at the diff, then apply to overwrite "
                "them (they are kept aside) or detach the stack from git"
            )
            self._said(stack.stack, "git_sync_failed", detail, sha)
            return self._kept(stack.stack, "diverged", sha, detail, by)
        if stack.policy == "notify":
            self._pending(stack.stack, sha)
            if stack.pending != sha:
                commit = self._commit(repository, sha)
                text = (
                    f"Commit {commit.short} ({commit.subject}) changes {stack.stack}: "
                    "review and apply it"
                )
                self.events.raise_event(
                    Event("git_change_pending", stack.stack, text, sha, stack.stack)
                )
            return self._kept(stack.stack, "pending", sha, "waits for a user to apply it", by)
        return await self._deploy(
            repository, stack.stack, sha, await self._writes(repository, stack, sha), by
        )

    async def preview(self, stack_id: str, commit: str | None = None) -> Preview:
        """What applying `commit` (the pending one by default) would change in the stack."""
        stack = self._stack(stack_id)
        repository = self.store.repository(stack.repository)
        sha = commit or stack.pending
        if sha is None:
            raise NotFound(f"No change of {stack_id!r} waits to be applied")
        mirror = self._mirror(repository.id)
        new, _ = await asyncio.to_thread(history.files_at, mirror, sha, stack.path)
        paths = sorted(set(new) | set(await self._git_files(repository, stack)) | {ENV})
        now = await asyncio.to_thread(self.stacks.machine.store.read_files, stack_id, paths)
        wanted = await self._writes(repository, stack, sha)
        current = {p: d for p, d in now.items() if d is not None and p in wanted}
        target = {p: d for p, d in wanted.items() if d is not None}
        edited = await asyncio.to_thread(self._edited, repository, stack)
        return Preview(
            stack_id,
            self._commit(repository, sha),
            history.file_changes(current, target),
            tuple(edited),
        )

    async def apply(
        self, stack_id: str, commit: str, overwrite: bool, by: str | None
    ) -> SyncOutcome:
        """The commit (the pending one a user reviewed) deployed; files edited here are
        overwritten only with `overwrite`, after they are kept aside in `.trash`."""
        stack = self._stack(stack_id)
        repository = self.store.repository(stack.repository)
        async with self._lock(repository.id):
            try:
                await asyncio.to_thread(
                    remote.resolve, self._mirror(repository.id), commit, self._access(repository)
                )
            except GitError as exc:
                raise NotFound(
                    f"Commit {commit[:12]} is not among the fetched ones: sync first"
                ) from exc
            if repository.require_signed:
                await asyncio.to_thread(
                    signatures.verify,
                    self._mirror(repository.id),
                    commit,
                    repository.trusted_keys,
                    self.scratch,
                )
            edited = await asyncio.to_thread(self._edited, repository, stack)
            if edited and not overwrite:
                raise Conflict(
                    f"{', '.join(edited)} were edited here: confirm that they are overwritten "
                    "(they are kept aside in the stacks folder's .trash)"
                )
            if edited:
                await asyncio.to_thread(self._keep_aside, stack_id, edited)
            writes = await self._writes(repository, stack, commit)
            return await self._deploy(repository, stack_id, commit, writes, by)

    # -- the work ---------------------------------------------------------------------
    async def _fetch(self, repository: Repository) -> str:
        secrets = await asyncio.to_thread(self.store.secrets, repository.id)
        access = self._access(repository, secrets)
        try:
            sha = await asyncio.to_thread(
                remote.fetch, self._mirror(repository.id), access, self.scratch
            )
        except StackyardError as exc:
            self.store.change_repository(
                repository.id, last_fetch=FetchOutcome(utcnow(), None, exc.detail)
            )
            raise
        self.store.change_repository(repository.id, last_fetch=FetchOutcome(utcnow(), sha, None))
        return sha

    async def _deploy(
        self, repository: Repository, stack_id: str, sha: str, writes: Tree, by: str | None
    ) -> SyncOutcome:
        commit = self._commit(repository, sha)
        said = f"commit {commit.short} ({commit.subject}) of {repository.name}"
        try:
            run = await self.stacks.deploy(stack_id, writes, said)
        except Conflict as exc:  # busy: the change waits for the next sync
            self._pending(stack_id, sha)
            return self._kept(
                stack_id, "pending", sha, f"{exc.detail}: tried again at the next sync", by
            )
        if run.status == "succeeded":
            await self._moved_on(repository, stack_id, sha)
            return self._kept(stack_id, "deployed", sha, None, by)
        error = "; ".join(run.fold.errors) or "the deploy failed"
        outcome = "rolled_back" if run.rollback is not None else "failed"

        def failed(stack: GitStack) -> None:
            stack.failed = sha
            stack.pending = sha

        self.store.change_stack(stack_id, failed)
        return self._kept(stack_id, outcome, sha, error, by)

    async def _moved_on(self, repository: Repository, stack_id: str, sha: str) -> None:
        def apply(stack: GitStack) -> None:
            stack.deployed, stack.pending, stack.failed = sha, None, None

        self.store.change_stack(stack_id, apply)
        await asyncio.to_thread(remote.keep, self._mirror(repository.id), _kept_ref(stack_id), sha)

    async def _writes(self, repository: Repository, stack: GitStack, sha: str) -> Tree:
        """What turns the stack's folder into the commit's: its files, those the deployed
        commit had and this one has not removed, and `.env` layered."""
        mirror = self._mirror(repository.id)
        new, _ = await asyncio.to_thread(history.files_at, mirror, sha, stack.path)
        old = await self._git_files(repository, stack)
        env = (await asyncio.to_thread(self.stacks.machine.store.read_files, stack.stack, [ENV]))[
            ENV
        ]
        files: Tree = {p: None for p in old if p not in new and p != ENV}
        files.update(_stack_files(new, env))
        return files

    async def _git_files(self, repository: Repository, stack: GitStack) -> Tree:
        if stack.deployed is None:
            return {}
        mirror = self._mirror(repository.id)
        files, _ = await asyncio.to_thread(history.files_at, mirror, stack.deployed, stack.path)
        return dict(files)

    def _edited(self, repository: Repository, stack: GitStack) -> list[str]:
        """The files of the deployed commit edited here (`.env` is the host's own)."""
        if stack.deployed is None:
            return []
        files, _ = history.files_at(self._mirror(repository.id), stack.deployed, stack.path)
        paths = [p for p in files if p != ENV]
        now = self.stacks.machine.store.read_files(stack.stack, paths)
        return sorted(p for p in paths if now.get(p) != files[p])

    def _keep_aside(self, stack_id: str, paths: list[str]) -> None:
        """Copies of the edited files in `.trash/<stack>-edits-<time>/` of the stacks folder."""
        now = self.stacks.machine.store.read_files(stack_id, paths)
        aside = (
            self.stacks.machine.stacks_dir
            / ".trash"
            / f"{stack_id}-edits-{utcnow():%Y%m%dT%H%M%SZ}"
        )
        for path, data in now.items():
            if data is not None:
                target = aside / path
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                target.write_bytes(data)

    def _pending(self, stack_id: str, sha: str) -> None:
        def apply(stack: GitStack) -> None:
            stack.pending = sha

        self.store.change_stack(stack_id, apply)

    def _kept(
        self,
        stack_id: str,
        outcome: str,
        sha: str | None,
        detail: str | None,
        by: str | None,
        quiet: bool = False,
    ) -> SyncOutcome:
        """The outcome kept for the stack (a quiet one, the same as the last, is not
        written again); a sync that works again ends a failed sync's condition."""
        said = SyncOutcome(utcnow(), outcome, sha, detail, by)  # type: ignore[arg-type]
        stack = self.store.stack(stack_id)
        last = stack.last_sync if stack else None
        if stack is None or (quiet and last and (last.outcome, last.commit) == (outcome, sha)):
            return last or said
        if (
            last is not None
            and last.outcome in ("failed", "diverged")
            and outcome in ("deployed", "unchanged")
        ):
            self.events.raise_event(
                Event(
                    "git_sync_failed",
                    stack_id,
                    f"Sync of {stack_id} works again",
                    "active",
                    stack_id,
                    ended=True,
                )
            )

        def apply(kept: GitStack) -> None:
            kept.last_sync = said

        self.store.change_stack(stack_id, apply)
        return said

    def _said(self, stack_id: str, name: EventName, detail: str, state: str = "active") -> None:
        self.events.raise_event(Event(name, stack_id, f"{stack_id}: {detail}", state, stack_id))

    def _view(self, stack: GitStack) -> GitStackView:
        repository = self.store.repositories().get(stack.repository)
        commit: Callable[[str | None], Commit | None] = lambda sha: (  # noqa: E731
            None if sha is None or repository is None else self._commit_or_none(repository, sha)
        )
        edited: list[str] = []
        if repository is not None:
            with contextlib.suppress(StackyardError, OSError):
                edited = self._edited(repository, stack)
        return GitStackView(
            stack=stack.stack,
            repository=stack.repository,
            repository_name=repository.name if repository else "(removed)",
            path=stack.path,
            policy=stack.policy,
            local_edits=stack.local_edits,
            deployed=commit(stack.deployed),
            pending=commit(stack.pending),
            last_sync=stack.last_sync,
            diverged=bool(edited),
            edited=tuple(edited),
        )

    def _commit(self, repository: Repository, sha: str) -> Commit:
        return history.commit_of(
            self._mirror(repository.id), sha, remote.host_page(repository.url, sha)
        )

    def _commit_or_none(self, repository: Repository, sha: str) -> Commit | None:
        try:
            return self._commit(repository, sha)
        except StackyardError:
            return None

    def _stack(self, stack_id: str) -> GitStack:
        stack = self.store.stack(stack_id)
        if stack is None:
            raise NotFound(f"Stack {stack_id!r} is not from git")
        return stack

    def _stacks_of(self, repo_id: str) -> list[GitStack]:
        return [s for s in self.store.stacks().values() if s.repository == repo_id]

    def _mirror(self, repo_id: str) -> Path:
        return self.mirrors / f"{repo_id}.git"

    def _access(self, repository: Repository, secrets: Secrets | None = None) -> remote.Access:
        secrets = secrets or Secrets()
        return remote.Access(
            url=repository.url,
            ref=repository.ref,
            auth=repository.auth,
            username=repository.username,
            token=secrets.token,
            private_key=secrets.private_key,
            host_key=repository.host_key,
        )

    def _lock(self, repo_id: str) -> asyncio.Lock:
        return self._locks.setdefault(repo_id, asyncio.Lock())


def _check_auth(body: RepositoryIn) -> None:
    ssh = remote.is_ssh(body.url)
    if body.auth == "ssh_key" and not ssh:
        raise Invalid("A deploy key is used over SSH: give an ssh:// or git@host: address")
    if body.auth == "token" and not body.url.startswith(("https://", "http://")):
        raise Invalid("A token is sent over HTTPS: give an https:// address")
    if ssh and body.auth != "ssh_key":
        raise Invalid("An SSH address needs a deploy key (auth 'ssh_key')")
    for key in body.trusted_keys:
        if not key.strip().startswith("-----BEGIN PGP"):
            fingerprint_of(key)


def _stack_files(files: Tree, env_here: bytes | None) -> Tree:
    """A repository folder's files as the stack's: `.env` layered over the host's."""
    out: Tree = {
        p: d for p, d in files.items() if p != ENV and p.split("/")[0] not in (".secrets", ".git")
    }
    env = layered_env(files.get(ENV), env_here)
    if env is not None:
        out[ENV] = env
    return out


def _kept_ref(stack_id: str) -> str:
    return f"refs/stackyard/stacks/{stack_id}"


def _by_name(stack: GitStack) -> str:
    return stack.stack
