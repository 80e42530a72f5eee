"""An HTTP CONNECT proxy on loopback, as a company's outbound proxy is: it opens the
tunnel a client asks for (`CONNECT host:port`) and carries bytes both ways; it notes
every target asked for. Nothing else (no plain proxying)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class ConnectProxy:
    port: int = 0
    targets: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.close()


@contextlib.contextmanager
def connect_proxy() -> Iterator[ConnectProxy]:
    """The proxy, serving in a thread of its own until the block ends; then closed with
    every tunnel it carries."""
    proxy = ConnectProxy()
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            return
        proxy.targets.append(target)
        host, _, port = target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        try:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await carry(reader, writer)
        except asyncio.CancelledError:
            # The proxy closing: ended here, not raised (asyncio's stream server in 3.11
            # asks a handler's task for its exception, which a cancelled one raises).
            pass
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # (a client gone, or no request: nothing to carry)
        finally:
            writer.close()

    async def serve() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        proxy.port = sock.getsockname()[1]
        server = await asyncio.start_server(handle, sock=sock)
        ready.set()
        try:
            await asyncio.Event().wait()  # (until cancelled: the block ended)
        finally:
            server.close()
            carried = asyncio.all_tasks() - {asyncio.current_task()}
            for task in carried:
                task.cancel()
            await asyncio.gather(*carried, return_exceptions=True)
            await server.wait_closed()

    main = loop.create_task(serve())

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main)
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield proxy
    finally:
        loop.call_soon_threadsafe(main.cancel)
        thread.join(5)
