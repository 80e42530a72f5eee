"""A registry v2 client: manifest digests by HEAD, tag lists; the bearer-token flow,
Basic credentials, and an HTTPS-to-HTTP fallback for registries the engine treats as
insecure. httpx's errors are converted here."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from stackyard.registry.reference import ImageRef

MANIFEST_ACCEPT = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
    ]
)
_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')

Credentials = tuple[str, str]
CredentialLookup = Callable[[str], Credentials | None]


class RegistryError(Exception):
    """The registry could not answer (unreachable, refused, unexpected status)."""


class NotInRegistry(RegistryError):
    """The registry does not know this repository or tag."""


@dataclass
class _Token:
    value: str
    expires: float


class RegistryClient:
    def __init__(
        self,
        credentials: CredentialLookup = lambda host: None,
        insecure: Callable[[str], bool] = lambda host: False,
        timeout: float = 15.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._credentials = credentials
        self._insecure = insecure
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=True)
        self._schemes: dict[str, str] = {}
        self._tokens: dict[tuple[str, str], _Token] = {}
        self.requests = 0  # registry requests sent (token requests included)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def manifest_digest(self, ref: ImageRef) -> str:
        """The digest the registry serves for the tag now (HEAD: no pull is counted)."""
        path = f"/v2/{ref.repository}/manifests/{ref.digest or ref.tag}"
        response = await self._request(
            "HEAD", ref.api_host, path, ref.repository, {"Accept": MANIFEST_ACCEPT}
        )
        digest = response.headers.get("Docker-Content-Digest")
        if not digest:
            raise RegistryError(f"{ref.api_host} sent no Docker-Content-Digest for {ref.name}")
        return digest

    async def tags(self, host: str, repository: str, page_size: int = 1000) -> list[str]:
        """Every tag of a repository, following `Link: <...>; rel="next"` pages."""
        found: list[str] = []
        path: str | None = f"/v2/{repository}/tags/list?n={page_size}"
        while path:
            response = await self._request("GET", host, path, repository, {})
            found.extend(response.json().get("tags") or [])
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
        if response.status_code in (401, 403):
            raise RegistryError(f"{host}/{repository}: access denied ({response.status_code})")
        if response.status_code >= 400:
            raise RegistryError(f"{host}/{repository}: registry answered {response.status_code}")
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
                response = await self._http.request(
                    method, f"{candidate}://{host}{path}", headers=headers
                )
            except httpx.TransportError as exc:
                last_error = exc
                continue
            self._schemes[host] = candidate
            return response
        raise RegistryError(f"cannot reach registry {host}: {last_error}") from last_error

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
            raise RegistryError(f"cannot reach the token service of {host}: {exc}") from exc
        if response.status_code != 200:
            raise RegistryError(f"{host}: token service answered {response.status_code}")
        body = response.json()
        token = body.get("token") or body.get("access_token")
        if not token:
            raise RegistryError(f"{host}: token service sent no token")
        lifetime = max(int(body.get("expires_in") or 60) - 10, 10)
        self._tokens[(host, scope)] = _Token(token, time.monotonic() + lifetime)
        return {"Authorization": f"Bearer {token}"}


def _basic(credentials: Credentials) -> str:
    raw = f"{credentials[0]}:{credentials[1]}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def _next_link(header: str | None, current: str) -> str | None:
    """The path of the next page from a `Link` header (absolute or relative)."""
    match = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', header or "")
    if not match:
        return None
    return httpx.URL(f"http://registry{current}").join(match.group(1)).raw_path.decode()
