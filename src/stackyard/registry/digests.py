"""The digest cache: per image reference, the registry's digest (when last checked, or
the error) and the local digests. Kept in a JSON file in the data folder, so that agents
(which have no database) keep theirs the same way. Changes merge into the file under its
lock (`fs.jsonstore`), so that the CLI and the service never lose each other's."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from stackyard.fs.jsonstore import JsonStore

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


@dataclass
class DigestSnapshot:
    remote: dict[str, RemoteDigest] = field(default_factory=dict)
    local: dict[str, LocalDigest] = field(default_factory=dict)
    last_check: str | None = None


class DigestCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = JsonStore(path)
        self._lock = threading.Lock()
        self._data = _decode(self._store.read({}))

    def snapshot(self) -> DigestSnapshot:
        with self._lock:
            return DigestSnapshot(
                dict(self._data.remote), dict(self._data.local), self._data.last_check
            )

    def update(
        self,
        remote: dict[str, RemoteDigest] | None = None,
        local: dict[str, LocalDigest] | None = None,
        checked_at: datetime | None = None,
    ) -> None:
        def merge(raw: Any) -> dict[str, Any]:
            data = _decode(raw)  # what is on disk now: another process may have written
            data.remote.update(remote or {})
            data.local.update(local or {})
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
    return snapshot


def _entries(raw: object) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(raw, dict):
        return []
    return [(str(k), v) for k, v in raw.items() if isinstance(v, dict)]
