"""The digest cache: per image reference, the registry's digest (when last checked, or
the error) and the local digests. Kept in a JSON file in the data folder, so that agents
(which have no database) keep theirs the same way."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from stackyard.files_atomic import write_atomic

RemoteStatus = Literal["ok", "not_found", "error"]


@dataclass
class RemoteDigest:
    status: RemoteStatus
    digest: str | None
    checked_at: str  # ISO 8601, UTC
    error: str | None = None


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
        self._lock = threading.Lock()
        self._data = self._read()

    def _read(self) -> DigestSnapshot:
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return DigestSnapshot()
        return DigestSnapshot(
            remote={k: RemoteDigest(**v) for k, v in raw.get("remote", {}).items()},
            local={k: LocalDigest(**v) for k, v in raw.get("local", {}).items()},
            last_check=raw.get("last_check"),
        )

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
        with self._lock:
            self._data.remote.update(remote or {})
            self._data.local.update(local or {})
            if checked_at is not None:
                self._data.last_check = checked_at.isoformat()
            payload = {
                "remote": {k: asdict(v) for k, v in self._data.remote.items()},
                "local": {k: asdict(v) for k, v in self._data.local.items()},
                "last_check": self._data.last_check,
            }
            write_atomic(self.path, json.dumps(payload).encode(), mode=0o600)
