"""A registry v2 client: manifest digests by HEAD, tag lists, an image's config (its
labels) by GET of its manifests and config blob, never its layers; the bearer-token flow,
Basic credentials, an HTTPS-to-HTTP fallback for registries the engine treats as insecure,
and the rate limit a registry announces (Docker Hub's `ratelimit-*` headers).

httpx's errors and the registry's statuses are classified here, where they enter, into
the error tree (`stackyard.errors`): `RegistryUnreachable` (retry later),
`RegistryDenied` (fix the credentials), `NotInRegistry`, and `RegistryError` for any
other unusable answer. Callers decide by type, never by message text."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from stackyard.bounded import read_at_most
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
_INDEXES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
#: The largest manifest or config blob read (the engine's own limit for manifests).
DOCUMENT_LIMIT = 4 * 1024 * 1024
_LIMIT_VALUE = re.compile(r"^\s*(\d+)\s*(?:;\s*w=(\d+))?")


@dataclass(frozen=True)
class RateLimit:
    """What a registry said of its pull limit with its last answer."""

    limit: int
    remaining: int
    window_seconds: int | None


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
        #: Per registry host, the rate limit its last answer announced.
        self.limits: dict[str, RateLimit] = {}

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

    async def image_config(
        self, ref: ImageRef, reference: str, platform: tuple[str, str]
    ) -> tuple[str, dict[str, Any]]:
        """The manifest digest `reference` (a tag or digest of `ref`'s repository) names,
        and its image config for `platform` (os, architecture): the index's manifest for
        that platform and its config blob are read, the layers never. Each document is
        bounded and checked against its digest."""
        named = reference if reference.startswith("sha256:") else None
        digest, manifest = await self._document(
            ref, f"manifests/{reference}", MANIFEST_ACCEPT, named
        )
        if manifest.get("mediaType") in _INDEXES or "manifests" in manifest:
            chosen = _platform_manifest(manifest, platform)
            if chosen is None:
                raise RegistryError(f"{ref.api_host}/{ref.repository}: no image for {platform}")
            _, manifest = await self._document(ref, f"manifests/{chosen}", MANIFEST_ACCEPT, chosen)
        config = manifest.get("config")
        config_digest = config.get("digest") if isinstance(config, dict) else None
        if not isinstance(config_digest, str):
            raise RegistryError(f"{ref.api_host}/{ref.repository}: a manifest without config")
        _, body = await self._document(ref, f"blobs/{config_digest}", "*/*", config_digest)
        return digest, body

    async def _document(
        self, ref: ImageRef, path: str, accept: str, expected: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A JSON document of the repository (a manifest or a config blob), read up to
        DOCUMENT_LIMIT and checked against its digest (`expected`, the one the caller
        asked by, else the one the registry says); (digest, the object)."""
        what = f"{ref.api_host}/{ref.repository}"
        response = await self._request(
            "GET",
            ref.api_host,
            f"/v2/{ref.repository}/{path}",
            ref.repository,
            {"Accept": accept},
            DOCUMENT_LIMIT,
        )
        body = response.content
        actual = "sha256:" + hashlib.sha256(body).hexdigest()
        named = expected or response.headers.get("Docker-Content-Digest")
        if named and named.startswith("sha256:") and named != actual:
            raise RegistryError(f"{what}: the registry sent a document that is not {named}")
        try:
            document = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise RegistryError(f"{what}: a document that is not JSON") from exc
        if not isinstance(document, dict):
            raise RegistryError(f"{what}: a document that is not a JSON object")
        return named or actual, document

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
        self,
        method: str,
        host: str,
        path: str,
        repository: str,
        headers: dict[str, str],
        limit: int | None = None,
    ) -> httpx.Response:
        """The registry's answer; with `limit`, a body longer than that is refused
        without being read whole."""
        scope = f"repository:{repository}:pull"
        response = await self._send(method, host, path, headers, scope, limit)
        if response.status_code == 401:
            challenge = response.headers.get("WWW-Authenticate", "")
            auth = await self._authorize(host, challenge, scope)
            if auth:
                response = await self._send(method, host, path, {**headers, **auth}, scope, limit)
        if response.status_code == 404:
            raise NotInRegistry(f"{host}/{repository}: not found in the registry")
        _raise_for_status(response, f"{host}/{repository}")
        return response

    async def _send(
        self,
        method: str,
        host: str,
        path: str,
        headers: dict[str, str],
        scope: str,
        limit: int | None = None,
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
                    response = await self._fetch(
                        method, f"{candidate}://{host}{path}", headers, limit
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
            self._note_limit(host, response)
            return response
        why = self._cause(last_error)
        raise RegistryUnreachable(f"cannot reach registry {host}: {why}") from last_error

    async def _fetch(
        self, method: str, url: str, headers: dict[str, str], limit: int | None
    ) -> httpx.Response:
        if limit is None:
            return await self._http.request(method, url, headers=headers)
        request = self._http.build_request(method, url, headers=headers)
        response = await self._http.send(request, stream=True)
        body = await read_at_most(response, limit)
        if body is None:
            raise RegistryError(f"{url}: an answer larger than {limit} bytes")
        kept = [  # the body is decoded already
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx.Response(response.status_code, headers=kept, content=body, request=request)

    def _note_limit(self, host: str, response: httpx.Response) -> None:
        limit = _LIMIT_VALUE.match(response.headers.get("ratelimit-limit", ""))
        remaining = _LIMIT_VALUE.match(response.headers.get("ratelimit-remaining", ""))
        if limit and remaining:
            window = remaining.group(2) or limit.group(2)
            self.limits[host] = RateLimit(
                int(limit.group(1)), int(remaining.group(1)), int(window) if window else None
            )

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


def _platform_manifest(index: dict[str, Any], platform: tuple[str, str]) -> str | None:
    """The digest of the index's manifest for `platform` (os, architecture)."""
    entries = index.get("manifests")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        wanted = entry.get("platform")
        if isinstance(wanted, dict) and (wanted.get("os"), wanted.get("architecture")) == platform:
            digest = entry.get("digest")
            return digest if isinstance(digest, str) else None
    return None


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
