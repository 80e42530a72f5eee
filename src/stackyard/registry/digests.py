"""The digest cache: per image reference, the registry's digest (when last checked, or
the error) and the local digests; per repository, its version tags (with when each was
first seen); per image (by digest, or by reference for a version tag), what its labels
say of its release (read once); per registry, the rate limit it announced. Kept in a JSON
file in the data folder, so that agents (which have no database) keep theirs the same way.
Changes merge into the file under its lock (`fs.jsonstore`), so that the CLI and the
service never lose each other's."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from stackyard.fs.jsonstore import JsonStore
from stackyard.registry.releases import Release

RemoteStatus = Literal["ok", "not_found", "error"]


@dataclass
class RemoteDigest:
    status: RemoteStatus
    digest: str | None
    checked_at: str  # ISO 8601, UTC
    error: str | None = None
    first_seen: str | None = None  # when this digest was first seen (ISO 8601, UTC)


@dataclass
class LocalDigest:
    present: bool
    digests: list[str]
    seen_at: str
    version: str | None = None  # its `org.opencontainers.image.version` label


@dataclass
class RegistryLimit:
    limit: int
    remaining: int
    window_seconds: int | None
    seen_at: str  # ISO 8601, UTC


@dataclass
class DigestSnapshot:
    remote: dict[str, RemoteDigest] = field(default_factory=dict)
    local: dict[str, LocalDigest] = field(default_factory=dict)
    last_check: str | None = None
    #: `registry/repository` -> version tag -> when first seen (ISO 8601, UTC).
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    #: A digest (or `registry/repository:tag`) -> its release.
    releases: dict[str, Release] = field(default_factory=dict)
    #: Registry host -> the rate limit of its last answer.
    limits: dict[str, RegistryLimit] = field(default_factory=dict)


class DigestCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = JsonStore(path)
        self._lock = threading.Lock()
        self._data = _decode(self._store.read({}))

    def snapshot(self) -> DigestSnapshot:
        with self._lock:
            data = self._data
            return DigestSnapshot(
                dict(data.remote),
                dict(data.local),
                data.last_check,
                dict(data.tags),
                dict(data.releases),
                dict(data.limits),
            )

    def update(
        self,
        remote: dict[str, RemoteDigest] | None = None,
        local: dict[str, LocalDigest] | None = None,
        checked_at: datetime | None = None,
        tags: dict[str, dict[str, str]] | None = None,
        releases: dict[str, Release] | None = None,
        limits: dict[str, RegistryLimit] | None = None,
    ) -> None:
        def merge(raw: Any) -> dict[str, Any]:
            data = _decode(raw)  # what is on disk now: another process may have written
            data.remote.update(remote or {})
            data.local.update(local or {})
            data.tags.update(tags or {})
            data.releases.update(releases or {})
            data.limits.update(limits or {})
            if checked_at is not None:
                data.last_check = checked_at.isoformat()
            return _encode(data)

        with self._lock:
            self._data = _decode(self._store.update(merge, {}))


def _encode(data: DigestSnapshot) -> dict[str, Any]:
    return {
        "remote": {k: asdict(v) for k, v in data.remote.items()},
        "local": {k: asdict(v) for k, v in data.local.items()},
        "last_check": data.last_check,
        "tags": data.tags,
        "releases": {k: asdict(v) for k, v in data.releases.items()},
        "limits": {k: asdict(v) for k, v in data.limits.items()},
    }


def _decode(raw: Any) -> DigestSnapshot:
    """Tolerant: entries that do not fit (an older format) are dropped, not fatal."""
    if not isinstance(raw, dict):
        return DigestSnapshot()
    snapshot = DigestSnapshot(last_check=raw.get("last_check") or None)
    for name, entry in _entries(raw.get("remote")):
        with contextlib.suppress(TypeError):
            snapshot.remote[name] = RemoteDigest(**entry)
    for name, entry in _entries(raw.get("local")):
        with contextlib.suppress(TypeError):
            snapshot.local[name] = LocalDigest(**entry)
    for name, entry in _entries(raw.get("tags")):
        snapshot.tags[name] = {str(k): str(v) for k, v in entry.items()}
    for name, entry in _entries(raw.get("releases")):
        with contextlib.suppress(TypeError):
            snapshot.releases[name] = Release(**entry)
    for name, entry in _entries(raw.get("limits")):
        with contextlib.suppress(TypeError):
            snapshot.limits[name] = RegistryLimit(**entry)
    return snapshot


def _entries(raw: object) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(raw, dict):
        return []
    return [(str(k), v) for k, v in raw.items() if isinstance(v, dict)]
