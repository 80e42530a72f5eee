"""The identity provider as a peer on the network: its discovery document, its keys, its
token and userinfo endpoints. Every answer is hostile until checked: bounded in size,
JSON objects only, and errors classified here (unreachable: retry later; anything else:
`ProviderError` naming what was wrong).

The discovery document is asked for by every sign-in that begins, which anyone may begin:
it is kept for `DISCOVERY_SECONDS` (and fetched once for every sign-in that waits on it
meanwhile); a failure to get it is said again for `FAILURE_SECONDS` without asking, so
that a provider that is down is said to be down at once, and soon asked again."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from stackyard.bounded import read_at_most
from stackyard.connection import why_not_connected
from stackyard.errors import ProviderError, ProviderUnreachable
from stackyard.jsonmodel import parse_json

if TYPE_CHECKING:
    import httpx

#: Seconds to connect and to wait for an answer: a sign-in waits on them.
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 10.0
#: The largest answer read (a discovery document or a key set is a few KiB).
MAX_ANSWER = 1024 * 1024
#: Seconds a discovery document is used before it is fetched again.
DISCOVERY_SECONDS = 60.0
#: Seconds a failure to fetch it is said again without asking.
FAILURE_SECONDS = 5.0


@dataclass(frozen=True)
class Endpoints:
    """What the discovery document says, checked."""

    issuer: str
    authorization: str
    token: str
    jwks_uri: str
    userinfo: str | None
    end_session: str | None
    #: How the client proves itself at the token endpoint (`client_secret_basic` unless
    #: the provider offers only `client_secret_post`).
    client_auth: str


def check_url(url: str, what: str) -> str:
    """https, or http to a loopback address (a provider on the same machine)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and _loopback(parts.hostname):
        return url
    raise ProviderError(f"{what} must be an https:// address (http only to this machine): {url}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Peer:
    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None
        #: By issuer: until when (monotonic), and the endpoints or why there are none.
        self._discovered: dict[str, tuple[float, Endpoints | ProviderError]] = {}
        self._discovering = asyncio.Lock()

    @property
    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
                follow_redirects=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    def forget(self) -> None:
        """Fetch the discovery document again next time (the set-up changed)."""
        self._discovered.clear()

    async def discover(self, issuer: str) -> Endpoints:
        """The provider's endpoints, from its discovery document as lately fetched."""
        found = self._known(issuer)
        if found is None:
            async with self._discovering:
                found = self._known(issuer)
                if found is None:
                    try:
                        found = await self._discover(issuer)
                    except ProviderError as exc:
                        found = exc
                    keep = DISCOVERY_SECONDS if isinstance(found, Endpoints) else FAILURE_SECONDS
                    self._discovered[issuer] = (time.monotonic() + keep, found)
        if isinstance(found, ProviderError):
            raise type(found)(found.detail)
        return found

    async def check(self, issuer: str) -> Endpoints:
        """The provider's endpoints from its discovery document fetched now (not kept): a
        set-up about to be saved, or tested."""
        return await self._discover(issuer)

    def _known(self, issuer: str) -> Endpoints | ProviderError | None:
        until, found = self._discovered.get(issuer, (0.0, None))
        return found if time.monotonic() < until else None

    async def _discover(self, issuer: str) -> Endpoints:
        url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
        doc = await self._json("GET", url)
        if doc.get("issuer") != issuer:
            raise ProviderError(
                f"the provider calls itself {str(doc.get('issuer'))[:200]!r}, not {issuer!r}: "
                "set the issuer exactly as its discovery document says it"
            )
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        post_only = "client_secret_basic" not in methods and "client_secret_post" in methods
        return Endpoints(
            issuer=issuer,
            authorization=check_url(_text(doc, "authorization_endpoint"), "authorization_endpoint"),
            token=check_url(_text(doc, "token_endpoint"), "token_endpoint"),
            jwks_uri=check_url(_text(doc, "jwks_uri"), "jwks_uri"),
            userinfo=_optional_url(doc, "userinfo_endpoint"),
            end_session=_optional_url(doc, "end_session_endpoint"),
            client_auth="client_secret_post" if post_only else "client_secret_basic",
        )

    async def keys(self, endpoints: Endpoints) -> dict[str, Any]:
        doc = await self._json("GET", endpoints.jwks_uri)
        if not isinstance(doc.get("keys"), list):
            raise ProviderError("the provider's key set has no keys")
        return doc

    async def exchange(
        self,
        endpoints: Endpoints,
        client_id: str,
        client_secret: str,
        code: str,
        verifier: str,
        redirect_uri: str,
    ) -> dict[str, Any]:
        """The authorization code for tokens (with the PKCE verifier)."""
        import httpx

        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        auth: httpx.BasicAuth | None = None
        if endpoints.client_auth == "client_secret_post":
            form |= {"client_id": client_id, "client_secret": client_secret}
        else:
            auth = httpx.BasicAuth(_form_encode(client_id), _form_encode(client_secret))
        return await self._json("POST", endpoints.token, auth, data=form)

    async def userinfo(self, endpoints: Endpoints, access_token: str) -> dict[str, Any]:
        assert endpoints.userinfo is not None
        headers = {"Authorization": f"Bearer {access_token}"}
        return await self._json("GET", endpoints.userinfo, headers=headers)

    async def _json(
        self, method: str, url: str, auth: httpx.Auth | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        import httpx

        where = urlsplit(url).netloc
        try:
            request = self._http.build_request(method, url, **kwargs)
            response = await self._http.send(request, auth=auth, stream=True)
            body = await read_at_most(response, MAX_ANSWER)
        except httpx.TimeoutException as exc:
            raise ProviderUnreachable(
                f"the identity provider at {where} did not answer within {READ_TIMEOUT:g} s"
            ) from exc
        except httpx.TransportError as exc:
            split = urlsplit(url)
            port = split.port or {"http": 80, "https": 443}.get(split.scheme)
            why = why_not_connected(exc, split.hostname, port)
            raise ProviderUnreachable(
                f"the identity provider at {where} cannot be reached: {why}"
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"the identity provider at {where}: {exc}") from exc
        if body is None:
            raise ProviderError(f"the provider at {where} answered more than {MAX_ANSWER} bytes")
        try:
            doc = parse_json(body)
        except ValueError:
            doc = None
        if response.status_code >= 500:
            raise ProviderUnreachable(
                f"the identity provider at {where} failed (HTTP {response.status_code})"
            )
        if not isinstance(doc, dict):
            raise ProviderError(
                f"the identity provider at {where} answered HTTP {response.status_code} "
                "without a JSON object"
            )
        if response.status_code != 200:
            said = doc.get("error_description") or doc.get("error") or "no reason given"
            raise ProviderError(
                f"the identity provider refused (HTTP {response.status_code}): {str(said)[:300]}"
            )
        return doc


def _text(doc: dict[str, Any], name: str) -> str:
    value = doc.get(name)
    if not isinstance(value, str) or not value:
        raise ProviderError(f"the provider's discovery document has no {name}")
    return value


def _optional_url(doc: dict[str, Any], name: str) -> str | None:
    return check_url(_text(doc, name), name) if doc.get(name) else None


def _form_encode(value: str) -> str:
    """RFC 6749 2.3.1: the client id and secret are form-encoded before Basic auth."""
    from urllib.parse import quote_plus

    return quote_plus(value)
