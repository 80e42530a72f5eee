"""What a destination is: its type, its settings (secrets apart), and what it holds.

Three types: `sftp` (an SSH server, its host key pinned), `s3` (any S3-compatible object
storage) and `nfs` (an NFS export the engine mounts as a volume). Secrets (an SFTP
password or private key, an S3 secret key) are kept apart from the settings: encrypted
at rest, never returned by the API, kept when an update leaves them out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, field_validator

from stackyard.jsonmodel import JsonInt, StrictModel

DestinationType = Literal["sftp", "s3", "nfs", "repository"]
#: Bytes moved so far; called as a transfer goes.
Progress = Callable[[int], None]

# Shell-safe: what an NFS subdirectory, server or mount options may hold.
_SAFE_PATH = re.compile(r"^[A-Za-z0-9._/-]*\Z")
_SAFE_OPTIONS = re.compile(r"^[A-Za-z0-9._=,:-]+\Z")
_HOST = re.compile(r"^[A-Za-z0-9._:\[\]-]+\Z")


def _relative_path(value: str, what: str) -> str:
    """A folder below the destination's root: `a/b`, no `..`, no empty parts."""
    value = value.strip().strip("/")
    if not _SAFE_PATH.match(value):
        raise ValueError(f"{what} may hold only letters, digits and . _ / -")
    if any(part in ("", ".", "..") for part in value.split("/")) and value:
        raise ValueError(f"{what} may not hold empty, . or .. parts")
    return value


def _host(value: str) -> str:
    value = value.strip()
    if not _HOST.match(value):
        raise ValueError("a host name or address (letters, digits, . - : [ ])")
    return value


class _Settings(StrictModel):
    pass


class SftpSettings(_Settings):
    type: Literal["sftp"] = "sftp"
    host: Annotated[str, Field(min_length=1, max_length=253)]
    port: Annotated[JsonInt, Field(ge=1, le=65535)] = 22
    username: Annotated[str, Field(min_length=1, max_length=128)]
    folder: Annotated[
        str,
        Field(
            max_length=1000,
            description="Remote folder for the archives; relative to the login folder "
            "unless it starts with /",
        ),
    ] = ""

    _check_host = field_validator("host")(classmethod(lambda cls, v: _host(v)))

    @field_validator("folder")
    @classmethod
    def _folder(cls, value: str) -> str:
        if "\0" in value or "\n" in value:
            raise ValueError("the folder may not hold NUL or newlines")
        absolute = value.strip().startswith("/")
        inner = "/".join(p for p in value.strip().split("/") if p)
        if any(part in (".", "..") for part in inner.split("/")):
            raise ValueError("the folder may not hold . or .. parts")
        return ("/" if absolute else "") + inner


class S3Settings(_Settings):
    type: Literal["s3"] = "s3"
    endpoint_url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            pattern=r"^https?://[^\s/]+(/[^\s]*)?$",
            description="The service's address, e.g. https://s3.eu-central-1.amazonaws.com",
        ),
    ]
    region: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9-]*$")] = "us-east-1"
    bucket: Annotated[
        str, Field(min_length=3, max_length=63, pattern=r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
    ]
    prefix: Annotated[str, Field(max_length=500, description="Folder inside the bucket")] = ""
    access_key: Annotated[str, Field(min_length=1, max_length=256)]
    path_style: bool = Field(
        True,
        description="Path-style addressing (endpoint/bucket/key), which most "
        "self-hosted services need",
    )

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return _relative_path(value, "The prefix")


class NfsSettings(_Settings):
    type: Literal["nfs"] = "nfs"
    server: Annotated[str, Field(min_length=1, max_length=253)]
    export: Annotated[
        str,
        Field(min_length=1, max_length=1000, description="The export's path, e.g. /srv/backups"),
    ]
    options: Annotated[str, Field(max_length=500, description="Mount options")] = "rw"
    subdirectory: Annotated[str, Field(max_length=500)] = ""

    _check_server = field_validator("server")(classmethod(lambda cls, v: _host(v)))

    @field_validator("export")
    @classmethod
    def _export(cls, value: str) -> str:
        inner = _relative_path(value, "The export path")
        if not inner:
            raise ValueError("the export path may not be empty")
        return "/" + inner

    @field_validator("options")
    @classmethod
    def _options(cls, value: str) -> str:
        value = value.strip() or "rw"
        if not _SAFE_OPTIONS.match(value):
            raise ValueError("mount options may hold only letters, digits and . _ = , : -")
        if any(o.split("=", 1)[0] == "addr" for o in value.split(",")):
            raise ValueError("the server is set by its own field, not by addr=")
        return value

    @field_validator("subdirectory")
    @classmethod
    def _subdirectory(cls, value: str) -> str:
        return _relative_path(value, "The subdirectory")


class FolderLocation(_Settings):
    type: Literal["folder"] = "folder"
    path: Annotated[
        str,
        Field(
            min_length=2,
            max_length=1000,
            description="An absolute folder as this service sees it (a disk, a mount)",
        ),
    ]

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("the folder must be an absolute path")
        return "/" + _relative_path(value, "The folder")


class RepositorySettings(_Settings):
    """A restic repository (deduplicated, compressed, encrypted) on a folder, an SFTP
    server or S3: opened by this instance's key and by the recovery key shown once."""

    type: Literal["repository"] = "repository"
    location: Annotated[FolderLocation | SftpSettings | S3Settings, Field(discriminator="type")]
    key_id: Annotated[
        str | None,
        Field(
            max_length=64,
            pattern=r"^[0-9a-f]*$",
            description="Set by the service: the id of this instance's key in the repository "
            "(restic is told which key to try first: each one tried costs a key derivation)",
        ),
    ] = None


Settings = Annotated[
    SftpSettings | S3Settings | NfsSettings | RepositorySettings, Field(discriminator="type")
]
AnySettings = SftpSettings | S3Settings | NfsSettings | RepositorySettings


class Secrets(StrictModel):
    """Write-only: what a destination needs to sign in (each None: not set)."""

    password: Annotated[str | None, Field(max_length=1024)] = None
    private_key: Annotated[str | None, Field(max_length=32768)] = None
    passphrase: Annotated[str | None, Field(max_length=1024)] = None
    secret_key: Annotated[str | None, Field(max_length=1024)] = None
    #: A repository's key for this instance (made with the repository, or when it is
    #: recovered; never shown).
    repository_key: Annotated[str | None, Field(max_length=1024)] = None


SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    "sftp": ("password", "private_key", "passphrase"),
    "s3": ("secret_key",),
    "nfs": (),
    "repository": ("password", "private_key", "passphrase", "secret_key", "repository_key"),
}


@dataclass(frozen=True)
class RemoteArchive:
    """An archive on a destination: a name this service gave, its size and time."""

    name: str
    size: int
    modified: datetime


def where(settings: AnySettings | FolderLocation) -> str:
    """Where a destination keeps its data, in a line."""
    if isinstance(settings, RepositorySettings):
        return f"repository at {where(settings.location)}"
    if isinstance(settings, FolderLocation):
        return settings.path
    if isinstance(settings, SftpSettings):
        return f"sftp://{settings.username}@{settings.host}:{settings.port}/{settings.folder}"
    if isinstance(settings, S3Settings):
        return f"{settings.endpoint_url} bucket {settings.bucket}/{settings.prefix}"
    return f"nfs {settings.server}:{settings.export}/{settings.subdirectory}"
