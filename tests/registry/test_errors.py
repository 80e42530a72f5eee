"""Registry failures are classified where httpx's errors and statuses enter the client:
what the caller can do (retry later, fix the credentials) is in the type, never in the
message text. No registry needed: httpx's MockTransport answers, and real listeners on
loopback stay silent or drip."""

import asyncio
import contextlib
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from stackyard import errors
from stackyard.api.errors import status_of
from stackyard.registry.client import RegistryClient
from stackyard.registry.digests import DigestSnapshot, RemoteDigest
from stackyard.registry.reference import parse_reference
from stackyard.stacks import lookups
from tests.support.peers import silent_listener

DIGEST = "sha256:" + "a" * 64
REALM = "https://auth.example/token"


def client_for(handler, **kwargs) -> RegistryClient:
    return RegistryClient(transport=httpx.MockTransport(handler), **kwargs)


def digest(handler, ref="reg.example/team/app:1", **kwargs) -> str:
    async def go():
        async with client_for(handler, **kwargs) as client:
            return await client.manifest_digest(parse_reference(ref))

    return asyncio.run(go())


def challenge() -> httpx.Response:
    return httpx.Response(
        401, headers={"WWW-Authenticate": f'Bearer realm="{REALM}",service="reg.example"'}
    )


def test_the_registry_errors_are_part_of_the_error_tree():
    for cls in (errors.RegistryUnreachable, errors.RegistryDenied, errors.NotInRegistry):
        assert issubclass(cls, errors.RegistryError)
    assert issubclass(errors.RegistryError, errors.StackyardError)
    # The client's names are the tree's (tests and callers may import either).
    from stackyard.registry import client

    assert client.RegistryError is errors.RegistryError
    assert client.NotInRegistry is errors.NotInRegistry


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.RegistryUnreachable("x"), 503),
        (errors.RegistryDenied("x"), 502),
        (errors.RegistryError("x"), 502),
        (errors.NotInRegistry("x"), 404),
    ],
)
def test_registry_errors_map_to_gateway_statuses(error, status):
    assert status_of(error) == status


def test_a_connect_error_is_unreachable():
    def handler(request):
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(errors.RegistryUnreachable, match=r"cannot reach registry reg\.example"):
        digest(handler)


def test_a_timeout_is_unreachable():
    def handler(request):
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(errors.RegistryUnreachable):
        digest(handler)


def test_a_registry_that_accepts_and_never_answers_is_unreachable_with_why():
    """A real listener on loopback that accepts and stays silent: the call ends at its
    read limit (once, not once per scheme) and says what happened."""
    timeout = httpx.Timeout(1.0, connect=1.0)

    async def go(host: str):
        async with RegistryClient(insecure=lambda h: True, timeout=timeout) as client:
            return await client.manifest_digest(parse_reference(f"{host}/team/app:1"))

    with silent_listener() as host:
        began = time.monotonic()
        with pytest.raises(errors.RegistryUnreachable) as raised:
            asyncio.run(go(host))
        took = time.monotonic() - began
    assert raised.value.detail == (
        f"cannot reach registry {host}: it accepted the connection but sent no answer within 1 s"
    )
    assert took < 10  # its limits (1 s each), never the old 15 s per scheme


def test_a_registry_that_drips_its_answer_is_unreachable_at_the_deadline():
    """A real server on loopback that sends its headers, then a byte of the tag list
    every 0.2 s: each read is quick, the answer never ends; the call ends at its deadline."""

    class Dripping(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(100):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_port}"

    async def go():
        async with RegistryClient(insecure=lambda h: True, deadline=1.5) as client:
            return await client.tags(host, "team/app")

    try:
        with pytest.raises(errors.RegistryUnreachable) as raised:
            asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()
    assert raised.value.detail == (f"cannot reach registry {host}: its answer took more than 1.5 s")


@pytest.mark.parametrize("code", [429, 500, 502, 503, 504])
def test_overloaded_or_failing_registries_are_unreachable(code):
    with pytest.raises(errors.RegistryUnreachable, match=str(code)):
        digest(lambda request: httpx.Response(code))


@pytest.mark.parametrize("code", [401, 403])
def test_refused_credentials_are_denied(code):
    with pytest.raises(errors.RegistryDenied, match="credentials"):
        digest(lambda request: httpx.Response(code))


def test_an_unknown_tag_is_not_in_registry():
    with pytest.raises(errors.NotInRegistry):
        digest(lambda request: httpx.Response(404))


def test_other_statuses_are_plain_registry_errors():
    with pytest.raises(errors.RegistryError) as caught:
        digest(lambda request: httpx.Response(418))
    assert type(caught.value) is errors.RegistryError


def test_the_token_service_refusing_is_denied():
    def handler(request):
        if request.url.host == "auth.example":
            return httpx.Response(401, json={"errors": []})
        return challenge()

    with pytest.raises(errors.RegistryDenied):
        digest(handler, credentials=lambda host: ("bot", "wrong"))


def test_an_unreachable_token_service_is_unreachable():
    def handler(request):
        if request.url.host == "auth.example":
            raise httpx.ConnectError("refused", request=request)
        return challenge()

    with pytest.raises(errors.RegistryUnreachable, match="token service"):
        digest(handler)


@pytest.mark.parametrize(
    "body",
    [b"<html>login page</html>", b"[1, 2]", b'{"token": 42}', b"\xff\xfe"],
    ids=["html", "list", "token-not-a-string", "not-utf8"],
)
def test_a_token_service_answer_that_is_not_a_token_is_a_registry_error(body):
    """Not a 500: a RegistryError (which the API maps to 502), with the cause chained."""

    def handler(request):
        if request.url.host == "auth.example":
            return httpx.Response(200, content=body)
        return challenge()

    with pytest.raises(errors.RegistryError, match="token service"):
        digest(handler)


def test_a_token_with_a_strange_lifetime_still_works():
    def handler(request):
        if request.url.host == "auth.example":
            return httpx.Response(200, json={"token": "t", "expires_in": "soon"})
        if request.headers.get("Authorization") == "Bearer t":
            return httpx.Response(200, headers={"Docker-Content-Digest": DIGEST})
        return challenge()

    assert digest(handler) == DIGEST


def test_a_tag_list_that_is_not_json_is_a_registry_error():
    async def go():
        async with client_for(lambda request: httpx.Response(200, content=b"nope")) as client:
            return await client.tags("reg.example", "team/app")

    with pytest.raises(errors.RegistryError, match="not JSON"):
        asyncio.run(go())


def remote(handler, refs: list[str], monkeypatch) -> tuple[dict[str, RemoteDigest], list[str]]:
    monkeypatch.setattr(lookups, "CONCURRENCY", 1)  # one at a time: a deterministic order
    asked: list[str] = []

    def counting(request):
        asked.append(request.url.path)
        return handler(request)

    async def go() -> dict[str, RemoteDigest]:
        async with client_for(counting) as client:
            lookup = lookups.RegistryPass(client, DigestSnapshot(), datetime.now(UTC))
            await lookup.digests([parse_reference(r) for r in refs])
            return lookup.remote

    return asyncio.run(go()), asked


def test_an_unreachable_registry_is_asked_once_per_pass_whatever_the_message(monkeypatch):
    """A 503's message does not start with "cannot reach": the type decides."""
    refs = ["reg.example/a:1", "reg.example/b:1", "reg.example/c:1"]
    results, asked = remote(lambda request: httpx.Response(503), refs, monkeypatch)
    assert len(asked) == 1
    assert {r.status for r in results.values()} == {"error"}
    assert all("503" in (r.error or "") for r in results.values())


def test_denied_images_do_not_mark_the_registry_down(monkeypatch):
    """Credentials can differ per repository: each image is still asked."""
    refs = ["reg.example/a:1", "reg.example/b:1"]
    results, asked = remote(lambda request: httpx.Response(403), refs, monkeypatch)
    assert len(asked) == 2
    assert all("credentials" in (r.error or "") for r in results.values())
