"""A registry v2 client: manifest digests by HEAD, tag lists; the bearer-token flow,
Basic credentials, and an HTTPS-to-HTTP fallback for registries the engine treats as
insecure.

httpx's errors and the registry's statuses are classified here, where they enter, into
the error tree (`stackyard.errors`): `RegistryUnreachable` (retry later),
`RegistryDenied` (fix the credentials), `NotInRegistry`, and `RegistryError` for any
other unusable answer. Callers decide by type, never by message text."""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from stackyard.errors import NotInRegistry, RegistryDenied, RegistryError, RegistryUnreachable
from stackyard.registry.credentials import CredentialLookup, Credentials
from stackyard.registry.reference import ImageRef

__all__ = [
    "NotInRegistry",
    "RegistryClient",
    "RegistryDenied",
    "RegistryError",
    "RegistryUnreachable",
]

MANIFEST_ACCEPT = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
    ]
)
_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')


@dataclass
class _Token:
    value: str
    expires: float


#: A registry call's time limits (seconds): a registry that takes longer is reported
#: unreachable, with why, instead of holding the page that asked.
TIMEOUT = httpx.Timeout(8.0, connect=4.0)
#: The longest one registry request may take in all: a read limit alone never ends an
#: answer that drips a byte at a time.
DEADLINE = 30.0


class RegistryClient:
    def __init__(
        self,
        credentials: CredentialLookup = lambda host: None,
        insecure: Callable[[str], bool] = lambda host: False,
        timeout: httpx.Timeout = TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        deadline: float = DEADLINE,
    ) -> None:
        self._credentials = credentials
        self._insecure = insecure
        self.timeout = timeout
        self.deadline = deadline
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=True)
        self._schemes: dict[str, str] = {}
        self._tokens: dict[tuple[str, str], _Token] = {}
        self.requests = 0  # registry requests sent (token requests included)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def manifest_digest(self, ref: ImageRef) -> str:
        """The digest the registry serves for the tag now (HEAD: no pull is counted)."""
        path = f"/v2/{ref.repository}/manifests/{ref.digest or ref.tag}"
        response = await self._request(
            "HEAD", ref.api_host, path, ref.repository, {"Accept": MANIFEST_ACCEPT}
        )
        digest: str | None = response.headers.get("Docker-Content-Digest")
        if not digest:
            raise RegistryError(f"{ref.api_host} sent no Docker-Content-Digest for {ref.name}")
        return digest

    async def tags(self, host: str, repository: str, page_size: int = 1000) -> list[str]:
        """Every tag of a repository, following `Link: <...>; rel="next"` pages."""
        found: list[str] = []
        path: str | None = f"/v2/{repository}/tags/list?n={page_size}"
        while path:
            response = await self._request("GET", host, path, repository, {})
            tags = _json_object(response, f"{host}/{repository}: tag list").get("tags") or []
            if not isinstance(tags, list):
                raise RegistryError(f"{host}/{repository}: the tag list is not a list")
            found.extend(str(tag) for tag in tags)
            path = _next_link(response.headers.get("Link"), path)
        return found

    async def _request(
        self, method: str, host: str, path: str, repository: str, headers: dict[str, str]
    ) -> httpx.Response:
        scope = f"repository:{repository}:pull"
        response = await self._send(method, host, path, headers, scope)
        if response.status_code == 401:
            challenge = response.headers.get("WWW-Authenticate", "")
            auth = await self._authorize(host, challenge, scope)
            if auth:
                response = await self._send(method, host, path, {**headers, **auth}, scope)
        if response.status_code == 404:
            raise NotInRegistry(f"{host}/{repository}: not found in the registry")
        _raise_for_status(response, f"{host}/{repository}")
        return response

    async def _send(
        self, method: str, host: str, path: str, headers: dict[str, str], scope: str
    ) -> httpx.Response:
        headers = dict(headers)
        cached = self._tokens.get((host, scope)) if "Authorization" not in headers else None
        if cached and cached.expires > time.monotonic():
            headers["Authorization"] = f"Bearer {cached.value}"
        scheme = self._schemes.get(host)
        schemes = [scheme] if scheme else ["https", "http"] if self._insecure(host) else ["https"]
        last_error: Exception | None = None
        for candidate in schemes:
            try:
                self.requests += 1
                async with asyncio.timeout(self.deadline):
                    response = await self._http.request(
                        method, f"{candidate}://{host}{path}", headers=headers
                    )
            except (httpx.ReadTimeout, TimeoutError) as exc:  # no other scheme helps
                last_error = exc
                break
            except httpx.TransportError as exc:
                last_error = exc
                continue
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # e.g. too many redirects
                raise RegistryError(f"registry {host}: {exc}") from exc
            self._schemes[host] = candidate
            return response
        why = self._cause(last_error)
        raise RegistryUnreachable(f"cannot reach registry {host}: {why}") from last_error

    def _cause(self, exc: Exception | None) -> str:
        """What went wrong, also for httpx's errors whose text is empty (timeouts)."""
        if isinstance(exc, httpx.ConnectTimeout):
            return f"no connection within {self.timeout.connect:g} s"
        if isinstance(exc, httpx.ReadTimeout):
            return f"it accepted the connection but sent no answer within {self.timeout.read:g} s"
        if isinstance(exc, TimeoutError):
            return f"its answer took more than {self.deadline:g} s"
        if isinstance(exc, httpx.TimeoutException):
            return "it took too long"
        return str(exc) or type(exc).__name__

    async def _authorize(self, host: str, challenge: str, scope: str) -> dict[str, str] | None:
        kind, _, params_text = challenge.partition(" ")
        credentials = self._credentials(host)
        if kind.lower() == "basic":
            if not credentials:
                return None
            return {"Authorization": _basic(credentials)}
        if kind.lower() != "bearer":
            return None
        params = dict(_CHALLENGE_PARAM.findall(params_text))
        realm = params.get("realm")
        if not realm:
            raise RegistryError(f"{host}: bearer challenge without a realm")
        query = {"scope": params.get("scope", scope)}
        if "service" in params:
            query["service"] = params["service"]
        try:
            self.requests += 1
            response = await self._http.get(
                realm,
                params=query,
                headers={"Authorization": _basic(credentials)} if credentials else {},
            )
        except httpx.TransportError as exc:
            raise RegistryUnreachable(f"cannot reach the token service of {host}: {exc}") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a realm httpx cannot use
            raise RegistryError(f"{host}: token service: {exc}") from exc
        _raise_for_status(response, f"{host}: token service")
        if response.status_code != 200:
            raise RegistryError(f"{host}: token service answered {response.status_code}")
        body = _json_object(response, f"{host}: token service")
        token = body.get("token") or body.get("access_token")
        if not token or not isinstance(token, str):
            raise RegistryError(f"{host}: token service sent no token")
        lifetime = max(_seconds(body.get("expires_in")) - 10, 10)
        self._tokens[(host, scope)] = _Token(token, time.monotonic() + lifetime)
        return {"Authorization": f"Bearer {token}"}


def _raise_for_status(response: httpx.Response, what: str) -> None:
    """A status >= 400 as the typed error that says what the caller can do."""
    code = response.status_code
    if code in (401, 403):
        raise RegistryDenied(f"{what}: access denied ({code}); check the registry credentials")
    if code == 429 or code >= 500:
        raise RegistryUnreachable(f"{what}: registry unavailable ({code}); try again later")
    if code >= 400:
        raise RegistryError(f"{what}: registry answered {code}")


def _json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The response's JSON object; anything else is a RegistryError, never a crash."""
    try:
        body = response.json()
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RegistryError(f"{what}: the answer is not JSON") from exc
    if not isinstance(body, dict):
        raise RegistryError(f"{what}: the answer is not a JSON object")
    return body


def _seconds(value: object) -> int:
    """A token's `expires_in`; 60 when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 60
    try:
        return int(value) or 60
    except (ValueError, OverflowError):
        return 60


def _basic(credentials: Credentials) -> str:
    raw = f"{credentials[0]}:{credentials[1]}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def _next_link(header: str | None, current: str) -> str | None:
    """The path of the next page from a `Link` header (absolute or relative)."""
    match = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', header or "")
    if not match:
        return None
    return httpx.URL(f"http://registry{current}").join(match.group(1)).raw_path.decode()
