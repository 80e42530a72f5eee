"""What a host's disk holds as the API says it: images, volumes, networks, containers no
stack owns, the build cache; what uses each; why a prune never takes it; a prune's
options, preview and report (typed once: the API's bodies and answers are these)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from stackyard.jsonmodel import StrictModel

Kind = Literal["image", "container", "volume", "network", "build_cache"]
KINDS: tuple[Kind, ...] = ("container", "image", "volume", "network", "build_cache")


class User(BaseModel):
    """Something that uses an object: a stack's service, or a container of no stack."""

    stack: str | None = Field(None, description="The stack (null: a container of no stack)")
    service: str | None = None
    container: str | None = Field(None, description="The container's name (null: declared)")


class ImageView(BaseModel):
    id: str
    tags: list[str]
    created: datetime
    size: int = Field(description="Bytes, its shared layers counted")
    shared: int = Field(description="Of `size`, what other images share (-1: unknown)")
    unique: int = Field(description="What it takes alone: removing it alone frees this")
    dangling: bool = Field(description="Untagged")
    used_by: list[User]
    protected: str | None = Field(None, description="Why a prune never removes it")


class VolumeView(BaseModel):
    name: str
    driver: str
    created: datetime | None
    size: int = Field(description="Bytes on disk (-1: the engine did not say)")
    anonymous: bool = Field(description="Made by the engine for a container, unnamed")
    stack: str | None = Field(None, description="The stack it belongs to (compose's label)")
    used_by: list[User]
    protected: str | None = None


class NetworkView(BaseModel):
    id: str
    name: str
    driver: str
    created: datetime | None
    stack: str | None = None
    used_by: list[User]
    protected: str | None = None


class ContainerView(BaseModel):
    """A container of no stack (a stack's containers are on its page)."""

    id: str
    name: str
    image: str
    state: str
    size: int = Field(description="Its writable layer")
    protected: str | None = None


class BuildCacheView(BaseModel):
    id: str
    kind: str
    description: str
    size: int
    in_use: bool
    shared: bool
    last_used: datetime | None


class DiskSummary(BaseModel):
    """Bytes per kind, and what a prune of everything it may take would free."""

    images: int
    images_count: int
    containers: int
    containers_count: int
    volumes: int
    volumes_count: int
    build_cache: int
    reclaimable: int = Field(
        description="Unused images, stopped containers of no stack, anonymous unused "
        "volumes and unused build cache, none of what a prune never takes"
    )
    measured_at: datetime


class DiskReport(BaseModel):
    summary: DiskSummary
    images: list[ImageView]
    volumes: list[VolumeView]
    networks: list[NetworkView]
    containers: list[ContainerView]
    build_cache: list[BuildCacheView]


class PruneOptions(StrictModel):
    images: Literal["none", "dangling", "unused"] = Field(
        "dangling", description="dangling: untagged images; unused: every image no container uses"
    )
    containers: bool = Field(True, description="Stopped containers of no stack")
    networks: bool = Field(True, description="Networks no container uses")
    build_cache: bool = Field(True, description="Build cache not in use")
    volumes: Literal["none", "anonymous", "unused"] = Field(
        "none",
        description="anonymous: unnamed volumes no container uses; unused: named ones too "
        "(never a stack's, never a protected one)",
    )


class PruneItem(BaseModel):
    kind: Kind
    id: str
    name: str
    bytes: int = Field(description="What removing it frees, as the prune will do it")


class PruneKept(BaseModel):
    kind: Kind
    id: str
    name: str
    reason: str


class PrunePreview(BaseModel):
    options: PruneOptions
    items: list[PruneItem]
    bytes: dict[str, int] = Field(description="Per kind")
    total: int
    kept: list[PruneKept] = Field(
        description="Objects the options name that a prune never takes, and why"
    )


class PruneIn(StrictModel):
    options: PruneOptions = Field(default_factory=PruneOptions)
    ids: list[str] = Field(
        max_length=100_000,
        description="The items of the preview to remove (`kind:id`): nothing else is",
    )
    origin: str | None = Field(
        None,
        max_length=200,
        description="What asked for it, for the history (a schedule's name); null: the user",
    )


class PruneReport(BaseModel):
    removed: list[PruneItem]
    freed: dict[str, int] = Field(description="Per kind, as the engine's figures say")
    total: int
    left: list[PruneKept] = Field(description="Items of the preview not removed, and why")
    at: datetime
    origin: str | None = None
