"""A provider that hands out forged ID tokens (`forged_provider`), and callbacks an
attacker makes up: every check an ID token and a callback must pass, each refused with
its reason (the browser gets a code the sign-in page has a message for; the reason is in
the audit log, or for a start, in the service's log), nobody signed in."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import pytest
from joserfc.jwk import OctKey, RSAKey

from tests.support.forged_provider import ForgedProvider
from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    ServerProcess,
    service_env,
    sign_in,
    start_server,
)
from tests.support.waiting import wait_until


def _relying_party(tmp_path: Path, provider: ForgedProvider) -> ServerProcess:
    (tmp_path / "stacks").mkdir()
    env = service_env(
        tmp_path,
        STACKYARD_OIDC_ISSUER=provider.issuer,
        STACKYARD_OIDC_CLIENT_ID=provider.client_id,
        STACKYARD_OIDC_CLIENT_SECRET=provider.client_secret,
        STACKYARD_OIDC_NAME="Forged",
        STACKYARD_OIDC_ROLES="admins=admin",
    )
    return start_server(tmp_path, env=env)


@pytest.fixture(scope="module")
def service(tmp_path_factory, forged_provider: ForgedProvider) -> Iterator[ServerProcess]:
    server = _relying_party(tmp_path_factory.mktemp("rp"), forged_provider)
    yield server
    server.stop()


@pytest.fixture
def fresh_service(tmp_path: Path, forged_provider: ForgedProvider) -> Iterator[ServerProcess]:
    """A service of the test's own, for a discovery document the test changes first (a
    service keeps the one it read for a minute)."""
    server = _relying_party(tmp_path, forged_provider)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(service: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


@pytest.fixture(autouse=True)
def _honest(forged_provider: ForgedProvider) -> None:
    forged_provider.tamper = lambda claims: claims
    forged_provider.sign_with = None
    forged_provider.algorithm = "RS256"
    forged_provider.discovery = {}


def sign_in_there(service: ServerProcess) -> tuple[httpx.Client, httpx.Response]:
    """A browser goes to the provider (which signs it in at once) and back: the client
    and the callback's answer."""
    client = httpx.Client(base_url=service.url, timeout=ANSWER_WITHIN)
    start = client.get("/api/auth/oidc/start", follow_redirects=False)
    assert start.status_code == 303, start.text
    at_provider = client.get(start.headers["location"], follow_redirects=False)
    return client, client.get(at_provider.headers["location"], follow_redirects=False)


def refusal(done: httpx.Response) -> str:
    """The code the browser is sent back to the sign-in page with."""
    location = urlsplit(done.headers["location"])
    assert (done.status_code, location.path) == (303, "/login"), done.headers["location"]
    assert "stackyard_session" not in done.headers.get("set-cookie", "")
    [code] = parse_qs(location.query)["error"]
    assert code.isidentifier() and code == unquote(code), code
    return code


def reason(admin: httpx.Client) -> str:
    """Why the last sign-in at the provider was refused, as the audit log has it."""
    items = admin.get("/api/audit", params={"limit": 20}).json()["items"]
    last = next(e for e in items if e["action"] == "auth.sign_in")
    assert last["outcome"] == "failure", last
    return last["detail"].removeprefix("Forged: ")


def test_an_honest_token_signs_in(service):
    client, done = sign_in_there(service)
    with closing(client):
        assert done.headers["location"] == "/"
        assert client.get("/api/auth/me").json()["role"] == "admin"


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda c: c | {"aud": "another-client"}, "aud"),
        (lambda c: c | {"aud": ["stackyard", "another"]}, "another client (azp)"),
        (lambda c: c | {"iss": "http://127.0.0.1:1"}, "iss"),
        (lambda c: c | {"exp": int(time.time()) - 3600}, "expired"),
        (lambda c: c | {"iat": int(time.time()) + 3600}, "future"),
        (lambda c: c | {"iat": int(time.time()) - 7200}, "too long ago"),
        (lambda c: c | {"nonce": "not-this-sign-in"}, "nonce"),
        (lambda c: {k: v for k, v in c.items() if k != "nonce"}, "nonce"),
        (lambda c: {k: v for k, v in c.items() if k != "sub"}, "sub"),
    ],
    ids=["wrong-aud", "several-aud", "wrong-iss", "expired", "iat-future", "too-old",
         "other-nonce", "no-nonce", "no-sub"],
)  # fmt: skip
def test_a_token_that_fails_a_check_is_refused(service, admin, forged_provider, tamper, why):
    forged_provider.tamper = tamper
    client, done = sign_in_there(service)
    with closing(client):
        assert refusal(done) == "provider_error"
        said = reason(admin)
        assert said.startswith("the ID token is refused") and why in said, said
        assert client.get("/api/auth/me").status_code == 401


def test_a_token_signed_by_a_key_the_provider_does_not_publish_is_refused(
    service, admin, forged_provider
):
    forged_provider.sign_with = RSAKey.generate_key(2048, {"kid": "good"})  # its kid, too
    client, done = sign_in_there(service)
    with closing(client):
        assert refusal(done) == "provider_error"
        assert "signature does not verify" in reason(admin)


def test_a_token_signed_with_the_client_secret_is_refused(service, admin, forged_provider):
    # Key confusion: HS256 with a secret the attacker may know (the client secret).
    forged_provider.sign_with = OctKey.import_key(forged_provider.client_secret)
    forged_provider.algorithm = "HS256"
    client, done = sign_in_there(service)
    with closing(client):
        assert refusal(done) == "provider_error"
        assert "signature does not verify" in reason(admin)


def test_a_token_from_an_earlier_sign_in_is_refused(service, admin, forged_provider):
    client, _ = sign_in_there(service)
    client.close()
    earlier = forged_provider.issued[-1]
    forged_provider.tamper = lambda claims: dict(_claims_of(earlier))  # its nonce, replayed
    client, done = sign_in_there(service)
    with closing(client):
        assert refusal(done) == "provider_error"
        assert "nonce" in reason(admin)


def _claims_of(token: str) -> dict:
    import base64
    import json

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_callbacks_without_state_from_another_browser_or_replayed_are_refused(
    service, admin, forged_provider
):
    with httpx.Client(base_url=service.url) as client:
        start = client.get("/api/auth/oidc/start", follow_redirects=False)
        back = client.get(start.headers["location"], follow_redirects=False).headers["location"]
        query = parse_qs(urlsplit(back).query)
        code = query["code"][0]
        with httpx.Client(base_url=service.url) as other:  # (each callback ends a sign-in)
            no_state = other.get(f"/api/auth/oidc/callback?code={code}")
            assert refusal(no_state) == "start_again"
            assert "has no state" in reason(admin)
            # The answer taken to a browser that did not begin this sign-in.
            stolen = other.get(urlsplit(back).path + "?" + urlsplit(back).query)
            assert refusal(stolen) == "start_again"
            assert "not started in this browser" in reason(admin)
        done = client.get(back, follow_redirects=False)
        assert done.headers["location"] == "/"  # the right browser: signed in
        # Replayed (the state is spent), with the cookie put back.
        client.cookies.set("stackyard_oidc_state", query["state"][0], path="/api/auth/oidc")
        again = client.get(back, follow_redirects=False)
        assert refusal(again) == "start_again"
        assert "expired or was finished already" in reason(admin)


def test_an_error_from_the_provider_and_an_open_redirect_are_handled(service, admin):
    """What a callback says (an attacker can make one up and send anyone the link) never
    reaches the sign-in page: only a code does, and the provider's words go to the audit
    log."""
    spoof = "Your account is locked: call +1 555 0100 to unlock it"
    with httpx.Client(base_url=service.url) as client:
        start = client.get(
            "/api/auth/oidc/start", params={"next": "//evil.example/x"}, follow_redirects=False
        )
        state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
        denied = client.get(
            "/api/auth/oidc/callback",
            params={"state": state, "error": "access_denied", "error_description": spoof},
            follow_redirects=False,
        )
        assert refusal(denied) == "provider_refused"
        assert "555" not in denied.headers["location"]
        assert reason(admin) == f"the provider did not sign you in: {spoof}"
        start = client.get(
            "/api/auth/oidc/start", params={"next": "//evil.example/x"}, follow_redirects=False
        )
        at_provider = client.get(start.headers["location"], follow_redirects=False)
        done = client.get(at_provider.headers["location"], follow_redirects=False)
        assert done.headers["location"] == "/"  # never another site


def test_refusals_are_audited_and_the_settings_are_read_only(service, forged_provider):
    forged_provider.tamper = lambda claims: claims | {"aud": "another-client"}
    client, done = sign_in_there(service)
    client.close()
    refusal(done)
    with httpx.Client(base_url=service.url) as admin:
        sign_in(admin, "admin", ADMIN_PASSWORD)
        items = admin.get("/api/audit", params={"limit": 500}).json()["items"]
        failed = [e for e in items if e["action"] == "auth.sign_in" and e["outcome"] == "failure"]
        assert any("Forged: the ID token is refused" in e["detail"] for e in failed)
        shown = admin.get("/api/identity-provider").json()
        assert shown["from_settings_variables"] is True and shown["client_secret_set"] is True
        refused = admin.put(
            "/api/identity-provider",
            json={"config": shown["config"], "client_secret": None},
            headers={"X-CSRF-Token": admin.cookies["stackyard_csrf"]},
        )
        assert refused.status_code == 400 and "STACKYARD_OIDC_" in refused.json()["detail"]


@pytest.mark.parametrize(
    ("lie", "why"),
    [
        ({"issuer": "https://idp.example"}, "calls itself 'https://idp.example'"),
        # Endpoints in plain http off this machine are never asked (nothing is sent there).
        ({"token_endpoint": "http://192.0.2.1/token"}, "token_endpoint must be an https://"),
    ],
    ids=["issuer", "endpoint-elsewhere"],
)
def test_a_discovery_document_that_lies_or_points_away_is_refused(
    fresh_service, forged_provider, lie, why
):
    forged_provider.discovery = lie
    with httpx.Client(base_url=fresh_service.url, timeout=ANSWER_WITHIN) as client:
        assert refusal(client.get("/api/auth/oidc/start")) == "provider_error"
    wait_until(lambda: why in fresh_service.log(), what="the reason, in the service's log")


def test_an_answer_too_large_is_not_read_to_its_end(fresh_service, forged_provider):
    forged_provider.discovery = {"jwks_uri": f"{forged_provider.issuer}/huge"}
    forged_provider.sign_with = RSAKey.generate_key(2048, {"kid": "unknown-to-the-service"})
    with httpx.Client(base_url=fresh_service.url, timeout=ANSWER_WITHIN) as admin:
        sign_in(admin, "admin", ADMIN_PASSWORD)
        client, done = sign_in_there(fresh_service)
        with closing(client):
            assert refusal(done) == "provider_error"
            assert "answered more than 1048576 bytes" in reason(admin)
