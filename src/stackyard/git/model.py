"""What a host keeps of stacks from git, typed once: the repositories (where, which ref,
how to sign in, the pinned host key, what a commit must be signed by), the git stacks (a
folder of a repository, the commit it runs, its policy), the outcome of a sync, and what
the API reads and answers. The secrets (a token, a deploy key's private half, the
webhook's secret) are never in these: `git.store` keeps them sealed apart."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, field_validator, with_config

from stackyard.errors import Invalid
from stackyard.jsonmodel import JsonInt, StrictModel

#: none: a public repository; token: HTTPS with a user name and a token (or password);
#: ssh_key: SSH with a deploy key (Stackyard makes it and shows the public half).
Auth = Literal["none", "token", "ssh_key"]
#: off: never synced; notify: a new commit is fetched, shown with its diff and told, and
#: deployed when a user applies it; auto: deployed through the health gate on its own.
GitPolicy = Literal["off", "notify", "auto"]
Outcome = Literal[
    "deployed",  # the stack runs the commit
    "unchanged",  # the stack's folder is the same in the new commit: nothing was done
    "pending",  # a change waits for a user to apply it (notify)
    "diverged",  # the stack's files were edited here: not overwritten
    "refused",  # the commit is not signed by a trusted key
    "failed",  # the fetch or the deploy failed (the detail says why)
    "rolled_back",  # the new commit failed its health gate: the previous one runs again
]
#: A ref: a branch or a tag name (`main`, `release/2.x`, `v1.4.0`).
_REF = re.compile(r"^(?!/)(?!.*//)(?!.*\.\.)(?!.*@\{)[A-Za-z0-9._/-]{1,200}(?<!/)(?<!\.lock)$")
#: What git accepts as a repository address here: https://, http://, ssh://, git://
#: and the scp-like `user@host:path`.
_URL = re.compile(r"^((https?|ssh|git)://[^\s]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+)$")


def check_ref(ref: str) -> str:
    if not _REF.match(ref) or ref.startswith("-"):
        raise Invalid(f"{ref!r} is no branch or tag name")
    return ref


def check_folder(path: str) -> str:
    """A folder of a repository (`stacks/web`; "" for its root)."""
    path = path.strip().strip("/")
    if path and ("\0" in path or any(part in ("", ".", "..", ".git") for part in path.split("/"))):
        raise Invalid(f"{path!r} is no folder of a repository")
    return path


class RepositoryIn(StrictModel):
    name: str = Field(min_length=1, max_length=100)
    url: str = Field(
        max_length=2000,
        description="https://host/owner/repo.git, ssh://git@host/owner/repo.git or "
        "git@host:owner/repo.git (never with a token in it: give the token apart)",
    )
    ref: str = Field("main", max_length=200, description="The branch or tag the stacks follow")
    auth: Auth = "none"
    username: str = Field(
        "git",
        max_length=200,
        description="The user name sent with the token (git hosts take any for a token)",
    )
    token: str | None = Field(
        None,
        max_length=4000,
        description="HTTPS token or password: write-only, sealed at rest; null keeps the one kept",
    )
    poll_seconds: JsonInt = Field(
        300, ge=0, le=7 * 24 * 3600, description="How often to fetch; 0: only by webhook or by hand"
    )
    require_signed: bool = Field(
        False, description="Deploy only commits signed by one of `trusted_keys`"
    )
    trusted_keys: list[Annotated[str, Field(max_length=20_000)]] = Field(
        default_factory=list,
        max_length=50,
        description="SSH public key lines or OpenPGP public keys (ASCII armor) whose "
        "signatures are trusted",
    )

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        url = url.strip()
        if not _URL.match(url) or url.startswith("-"):
            raise Invalid(f"{url!r} is no git repository address (https://, ssh://, git@host:)")
        if re.match(r"^https?://[^/]*@", url):
            raise Invalid("Give the token apart, not in the address: it would be shown and logged")
        return url

    @field_validator("ref")
    @classmethod
    def _ref(cls, ref: str) -> str:
        return check_ref(ref)

    @field_validator("poll_seconds")
    @classmethod
    def _poll(cls, seconds: int) -> int:
        if 0 < seconds < 10:
            raise Invalid("poll_seconds must be 0 (no polling) or at least 10")
        return seconds


@dataclass(frozen=True)
class FetchOutcome:
    at: datetime
    #: The commit the ref named (null when the fetch failed).
    commit: str | None
    error: str | None


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class Repository:
    id: str
    name: str
    url: str
    ref: str
    auth: Auth
    username: str
    poll_seconds: int
    require_signed: bool
    trusted_keys: tuple[str, ...] = ()
    #: The SSH server's host key, pinned at first contact (a changed key is refused).
    host_key: str | None = None
    host_key_fingerprint: str | None = None
    #: The deploy key's public half, to add to the repository at the git host.
    public_key: str | None = None
    has_token: bool = False
    #: Whether a webhook secret is set (it is shown once, when made).
    webhook: bool = False
    last_fetch: FetchOutcome | None = None


@dataclass(frozen=True)
class SyncOutcome:
    at: datetime
    outcome: Outcome
    #: The commit the outcome is about.
    commit: str | None
    detail: str | None
    #: Who started it: "webhook", "poll", or a user's name.
    by: str | None = None


class GitStackIn(StrictModel):
    repository: str = Field(max_length=64)
    path: str = Field("", max_length=500, description="The repository's folder; '' its root")
    policy: GitPolicy = "auto"
    local_edits: bool = Field(
        False, description="Whether the stack's files may be edited here (else read-only)"
    )

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        return check_folder(path)


@dataclass
class GitStack:
    stack: str
    repository: str
    path: str
    policy: GitPolicy = "auto"
    local_edits: bool = False
    #: The commit the stack's files are from (null before the first deploy).
    deployed: str | None = None
    #: A newer commit that changes the stack's folder and waits (notify, diverged, refused).
    pending: str | None = None
    #: A commit whose deploy failed and was rolled back: not tried again on its own.
    failed: str | None = None
    last_sync: SyncOutcome | None = None


@dataclass(frozen=True)
class Commit:
    sha: str
    short: str
    subject: str
    author: str
    at: datetime
    #: The commit's page at the git host, when the host is one whose pages we know.
    url: str | None = None


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class GitStackView:
    stack: str
    repository: str
    repository_name: str
    #: The branch or tag the stack follows (its repository's).
    ref: str
    path: str
    policy: GitPolicy
    local_edits: bool
    deployed: Commit | None
    pending: Commit | None
    last_sync: SyncOutcome | None
    #: The stack's files differ from the deployed commit's: edited here.
    diverged: bool
    #: The files edited here (diverged), relative to the stack's folder.
    edited: tuple[str, ...] = ()


Change = Literal["added", "modified", "removed"]


@dataclass(frozen=True)
class FileChange:
    path: str
    change: Change
    #: A unified diff of the text (null for a binary or a too large file).
    diff: str | None


@dataclass(frozen=True)
class Preview:
    """What applying a commit to a stack would change in its folder."""

    stack: str
    commit: Commit
    changes: tuple[FileChange, ...]
    #: Files edited here that the apply would overwrite (kept aside in .trash first).
    overwrites: tuple[str, ...] = ()


@dataclass(frozen=True)
class SyncReport:
    repository: str
    commit: str | None
    error: str | None
    stacks: dict[str, SyncOutcome] = field(default_factory=dict)


@dataclass(frozen=True)
class Webhook:
    """The webhook's address and secret: shown once, when made."""

    path: str
    secret: str


@dataclass(frozen=True)
class Delivery:
    """A webhook delivery as an agent judged it for its central (which answers the git
    host 401 when it was not signed, as it does for its own repositories)."""

    signed: bool
    #: Whether a sync began (false: another ref, or no push).
    sync: bool = False
