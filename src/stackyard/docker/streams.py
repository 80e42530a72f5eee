"""The Engine API's long streams (container logs, resource use, events), read
asynchronously with httpx over the engine's own address.

The Docker SDK reads streams in blocking calls: a log view followed for an hour would
hold a thread for that hour, and closing the page could not interrupt it. Here a stream
is an async iterator over one HTTP response: cancelling it (the client went away) closes
the connection at once, and a slow reader slows the engine down instead of buffering
(nothing but the chunk in hand is held). Errors are classified where they enter:
`Unavailable` (the engine cannot be reached), `NotFound` (no such container).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx

from stackyard.docker.frames import Frame, StreamName, split
from stackyard.errors import Invalid, NotFound, Unavailable
from stackyard.uncancellable import to_the_end

DEFAULT_SOCKET = "/var/run/docker.sock"


def _transport(docker_host: str | None) -> tuple[httpx.AsyncBaseTransport, str]:
    """The transport and base URL for DOCKER_HOST (unix socket or plain tcp)."""
    address = docker_host or os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"
    parts = urlsplit(address)
    if parts.scheme == "unix":
        return httpx.AsyncHTTPTransport(uds=parts.path or DEFAULT_SOCKET), "http://docker"
    if parts.scheme in ("tcp", "http"):
        if os.environ.get("DOCKER_TLS_VERIFY"):
            raise Unavailable("Streams from a TLS-protected Docker address are not supported")
        return httpx.AsyncHTTPTransport(), f"http://{parts.netloc}"
    raise Unavailable(f"Unsupported Docker address for streams: {parts.scheme}://")


class EngineStreams:
    """One async HTTP client to the engine, for streams; `aclose` when done."""

    def __init__(self, docker_host: str | None = None) -> None:
        self.docker_host = docker_host
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            transport, base = _transport(self.docker_host)
            # No read timeout: a followed log is quiet for as long as the container is.
            timeout = httpx.Timeout(10.0, read=None)
            self._client = httpx.AsyncClient(transport=transport, base_url=base, timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @asynccontextmanager
    async def _stream(
        self, path: str, params: Mapping[str, str], what: str
    ) -> AsyncIterator[httpx.Response]:
        client = self._http()
        try:
            response = await client.send(
                client.build_request("GET", path, params=params), stream=True
            )
        except httpx.HTTPError as exc:
            raise _unreachable(exc, what) from exc
        try:
            if response.status_code >= 400:
                body = (await response.aread()).decode(errors="replace")
                _refused(response.status_code, body, what)
            yield response
        except httpx.HTTPError as exc:
            raise _unreachable(exc, what) from exc
        finally:
            # Closed even while the reader is being cancelled (the client went away):
            # interrupted, the close would leave the engine writing into the connection.
            await to_the_end(response.aclose())

    async def inspect(self, container_id: str) -> dict[str, Any]:
        what = f"Container {container_id[:12]}"
        try:
            response = await self._http().get(f"/containers/{container_id}/json")
        except httpx.HTTPError as exc:
            raise _unreachable(exc, what) from exc
        if response.status_code >= 400:
            _refused(response.status_code, response.text, what)
        return dict(response.json())

    async def logs(
        self,
        container_id: str,
        *,
        tty: bool,
        follow: bool,
        tail: int | None = None,
        since: str | None = None,
        only: StreamName | None = None,
    ) -> AsyncIterator[Frame]:
        """The container's output with timestamps: frames as the engine sends them (one
        log entry each for a container without a terminal; raw chunks with one); `only`
        one of its streams (each stream's times count up, the two together need not)."""
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
            chunks = response.aiter_raw()  # as received (a chunk size would wait to fill it)
            if tty:
                async for chunk in chunks:
                    yield Frame("stdout", chunk)
                return
            async for frame in _demultiplex(chunks):
                yield frame

    async def stats(self, container_id: str) -> AsyncIterator[dict[str, Any]]:
        """The container's resource use, one sample a second, until it stops."""
        async with self._stream(
            f"/containers/{container_id}/stats", {"stream": "1"}, "Stats"
        ) as response:
            async for line in response.aiter_lines():
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
            async for line in response.aiter_lines():
                if line.strip():
                    yield json.loads(line)


def _unreachable(exc: httpx.HTTPError, what: str) -> Unavailable:
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


async def _demultiplex(chunks: AsyncIterator[bytes]) -> AsyncIterator[Frame]:
    """The engine's multiplexed stream as frames; nothing but a partial frame is kept."""
    pending = bytearray()
    async for chunk in chunks:
        pending += chunk
        for frame in split(pending):
            yield frame
