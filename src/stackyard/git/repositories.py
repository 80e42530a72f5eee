"""A host's git repositories: their settings and secrets (`git.store`), their deploy keys
and pinned host keys, webhook secrets, and the fetch into this host's bare mirror of
each (`git.remote`), one at a time per repository."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from stackyard.clock import utcnow
from stackyard.errors import Conflict, GitError, Invalid, StackyardError
from stackyard.git import history, remote, signatures
from stackyard.git.model import Commit, FetchOutcome, Repository, RepositoryIn, Webhook
from stackyard.git.store import GitStore, Secrets


class Repositories:
    def __init__(self, store: GitStore, data_dir: Path) -> None:
        self.store = store
        self.mirrors = data_dir / "git" / "repositories"
        #: A private folder for what one fetch or check needs on disk (a deploy key).
        self.scratch = data_dir / "git" / "scratch"
        self._locks: dict[str, asyncio.Lock] = {}

    def clean_up(self) -> None:
        """What a killed fetch left: its private folder (a deploy key, a known host)."""
        shutil.rmtree(self.scratch, ignore_errors=True)

    def all(self) -> list[Repository]:
        return sorted(self.store.repositories().values(), key=lambda r: r.name.lower())

    def get(self, repo_id: str) -> Repository:
        return self.store.repository(repo_id)

    async def add(self, body: RepositoryIn) -> Repository:
        """A new repository; an SSH one gets its deploy key and pins the server's host
        key now (first contact, before any key is sent)."""
        repo_id = self.store.new_id()
        token = _token(body, None)
        repository = Repository(id=repo_id, **_settings(body, token))
        private = None
        if body.auth == "ssh_key":
            private, public = _key_pair(repo_id)
            repository = replace(repository, public_key=public)
        if remote.is_ssh(body.url):
            repository = await self._pinned(repository)
        await asyncio.to_thread(
            self.store.change_secrets, repo_id, lambda _: Secrets(token, private, None)
        )
        await asyncio.to_thread(self.store.put_repository, repository)
        return repository

    async def change(self, repo_id: str, body: RepositoryIn) -> Repository:
        """New settings; the token is kept when none is given; a new SSH address pins
        the host key again."""
        old = self.store.repository(repo_id)
        kept = await asyncio.to_thread(self.store.secrets, repo_id)
        token = _token(body, kept.token)
        private, public = kept.private_key, old.public_key
        if body.auth != "ssh_key":
            private, public = None, None
        elif private is None:
            private, public = _key_pair(repo_id)
        repository = replace(old, **_settings(body, token), public_key=public)
        if not remote.is_ssh(body.url):
            repository = replace(repository, host_key=None, host_key_fingerprint=None)
        elif old.host_key is None or remote.ssh_address(old.url) != remote.ssh_address(body.url):
            repository = await self._pinned(repository)
        secrets = Secrets(token, private, kept.webhook_secret)
        await asyncio.to_thread(self.store.change_secrets, repo_id, lambda _: secrets)
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
        shutil.rmtree(self.mirror(repo_id), ignore_errors=True)

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
        private, public = _key_pair(repo_id)
        self.store.change_secrets(repo_id, lambda s: replace(s, private_key=private))
        return self.store.change_repository(repo_id, public_key=public)

    def new_webhook(self, repo_id: str, path: str) -> Webhook:
        """A new webhook secret (the old one no longer works): shown this once."""
        self.store.repository(repo_id)
        secret = self.store.new_webhook_secret()
        self.store.change_secrets(repo_id, lambda s: replace(s, webhook_secret=secret))
        self.store.change_repository(repo_id, webhook=True)
        return Webhook(path, secret)

    async def webhook_secret(self, repo_id: str) -> str | None:
        return (await asyncio.to_thread(self.store.secrets, repo_id)).webhook_secret

    # -- the mirror ---------------------------------------------------------------------
    def lock(self, repo_id: str) -> asyncio.Lock:
        """Held while the repository is fetched and its stacks synced."""
        return self._locks.setdefault(repo_id, asyncio.Lock())

    def mirror(self, repo_id: str) -> Path:
        return self.mirrors / f"{repo_id}.git"

    async def fetch(self, repository: Repository) -> str:
        """The repository's ref fetched (its outcome kept on the repository); the commit."""
        secrets = await asyncio.to_thread(self.store.secrets, repository.id)
        access = _access(repository, secrets)
        mirror = self.mirror(repository.id)
        try:
            sha = await asyncio.to_thread(remote.fetch, mirror, access, self.scratch)
        except StackyardError as exc:
            outcome = FetchOutcome(utcnow(), None, exc.detail)
            self.store.change_repository(repository.id, last_fetch=outcome)
            raise
        self.store.change_repository(repository.id, last_fetch=FetchOutcome(utcnow(), sha, None))
        return sha

    async def fetched(self, repository: Repository, sha: str) -> None:
        """GitError unless commit `sha` is among the fetched ones."""
        await asyncio.to_thread(
            remote.resolve, self.mirror(repository.id), sha, _access(repository, Secrets())
        )

    async def verify(self, repository: Repository, sha: str) -> None:
        """signatures.Unsigned unless the commit is signed as the repository requires."""
        if repository.require_signed:
            await asyncio.to_thread(
                signatures.verify,
                self.mirror(repository.id),
                sha,
                repository.trusted_keys,
                self.scratch,
            )

    def commit(self, repository: Repository, sha: str) -> Commit:
        page = remote.host_page(repository.url, sha)
        return history.commit_of(self.mirror(repository.id), sha, page)

    async def _pinned(self, repository: Repository) -> Repository:
        import asyncssh

        from stackyard.sshkeys import server_host_key

        host, port = remote.ssh_address(repository.url)
        try:
            key = await server_host_key(host, port, remote.CONNECT_SECONDS)
        except (OSError, TimeoutError, asyncssh.Error) as exc:
            access = _access(repository, Secrets())
            raise remote.classified(f"could not connect: {exc}", access) from exc
        if key is None:
            raise GitError(f"{host}:{port} offered no SSH host key")
        return replace(repository, host_key=key.key, host_key_fingerprint=key.fingerprint)


def _key_pair(repo_id: str) -> tuple[str, str]:
    """A new deploy key (asyncssh loads with the first: a start makes none)."""
    from stackyard.sshkeys import new_key_pair

    return new_key_pair(f"stackyard-deploy-{repo_id}")


def _token(body: RepositoryIn, kept: str | None) -> str | None:
    """The token a repository keeps: the one given, else the one kept (for auth token)."""
    ssh = remote.is_ssh(body.url)
    if body.auth == "ssh_key" and not ssh:
        raise Invalid("A deploy key is used over SSH: give an ssh:// or git@host: address")
    if ssh and body.auth != "ssh_key":
        raise Invalid("An SSH address needs a deploy key (auth 'ssh_key')")
    if body.auth != "token":
        return None
    if not body.url.startswith(("https://", "http://")):
        raise Invalid("A token is sent over HTTPS: give an https:// address")
    token = body.token or kept
    if not token:
        raise Invalid("A token is needed for auth 'token'")
    return token


def _settings(body: RepositoryIn, token: str | None) -> dict[str, Any]:
    """A repository's fields as `body` sets them."""
    return {
        "name": body.name,
        "url": body.url,
        "ref": body.ref,
        "auth": body.auth,
        "username": body.username,
        "poll_seconds": body.poll_seconds,
        "require_signed": body.require_signed,
        "trusted_keys": tuple(signatures.check_keys(body.trusted_keys)),
        "has_token": token is not None,
    }


def _access(repository: Repository, secrets: Secrets) -> remote.Access:
    return remote.Access(
        url=repository.url,
        ref=repository.ref,
        auth=repository.auth,
        username=repository.username,
        token=secrets.token,
        private_key=secrets.private_key,
        host_key=repository.host_key,
    )
