"""What a backup, a restore or an update has changed that must be undone should the
service die before the work ends: a running stack it stopped, a restore's staged writes,
an update's replaced images and edited compose file.

Each entry is written (`<data>/journal.json`, the one JSON store) before the change it
names is made, kept up to date while the work goes on, and removed when the work ends
(having undone or finished its changes itself). An entry still there at the next start
is work the service was killed in: `BackupService.recover` and `StackService.recover`
undo it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from stackyard.clock import utcnow
from stackyard.fs.jsonstore import JsonStore

Kind = Literal["stopped", "staging", "updating", "drill"]


@dataclass(frozen=True)
class Entry:
    id: str
    #: stopped: a running stack a backup or restore stopped; staging: a restore's writes;
    #: updating: an update (what ran before it, to go back to); drill: a restore drill's
    #: scratch clone (what to remove)
    kind: Kind
    action: str  # backup, restore, update
    stack: str
    began: str  # ISO time
    #: staging: the restore's staged writes (`Staging.snapshot`).
    data: dict[str, Any] = field(default_factory=dict)


class Journal:
    def __init__(self, path: Path) -> None:
        self._store = JsonStore(path)

    @contextlib.contextmanager
    def stopping(self, stack: str, action: str) -> Iterator[None]:
        """An entry written before the block stops the stack, removed when the block
        ends however it ends (having started the stack again)."""
        with self._entry("stopped", stack, action):
            yield

    @contextlib.contextmanager
    def staging(self, stack: str) -> Iterator[Callable[[dict[str, Any]], None]]:
        """An entry for a restore's staged writes: the block records each state of them
        with the function it is given, before it acts on it."""
        with self._entry("staging", stack, "restore") as entry:
            yield lambda data: self._put(dataclasses.replace(entry, data=data))

    @contextlib.contextmanager
    def updating(
        self, stack: str, data: dict[str, Any]
    ) -> Iterator[Callable[[dict[str, Any]], None]]:
        """An entry for an update: what ran before it (`data`), written before anything is
        replaced; the block records more of it with the function it is given."""
        with self._entry("updating", stack, "update", data) as entry:
            yield lambda more: self._put(dataclasses.replace(entry, data={**data, **more}))

    @contextlib.contextmanager
    def drilling(self, stack: str, data: dict[str, Any]) -> Iterator[None]:
        """An entry for a restore drill, naming everything it makes (`data`), written
        before it makes any of it."""
        with self._entry("drill", stack, "drill", data):
            yield

    @contextlib.contextmanager
    def _entry(
        self, kind: Kind, stack: str, action: str, data: dict[str, Any] | None = None
    ) -> Iterator[Entry]:
        entry = Entry(secrets.token_hex(6), kind, action, stack, utcnow().isoformat(), data or {})
        self._put(entry)
        try:
            yield entry
        finally:
            self.forget(entry)

    def _put(self, entry: Entry) -> None:
        self._store.update(lambda entries: {**(entries or {}), entry.id: asdict(entry)}, {})

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
