"""Resource use of every running container of this host: CPU, memory, network and block
I/O, processes, restarts, uptime and health.

The engine has no call for all containers at once, and one request per container and
per page view would be a storm. So one collector per host keeps a stats stream open per
running container (the engine sends a sample a second) while anyone looks, and answers
every request from the latest samples: any number of open pages cost the engine the same
streams. Nobody asking for `IDLE_SECONDS` closes them. Restarts and start times come
from inspecting a container when it is first seen and again after the engine reports it
started or died.

While the streams are open, a point of CPU and memory per container is kept every
`HISTORY_STEP` seconds, by container name (a recreated container goes on), for the last
`HISTORY_SECONDS`: in memory, bounded (`HISTORY_POINTS` per container, and a container
unseen for that long is forgotten). The history covers the time someone looked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stackyard.docker.containers import ContainerInfo
from stackyard.errors import StackyardError

if TYPE_CHECKING:
    from stackyard.docker.streams import EngineStreams

log = logging.getLogger(__name__)

#: Seconds without a request after which the streams are closed.
IDLE_SECONDS = 60.0
#: Seconds between two looks at which containers run.
RESCAN_SECONDS = 2.0
#: How long a first request waits for the first samples.
FIRST_SAMPLE_WAIT = 2.5
#: How far back the history of use goes, and the seconds between two of its points.
HISTORY_SECONDS = 15 * 60
HISTORY_STEP = 10.0
HISTORY_POINTS = int(HISTORY_SECONDS / HISTORY_STEP)


@dataclass(frozen=True)
class ContainerUsage:
    id: str
    name: str
    project: str
    service: str
    cpu_percent: float | None = field(
        metadata={"description": "Of one CPU: 200 is two CPUs busy (as `docker stats`)"}
    )
    memory_used: int | None = field(metadata={"description": "Bytes, page cache excluded"})
    memory_limit: int | None
    network_rx: int | None
    network_tx: int | None
    block_read: int | None
    block_write: int | None
    pids: int | None
    restarts: int | None
    started_at: str | None
    health: str | None


@dataclass(frozen=True)
class UsageTotals:
    containers: int
    cpu_percent: float
    memory_used: int
    network_rx: int
    network_tx: int
    block_read: int
    block_write: int

    @staticmethod
    def of(usages: list[ContainerUsage]) -> UsageTotals:
        return UsageTotals(
            containers=len(usages),
            cpu_percent=round(sum(u.cpu_percent or 0.0 for u in usages), 2),
            memory_used=sum(u.memory_used or 0 for u in usages),
            network_rx=sum(u.network_rx or 0 for u in usages),
            network_tx=sum(u.network_tx or 0 for u in usages),
            block_read=sum(u.block_read or 0 for u in usages),
            block_write=sum(u.block_write or 0 for u in usages),
        )


def cpu_percent(sample: dict[str, Any]) -> float | None:
    """As `docker stats` computes it: the container's share of the host's CPU time
    between two samples, times the CPUs online."""
    cpu, pre = sample.get("cpu_stats") or {}, sample.get("precpu_stats") or {}
    try:
        container_delta = cpu["cpu_usage"]["total_usage"] - pre["cpu_usage"]["total_usage"]
        system_delta = cpu["system_cpu_usage"] - pre["system_cpu_usage"]
    except (KeyError, TypeError):
        return None
    online = cpu.get("online_cpus") or len(cpu["cpu_usage"].get("percpu_usage") or []) or 1
    if system_delta <= 0 or container_delta < 0:
        return 0.0
    return round(float(container_delta) / float(system_delta) * float(online) * 100.0, 2)


def memory_used(sample: dict[str, Any]) -> int | None:
    """Usage without the inactive page cache, as `docker stats` shows it (cgroup v1
    `total_inactive_file`, v2 `inactive_file`)."""
    memory = sample.get("memory_stats") or {}
    usage = memory.get("usage")
    if usage is None:
        return None
    stats = memory.get("stats") or {}
    for key in ("total_inactive_file", "inactive_file"):
        inactive = stats.get(key)
        if inactive is not None and inactive < usage:
            return int(usage - inactive)
    return int(usage)


def _network(sample: dict[str, Any]) -> tuple[int | None, int | None]:
    networks = sample.get("networks")
    if not networks:
        return None, None
    rx = sum(int(n.get("rx_bytes", 0)) for n in networks.values())
    tx = sum(int(n.get("tx_bytes", 0)) for n in networks.values())
    return rx, tx


def _block(sample: dict[str, Any]) -> tuple[int | None, int | None]:
    entries = (sample.get("blkio_stats") or {}).get("io_service_bytes_recursive")
    if entries is None:
        return None, None
    read = sum(int(e.get("value", 0)) for e in entries if str(e.get("op")).lower() == "read")
    write = sum(int(e.get("value", 0)) for e in entries if str(e.get("op")).lower() == "write")
    return read, write


@dataclass(frozen=True)
class UsagePoint:
    at: float = field(metadata={"description": "Seconds since the epoch"})
    cpu_percent: float | None
    memory_used: int | None


@dataclass(frozen=True)
class UsageHistory:
    step_seconds: float
    containers: dict[str, list[UsagePoint]] = field(
        metadata={"description": "By container name, oldest point first"}
    )


@dataclass
class _Tracked:
    info: ContainerInfo
    task: asyncio.Task[None] | None = None
    sample: dict[str, Any] | None = None
    restarts: int | None = None
    started_at: str | None = None
    inspected: bool = False


class UsageCollector:
    """See the module. `running()` lists the host's running containers (one call)."""

    def __init__(
        self,
        streams: EngineStreams,
        running: Callable[[], Awaitable[list[ContainerInfo]]],
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.streams = streams
        self.running = running
        self.idle_seconds = idle_seconds
        self._tracked: dict[str, _Tracked] = {}
        self._last_asked = 0.0
        self._loop_task: asyncio.Task[None] | None = None
        self._first_scan = asyncio.Event()
        self._history: dict[str, deque[UsagePoint]] = {}
        self._last_point = float("-inf")  # monotonic

    async def snapshot(self) -> list[ContainerUsage]:
        """The latest use of every running container (waits a moment for first samples
        when nobody was looking before)."""
        self._last_asked = time.monotonic()
        if self._loop_task is None or self._loop_task.done():
            self._first_scan = asyncio.Event()
            self._loop_task = asyncio.create_task(self._run())
            await self._first_samples()
        return [self._usage(t) for t in sorted(self._tracked.values(), key=lambda t: t.info.name)]

    def history(self, names: Iterable[str]) -> UsageHistory:
        """The points of the last `HISTORY_SECONDS` of the containers named."""
        since = time.time() - HISTORY_SECONDS
        kept = {name: self._history.get(name, ()) for name in names}
        return UsageHistory(
            HISTORY_STEP,
            {name: [p for p in points if p.at >= since] for name, points in kept.items()},
        )

    def _record(self) -> None:
        now = time.monotonic()
        if now - self._last_point < HISTORY_STEP:
            return
        self._last_point, at = now, time.time()
        for tracked in self._tracked.values():
            if tracked.sample is None:
                continue
            usage = self._usage(tracked)
            points = self._history.setdefault(tracked.info.name, deque(maxlen=HISTORY_POINTS))
            points.append(UsagePoint(at, usage.cpu_percent, usage.memory_used))
        for name in [n for n, p in self._history.items() if p[-1].at < at - HISTORY_SECONDS]:
            del self._history[name]

    async def _first_samples(self) -> None:
        deadline = time.monotonic() + FIRST_SAMPLE_WAIT
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._first_scan.wait(), FIRST_SAMPLE_WAIT)
        while time.monotonic() < deadline and any(
            t.sample is None or not (t.sample.get("precpu_stats") or {}).get("system_cpu_usage")
            for t in self._tracked.values()
        ):
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        self._stop_all()

    def _stop_all(self) -> None:
        for tracked in self._tracked.values():
            if tracked.task is not None:
                tracked.task.cancel()
        self._tracked.clear()

    async def _run(self) -> None:
        events = asyncio.create_task(self._watch_starts())
        try:
            while time.monotonic() - self._last_asked < self.idle_seconds:
                try:
                    await self._rescan()
                except StackyardError as exc:
                    log.warning("Resource use: %s", exc.detail)
                self._record()
                self._first_scan.set()
                await asyncio.sleep(RESCAN_SECONDS)
        finally:
            events.cancel()
            self._stop_all()

    async def _watch_starts(self) -> None:
        """A container that starts again (a restart) or dies is inspected again: its
        restart count and start time change."""
        filters = {"type": ["container"], "event": ["start", "die"]}
        with contextlib.suppress(StackyardError):
            async for event in self.streams.events(filters):
                tracked = self._tracked.get(event.get("id", ""))
                if tracked is not None:
                    tracked.inspected = False

    async def _rescan(self) -> None:
        running = {c.id: c for c in await self.running()}
        for container_id in [i for i in self._tracked if i not in running]:
            gone = self._tracked.pop(container_id)
            if gone.task is not None:
                gone.task.cancel()
        for container_id, info in running.items():
            tracked = self._tracked.get(container_id)
            if tracked is None:
                tracked = self._tracked[container_id] = _Tracked(info)
            else:
                tracked.info = info
            if not tracked.inspected:
                await self._inspect(tracked)
            if tracked.task is None or tracked.task.done():
                tracked.task = asyncio.create_task(self._follow(tracked))

    async def _inspect(self, tracked: _Tracked) -> None:
        with contextlib.suppress(StackyardError):
            info = await self.streams.inspect(tracked.info.id)
            tracked.restarts = int(info.get("RestartCount") or 0)
            tracked.started_at = (info.get("State") or {}).get("StartedAt")
            tracked.inspected = True

    async def _follow(self, tracked: _Tracked) -> None:
        with contextlib.suppress(StackyardError):
            async for sample in self.streams.stats(tracked.info.id):
                tracked.sample = sample

    @staticmethod
    def _usage(tracked: _Tracked) -> ContainerUsage:
        sample = tracked.sample or {}
        rx, tx = _network(sample)
        read, write = _block(sample)
        memory = sample.get("memory_stats") or {}
        return ContainerUsage(
            id=tracked.info.id,
            name=tracked.info.name,
            project=tracked.info.project,
            service=tracked.info.service,
            cpu_percent=cpu_percent(sample) if sample else None,
            memory_used=memory_used(sample),
            memory_limit=memory.get("limit"),
            network_rx=rx,
            network_tx=tx,
            block_read=read,
            block_write=write,
            pids=(sample.get("pids_stats") or {}).get("current"),
            restarts=tracked.restarts,
            started_at=tracked.started_at,
            health=tracked.info.health,
        )
