"""The registry fixtures run a real registry the engine can push to."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.support.registry import MANIFEST_ACCEPT

BUSYBOX = "stackyard-test/busybox:1"

pytestmark = pytest.mark.docker


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, params = header.partition(" ")
    return scheme, dict(re.findall(r'(\w+)="([^"]*)"', params))


def test_push_and_head_digest(registry):
    assert registry.host.startswith("127.0.0.1:")
    assert not registry.host.endswith(":5000")
    repo = f"stackyard/busybox-{uuid.uuid4().hex[:6]}"
    digest = registry.push(BUSYBOX, repo, "1")
    assert digest.startswith("sha256:")

    r = httpx.head(f"{registry.url}/v2/{repo}/manifests/1", headers={"Accept": MANIFEST_ACCEPT})
    assert r.status_code == 200
    assert r.headers["Docker-Content-Digest"] == digest

    tags = httpx.get(f"{registry.url}/v2/{repo}/tags/list").json()
    assert tags == {"name": repo, "tags": ["1"]}


def test_token_registry_bearer_flow(token_registry):
    reg = token_registry
    repo = f"stackyard/busybox-{uuid.uuid4().hex[:6]}"
    before = reg.token_request_count
    digest = reg.push(BUSYBOX, repo, "1")  # the engine does the token flow itself
    assert reg.token_request_count > before

    url = f"{reg.url}/v2/{repo}/manifests/1"
    headers = {"Accept": MANIFEST_ACCEPT}
    anon = httpx.head(url, headers=headers)
    assert anon.status_code == 401
    scheme, params = parse_challenge(anon.headers["WWW-Authenticate"])
    assert scheme == "Bearer"
    assert params["realm"] == reg.realm
    assert params["service"] == reg.service
    assert params["scope"] == f"repository:{repo}:pull"

    count = reg.token_request_count
    token = httpx.get(
        params["realm"], params={"service": params["service"], "scope": params["scope"]}
    ).json()["token"]
    assert reg.token_request_count == count + 1
    assert reg.token_requests[-1]["scopes"] == [f"repository:{repo}:pull"]

    ok = httpx.head(url, headers={**headers, "Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    assert ok.headers["Docker-Content-Digest"] == digest

    # A token for another repository does not open this one.
    other = reg.issue("", [f"repository:{repo}-other:pull"])
    denied = httpx.head(url, headers={**headers, "Authorization": f"Bearer {other}"})
    assert denied.status_code == 401


def test_token_registry_basic_credentials(token_registry):
    reg = token_registry
    reg.users["alice"] = "s3cret"
    try:
        scope = "repository:stackyard/none:pull"
        params = {"service": reg.service, "scope": scope}
        good = httpx.get(reg.realm, params=params, auth=("alice", "s3cret"))
        assert good.status_code == 200 and good.json()["token"]
        assert reg.token_requests[-1]["account"] == "alice"
        bad = httpx.get(reg.realm, params=params, auth=("alice", "wrong"))
        assert bad.status_code == 401
    finally:
        reg.users.pop("alice", None)
