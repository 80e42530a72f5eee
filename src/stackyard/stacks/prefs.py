"""Per-stack preferences of this host (auto-update opt-in and its last outcome), in a
JSON file in the data folder."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from stackyard.files_atomic import write_atomic


@dataclass
class AutoUpdateOutcome:
    at: str  # ISO 8601, UTC
    outcome: str  # "updated", "failed", "skipped"
    detail: str | None = None


@dataclass
class StackPrefs:
    auto_update: bool = False
    last_auto_update: AutoUpdateOutcome | None = None


class PrefsStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict[str, StackPrefs]:
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        prefs = {}
        for stack, entry in raw.items():
            last = entry.get("last_auto_update")
            prefs[stack] = StackPrefs(
                bool(entry.get("auto_update")), AutoUpdateOutcome(**last) if last else None
            )
        return prefs

    def all(self) -> dict[str, StackPrefs]:
        with self._lock:
            return self._read()

    def get(self, stack: str) -> StackPrefs:
        return self.all().get(stack, StackPrefs())

    def change(
        self, stack: str, auto_update: bool | None = None, outcome: AutoUpdateOutcome | None = None
    ) -> StackPrefs:
        with self._lock:
            prefs = self._read()
            entry = prefs.setdefault(stack, StackPrefs())
            if auto_update is not None:
                entry.auto_update = auto_update
            if outcome is not None:
                entry.last_auto_update = outcome
            self._write(prefs)
            return entry

    def forget(self, stack: str) -> None:
        with self._lock:
            prefs = self._read()
            if prefs.pop(stack, None) is not None:
                self._write(prefs)

    def _write(self, prefs: dict[str, StackPrefs]) -> None:
        data = json.dumps({k: asdict(v) for k, v in prefs.items()}).encode()
        write_atomic(self.path, data, mode=0o600)
