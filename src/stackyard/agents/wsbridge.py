"""A byte stream over a WebSocket, as asyncio's transports are: what SSH runs over in an
agent's tunnel (`stackyard.agents.tunnels`), on both ends (the central's server side of
the WebSocket, the agent's client side).

Writes are queued and sent in order by one task; past `HIGH` bytes queued the protocol is
told to pause (asyncssh then stops its channels' writers: each channel's own window does
the rest of the flow control), and told to resume below `LOW`. `HIGH` is kept small: a
shell's few bytes wait behind what is queued already, and a bulk channel (a 100 MiB
download) keeps the queue full (4 MiB there put a shell's echo 300 ms behind under load;
256 KiB, one packet, keeps it to a few ms and the throughput alike). Reads go to the
protocol as each binary message comes, unless it asked to pause reading.

The SSH settings both ends of a tunnel use: AES-GCM (`SSH_OPTIONS`), which the CPU does
in hardware (half the CPU per MiB of asyncssh's default ChaCha20-Poly1305; both are AEAD
ciphers OpenSSH keeps), and channels taking packets of up to `PACKET` bytes in a window of
`WINDOW` (asyncssh's default 32 KiB packets cost a bulk channel a packet's fixed work
every 32 KiB). asyncssh applies a connection's window and packet size to its sessions
only: each end gives them to the forwarded connections' channels it makes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

HIGH = 256 * 1024
LOW = 64 * 1024
#: The largest SSH packet a channel takes, and its window.
PACKET = 256 * 1024
WINDOW = 2 * 1024 * 1024
#: The ciphers offered, the first both ends know chosen (the central's order: it is the
#: SSH client). All AEAD; AES-GCM first for the CPU's AES instructions.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com")
SSH_OPTIONS: dict[str, Any] = {"encryption_algs": CIPHERS}


class WebSocketTransport(asyncio.Transport):
    """`send(bytes)` and `receive()` (bytes, or None at the end) are the WebSocket's;
    `close_socket()` closes it."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        receive: Callable[[], Awaitable[bytes | None]],
        close_socket: Callable[[], Awaitable[None]],
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(extra)
        self._send, self._receive, self._close_socket = send, receive, close_socket
        self._protocol: asyncio.Protocol | None = None
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queued = 0
        self._paused = False
        self._reading = asyncio.Event()
        self._reading.set()
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self.closed = asyncio.get_running_loop().create_future()

    def start(self, protocol: asyncio.Protocol) -> None:
        self._protocol = protocol
        protocol.connection_made(self)
        self._tasks = [
            asyncio.create_task(self._write_loop()),
            asyncio.create_task(self._read_loop()),
        ]

    # -- asyncio.Transport ----------------------------------------------------------------
    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self._protocol is not None
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        self._protocol = protocol

    def is_closing(self) -> bool:
        return self._closing

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or not data:
            return
        self._queue.put_nowait(bytes(data))
        self._queued += len(data)
        if not self._paused and self._queued > HIGH and self._protocol is not None:
            self._paused = True
            self._protocol.pause_writing()

    def can_write_eof(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def is_reading(self) -> bool:
        return self._reading.is_set()

    def get_write_buffer_size(self) -> int:
        return self._queued

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._queue.put_nowait(None)  # (sent what was queued, then closed)

    def abort(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        self._tasks.append(asyncio.ensure_future(self._finish(None)))

    # -- the loops ------------------------------------------------------------------------
    async def _write_loop(self) -> None:
        error: BaseException | None = None
        try:
            while (chunk := await self._queue.get()) is not None:
                await self._send(chunk)
                self._queued -= len(chunk)
                if self._paused and self._queued < LOW and self._protocol is not None:
                    self._paused = False
                    self._protocol.resume_writing()
        except Exception as exc:  # (the socket went: the connection is lost)
            error = exc
        await self._finish(error)

    async def _read_loop(self) -> None:
        error: BaseException | None = None
        try:
            while True:
                await self._reading.wait()
                data = await self._receive()
                if data is None:
                    break
                if data and self._protocol is not None:
                    self._protocol.data_received(data)
        except Exception as exc:
            error = exc
        await self._finish(error)

    async def _finish(self, error: BaseException | None) -> None:
        if self.closed.done():
            return
        self.closed.set_result(None)
        self._closing = True
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
        with contextlib.suppress(Exception):
            await self._close_socket()
        if self._protocol is not None:
            self._protocol.connection_lost(error if isinstance(error, Exception) else None)


class Tunnel:
    """What asyncssh takes as `tunnel=`: its connection made over the WebSocket."""

    def __init__(self, transport: WebSocketTransport) -> None:
        self.transport = transport

    async def create_connection(
        self, session_factory: Callable[[], asyncio.Protocol], _host: str, _port: int
    ) -> tuple[asyncio.Transport, asyncio.Protocol]:
        protocol = session_factory()
        self.transport.start(protocol)
        return self.transport, protocol
