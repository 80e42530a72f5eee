"""Sign-in through a provider never leaves the service without an admin: the groups of
the only admin's linked account say "viewer", and the account stays admin (audited), as
the users API refuses to take the last admin away. A module of its own: a service of its
own whose one admin is the first start's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest

from tests.support.oidc_provider import OidcProvider, sign_in_through_provider, use_provider
from tests.support.service import ADMIN_PASSWORD, ServerProcess, sign_in


@pytest.fixture(scope="module")
def admin(relying_party: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=relying_party.url) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def test_a_provider_sign_in_never_demotes_the_last_admin(
    relying_party: ServerProcess, registered_provider: OidcProvider, admin: httpx.Client
):
    assert admin.patch("/api/users/admin", json={"email": "boss@example.com"}).status_code == 200
    use_provider(admin, registered_provider, link_accounts=True)
    registered_provider.set_account("boss", groups=["readers"], email="boss@example.com")
    with httpx.Client(base_url=relying_party.url) as client:
        done = sign_in_through_provider(client, f"{relying_party.url}/api/auth/oidc/start", "boss")
        assert done.status_code == 303 and done.headers["location"] == "/"
        me = client.get("/api/auth/me").json()
        assert (me["username"], me["role"]) == ("admin", "admin")
    # Nothing of the admin's was revoked: it is no demotion.
    assert admin.get("/api/auth/me").status_code == 200
    admins = [u for u in admin.get("/api/users").json() if u["role"] == "admin"]
    assert [u["username"] for u in admins] == ["admin"]
    items = admin.get("/api/audit", params={"limit": 50}).json()["items"]
    [kept] = [e for e in items if e["action"] == "auth.role_change"]
    assert (kept["actor"], kept["target"], kept["outcome"]) == ("Keycloak", "admin", "failure")
    assert "admin → viewer" in kept["detail"] and "last admin" in kept["detail"]

    # With another admin, the groups have their way (and the admin's sessions end).
    made = admin.post(
        "/api/users", json={"username": "second", "password": ADMIN_PASSWORD, "role": "admin"}
    )
    assert made.status_code == 201
    with closing(httpx.Client(base_url=relying_party.url)) as client:
        sign_in_through_provider(client, f"{relying_party.url}/api/auth/oidc/start", "boss")
        assert client.get("/api/auth/me").json()["role"] == "viewer"
    assert admin.get("/api/auth/me").status_code == 401
