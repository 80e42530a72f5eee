"""The registry client against a real registry (distribution 2.8) on loopback."""

import asyncio
import uuid

import httpx
import pytest

from stackyard.registry.client import NotInRegistry, RegistryClient, RegistryError
from stackyard.registry.reference import parse_reference
from tests.support.stacks import BUSYBOX

pytestmark = pytest.mark.docker

LOOPBACK = lambda host: host.startswith("127.")  # noqa: E731 - as the engine decides


def digest_of(ref_text: str, **kwargs) -> str:
    async def go():
        async with RegistryClient(**kwargs) as client:
            return await client.manifest_digest(parse_reference(ref_text))

    return asyncio.run(go())


def test_head_digest_matches_the_pushed_manifest_and_needs_the_accept_header(registry):
    repo = f"client/{uuid.uuid4().hex[:8]}"
    pushed = registry.push(BUSYBOX, repo, "1")
    assert digest_of(f"{registry.host}/{repo}:1", insecure=LOOPBACK) == pushed
    # Without our Accept list the registry hands out another rendering: a false update.
    bare = httpx.head(f"{registry.url}/v2/{repo}/manifests/1").headers["Docker-Content-Digest"]
    assert bare != pushed
    assert registry.requests()[-2] == ("HEAD", f"/v2/{repo}/manifests/1")  # HEAD, no GET


def test_unknown_tag_is_not_in_registry(registry):
    with pytest.raises(NotInRegistry):
        digest_of(f"{registry.host}/client/none:1", insecure=LOOPBACK)


def test_plain_http_only_where_the_engine_allows_it(registry):
    repo = f"client/{uuid.uuid4().hex[:8]}"
    registry.push(BUSYBOX, repo, "1")
    with pytest.raises(RegistryError, match="cannot reach registry"):
        digest_of(f"{registry.host}/{repo}:1", insecure=lambda host: False)


def test_bearer_token_flow_asks_once_per_repository(token_registry):
    repo = f"client/{uuid.uuid4().hex[:8]}"
    pushed = token_registry.push(BUSYBOX, repo, "1")
    token_registry.push(BUSYBOX, repo, "2")
    before = token_registry.token_request_count

    async def go():
        async with RegistryClient(insecure=LOOPBACK) as client:
            first = await client.manifest_digest(parse_reference(f"{token_registry.host}/{repo}:1"))
            second = await client.manifest_digest(
                parse_reference(f"{token_registry.host}/{repo}:2")
            )
            return first, second

    first, second = asyncio.run(go())
    assert first == second == pushed
    requests = token_registry.token_requests[before:]
    assert len(requests) == 1  # the token is reused for the repository
    assert requests[0]["scopes"] == [f"repository:{repo}:pull"]
    assert requests[0]["account"] == ""  # anonymous


def test_credentials_are_sent_to_the_token_service(token_registry):
    repo = f"client/{uuid.uuid4().hex[:8]}"
    pushed = token_registry.push(BUSYBOX, repo, "1")
    token_registry.users["robot"] = "robot-pass"
    token_registry.allow_anonymous = False
    try:
        with pytest.raises(RegistryError):
            digest_of(f"{token_registry.host}/{repo}:1", insecure=LOOPBACK)
        found = digest_of(
            f"{token_registry.host}/{repo}:1",
            insecure=LOOPBACK,
            credentials=lambda host: (
                ("robot", "robot-pass") if host == token_registry.host else None
            ),
        )
        assert found == pushed
        assert token_registry.token_requests[-1]["account"] == "robot"
    finally:
        token_registry.allow_anonymous = True
        token_registry.users.pop("robot")


def test_tags_follow_pagination(registry):
    repo = f"client/{uuid.uuid4().hex[:8]}"
    for tag in ("1.0.0", "1.1.0", "2.0.0"):
        registry.push(BUSYBOX, repo, tag)

    async def go():
        async with RegistryClient(insecure=LOOPBACK) as client:
            return await client.tags(registry.host, repo, page_size=2)

    assert sorted(asyncio.run(go())) == ["1.0.0", "1.1.0", "2.0.0"]
