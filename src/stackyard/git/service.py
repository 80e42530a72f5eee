"""Stacks from git on one host: the stacks made of repository folders, and the sync that
deploys exactly the stacks a commit changed.

A sync (a push webhook, the poll, "Sync now") fetches the repository's ref into this
host's mirror of it (`git.repositories`), then, for each stack of the repository: when
its folder's tree is the same in the new commit as in the deployed one, nothing is done
to it (its deployed commit moves on, unchanged); else the commit must be signed when the
repository asks it, the stack's files must be as the deployed commit left them (files
edited here are never overwritten without the user's word: the stack is "diverged"),
and its policy says what happens: off, nothing; notify, the change waits, shown with its
diff, until a user applies it; auto, the new files are deployed through the update's
health gate (`StackService.deploy`), which puts the previous commit's files back and
runs them again when the new ones fail.

The stack's `.env` belongs to the host: a repository's `.env` is its template (the keys
the host's file lacks are added to it; the host's values win), and `.secrets` never
comes from git (`git.folders`)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Mapping
from pathlib import Path

from stackyard.clock import utcnow
from stackyard.errors import Conflict, GitError, NotFound, StackyardError, Unauthorized
from stackyard.events import Event, EventHub, EventName
from stackyard.git import folders, history, hooks, signatures
from stackyard.git.folders import ENV
from stackyard.git.model import (
    Commit,
    GitPolicy,
    GitStack,
    GitStackIn,
    GitStackView,
    Outcome,
    Preview,
    Repository,
    SyncOutcome,
    SyncReport,
)
from stackyard.git.repositories import Repositories
from stackyard.git.store import GitStore
from stackyard.stacks.service import StackService
from stackyard.stacks.tree import Tree

log = logging.getLogger(__name__)

#: How often the poll looks for repositories whose interval has passed.
POLL_TICK = 5.0


class GitService:
    def __init__(self, stacks: StackService, store: GitStore, data_dir: Path) -> None:
        self.stacks = stacks
        self.store = store
        self.repositories = Repositories(store, data_dir)
        self._read = stacks.machine.store.read_files
        self._background: set[asyncio.Task[object]] = set()
        stacks.read_only = self.read_only
        stacks.deleted.append(self.forget)

    @property
    def events(self) -> EventHub:
        return self.stacks.machine.events

    # -- git stacks -------------------------------------------------------------------
    def view(self, stack_id: str) -> GitStackView | None:
        stack = self.store.stack(stack_id)
        return None if stack is None else self._view(stack)

    def views(self) -> list[GitStackView]:
        stacks = self.store.stacks()
        return [self._view(stacks[name]) for name in sorted(stacks)]

    def read_only(self, stack_id: str) -> str | None:
        """Why the stack's files may not be edited here, or None when they may."""
        stack = self.store.stack(stack_id)
        if stack is None or stack.local_edits:
            return None
        repository = self.store.repositories().get(stack.repository)
        return (
            f"Stack {stack_id!r} comes from git ({repository.name if repository else '?'}, "
            f"folder {stack.path or '/'}): change it there, or allow local edits"
        )

    async def create(self, name: str, body: GitStackIn, by: str | None) -> GitStackView:
        """A new stack of a repository's folder at its newest commit, deployed."""
        repository = self.repositories.get(body.repository)
        async with self.repositories.lock(repository.id):
            sha = await self.repositories.fetch(repository)
            files, _ = await asyncio.to_thread(
                history.files_at, self._mirror(repository), sha, body.path
            )
        stack_files = folders.stack_files(files, None)
        stack_id = await asyncio.to_thread(self.stacks.create_from, name, stack_files)
        self.store.put_stack(
            GitStack(stack_id, repository.id, body.path, body.policy, body.local_edits)
        )
        await self._deploy(repository, stack_id, sha, {}, by)
        return self._view(self._stack(stack_id))

    async def adoption(self, stack_id: str, body: GitStackIn) -> Preview:
        """What pointing an existing stack at a repository folder would change in it."""
        if self.store.stack(stack_id) is not None:
            raise Conflict(f"Stack {stack_id!r} comes from git already")
        repository = self.repositories.get(body.repository)
        async with self.repositories.lock(repository.id):
            sha = await self.repositories.fetch(repository)
        writes = await self._adopting(repository, stack_id, body.path, sha)
        now = await asyncio.to_thread(self._read, stack_id, list(writes))
        changes = history.file_changes({p: d for p, d in now.items() if d is not None}, writes)
        return Preview(stack_id, self.repositories.commit(repository, sha), changes)

    async def adopt(
        self, stack_id: str, body: GitStackIn, commit: str, by: str | None
    ) -> GitStackView:
        """The stack made of the repository folder at `commit` (the one its preview
        showed), deployed through the gate; its files not in the folder stay as they are."""
        preview = await self.adoption(stack_id, body)
        if preview.commit.sha != commit:
            raise Conflict(
                f"The repository moved on to {preview.commit.short} since the preview: "
                "look at its changes again"
            )
        repository = self.repositories.get(body.repository)
        writes = await self._adopting(repository, stack_id, body.path, commit)
        self.store.put_stack(
            GitStack(stack_id, repository.id, body.path, body.policy, body.local_edits)
        )
        await self._deploy(repository, stack_id, commit, writes, by)
        return self._view(self._stack(stack_id))

    async def _adopting(self, repository: Repository, stack_id: str, path: str, sha: str) -> Tree:
        files, _ = await asyncio.to_thread(history.files_at, self._mirror(repository), sha, path)
        env = (await asyncio.to_thread(self._read, stack_id, [ENV]))[ENV]
        return folders.stack_files(files, env)

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
        self._stack(stack_id)
        self.store.remove_stack(stack_id)

    def forget(self, stack_id: str) -> None:
        """A stack deleted: it is no longer from git."""
        if self.store.stack(stack_id) is not None:
            self.detach(stack_id)

    # -- sync -------------------------------------------------------------------------
    async def sync(self, repo_id: str, by: str | None) -> SyncReport:
        """Fetch, then each stack of the repository as its folder and policy say: those
        whose folder changed first, one at a time; then, in one write, those whose folder
        is the same in the new commit (nothing is done to them)."""
        repository = self.repositories.get(repo_id)
        async with self.repositories.lock(repo_id):
            stacks = [s for s in self.store.stacks().values() if s.repository == repo_id]
            try:
                sha = await self.repositories.fetch(repository)
            except StackyardError as exc:
                for stack in stacks:
                    self._said(stack.stack, "git_sync_failed", exc.detail)
                    self._kept(stack.stack, "failed", None, exc.detail, by, quiet=True)
                return SyncReport(repo_id, None, exc.detail)
            live = [s for s in stacks if s.policy != "off"]
            deployed = {s.stack: (s.deployed, s.path) for s in live if s.deployed}
            same = await asyncio.to_thread(
                history.unchanged, self._mirror(repository), sha, deployed
            )
            outcomes = {}
            for stack in (s for s in live if s.stack not in same):
                try:
                    outcome = await self._sync_stack(repository, stack, sha, by)
                except StackyardError as exc:
                    outcome = self._kept(stack.stack, "failed", sha, exc.detail, by)
                outcomes[stack.stack] = outcome
            outcomes |= self._unchanged(sorted(same), sha, by)
        return SyncReport(repo_id, sha, None, outcomes)

    def _unchanged(self, stack_ids: list[str], sha: str, by: str | None) -> dict[str, SyncOutcome]:
        """Stacks whose folder is the same at commit `sha`: they say it, in one write."""
        said = SyncOutcome(utcnow(), "unchanged", sha, None, by)
        outcomes: dict[str, SyncOutcome] = {}
        ended: list[str] = []

        def apply(stack: GitStack) -> None:
            last = stack.last_sync
            if last is not None and last.outcome in ("failed", "diverged"):
                ended.append(stack.stack)
            if stack.deployed != sha or last is None or last.outcome != "unchanged":
                stack.last_sync = said
            stack.deployed, stack.pending, stack.failed = sha, None, None
            outcomes[stack.stack] = stack.last_sync or said

        self.store.change_stacks(stack_ids, apply)
        for stack_id in ended:
            self._sync_works(stack_id)
        return outcomes

    async def hook(self, repo_id: str, headers: Mapping[str, str], body: bytes) -> bool:
        """A push webhook: Unauthorized (the same for every reason) unless it is signed
        with the repository's secret; True when it names the repository's ref and a
        sync began (in the background), False for another ref or a delivery that is no
        push."""
        repository = self.store.repositories().get(repo_id)
        secret = await self.repositories.webhook_secret(repo_id) if repository else None
        if repository is None or secret is None or not hooks.signed(headers, body, secret):
            raise Unauthorized("Not signed with this webhook's secret")
        pushed = hooks.pushed_ref(body)
        if pushed is None or not hooks.names(pushed, repository.ref):
            return False
        task = asyncio.create_task(self.sync(repo_id, "webhook"))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return True

    async def poll(self) -> None:
        """Each repository fetched `poll_seconds` after its last fetch (never when 0),
        whatever made that one (a webhook, a user, the poll)."""
        while True:
            now = utcnow()
            waits = [POLL_TICK]
            for repository in self.store.repositories().values():
                if not repository.poll_seconds:
                    continue
                last = repository.last_fetch.at if repository.last_fetch else None
                wait = (
                    0.0 if last is None else repository.poll_seconds - (now - last).total_seconds()
                )
                if wait > 0 or self.repositories.lock(repository.id).locked():
                    waits.append(max(wait, 0.5))
                    continue
                try:
                    await self.sync(repository.id, "poll")
                except StackyardError as exc:
                    log.warning("Git poll of %s failed: %s", repository.name, exc.detail)
                except Exception:
                    log.exception("Git poll of %s failed", repository.name)
                waits.append(0.0)  # (the others' waits were measured before it)
            await asyncio.sleep(min(waits))

    async def _sync_stack(
        self, repository: Repository, stack: GitStack, sha: str, by: str | None
    ) -> SyncOutcome:
        """A stack whose folder changed at commit `sha`."""
        mirror = self._mirror(repository)
        if stack.failed == sha:  # rolled back: not tried again on its own
            return self._kept(stack.stack, "rolled_back", sha, _last_detail(stack), by, quiet=True)
        try:
            await self.repositories.verify(repository, sha)
        except signatures.Unsigned as exc:
            if stack.pending != sha:
                self._said(stack.stack, "git_commit_refused", exc.detail, sha)
            self._pending(stack.stack, sha)
            return self._kept(stack.stack, "refused", sha, exc.detail, by)
        edited = await asyncio.to_thread(folders.edited, mirror, stack, self._read)
        if edited:
            self._pending(stack.stack, sha)
            detail = (
                f"Not deployed: {', '.join(edited)} were edited here since commit "
                f"{(stack.deployed or '')[:12]}; look at the diff, then apply to overwrite "
                "them (they are kept aside) or detach the stack from git"
            )
            self._said(stack.stack, "git_sync_failed", detail)
            return self._kept(stack.stack, "diverged", sha, detail, by)
        if stack.policy == "notify":
            if stack.pending != sha:
                commit = self.repositories.commit(repository, sha)
                said = f"Commit {commit.short} ({commit.subject}): review and apply it"
                self._said(stack.stack, "git_change_pending", said, sha)
            self._pending(stack.stack, sha)
            return self._kept(stack.stack, "pending", sha, "waits for a user to apply it", by)
        writes = await asyncio.to_thread(folders.writes, mirror, stack, sha, self._read)
        return await self._deploy(repository, stack.stack, sha, writes, by)

    async def preview(self, stack_id: str, commit: str | None = None) -> Preview:
        """What applying `commit` (the pending one by default) would change in the stack."""
        stack = self._stack(stack_id)
        repository = self.repositories.get(stack.repository)
        sha = commit or stack.pending
        if sha is None:
            raise NotFound(f"No change of {stack_id!r} waits to be applied")
        mirror = self._mirror(repository)
        writes = await asyncio.to_thread(folders.writes, mirror, stack, sha, self._read)
        now = await asyncio.to_thread(self._read, stack_id, list(writes))
        current = {p: d for p, d in now.items() if d is not None}
        target = {p: d for p, d in writes.items() if d is not None}
        edited = await asyncio.to_thread(folders.edited, mirror, stack, self._read)
        changes = history.file_changes(current, target)
        return Preview(stack_id, self.repositories.commit(repository, sha), changes, tuple(edited))

    async def apply(
        self, stack_id: str, commit: str, overwrite: bool, by: str | None
    ) -> SyncOutcome:
        """The commit (the pending one a user reviewed) deployed; files edited here are
        overwritten only with `overwrite`, after they are kept aside in `.trash`."""
        stack = self._stack(stack_id)
        repository = self.repositories.get(stack.repository)
        mirror = self._mirror(repository)
        async with self.repositories.lock(repository.id):
            try:
                await self.repositories.fetched(repository, commit)
            except GitError as exc:
                raise NotFound(
                    f"Commit {commit[:12]} is not among the fetched ones: sync first"
                ) from exc
            await self.repositories.verify(repository, commit)
            edited = await asyncio.to_thread(folders.edited, mirror, stack, self._read)
            if edited and not overwrite:
                raise Conflict(
                    f"{', '.join(edited)} were edited here: confirm that they are overwritten "
                    "(they are kept aside in the stacks folder's .trash)"
                )
            if edited:
                stacks_dir = self.stacks.machine.stacks_dir
                keep = functools.partial(
                    folders.keep_aside, stacks_dir, stack_id, edited, self._read
                )
                await asyncio.to_thread(keep)
            writes = await asyncio.to_thread(folders.writes, mirror, stack, commit, self._read)
            return await self._deploy(repository, stack_id, commit, writes, by)

    # -- the work ---------------------------------------------------------------------
    async def _deploy(
        self, repository: Repository, stack_id: str, sha: str, writes: Tree, by: str | None
    ) -> SyncOutcome:
        commit = self.repositories.commit(repository, sha)
        said = f"commit {commit.short} ({commit.subject}) of {repository.name}"
        try:
            run = await self.stacks.deploy(stack_id, writes, said)
        except Conflict as exc:  # busy: the change waits for the next sync
            self._pending(stack_id, sha)
            detail = f"{exc.detail}: tried again at the next sync"
            return self._kept(stack_id, "pending", sha, detail, by)
        if run.status == "succeeded":
            self._moved_on(stack_id, sha)
            self._audited(stack_id, by, "success", said)
            return self._kept(stack_id, "deployed", sha, None, by)

        def failed(stack: GitStack) -> None:
            stack.failed = stack.pending = sha

        self.store.change_stack(stack_id, failed)
        error = "; ".join(run.fold.errors) or "the deploy failed"
        self._audited(stack_id, by, "failure", f"{said}: {error}")
        return self._kept(stack_id, "rolled_back" if run.rollback else "failed", sha, error, by)

    def _audited(self, stack_id: str, by: str | None, outcome: str, detail: str) -> None:
        """A deploy no user asked for (a webhook's, the poll's) in the host's audit log (the
        central's; a user's is audited by the route that took it)."""
        if by in ("webhook", "poll") and self.stacks.audit is not None:
            self.stacks.audit(f"git ({by})", "git.apply", stack_id, outcome, detail)

    def _moved_on(self, stack_id: str, sha: str) -> None:
        def apply(stack: GitStack) -> None:
            stack.deployed, stack.pending, stack.failed = sha, None, None

        self.store.change_stack(stack_id, apply)

    def _pending(self, stack_id: str, sha: str) -> None:
        def apply(stack: GitStack) -> None:
            stack.pending = sha

        self.store.change_stack(stack_id, apply)

    def _kept(
        self,
        stack_id: str,
        outcome: Outcome,
        sha: str | None,
        detail: str | None,
        by: str | None,
        quiet: bool = False,
    ) -> SyncOutcome:
        """The outcome kept for the stack (a quiet one, the same as the last, is not
        written again); a sync that works again ends a failed sync's condition."""
        said = SyncOutcome(utcnow(), outcome, sha, detail, by)
        stack = self.store.stack(stack_id)
        last = stack.last_sync if stack else None
        if stack is None or (quiet and last and (last.outcome, last.commit) == (outcome, sha)):
            return last or said
        if last and last.outcome in ("failed", "diverged") and outcome == "deployed":
            self._sync_works(stack_id)

        def apply(kept: GitStack) -> None:
            kept.last_sync = said

        self.store.change_stack(stack_id, apply)
        return said

    def _sync_works(self, stack_id: str) -> None:
        """The end of a failed sync's condition."""
        text = f"{stack_id}: syncs from git again"
        self.events.raise_event(
            Event("git_sync_failed", stack_id, text, stack=stack_id, ended=True)
        )

    def _said(self, stack_id: str, name: EventName, detail: str, state: str = "active") -> None:
        self.events.raise_event(Event(name, stack_id, f"{stack_id}: {detail}", state, stack_id))

    def _view(self, stack: GitStack) -> GitStackView:
        repository = self.store.repositories().get(stack.repository)
        edited: list[str] = []
        deployed = pending = None
        if repository is not None:
            mirror = self._mirror(repository)
            with contextlib.suppress(StackyardError, OSError):
                edited = folders.edited(mirror, stack, self._read)
            deployed = self._commit_or_none(repository, stack.deployed)
            pending = self._commit_or_none(repository, stack.pending)
        return GitStackView(
            stack=stack.stack,
            repository=stack.repository,
            repository_name=repository.name if repository else "(removed)",
            ref=repository.ref if repository else "",
            path=stack.path,
            policy=stack.policy,
            local_edits=stack.local_edits,
            deployed=deployed,
            pending=pending,
            last_sync=stack.last_sync,
            diverged=bool(edited),
            edited=tuple(edited),
        )

    def _commit_or_none(self, repository: Repository, sha: str | None) -> Commit | None:
        if sha is None:
            return None
        try:
            return self.repositories.commit(repository, sha)
        except StackyardError:
            return None

    def _stack(self, stack_id: str) -> GitStack:
        stack = self.store.stack(stack_id)
        if stack is None:
            raise NotFound(f"Stack {stack_id!r} is not from git")
        return stack

    def _mirror(self, repository: Repository) -> Path:
        return self.repositories.mirror(repository.id)


def _last_detail(stack: GitStack) -> str | None:
    return stack.last_sync.detail if stack.last_sync else None
