"""The Engine API's long streams (container logs, resource use, events), read
asynchronously with aiohttp over the engine's own address.

The Docker SDK reads streams in blocking calls: a log view followed for an hour would
hold a thread for that hour, and closing the page could not interrupt it. Here a stream
is an async iterator over one HTTP response: cancelling it (the client went away) closes
the connection at once, and a slow reader slows the engine down instead of buffering
(nothing but what was received and not yet read is held). Errors are classified where
they enter: `Unavailable` (the engine cannot be reached), `NotFound` (no such container).

aiohttp rather than httpx, for the same reason as the agents' client: the engine sends a
followed log as one HTTP chunk a line, and httpx parses each in Python (h11), 60 % of
the service's CPU while it followed 10,000 lines a second; aiohttp's parser is compiled
and hands over all that arrived at once (`iter_any`). The requests are HTTP/1.0, so the
engine answers without chunked encoding: over HTTP/1.1 each of those chunks still cost a
call into Python (aiohttp's stream reader is Python), a third of what reading a followed
log cost; now the body is the bytes as they come, and it ends when the engine closes
the connection (which a stream's end does anyway: a connection is not reused).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from stackyard.docker.frames import Frame, StreamName, split
from stackyard.errors import Invalid, NotFound, Unavailable

DEFAULT_SOCKET = "/var/run/docker.sock"
#: No read limit: a followed log is quiet for as long as the container is.
TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10.0, sock_connect=10.0, sock_read=None)


def _connector(docker_host: str | None) -> tuple[aiohttp.BaseConnector, str]:
    """The connector and base URL for DOCKER_HOST (unix socket or plain tcp)."""
    address = docker_host or os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"
    parts = urlsplit(address)
    if parts.scheme == "unix":
        return aiohttp.UnixConnector(path=parts.path or DEFAULT_SOCKET), "http://docker"
    if parts.scheme in ("tcp", "http"):
        if os.environ.get("DOCKER_TLS_VERIFY"):
            raise Unavailable("Streams from a TLS-protected Docker address are not supported")
        return aiohttp.TCPConnector(), f"http://{parts.netloc}"
    raise Unavailable(f"Unsupported Docker address for streams: {parts.scheme}://")


class EngineStreams:
    """One async HTTP client to the engine, for streams (made again in another event
    loop: its connections belong to the loop they were made in); `aclose` when done."""

    def __init__(self, docker_host: str | None = None) -> None:
        self.docker_host = docker_host
        self._session: aiohttp.ClientSession | None = None
        self._base = ""

    def _http(self) -> aiohttp.ClientSession:
        session = self._session
        if session is None or session.closed or session.loop is not asyncio.get_running_loop():
            connector, self._base = _connector(self.docker_host)
            session = self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=TIMEOUT,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                version=aiohttp.HttpVersion10,  # (no chunked encoding: see the module)
                trust_env=False,  # the engine is addressed directly, never through a proxy
            )
        return session

    async def aclose(self) -> None:
        if self._session is not None and self._session.loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None

    @asynccontextmanager
    async def _stream(
        self, path: str, params: Mapping[str, str], what: str
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        session = self._http()
        try:
            response = await session.get(self._base + path, params=params)
        except aiohttp.ClientError as exc:
            raise _unreachable(exc, what) from exc
        try:
            if response.status >= 400:
                body = (await response.read()).decode(errors="replace")
                _refused(response.status, body, what)
            yield response
        except aiohttp.ClientError as exc:
            raise _unreachable(exc, what) from exc
        finally:
            # Closed at once, also while the reader is being cancelled (the client went
            # away): the engine stops writing into the connection.
            response.close()

    async def inspect(self, container_id: str) -> dict[str, Any]:
        what = f"Container {container_id[:12]}"
        async with self._stream(f"/containers/{container_id}/json", {}, what) as response:
            try:
                return dict(json.loads(await response.read()))
            except aiohttp.ClientError as exc:
                raise _unreachable(exc, what) from exc

    async def logs(
        self,
        container_id: str,
        *,
        tty: bool,
        follow: bool,
        tail: int | None = None,
        since: str | None = None,
        only: StreamName | None = None,
    ) -> AsyncIterator[list[Frame]]:
        """The container's output with timestamps: frames (for a container without a
        terminal, the log entries that came together on one stream, joined; raw chunks
        with one), all that arrived together at once; `only` one of its streams (each
        stream's times count up, the two together need not)."""
        params = {
            "stdout": "0" if only == "stderr" else "1",
            "stderr": "0" if only == "stdout" else "1",
            "timestamps": "1",
            "follow": "1" if follow else "0",
        }
        params["tail"] = "all" if tail is None else str(tail)
        if since is not None:
            params["since"] = since
        async with self._stream(f"/containers/{container_id}/logs", params, "Logs") as response:
            pending = bytearray()
            async for chunk in response.content.iter_any():  # all that came, at once
                if tty:
                    yield [Frame("stdout", chunk)]
                    continue
                pending += chunk
                if frames := split(pending):
                    yield frames

    async def stats(self, container_id: str) -> AsyncIterator[dict[str, Any]]:
        """The container's resource use, one sample a second, until it stops."""
        async with self._stream(
            f"/containers/{container_id}/stats", {"stream": "1"}, "Stats"
        ) as response:
            async for line in response.content:
                if line.strip():
                    yield json.loads(line)

    async def events(
        self, filters: Mapping[str, list[str]], listening: asyncio.Event | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The engine's events matching `filters`, from now on; `listening` is set once
        the engine has answered (events from then on are not missed)."""
        params = {"filters": json.dumps(dict(filters))}
        async with self._stream("/events", params, "Events") as response:
            if listening is not None:
                listening.set()
            async for line in response.content:
                if line.strip():
                    yield json.loads(line)


def _unreachable(exc: aiohttp.ClientError, what: str) -> Unavailable:
    return Unavailable(f"{what}: cannot reach the Docker engine ({type(exc).__name__})")


def _refused(status: int, body: str, what: str) -> None:
    """Raise the error for an engine's refusal (status >= 400)."""
    message = _message(body)
    if status == 404:
        raise NotFound(f"{what}: no such container")
    if status == 400:
        raise Invalid(f"{what}: {message}")
    raise Unavailable(f"{what}: the engine answered {status}: {message}")


def _message(body: str) -> str:
    try:
        return str(json.loads(body).get("message") or body).strip()
    except (ValueError, AttributeError):
        return body.strip()[:300]
