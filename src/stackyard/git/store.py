"""What a host keeps of its git repositories and git stacks: one JSON document
(`<data>/git.json`), and the secrets apart, sealed (`<data>/git-secrets.json`: each
repository's token, deploy key and webhook secret), both through the one JSON store."""

from __future__ import annotations

import secrets as random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from stackyard.errors import NotFound, SecretUnreadable
from stackyard.fs.jsonstore import JsonStore, StoreCorrupt
from stackyard.git.model import GitStack, Repository
from stackyard.sealing import Sealer

_REPOSITORIES = TypeAdapter(dict[str, Repository])
_STACKS = TypeAdapter(dict[str, GitStack])


@dataclass(frozen=True)
class Secrets:
    token: str | None = None
    private_key: str | None = None
    webhook_secret: str | None = None


_SECRETS = TypeAdapter(dict[str, Secrets])


class GitStore:
    def __init__(self, data_dir: Path, secret_key: str) -> None:
        self._doc = JsonStore(data_dir / "git.json")
        self._sealed = JsonStore(data_dir / "git-secrets.json", codec=Sealer(secret_key, "git"))

    # -- repositories -----------------------------------------------------------------
    def repositories(self) -> dict[str, Repository]:
        return self._read()[0]

    def repository(self, repo_id: str) -> Repository:
        found = self.repositories().get(repo_id)
        if found is None:
            raise NotFound(f"No git repository {repo_id!r}")
        return found

    def new_id(self) -> str:
        return random.token_hex(6)

    def put_repository(self, repository: Repository) -> None:
        self._change(lambda repos, stacks: repos.__setitem__(repository.id, repository))

    def change_repository(self, repo_id: str, **changes: Any) -> Repository:
        changed: list[Repository] = []

        def apply(repos: dict[str, Repository], _: dict[str, GitStack]) -> None:
            if repo_id not in repos:
                raise NotFound(f"No git repository {repo_id!r}")
            repos[repo_id] = replace(repos[repo_id], **changes)
            changed.append(repos[repo_id])

        self._change(apply)
        return changed[0]

    def remove_repository(self, repo_id: str) -> None:
        self._change(lambda repos, stacks: repos.pop(repo_id, None))
        self.change_secrets(repo_id, lambda _: None)

    # -- secrets ----------------------------------------------------------------------
    def secrets(self, repo_id: str) -> Secrets:
        try:
            raw = self._sealed.read({}, strict=True)
        except StoreCorrupt as exc:
            raise SecretUnreadable(f"git repository {repo_id!r}") from exc
        return _SECRETS.validate_python(raw).get(repo_id, Secrets())

    def change_secrets(self, repo_id: str, apply: Callable[[Secrets], Secrets | None]) -> None:
        def change(raw: Any) -> Any:
            kept = _SECRETS.validate_python(raw or {})
            new = apply(kept.get(repo_id, Secrets()))
            if new is None:
                kept.pop(repo_id, None)
            else:
                kept[repo_id] = new
            return _SECRETS.dump_python(kept, mode="json")

        self._sealed.update(change, {}, strict=True)

    @staticmethod
    def new_webhook_secret() -> str:
        return random.token_urlsafe(32)

    # -- git stacks -------------------------------------------------------------------
    def stacks(self) -> dict[str, GitStack]:
        return self._read()[1]

    def stack(self, stack_id: str) -> GitStack | None:
        return self.stacks().get(stack_id)

    def put_stack(self, stack: GitStack) -> None:
        self._change(lambda repos, stacks: stacks.__setitem__(stack.stack, stack))

    def change_stack(self, stack_id: str, apply: Callable[[GitStack], None]) -> GitStack:
        changed: list[GitStack] = []

        def change(_: dict[str, Repository], stacks: dict[str, GitStack]) -> None:
            if stack_id not in stacks:
                raise NotFound(f"Stack {stack_id!r} is not from git")
            apply(stacks[stack_id])
            changed.append(stacks[stack_id])

        self._change(change)
        return changed[0]

    def change_stacks(self, stack_ids: list[str], apply: Callable[[GitStack], None]) -> None:
        """Several stacks changed in one write (those no longer there are left out)."""

        def change(_: dict[str, Repository], stacks: dict[str, GitStack]) -> None:
            for stack_id in stack_ids:
                if stack_id in stacks:
                    apply(stacks[stack_id])

        self._change(change)

    def remove_stack(self, stack_id: str) -> None:
        self._change(lambda repos, stacks: stacks.pop(stack_id, None))

    # -- the document -----------------------------------------------------------------
    def _read(self) -> tuple[dict[str, Repository], dict[str, GitStack]]:
        return _decoded(self._doc.read({}))

    def _change(
        self, apply: Callable[[dict[str, Repository], dict[str, GitStack]], object]
    ) -> None:
        def change(raw: Any) -> Any:
            repos, stacks = _decoded(raw)
            apply(repos, stacks)
            return {
                "repositories": _REPOSITORIES.dump_python(repos, mode="json"),
                "stacks": _STACKS.dump_python(stacks, mode="json"),
            }

        self._doc.update(change, {})


def _decoded(raw: Any) -> tuple[dict[str, Repository], dict[str, GitStack]]:
    raw = raw if isinstance(raw, dict) else {}
    try:
        repos = _REPOSITORIES.validate_python(raw.get("repositories") or {})
        stacks = _STACKS.validate_python(raw.get("stacks") or {})
    except ValidationError as exc:  # written by a newer version, say: never guessed at
        raise StoreCorrupt(f"git.json cannot be read: {exc.errors()[0]['msg']}") from exc
    return repos, stacks
