"""Archives made by hand, as an attacker or an older version would make them."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path

from stackyard.backups.archive import ArchiveWriter
from stackyard.backups.model import (
    Asset,
    AssetResult,
    Inventory,
    Manifest,
    PathReport,
    Remote,
    dump_manifest,
)

COMPOSE = (
    "services:\n  app:\n    image: stackyard-test/busybox:1\n    volumes: [db:/db]\n"
    "volumes:\n  db:\n"
)


def inner_tar(entries: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]]) -> bytes:
    """A gzip tar of the given entries (a TarInfo, or one with its content)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for entry in entries:
            info, data = entry if isinstance(entry, tuple) else (entry, b"")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return raw.getvalue()


def entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o755 if kind == tarfile.DIRTYPE else 0o644
    return (info, data) if data else info


def v2_archive(
    path: Path,
    stack_id: str,
    volume_entries: list,
    stack_entries: list | None = None,
    remote: Remote | None = None,
) -> Path:
    """A version 2 archive: a stack folder and one volume `<stack>_db`, checksums right
    (so that only its entries can be what is wrong with it); with `remote`, its inventory
    says the volume was an NFS or CIFS one."""
    stack = inner_tar(
        stack_entries
        or [entry("data", tarfile.DIRTYPE), entry("data/compose.yaml", data=COMPOSE.encode())]
    )
    volume = inner_tar(volume_entries)
    manifest = Manifest(
        format_version=2,
        stack_id=stack_id,
        created_at=datetime.now(UTC),
        service_version="test",
        host="crafted",
        inventory=_inventory(stack_id, remote) if remote else None,
        assets=[
            AssetResult(
                f"volume:{stack_id}_db",
                "volumes/0.tar.gz",
                True,
                len(volume),
                1,
                hashlib.sha256(volume).hexdigest(),
                None,
            )
        ],
        stack_member="stack.tar.gz",
        stack_sha256=hashlib.sha256(stack).hexdigest(),
    )
    with open(path, "wb") as file:
        writer = ArchiveWriter(file, 1_700_000_000)
        writer.add("stack.tar.gz", stack)
        writer.add("volumes/0.tar.gz", volume)
        writer.add("manifest.json", dump_manifest(manifest))
        writer.close()
    return path


def _inventory(stack_id: str, remote: Remote) -> Inventory:
    volume = Asset(
        f"volume:{stack_id}_db", "volume", f"{stack_id}_db", "db", [], None, None, None, None,
        False, "local", remote, True, False, False, "NFS/CIFS",
    )  # fmt: skip
    paths = PathReport("/stacks", "/stacks", False, "", [])
    return Inventory(stack_id, stack_id, f"/stacks/{stack_id}", paths, [volume])


def bind_manifest(stack_id: str, binds: dict[str, str | None]) -> Manifest:
    """A manifest whose archive would hold the given bind sources (host path: its path
    inside the stack folder, or None), each captured."""
    assets = [
        Asset(
            key=f"bind:{path}",
            kind="bind",
            name=path,
            compose_key=None,
            uses=[],
            size=1,
            files=1,
            inside_stack=inside,
            local_path=None,
            external=False,
            driver=None,
            remote=None,
            exists=True,
            wide_ids=False,
            selected=True,
            reason=None,
        )
        for path, inside in binds.items()
    ]
    paths = PathReport("/srv/stacks", "/srv/stacks", False, "", [])
    return Manifest(
        format_version=2,
        stack_id=stack_id,
        created_at=datetime.now(UTC),
        service_version="test",
        host="crafted",
        inventory=Inventory(stack_id, stack_id, f"/srv/stacks/{stack_id}", paths, assets),
        assets=[
            AssetResult(a.key, f"binds/{n}.tar.gz", True, 1, 1, "0" * 64, None)
            for n, a in enumerate(assets)
        ],
        stack_member="stack.tar.gz",
    )


def bind_archive(path: Path, stack_id: str, compose: str, binds: dict[str, list]) -> Path:
    """A version 2 archive of a stack folder (its compose file `compose`) and bind
    folders outside it (host path: its entries), checksums right."""
    manifest = bind_manifest(stack_id, dict.fromkeys(binds))
    stack = inner_tar(
        [entry("data", tarfile.DIRTYPE), entry("data/compose.yaml", data=compose.encode())]
    )
    members = [inner_tar(entries) for entries in binds.values()]
    manifest = dataclasses.replace(
        manifest,
        stack_sha256=hashlib.sha256(stack).hexdigest(),
        assets=[
            AssetResult(r.key, r.member, True, len(data), 1, hashlib.sha256(data).hexdigest(), None)
            for r, data in zip(manifest.assets, members, strict=True)
        ],
    )
    with open(path, "wb") as file:
        writer = ArchiveWriter(file, 1_700_000_000)
        writer.add("stack.tar.gz", stack)
        for result, data in zip(manifest.assets, members, strict=True):
            writer.add(result.member or "", data)
        writer.add("manifest.json", dump_manifest(manifest))
        writer.close()
    return path


def v1_archive(path: Path, stack_id: str, volume_files: dict[str, bytes]) -> Path:
    """A version 1 archive, as the first versions wrote them: manifest.json (version,
    stack_id, volumes), compose.yaml, .env and one plain tar per volume (entries under
    `data/`), no inventory and no checksums."""
    volume = io.BytesIO()
    with tarfile.open(fileobj=volume, mode="w") as tar:
        tar.addfile(entry("data", tarfile.DIRTYPE))
        for name, data in volume_files.items():
            info, content = entry(f"data/{name}", data=data)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    manifest = {
        "version": 1,
        "stack_id": stack_id,
        "created_at": "2024-05-01T10:00:00Z",
        "volumes": [{"name": "db", "file": "volumes/db.tar"}],
    }
    with tarfile.open(path, "w") as tar:
        for name, data in (
            ("manifest.json", json.dumps(manifest).encode()),
            ("compose.yaml", COMPOSE.encode()),
            (".env", b"FROM_V1=yes\n"),
            ("volumes/db.tar", volume.getvalue()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def manifest_only(path: Path, manifest: Manifest) -> Path:
    """An archive of just a manifest: enough for planning a restore."""
    with open(path, "wb") as file:
        writer = ArchiveWriter(file, 1_700_000_000)
        writer.add("manifest.json", dump_manifest(manifest))
        writer.close()
    return path
