"""The logs of some containers (a stack's, or one outside the stacks): the last lines,
then following them live, merged; or all of them as one text.

Each line carries its time (the engine's timestamp), container, service and stream
(stdout or stderr). A followed container that stops is picked up again when it starts
(a restart), and a container that appears in the stack later (recreated by an update, or
scaled up) is followed from its first line: the engine's events for the stack's compose
project say when. Nothing is held beyond a bounded queue of lines: a slow reader slows
the engine's streams down, it never grows the service's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio

from stackyard.docker.containers import PROJECT, SERVICE, ContainerInfo
from stackyard.docker.frames import Frame, StreamName
from stackyard.errors import Invalid, NotFound, StackyardError

if TYPE_CHECKING:
    from stackyard.docker.streams import EngineStreams

log = logging.getLogger(__name__)

#: Longest line kept whole (bytes); the rest of a longer line is cut.
MAX_LINE = 64 * 1024
#: Batches of lines waiting between the engine's streams and the reader (each what came
#: from the engine at once: its read buffer's worth, a few hundred lines at most).
QUEUE_BATCHES = 100
#: Lines handed over at once: once this many are gathered, no more are added.
MAX_BATCH = 2_000
#: Seconds a followed batch waits for more lines before it is handed over: a chatty
#: container's lines leave in tens of batches a second rather than hundreds (the engine
#: hands them over a socket read at a time), and each batch costs the reader one event,
#: one serialisation and one write, whatever its size.
GATHER_SECONDS = 0.05
#: Most lines of the initial tail.
MAX_TAIL = 10_000
#: Lines of a log view before it follows, unless asked otherwise.
DEFAULT_TAIL = 300
#: About this many bytes of text a chunk of `log_text`.
TEXT_CHUNK = 64 * 1024


@dataclass(slots=True)  # (not frozen: a followed log makes thousands a second, and a
class LogLine:  # frozen dataclass's fields cost four times as much to set)
    time: str = field(metadata={"description": "The engine's timestamp (RFC 3339, ns)"})
    container: str
    service: str
    stream: StreamName
    text: str


@dataclass(frozen=True)
class Target:
    """A container whose logs are read."""

    id: str
    name: str
    service: str


_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z")


@functools.lru_cache(maxsize=64)
def _epoch_seconds(whole: str) -> int:
    return int(datetime.fromisoformat(whole + "+00:00").timestamp())


def time_ns(stamp: str) -> int:
    """Nanoseconds since the epoch of a timestamp as the engine writes it
    (`2026-11-23T15:00:00.123456789Z`, trailing zeros of the fraction dropped); ValueError
    for anything else."""
    match = _STAMP.fullmatch(stamp)
    if match is None:
        raise ValueError(f"not an engine timestamp: {stamp[:40]!r}")
    return _epoch_seconds(match[1]) * 1_000_000_000 + int((match[2] or "").ljust(9, "0"))


def _since(ns: int) -> str:
    """The `since` of the logs API for "after `ns`": seconds and nanoseconds."""
    after = ns + 1
    return f"{after // 1_000_000_000}.{after % 1_000_000_000:09d}"


async def _lines(
    target: Target, batches: AsyncIterator[list[Frame]]
) -> AsyncIterator[list[LogLine]]:
    """Frames (pieces of output, each line led by its timestamp) as lines, those of the
    frames that came together at once."""
    pending: dict[StreamName, bytes] = {}
    async for frames in batches:
        lines: list[LogLine] = []
        for frame in frames:
            data = pending.pop(frame.stream, b"") + frame.data
            end = data.rfind(b"\n")
            if end >= 0:
                lines.extend(_whole_lines(target, frame.stream, data[:end]))
            rest = data[end + 1 :]
            if len(rest) > MAX_LINE:  # a line without end: cut, keep reading
                lines.append(_line(target, frame.stream, rest[:MAX_LINE]))
            elif rest:
                pending[frame.stream] = rest
        if lines:
            yield lines
    rest_lines = [_line(target, stream, rest) for stream, rest in pending.items()]
    if rest_lines:
        yield rest_lines


def _whole_lines(target: Target, stream: StreamName, data: bytes) -> list[LogLine]:
    """The lines of `data` (each led by its timestamp, the last without its line end),
    decoded in one go: a followed log brings hundreds at once."""
    if len(data) > MAX_LINE and max(map(len, data.split(b"\n"))) > MAX_LINE:
        return [_line(target, stream, raw[:MAX_LINE]) for raw in data.split(b"\n")]
    # (As each line decoded apart: a newline or a space is never part of what a broken
    # UTF-8 sequence is replaced by.)
    name, service = target.name, target.service
    return [
        LogLine(time=stamp, container=name, service=service, stream=stream, text=text.rstrip("\r"))
        for stamp, _, text in (
            line.partition(" ") for line in data.decode(errors="replace").split("\n")
        )
    ]


def _line(target: Target, stream: StreamName, raw: bytes) -> LogLine:
    stamp, _, text = raw.partition(b" ")
    return LogLine(
        time=stamp.decode(errors="replace"),
        container=target.name,
        service=target.service,
        stream=stream,
        text=text.decode(errors="replace").rstrip("\r"),
    )


class LogReader:
    """The logs of some containers of one compose project (see the module)."""

    def __init__(
        self,
        streams: EngineStreams,
        targets: Iterable[Target],
        projects: Iterable[str],
        wanted: Callable[[Target], bool] = lambda target: True,
    ) -> None:
        self.streams = streams
        self.targets = {t.id: t for t in targets}
        self.projects = sorted(set(projects))
        self.wanted = wanted
        self._tty: dict[str, bool] = {}
        self._last: dict[str, int] = {}  # container id -> time of the last line read

    async def _is_tty(self, container_id: str) -> bool:
        if container_id not in self._tty:
            info = await self.streams.inspect(container_id)
            self._tty[container_id] = bool((info.get("Config") or {}).get("Tty"))
        return self._tty[container_id]

    async def _read(
        self,
        target: Target,
        *,
        follow: bool,
        tail: int | None = None,
        since: int | None = None,
        only: StreamName | None = None,
    ) -> AsyncIterator[list[LogLine]]:
        """The container's lines, those that came together at once."""
        frames = self.streams.logs(
            target.id,
            tty=await self._is_tty(target.id),
            follow=follow,
            tail=tail,
            since=None if since is None else _since(since),
            only=only,
        )
        async for lines in _lines(target, frames):
            for line in reversed(lines):  # the time of the last line that has one
                try:
                    self._last[target.id] = time_ns(line.time)
                except ValueError:
                    continue
                break
            yield lines

    async def _each(self, target: Target, **how: Any) -> AsyncIterator[LogLine]:
        """`_read`, line by line."""
        async for lines in self._read(target, **how):
            for line in lines:
                yield line

    async def tail(self, count: int) -> list[LogLine]:
        """The last `count` lines of the containers together, oldest first."""
        count = max(0, min(count, MAX_TAIL))
        if count == 0:
            for target in self.targets.values():  # followers start from now
                self._last[target.id] = await self._now_of(target)
            return []
        merged: list[tuple[int, int, LogLine]] = []
        for n, target in enumerate(self.targets.values()):
            try:
                async for line in self._each(target, follow=False, tail=count):
                    merged.append((_order(line), n, line))
            except NotFound:
                continue  # removed meanwhile
        merged.sort(key=lambda item: (item[0], item[1]))
        return [line for _, _, line in merged[-count:]]

    async def _now_of(self, target: Target) -> int:
        """The time of a container's last line, so a follower starts after it."""
        last = 0
        with contextlib.suppress(StackyardError):
            async for line in self._each(target, follow=False, tail=1):
                last = time_ns(line.time)
        return last

    async def follow(self) -> AsyncIterator[list[LogLine]]:
        """Lines as they are written, in batches, until cancelled; containers that start
        (again, or anew) in the project are followed too."""
        queue: asyncio.Queue[list[LogLine]] = asyncio.Queue(QUEUE_BATCHES)
        followers: dict[str, asyncio.Task[None]] = {}

        async def follow_one(target: Target) -> None:
            try:
                since = self._last.get(target.id)
                async for lines in self._read(target, follow=True, since=since):
                    await queue.put(lines)
                    # What the engine writes meanwhile waits in the connection's buffer,
                    # to be read in one go.
                    await asyncio.sleep(GATHER_SECONDS)
            except NotFound:
                pass
            except StackyardError as exc:
                log.info("Logs of %s ended: %s", target.name, exc.detail)

        def start(target: Target) -> None:
            running = followers.get(target.id)
            if running is None or running.done():
                followers[target.id] = asyncio.create_task(follow_one(target))

        listening = asyncio.Event()

        async def watch() -> None:
            filters = {
                "type": ["container"],
                "event": ["start"],
                "label": [f"{PROJECT}={project}" for project in self.projects],
            }
            async for event in self.streams.events(filters, listening):
                attributes = (event.get("Actor") or {}).get("Attributes") or {}
                target = self.targets.get(event.get("id", "")) or Target(
                    event.get("id", ""), attributes.get("name", "?"), attributes.get(SERVICE, "")
                )
                if target.id and self.wanted(target):
                    self.targets[target.id] = target
                    start(target)

        watcher = asyncio.create_task(watch())
        try:
            # The watcher listens before the followers start: no start is missed between.
            await asyncio.wait(
                [watcher, asyncio.ensure_future(listening.wait())],
                return_when=asyncio.FIRST_COMPLETED,
            )
            if watcher.done():
                watcher.result()  # the engine refused: say why
            for target in list(self.targets.values()):
                start(target)
            while True:
                batch = list(await queue.get())
                await asyncio.sleep(GATHER_SECONDS)
                while len(batch) < MAX_BATCH:
                    try:
                        batch.extend(queue.get_nowait())
                    except asyncio.QueueEmpty:
                        break
                yield batch
        finally:
            tasks = [watcher, *followers.values()]
            for task in tasks:
                task.cancel()
            # Waited for without cancelling them again (each closes its engine stream).
            with anyio.CancelScope(shield=True):
                await asyncio.wait(tasks)


def _order(line: LogLine) -> int:
    try:
        return time_ns(line.time)
    except ValueError:
        return 0


async def merged_lines(reader: LogReader) -> AsyncIterator[LogLine]:
    """Every line the containers have, all of them, merged by time (the engine's files
    read side by side, one line of each in hand). Each container's stdout and stderr are
    read apart: the engine stamps each stream's lines in order, but writes the two
    interleaved as they come, a stamp of one before a slightly older one of the other."""
    heads: list[tuple[int, int, LogLine, AsyncIterator[LogLine]]] = []
    streams: tuple[StreamName, ...] = ("stdout", "stderr")
    sources = [(target, only) for target in reader.targets.values() for only in streams]
    for n, (target, only) in enumerate(sources):
        lines = reader._each(target, follow=False, only=only)
        first = await anext(lines, None)
        if first is not None:
            heads.append((_order(first), n, first, lines))
    heapq.heapify(heads)
    try:
        while heads:
            _, n, line, lines = heads[0]
            yield line
            following = await anext(lines, None)
            if following is None:
                heapq.heappop(heads)
            else:
                heapq.heapreplace(heads, (_order(following), n, following, lines))
    finally:
        for *_, lines in heads:
            await lines.aclose()  # type: ignore[attr-defined]


async def log_batches(
    reader: LogReader, tail: int = DEFAULT_TAIL, follow: bool = True
) -> AsyncIterator[list[LogLine]]:
    """The last `tail` lines (one batch), then, with `follow`, new lines as they come."""
    if tail < 0:
        raise Invalid("tail must be 0 or more")
    first = await reader.tail(tail)
    yield first
    if follow:
        async for batch in reader.follow():
            yield batch


async def log_text(reader: LogReader) -> AsyncIterator[bytes]:
    """Every line the containers have, merged by time, as text: `time container stream
    text` per line, in chunks of about `TEXT_CHUNK` bytes."""
    chunk: list[str] = []
    size = 0
    async for line in merged_lines(reader):
        text = f"{line.time} {line.container} {line.stream} {line.text}\n"
        chunk.append(text)
        size += len(text)
        if size >= TEXT_CHUNK:
            yield "".join(chunk).encode(errors="replace")
            chunk, size = [], 0
    if chunk:
        yield "".join(chunk).encode(errors="replace")


def targets_of(containers: Iterable[ContainerInfo]) -> list[Target]:
    return [Target(c.id, c.name, c.service) for c in containers]
