"""The one protocol every destination type implements, and what they share.

Names on a destination are only those this service gives (`backups.names`): listing
shows no other file, and every operation refuses any other name, so nothing a
destination holds besides our archives is ever touched. An upload goes to a temporary
name first (`.stackyard-upload-...`, hidden from listings) and takes its final name only
when complete; a failed upload removes it (or, when the connection is gone, leaves it to
be swept by a later upload once a day old).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from stackyard.backups.model import Manifest
from stackyard.backups.names import is_archive_name
from stackyard.destinations.model import Progress, RemoteArchive
from stackyard.errors import Invalid

PARTIAL_PREFIX = ".stackyard-upload-"
PROBE_PREFIX = ".stackyard-test-"
#: Leftovers of uploads whose connection broke are removed once this old.
STALE_PARTIAL = timedelta(days=1)


class Destination(Protocol):
    async def test(self) -> str:
        """Reach the destination, write and remove a small file; what was found."""

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        """Upload the local archive `path` as `name` (Conflict when `name` exists)."""

    async def archives(self) -> list[RemoteArchive]:
        """The archives this service named, newest first."""

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        """Download `name` into the local file `target` (created; NotFound when absent)."""

    async def delete(self, name: str) -> None:
        """Remove `name` (NotFound when absent)."""

    async def write(self, name: str, stack: str, capture: Callable[[Any], Manifest]) -> int:
        """A backup written straight into the destination as `name` by `capture` (run in
        a thread with a writer of members): the size of the archive it keeps. Only a
        repository takes one; any other destination takes archives (Invalid)."""
        raise Invalid(
            "Only a repository takes a backup straight into it: back up on the host, then push"
        )

    async def delete_many(self, names: list[str]) -> None:
        """Remove each of `names` (NotFound at the first absent one); a repository
        removes them all in one `forget` and one `prune`."""
        for name in names:
            await self.delete(name)


def checked_name(name: str) -> str:
    """`name` when it is one this service gives; Invalid otherwise (no path, no other file)."""
    if not is_archive_name(name):
        raise Invalid(f"{name!r} is not the name of an archive made by Stackyard")
    return name


def partial_name(name: str) -> str:
    """A hidden temporary name for an upload of `name` in the same folder."""
    return f"{PARTIAL_PREFIX}{secrets.token_hex(6)}-{name}"


def probe_name() -> str:
    return f"{PROBE_PREFIX}{secrets.token_hex(6)}"


def is_stale_partial(name: str, modified: datetime, now: datetime | None = None) -> bool:
    return name.startswith(PARTIAL_PREFIX) and (
        (now or datetime.now(UTC)) - modified > STALE_PARTIAL
    )


def newest_first(found: list[RemoteArchive]) -> list[RemoteArchive]:
    return sorted(found, key=lambda a: (a.modified, a.name), reverse=True)
