"""What every destination type must do, run against each real peer: push, list,
download, delete and test, bytes equal after a round trip, no file but ours ever listed
or touched, no temporary file left on either side."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stackyard.backups.names import archive_name
from stackyard.destinations.base import PARTIAL_PREFIX, Destination
from stackyard.errors import Conflict, Invalid, NotFound

MIB = 1024 * 1024


def an_archive(folder: Path, size: int = 3 * MIB + 12345, stack: str = "web") -> Path:
    """A local file under a name this service gives (content: random bytes)."""
    at = datetime.now(UTC) - timedelta(seconds=int.from_bytes(os.urandom(2), "big"))
    path = folder / archive_name(stack, "nas", at)
    with path.open("wb") as out:
        out.write(os.urandom(size))
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_contract(
    destination: Destination,
    tmp_path: Path,
    raw_names: Callable[[], list[str]],
    put_foreign: Callable[[str], None],
) -> None:
    """`raw_names`: every file the destination's folder holds, read by the peer's own
    means; `put_foreign(name)`: a file that someone else put there."""

    async def scenario() -> None:
        assert "archives" in await destination.test()
        assert await destination.archives() == []
        assert raw_names() == []  # the test's probe is gone

        put_foreign("notes.txt")
        put_foreign("web--nas--20200101T000000Z.tar.bak")
        local = an_archive(tmp_path)
        seen: list[int] = []
        await destination.push(local, local.name, seen.append)
        assert seen and seen[-1] == local.stat().st_size
        assert seen == sorted(seen)

        listed = await destination.archives()
        assert [(a.name, a.size) for a in listed] == [(local.name, local.stat().st_size)]
        assert abs((listed[0].modified - datetime.now(UTC)).total_seconds()) < 300
        assert sorted(raw_names()) == sorted(
            [local.name, "notes.txt", "web--nas--20200101T000000Z.tar.bak"]
        )

        with pytest.raises(Conflict):
            await destination.push(local, local.name, lambda done: None)
        with pytest.raises(Invalid):
            await destination.push(local, "../escape.tar", lambda done: None)
        with pytest.raises(Invalid):
            await destination.delete("notes.txt")  # not ours: never touched

        back = tmp_path / "back.tar"
        pulled: list[int] = []
        await destination.pull(local.name, back, pulled.append)
        assert digest(back) == digest(local)
        assert pulled[-1] == local.stat().st_size

        second = an_archive(tmp_path, size=1000)
        await destination.push(second, second.name, lambda done: None)
        assert {a.name for a in await destination.archives()} == {local.name, second.name}

        await destination.delete(local.name)
        assert [a.name for a in await destination.archives()] == [second.name]
        with pytest.raises(NotFound):
            await destination.delete(local.name)
        with pytest.raises(NotFound):
            await destination.pull(local.name, tmp_path / "gone.tar", lambda done: None)
        assert not (tmp_path / "gone.tar").exists()

        assert sorted(raw_names()) == sorted(
            [second.name, "notes.txt", "web--nas--20200101T000000Z.tar.bak"]
        )
        assert not any(n.startswith(PARTIAL_PREFIX) for n in raw_names())

    asyncio.run(scenario())
