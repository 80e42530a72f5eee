"""Per-stack preferences of this host (auto-update opt-in and its last outcome), in a
JSON file in the data folder."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from stackyard.fs.jsonstore import JsonStore


@dataclass(frozen=True)
class AutoUpdateOutcome:
    at: datetime  # UTC
    outcome: Literal["updated", "failed", "skipped"]
    detail: str | None


@dataclass
class StackPrefs:
    auto_update: bool = False
    last_auto_update: AutoUpdateOutcome | None = None


class PrefsStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = JsonStore(path)
        self._lock = threading.Lock()

    def all(self) -> dict[str, StackPrefs]:
        return _decode(self._store.read({}))

    def get(self, stack: str) -> StackPrefs:
        return self.all().get(stack, StackPrefs())

    def change(
        self, stack: str, auto_update: bool | None = None, outcome: AutoUpdateOutcome | None = None
    ) -> StackPrefs:
        changed = StackPrefs()

        def apply(raw: Any) -> dict[str, Any]:
            nonlocal changed
            prefs = _decode(raw)
            changed = prefs.setdefault(stack, StackPrefs())
            if auto_update is not None:
                changed.auto_update = auto_update
            if outcome is not None:
                changed.last_auto_update = outcome
            return _encode(prefs)

        with self._lock:
            self._store.update(apply, {})
        return changed

    def forget(self, stack: str) -> None:
        def drop(raw: Any) -> dict[str, Any]:
            prefs = _decode(raw)
            prefs.pop(stack, None)
            return _encode(prefs)

        if stack in self.all():
            with self._lock:
                self._store.update(drop, {})


def _encode(prefs: dict[str, StackPrefs]) -> dict[str, Any]:
    return {
        stack: {
            "auto_update": p.auto_update,
            "last_auto_update": (
                {
                    "at": p.last_auto_update.at.isoformat(),
                    "outcome": p.last_auto_update.outcome,
                    "detail": p.last_auto_update.detail,
                }
                if p.last_auto_update
                else None
            ),
        }
        for stack, p in prefs.items()
    }


def _outcome(raw: object) -> AutoUpdateOutcome | None:
    if not isinstance(raw, dict) or raw.get("outcome") not in ("updated", "failed", "skipped"):
        return None
    try:
        at = datetime.fromisoformat(str(raw.get("at")))
    except ValueError:
        return None
    detail = raw.get("detail")
    return AutoUpdateOutcome(at, raw["outcome"], str(detail) if detail is not None else None)


def _decode(raw: Any) -> dict[str, StackPrefs]:
    """Tolerant: entries that do not fit are dropped."""
    prefs: dict[str, StackPrefs] = {}
    for stack, entry in (raw if isinstance(raw, dict) else {}).items():
        if not isinstance(entry, dict):
            continue
        prefs[stack] = StackPrefs(
            bool(entry.get("auto_update")), _outcome(entry.get("last_auto_update"))
        )
    return prefs
