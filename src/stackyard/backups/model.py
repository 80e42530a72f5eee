"""What backups are made of, typed once: the inventory of a stack's data, the manifest an
archive carries (version 2; version 1 still read), and what a restore did. The API serves
these dataclasses as they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from stackyard.docker.own import PathMapping
from stackyard.errors import Invalid
from stackyard.jsonmodel import parse_json

AssetKind = Literal["volume", "bind"]
Remote = Literal["nfs", "cifs"]
FORMAT_VERSION = 2


@dataclass(frozen=True)
class AssetUse:
    service: str
    target: str = field(metadata={"description": "The path in the container"})
    read_only: bool


@dataclass(frozen=True)
class Asset:
    """A volume or a bind-mounted host folder (or file) the stack's services use."""

    key: str = field(metadata={"description": "`volume:<name>` or `bind:<host path>`"})
    kind: AssetKind
    name: str = field(metadata={"description": "The volume's engine name, or the host path"})
    compose_key: str | None = field(metadata={"description": "The volume's key in compose"})
    uses: list[AssetUse]
    size: int | None = field(metadata={"description": "Bytes on disk; null: not measured"})
    files: int | None
    inside_stack: str | None = field(
        metadata={"description": "A bind inside the stack folder: its path relative to it"}
    )
    local_path: str | None = field(
        metadata={"description": "Where the service sees a bind's host path (if it does)"}
    )
    external: bool
    driver: str | None
    remote: Remote | None = field(metadata={"description": "An NFS or CIFS volume"})
    exists: bool
    wide_ids: bool = field(
        metadata={"description": "Owner or group ids above 16777215 (read the slow, exact way)"}
    )
    selected: bool = field(metadata={"description": "Captured unless chosen otherwise"})
    reason: str | None = field(metadata={"description": "Why it is not selected by default"})


@dataclass(frozen=True)
class PathReport:
    """The stacks folder as the service and as the host see it, and how host paths map."""

    stacks_dir: str
    stacks_host_dir: str
    mismatch: bool
    explanation: str
    mappings: list[PathMapping] = field(
        metadata={"description": "The service container's mounts, longest host path first"}
    )


@dataclass(frozen=True)
class Inventory:
    stack_id: str
    project: str
    folder: str = field(metadata={"description": "The stack folder, as the host sees it"})
    paths: PathReport
    assets: list[Asset]
    folder_size: int = field(
        default=0,
        metadata={
            "description": "Bytes of the stack folder's own files, always in the archive "
            "(bind folders inside it are assets of their own)"
        },
    )


#: What a capture can keep of each file beside its bytes.
Attribute = Literal[
    "mode",
    "owners",
    "mtime_ns",
    "symlinks",
    "hardlinks",
    "fifos",
    "devices",
    "empty_folders",
    "xattrs",
    "acls",
    "sparse",
    "trusted_xattrs",
]
CaptureTool = Literal["gnu-tar", "busybox-tar", "engine"]


@dataclass(frozen=True)
class Fidelity:
    """How a part was read, and what of its files it kept (`kept`) and did not
    (`not_kept`): restored as it was captured, no more."""

    tool: CaptureTool
    kept: list[Attribute]
    not_kept: list[Attribute]


@dataclass(frozen=True)
class AssetResult:
    """What the capture of one asset gave, or why it was not captured."""

    key: str
    member: str | None = field(metadata={"description": "Its tar in the archive"})
    captured: bool
    bytes: int = field(metadata={"description": "Size of its tar (compressed)"})
    files: int
    sha256: str | None
    skipped: str | None = field(metadata={"description": "Why it was not captured"})
    vanished: list[str] = field(
        default_factory=list,
        metadata={"description": "Files that went away while they were read (not in it)"},
    )
    changed: list[str] = field(
        default_factory=list,
        metadata={"description": "Files that changed while they were read (as read)"},
    )
    fidelity: Fidelity | None = field(
        default=None, metadata={"description": "What was kept; null: an older archive"}
    )


@dataclass(frozen=True)
class Manifest:
    """Version 2: the inventory, each asset's capture, and where the archive came from."""

    format_version: int
    stack_id: str
    created_at: datetime
    service_version: str
    host: str
    inventory: Inventory | None
    assets: list[AssetResult]
    stack_member: str | None = field(
        default=None, metadata={"description": "The stack folder's tar in the archive"}
    )
    stack_sha256: str | None = None
    compression: str = "gzip"
    stack_fidelity: Fidelity | None = field(
        default=None, metadata={"description": "What the stack folder's tar kept"}
    )


_MANIFEST = TypeAdapter(Manifest)


def dump_manifest(manifest: Manifest) -> bytes:
    return _MANIFEST.dump_json(manifest, indent=2)


def load_manifest(raw: bytes) -> Manifest:
    """A manifest of version 2, or of version 1 (`stack_id`, the compose file, `.env`
    and volume tars, no inventory) turned into the same shape; Invalid otherwise."""
    try:
        data: Any = parse_json(raw)
    except ValueError as exc:
        raise Invalid("The archive's manifest is not JSON") from exc
    if not isinstance(data, dict):
        raise Invalid("The archive's manifest is not an object")
    version = data.get("format_version", data.get("version"))
    if version == 1:
        return _from_v1(data)
    if version != FORMAT_VERSION:
        raise Invalid(f"Unknown backup format version {version!r} (this service reads 1 and 2)")
    try:
        return _MANIFEST.validate_python(data)
    except ValidationError as exc:
        raise Invalid(f"The archive's manifest is damaged: {exc.errors()[0]['msg']}") from exc


def _from_v1(data: dict[str, Any]) -> Manifest:
    """Version 1: {"version": 1, "stack_id", "created_at"?, "volumes": [{"name", "file"}]}."""
    stack_id = data.get("stack_id")
    if not isinstance(stack_id, str):
        raise Invalid("The version 1 manifest has no stack_id")
    volumes = data.get("volumes") or []
    assets = []
    for entry in volumes if isinstance(volumes, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            name = entry["name"]
            member = entry.get("file") or f"volumes/{name}.tar"
            assets.append(AssetResult(f"volume:{name}", str(member), True, 0, 0, None, None))
    created = data.get("created_at") or "1970-01-01T00:00:00Z"
    return Manifest(
        format_version=1,
        stack_id=stack_id,
        created_at=TypeAdapter(datetime).validate_python(created),
        service_version=str(data.get("service_version") or "?"),
        host=str(data.get("host") or "?"),
        inventory=None,
        assets=assets,
        stack_member=None,
        compression="none",
    )
