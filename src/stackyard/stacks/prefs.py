"""Per-stack preferences of this host (its update policy, the last update's outcome, the
images whose update was rolled back) and the host's default update policy, in JSON files
in the data folder (agents keep theirs the same way)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config

from stackyard.fs.jsonstore import JsonStore
from stackyard.stacks.policy import UpdatePolicy

log = logging.getLogger(__name__)

#: rolled_back: the update failed its health gate and the previous images run again;
#: rollback_failed: and bringing them back failed too (the detail says what runs now);
#: skipped: the auto-update did not try (its detail says why: a window, a cooldown).
Outcome = Literal["updated", "failed", "rolled_back", "rollback_failed", "skipped"]


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class UpdateOutcome:
    at: datetime  # UTC
    outcome: Outcome
    detail: str | None
    #: Who started it: null for a user, "auto-update" for the pass.
    by: str | None = None
    #: The last log lines of the service that failed the health gate; null in an answer
    #: to whoever may not read the stack's logs (they may hold secrets).
    logs: tuple[str, ...] | None = ()


@dataclass
class StackPrefs:
    #: Null: the host's default policy.
    policy: UpdatePolicy | None = None
    last_update: UpdateOutcome | None = None
    last_auto_update: UpdateOutcome | None = None
    #: image name -> the digests (or tag) whose update was rolled back: the auto-update
    #: pass does not try it again; a newer one is tried.
    rolled_back: dict[str, list[str]] = field(default_factory=dict)
    #: Written by older versions (before policies): true means mode "auto".
    auto_update: bool = False

    def effective(self, default: UpdatePolicy) -> UpdatePolicy:
        if self.policy is not None:
            return self.policy
        return default.model_copy(update={"mode": "auto"}) if self.auto_update else default


_PREFS = TypeAdapter(StackPrefs)
_POLICY = TypeAdapter(UpdatePolicy)


class PrefsStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = JsonStore(path)
        self._defaults = JsonStore(path.with_name("update-policy.json"))
        self._lock = threading.Lock()

    def all(self) -> dict[str, StackPrefs]:
        return _decode(self._store.read({}))

    def get(self, stack: str) -> StackPrefs:
        return self.all().get(stack, StackPrefs())

    def default_policy(self) -> UpdatePolicy:
        try:
            return _POLICY.validate_python(self._defaults.read({}))
        except ValidationError:
            log.warning("The default update policy in %s does not fit: using the built-in one")
            return UpdatePolicy()

    def set_default_policy(self, policy: UpdatePolicy) -> None:
        with self._lock:
            self._defaults.update(lambda _: _POLICY.dump_python(policy, mode="json"), {})

    def policy(self, stack: str) -> UpdatePolicy:
        return self.get(stack).effective(self.default_policy())

    def change(self, stack: str, apply: Callable[[StackPrefs], None]) -> StackPrefs:
        """Change one stack's preferences under the file's lock; what they are now."""
        changed = StackPrefs()

        def merge(raw: Any) -> dict[str, Any]:
            nonlocal changed
            prefs = _decode(raw)
            changed = prefs.setdefault(stack, StackPrefs())
            apply(changed)
            return _encode(prefs)

        with self._lock:
            self._store.update(merge, {})
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
    return {stack: _PREFS.dump_python(p, mode="json") for stack, p in prefs.items()}


def _decode(raw: Any) -> dict[str, StackPrefs]:
    """Tolerant: an entry that does not fit keeps what does (its policy, say), and an
    entry that is no object is dropped."""
    prefs: dict[str, StackPrefs] = {}
    for stack, entry in (raw if isinstance(raw, dict) else {}).items():
        if not isinstance(entry, dict):
            continue
        try:
            prefs[stack] = _PREFS.validate_python(entry)
        except ValidationError:
            kept = {}
            for key, value in entry.items():
                try:
                    _PREFS.validate_python({key: value})
                    kept[key] = value
                except ValidationError:
                    continue
            prefs[stack] = _PREFS.validate_python(kept)
    return prefs
