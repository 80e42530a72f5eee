"""What a backup or a restore has changed that must be undone should the service die
before the work ends: today, a running stack it stopped for a consistent copy.

Each entry is written (`<data>/journal.json`, the one JSON store) before the change it
names is made, and removed when the work ends (having undone the change itself). An
entry still there at the next start is work the service was killed in:
`BackupService.recover` starts the stack again.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from stackyard.db.types import utcnow
from stackyard.fs.jsonstore import JsonStore


@dataclass(frozen=True)
class Entry:
    """A running stack that a backup or a restore stopped."""

    id: str
    action: str  # backup, restore
    stack: str
    began: str  # ISO time


class Journal:
    def __init__(self, path: Path) -> None:
        self._store = JsonStore(path)

    @contextlib.contextmanager
    def stopping(self, stack: str, action: str) -> Iterator[Entry]:
        """An entry written before the block stops the stack, removed when the block
        ends however it ends (having started the stack again)."""
        entry = Entry(secrets.token_hex(6), action, stack, utcnow().isoformat())
        self._store.update(lambda entries: {**(entries or {}), entry.id: asdict(entry)}, {})
        try:
            yield entry
        finally:
            self.forget(entry)

    def forget(self, entry: Entry) -> None:
        self._store.update(lambda entries: _without(entries, entry.id), {})

    def pending(self) -> list[Entry]:
        """The entries of work that a previous start of the service did not end."""
        found = []
        for raw in (self._store.read({}) or {}).values():
            with contextlib.suppress(TypeError):
                found.append(Entry(**raw))
        return found


def _without(entries: dict[str, Any] | None, entry_id: str) -> dict[str, Any]:
    return {k: v for k, v in (entries or {}).items() if k != entry_id}
