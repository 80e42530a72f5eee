"""One typed client for talking to an agent: what the central consumes itself (health,
the fleet fan-out, scheduled backups, archives pushed from the central) and the raw
streamed requests of the proxy. httpx's errors and the agent's refusals are classified
here, where they enter: offline (retry later), denied (fix the token or the pinned
certificate), or an answer the central cannot use."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import TypeAdapter

from stackyard.agents import tls
from stackyard.errors import (
    AgentDenied,
    AgentError,
    AgentUnreachable,
    Conflict,
    Invalid,
    NotFound,
    StackyardError,
)

T = TypeVar("T")

#: Each read waits at most this long: event streams send a keep-alive every 15 s.
TIMEOUT = httpx.Timeout(60.0, connect=5.0)


@dataclass(frozen=True)
class AgentTarget:
    """Where an agent is and how to trust it."""

    name: str
    url: str
    token: str
    certificate: str | None = None  # the pinned certificate (PEM)
    ca_certificate: str | None = None

    @property
    def https(self) -> bool:
        return self.url.lower().startswith("https://")


@dataclass
class AgentResponse:
    """A proxied answer whose first chunk has been read (so it did start)."""

    status_code: int
    headers: httpx.Headers
    first: bytes
    rest: AsyncIterator[bytes]
    response: httpx.Response

    async def body(self) -> AsyncIterator[bytes]:
        try:
            if self.first:
                yield self.first
            async for chunk in self.rest:
                yield chunk
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        await self.response.aclose()


#: Answers are passed on in chunks of this size (fewer, larger writes), except event
#: streams, whose every event goes on as it comes.
CHUNK = 256 * 1024


def _chunk_size(response: httpx.Response) -> int | None:
    streaming = response.headers.get("content-type", "").startswith("text/event-stream")
    return None if streaming else CHUNK


@functools.cache
def _plain_http() -> ssl.SSLContext:
    """What httpx is given for a plain-HTTP agent: never used, and shared (a context of
    its own per client would load the CA bundle for each of hundreds of agents)."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class AgentClient:
    """`start_timeout`: how long an answer may take to start (its headers and first
    chunk); once started, each read may wait up to a minute (event streams send a
    keep-alive every 15 s)."""

    def __init__(
        self, target: AgentTarget, start_timeout: float = 30.0, timeout: httpx.Timeout = TIMEOUT
    ) -> None:
        self.target = target
        self.start_timeout = start_timeout
        verify = (
            tls.client_context(target.certificate, target.ca_certificate)
            if target.https
            else _plain_http()
        )
        self._http = httpx.AsyncClient(
            base_url=target.url.rstrip("/") + "/agent",
            headers={"Authorization": f"Bearer {target.token}"},
            verify=verify,
            timeout=timeout,
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=8),
            trust_env=False,  # agents are addressed directly, never through a proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    @contextlib.contextmanager
    def _classified(self) -> Iterator[None]:
        name = self.target.name
        try:
            yield
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise AgentUnreachable(f"Agent {name!r} did not answer in time") from exc
        except httpx.TransportError as exc:
            if _cause(exc, ssl.SSLCertVerificationError) is not None:
                raise AgentDenied(
                    f"Agent {name!r} presented a TLS certificate that is not the pinned one "
                    "(or not signed by the given CA): if it was replaced on purpose, edit the "
                    "agent and pin the new one"
                ) from exc
            reason = str(exc) or type(exc).__name__
            raise AgentUnreachable(f"Agent {name!r} is unreachable: {reason}") from exc

    def _refusal(self, response: httpx.Response, body: bytes) -> StackyardError | None:
        """The error for an answer that is the agent refusing the central itself."""
        if response.status_code == 401:
            return AgentDenied(f"Agent {self.target.name!r} refused the token (401)")
        if response.status_code == 404 and not response.headers.get("content-type", "").startswith(
            "application/json"
        ):
            return AgentError(f"{self.target.url} is not a Stackyard agent (404)")
        return None

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: httpx.QueryParams | None = None,
        headers: Mapping[str, str] | None = None,
        content: AsyncIterator[bytes] | bytes | None = None,
        body: Any = None,
    ) -> AgentResponse:
        """Send a request and read the answer's first chunk: an offline agent, a refused
        token or a wrong certificate raise here, before anything is passed on."""
        request = self._http.build_request(
            method, path, params=params, headers=headers, content=content, json=body
        )
        with self._classified():
            async with asyncio.timeout(self.start_timeout):
                response = await self._http.send(request, stream=True)
                try:
                    rest = response.aiter_raw(_chunk_size(response))
                    first = await anext(rest, b"")
                except BaseException:
                    await response.aclose()
                    raise
        refusal = self._refusal(response, first)
        if refusal is not None:
            await response.aclose()
            raise refusal
        return AgentResponse(response.status_code, response.headers, first, rest, response)

    async def get(self, path: str, shape: TypeAdapter[T], **params: Any) -> T:
        """GET a JSON answer of `shape`; an error answer raises with the agent's detail."""
        answer = await self.request("GET", path, params=httpx.QueryParams(params))
        return await self.read(answer, shape)

    async def read_bytes(self, answer: AgentResponse) -> bytes:
        """The whole (small) answer; an error answer raises with the agent's detail, as
        the error its status says (404 NotFound, 409 Conflict, 400 Invalid)."""
        body = bytearray()
        with self._classified():
            async for chunk in answer.body():
                body += chunk
        if answer.status_code >= 400:
            detail = f"Agent {self.target.name!r}: {_detail(bytes(body), answer.status_code)}"
            raise _BY_STATUS.get(answer.status_code, AgentError)(detail)
        return bytes(body)

    async def read(self, answer: AgentResponse, shape: TypeAdapter[T]) -> T:
        body = await self.read_bytes(answer)
        try:
            return shape.validate_json(body)
        except ValueError as exc:
            raise AgentError(
                f"Agent {self.target.name!r} answered {answer.status_code} with a body this "
                "central cannot read"
            ) from exc


_BY_STATUS: dict[int, type[StackyardError]] = {
    400: Invalid,
    404: NotFound,
    409: Conflict,
    422: Invalid,
}


def _detail(body: bytes, status: int) -> str:
    try:
        detail = json.loads(body).get("detail")
        if isinstance(detail, str):
            return detail
    except (ValueError, AttributeError):
        pass
    return f"HTTP {status}"
