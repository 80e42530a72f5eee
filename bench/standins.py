"""Stand-in agents for the fleet benchmark: many loopback ports served by one asyncio loop
in a thread, each answering `/agent/health` and `/agent/fleet/host` like a real agent
(realistic bodies) after a delay of its own, and following `/agent/notifications/events`
as an agent with no event to report does (with its fleet report when asked, then a line
every `HEARTBEAT` seconds), or accepting connections and never answering, or not
listening at all."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

import httpx

from stackyard import __version__
from stackyard.agents.compat import CAPABILITIES
from stackyard.fleet.pushed import HEARTBEAT

Kind = Literal["healthy", "silent", "offline"]


def disk_summary(index: int) -> dict[str, object]:
    """What a host's disk summary says (`stackyard.disk.model.DiskSummary`): tens of GiB
    of images, a few of volumes, some build cache, measured a minute ago."""
    gib = 1024**3
    return {
        "images": (20 + index % 40) * gib,
        "images_count": 80 + index % 300,
        "containers": (index % 5) * 64 * 1024**2,
        "containers_count": 46,
        "volumes": (3 + index % 17) * gib,
        "volumes_count": 30 + index % 90,
        "build_cache": (index % 7) * gib // 2,
        "reclaimable": (4 + index % 25) * gib,
        "measured_at": "2025-06-01T12:00:00Z",
    }


def host_report(index: int, disk: bool = False) -> bytes:
    """What a host with 20 stacks reports (two containers in trouble, one partial stack),
    with its disk summary when `disk` (agents from issue 41 on)."""
    stacks = [f"app{n:02d}" for n in range(20)]
    report: dict[str, object] = {
        "name": f"standin-{index}",
        "version": __version__,
        "stacks": {"running": 17, "partial": 1, "stopped": 2, "invalid": 0},
        "partial": [stacks[3]],
        "troubles": [
            {"stack": stacks[5], "container": f"{stacks[5]}-web-1", "state": "restarting"},
            {"stack": stacks[6], "container": f"{stacks[6]}-db-1", "state": "unhealthy"},
        ][: index % 3],
        "updates": stacks[: index % 4],
        "failed_backups": [],
        "resources": {
            "cpus": 4,
            "load": [0.4, 0.6, 0.5],
            "memory_total": 16 * 1024**3,
            "memory_available": 9 * 1024**3,
            "disk_path": "/var/lib/docker",
            "disk_total": 500 * 1024**3,
            "disk_free": 210 * 1024**3,
            "containers_running": 41,
            "containers_total": 46,
            "stacks": 20,
        },
        "engine_error": None,
    }
    if disk:
        report["disk"] = disk_summary(index)
    return json.dumps(report).encode()


HEALTH = json.dumps(
    {"status": "ok", "version": __version__, "mode": "agent", "capabilities": list(CAPABILITIES)}
).encode()

KEEPALIVE = json.dumps({"boot": "standin", "seq": 0, "event": None}).encode() + b"\n"


@dataclass
class StandIn:
    index: int
    kind: Kind
    delay: float
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class StandIns:
    agents: list[StandIn]
    #: Whether the host reports carry a disk summary (switched between requests: the
    #: stand-ins read it at each answer).
    disk: bool = False
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    servers: list[asyncio.Server] = field(default_factory=list)
    held: list[socket.socket] = field(default_factory=list)
    thread: threading.Thread = field(init=False)
    # What a silent stand-in waits for, never set. Held here: a task waiting on an event
    # only it refers to is garbage, and the collector destroys it while it waits.
    never: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> None:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result()

    async def _listen(self) -> None:
        for agent in self.agents:
            if agent.kind == "offline":
                # A port bound but not listening: refused, and not handed out again to a
                # stand-in made later (as a port closed at once could be).
                held = socket.socket()
                held.bind(("127.0.0.1", 0))
                agent.port = held.getsockname()[1]
                self.held.append(held)
                continue
            server = await asyncio.start_server(
                lambda r, w, a=agent: self._serve(a, r, w), "127.0.0.1", 0, backlog=256
            )
            agent.port = server.sockets[0].getsockname()[1]
            self.servers.append(server)

    async def _serve(
        self, agent: StandIn, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if agent.kind == "silent":
                    await self.never.wait()
                path = head.split(b" ", 2)[1]
                if b"/notifications/events" in path:
                    await self._events(agent, writer, b"reports=1" in path)
                    return
                await asyncio.sleep(agent.delay)
                body = HEALTH if path.endswith(b"/health") else host_report(agent.index, self.disk)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _events(self, agent: StandIn, writer: asyncio.StreamWriter, reports: bool) -> None:
        """The central's follow of the agent's events, as an agent with no event to
        report serves it: a stream of JSON lines, a keep-alive at once and then every
        15 s; asked for reports, its report after the keep-alive (when its look is done:
        after the stand-in's delay), then a keep-alive every `HEARTBEAT` s (nothing
        changes on a stand-in)."""
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        lines = [KEEPALIVE]
        if reports:
            await asyncio.sleep(agent.delay)
            report = b'{"boot": "standin", "seq": 0, "event": null, "report": %s}\n' % (
                host_report(agent.index, self.disk)
            )
            lines.append(report)
        while True:
            for line in lines:
                writer.write(b"%x\r\n%s\r\n" % (len(line), line))
            await writer.drain()
            lines = [KEEPALIVE]
            await asyncio.sleep(HEARTBEAT if reports else 15)

    def stop(self) -> None:
        async def close() -> None:
            for server in self.servers:
                server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()
        for held in self.held:
            held.close()


def all_pushed(http: httpx.Client, healthy: int) -> tuple[float, int]:
    """Seconds until every healthy agent's card is shown from the report it pushed (no
    answer time: not asked), and how many are."""
    began = time.perf_counter()
    while True:
        cards = http.get("/api/dashboard/fleet").json()["hosts"]
        pushed = sum(
            1
            for c in cards
            if c["kind"] == "agent" and c["reported_at"] and (c["answered_in_ms"] is None)
        )
        if pushed >= healthy or time.perf_counter() - began > 120:
            return time.perf_counter() - began, pushed
        time.sleep(0.5)
