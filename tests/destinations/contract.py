"""What every destination type must do, run against each real peer: push, list,
download, delete and test, bytes equal after a round trip, no file but ours ever listed
or touched, no temporary file left on either side; and a transfer through a relay that
stalls mid-transfer fails with why instead of hanging."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.support.peers import Relay
from tests.support.waiting import until

from stackyard.backups.names import archive_name
from stackyard.destinations.base import PARTIAL_PREFIX, Destination
from stackyard.destinations.stalls import Watched
from stackyard.errors import Conflict, DestinationUnreachable, Invalid, NotFound

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


def run_stalled(
    direct: Destination,
    through: Callable[[int], Destination],
    port: int,
    tmp_path: Path,
    raw_names: Callable[[], list[str]],
) -> None:
    """`through(relay_port)`: the destination reached through a relay to the peer's
    `port`. The relay stalls (keeps the connection open, passes nothing on) once 1 MiB
    went through: a push and a pull each end with "No progress" (3 s here, generous for
    signing in on a busy machine; no wait for the cleanup, which the stalled server cannot
    answer). Then the server answers again: the push given up on never completes and
    leaves nothing behind there, not even its temporary name (each run here ends once all
    its work, threads included, has ended)."""
    local = an_archive(tmp_path)

    async def stalled(
        transfer: Callable[[Destination], Awaitable[None]], left: list[str] | None = None
    ) -> None:
        with Relay(port, after=MIB, then="stall") as relay:
            with pytest.raises(DestinationUnreachable, match="No progress for 3 s"):
                await transfer(Watched(through(relay.port), limit=3, grace=0))
            assert relay.tripped.is_set()  # it stalled mid-transfer, not before
            relay.resume()
            # What goes on after the failure (a request in flight, the clean-up) reaches
            # the server now, and ends.
            alone = {asyncio.current_task()}
            await until(lambda: asyncio.all_tasks() == alone, what="the transfer's work to end")
            if left is not None:
                assert raw_names() == left

    asyncio.run(stalled(lambda d: d.push(local, local.name, lambda done: None), left=[]))
    assert raw_names() == []

    asyncio.run(direct.push(local, local.name, lambda done: None))
    asyncio.run(stalled(lambda d: d.pull(local.name, tmp_path / "back.tar", lambda done: None)))
    asyncio.run(direct.delete(local.name))
    assert raw_names() == []
