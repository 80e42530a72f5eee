"""Sign-in through a real OpenID Connect provider (oidc-provider on loopback) into a real
`stackyard serve`: roles from groups at every sign-in, accounts made and linked, key
rotation, the provider down, sign-out at the provider, password sign-in kept for admins."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import closing
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import pytest

from tests.support.oidc_provider import (
    OidcProvider,
    sign_in_through_provider,
    sign_out_at_provider,
    use_provider,
)
from tests.support.service import (
    ADMIN_PASSWORD,
    USER_PASSWORD,
    ServerProcess,
    sign_in,
)


@pytest.fixture(scope="module")
def service(relying_party: ServerProcess) -> ServerProcess:
    return relying_party


@pytest.fixture(scope="module")
def provider(registered_provider: OidcProvider) -> OidcProvider:
    return registered_provider


@pytest.fixture(scope="module")
def admin(service: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def _csrf(client: httpx.Client) -> dict[str, str]:
    return {"X-CSRF-Token": client.cookies["stackyard_csrf"]}


@pytest.fixture(autouse=True)
def _default_config(admin, provider):
    use_provider(admin, provider)


def through_provider(service: ServerProcess, account: str) -> tuple[httpx.Client, httpx.Response]:
    """A new browser signs in as `account`: the client and the callback's answer."""
    client = httpx.Client(base_url=service.url)
    done = sign_in_through_provider(
        client, f"{service.url}/api/auth/oidc/start?next=/stacks", account
    )
    return client, done


def refusal(done: httpx.Response) -> str:
    """The reason the callback sent the browser back to the sign-in page with."""
    assert done.status_code == 303
    location = urlsplit(done.headers["location"])
    assert location.path == "/login", done.headers["location"]
    assert "stackyard_session" not in done.headers.get("set-cookie", "")
    return unquote(parse_qs(location.query)["error"][0])


def audit(admin: httpx.Client, action: str) -> list[dict]:
    items = admin.get("/api/audit", params={"limit": 200}).json()["items"]
    return [e for e in items if e["action"] == action]


def test_each_group_signs_in_with_its_role_and_the_account_is_made_once(service, provider, admin):
    for account, groups, role in [
        ("ada", ["stackyard-admins", "ops"], "admin"),  # the highest of its groups
        ("otto", ["ops", "unrelated"], "operator"),
        ("rita", ["readers"], "viewer"),
    ]:
        provider.set_account(account, groups=groups)
        client, done = through_provider(service, account)
        with closing(client):
            assert done.status_code == 303 and done.headers["location"] == "/stacks"
            me = client.get("/api/auth/me").json()
            assert (me["username"], me["role"], me["has_password"]) == (account, role, False)
            if role == "viewer":  # what the role allows, the server decides
                refused = client.put("/api/stacks/x/compose", json={}, headers=_csrf(client))
                assert refused.status_code == 403
    # The second sign-in finds the same account.
    again, _ = through_provider(service, "otto")
    with closing(again):
        assert again.get("/api/auth/me").json()["username"] == "otto"
    users = [u for u in admin.get("/api/users").json() if u["username"] == "otto"]
    assert len(users) == 1 and users[0]["provider_account"] is True
    entries = [e for e in audit(admin, "auth.sign_in") if e["target"] == "otto"]
    assert [e["detail"] for e in entries[:2]] == ["Keycloak", "Keycloak, created"]


def test_a_user_in_no_mapped_group_is_refused_or_gets_the_chosen_default(service, provider, admin):
    provider.set_account("nina", groups=["interns"])
    client, done = through_provider(service, "nina")
    with closing(client):
        assert "no group that has a role here" in refusal(done)
        assert client.get("/api/auth/me").status_code == 401
    assert "nina" not in {u["username"] for u in admin.get("/api/users").json()}
    [failed] = [e for e in audit(admin, "auth.sign_in") if e["actor"] == "nina (Keycloak)"]
    assert failed["outcome"] == "failure" and "no group" in failed["detail"]

    use_provider(admin, provider, default_role="viewer")
    client, done = through_provider(service, "nina")
    with closing(client):
        assert client.get("/api/auth/me").json()["role"] == "viewer"
    # Never admin by default: the schema has no such choice.
    refused = admin.put(
        "/api/identity-provider",
        json={"config": {"enabled": False, "default_role": "admin"}, "client_secret": None},
        headers=_csrf(admin),
    )
    assert refused.status_code == 422


def test_a_role_dropped_at_the_provider_is_dropped_at_the_next_sign_in_with_all_it_held(
    service, provider, admin
):
    provider.set_account("dora", groups=["stackyard-admins"])
    first, _ = through_provider(service, "dora")
    with closing(first):
        assert first.get("/api/auth/me").json()["role"] == "admin"
        # A provider account has no password: a fresh sign-in there stands for it.
        made = first.post("/api/auth/tokens", json={"name": "ci"}, headers=_csrf(first))
        assert made.status_code == 201, made.text
        bearer = {"Authorization": f"Bearer {made.json()['token']}"}
        assert first.get("/api/users", headers=bearer).status_code == 200

        provider.set_account("dora", groups=["readers"])
        second, _ = through_provider(service, "dora")
        with closing(second):
            assert second.get("/api/auth/me").json()["role"] == "viewer"
        # The admin session and the token it made are gone.
        assert first.get("/api/auth/me").status_code == 401
        assert first.get("/api/users", headers=bearer).status_code == 401
    [change] = [e for e in audit(admin, "auth.role_change") if e["target"] == "dora"]
    assert change["actor"] == "Keycloak"
    assert change["detail"] == "admin → viewer: sessions and API tokens revoked"


def test_a_local_account_is_linked_only_when_allowed_and_the_email_is_verified(
    service, provider, admin
):
    made = admin.post(
        "/api/users",
        json={"username": "carol", "password": USER_PASSWORD, "role": "operator"},
        headers=_csrf(admin),
    )
    assert made.status_code == 201
    set_email = admin.patch(
        "/api/users/carol", json={"email": "Carol@Example.com"}, headers=_csrf(admin)
    )
    assert set_email.status_code == 200
    provider.set_account("carol", groups=["ops"], email="carol@example.com", email_verified=False)

    # Linking not allowed: a separate account, never the local one.
    client, _ = through_provider(service, "carol")
    with closing(client):
        assert client.get("/api/auth/me").json()["username"] == "carol-2"
    use_provider(admin, provider, link_accounts=True)
    # Allowed, but the provider does not vouch for the email: still not linked.
    provider.set_account("carol-b", groups=["ops"], email="carol@example.com", email_verified=False)
    client, _ = through_provider(service, "carol-b")
    with closing(client):
        assert client.get("/api/auth/me").json()["username"] != "carol"
    provider.set_account("carol-c", groups=["ops"], email="carol@example.com", email_verified=True)
    client, _ = through_provider(service, "carol-c")
    with closing(client):
        me = client.get("/api/auth/me").json()
        assert (me["username"], me["has_password"]) == ("carol", True)
    entry = next(e for e in audit(admin, "auth.sign_in") if e["target"] == "carol")
    assert entry["detail"] == "Keycloak, linked to the local account"
    # The local password still works (the break-glass path).
    with httpx.Client(base_url=service.url) as local:
        sign_in(local, "carol", USER_PASSWORD)


def test_a_provider_user_called_admin_never_becomes_the_local_admin(service, provider, admin):
    provider.set_account("admin-at-idp", groups=["readers"], preferred_username="admin")
    client, _ = through_provider(service, "admin-at-idp")
    with closing(client):
        me = client.get("/api/auth/me").json()
        assert me["username"] != "admin" and me["role"] == "viewer"


def test_a_rotated_key_is_fetched_at_the_next_sign_in(service, provider, admin):
    provider.set_account("kim", groups=["ops"])
    client, _ = through_provider(service, "kim")  # the service holds the first key now
    client.close()
    old = provider.kids
    provider.rotate_keys()
    assert provider.kids != old
    client, done = through_provider(service, "kim")
    with closing(client):
        assert done.headers["location"] == "/stacks"
        assert client.get("/api/auth/me").json()["username"] == "kim"


def test_sign_out_ends_the_session_here_and_at_the_provider(service, provider):
    provider.set_account("sam", groups=["ops"])
    client, _ = through_provider(service, "sam")
    with closing(client):
        out = client.post("/api/auth/logout", headers=_csrf(client))
        assert out.status_code == 200
        url = out.json()["provider_logout_url"]
        assert url.startswith(f"{provider.issuer}/") and "id_token_hint=" in url
        assert client.get("/api/auth/me").status_code == 401
        back = sign_out_at_provider(client, url)
        assert back.headers["location"].split("?")[0] == f"{service.url}/login"
        # Signed out there too: the next sign-in shows the provider's login page again.
        start = client.get("/api/auth/oidc/start", follow_redirects=False)
        page = client.get(start.headers["location"], follow_redirects=True)
        assert 'name="login"' in page.text


def test_password_sign_in_can_be_kept_for_admins_only(service, provider, admin):
    made = admin.post(
        "/api/users",
        json={"username": "pete", "password": USER_PASSWORD, "role": "operator"},
        headers=_csrf(admin),
    )
    assert made.status_code == 201
    use_provider(admin, provider, password_sign_in="admins")
    with httpx.Client(base_url=service.url) as client:
        options = client.get("/api/auth/sign-in-options").json()
        assert options == {
            "provider": {"name": "Keycloak", "start_url": "/api/auth/oidc/start"},
            "password_sign_in": "admins",
        }
        refused = client.post(
            "/api/auth/login", json={"username": "pete", "password": USER_PASSWORD}
        )
        assert refused.status_code == 403
        assert refused.json()["detail"] == (
            "Sign in with Keycloak: password sign-in is kept for admins"
        )
        sign_in(client, "admin", ADMIN_PASSWORD)  # the break-glass path


def test_a_provider_that_is_down_or_silent_gives_a_clean_error_and_passwords_still_work(
    service, provider, admin
):
    provider.stop()
    try:
        with httpx.Client(base_url=service.url) as client:
            start = client.get("/api/auth/oidc/start", follow_redirects=False)
            assert "cannot be reached" in refusal(start)
            sign_in(client, "admin", ADMIN_PASSWORD)
    finally:
        provider.start()
    # A provider that takes the connection and never answers: refused at its time limit.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        issuer = f"http://127.0.0.1:{silent.getsockname()[1]}"
        use_provider(admin, provider, issuer=issuer)
        with httpx.Client(base_url=service.url, timeout=30) as client:
            start = client.get("/api/auth/oidc/start", follow_redirects=False)
            assert "did not answer within 10 s" in refusal(start)
    finally:
        silent.close()


def test_the_settings_keep_the_secret_sealed_and_write_only(service, provider, admin):
    shown = admin.get("/api/identity-provider").json()
    assert shown["client_secret_set"] is True
    assert provider.client_secret not in str(shown)
    assert shown["callback_url"] == f"{service.url}/api/auth/oidc/callback"
    data = service.env["STACKYARD_DATA_DIR"]
    from pathlib import Path

    stored = (Path(data) / "identity-provider.json").read_bytes()
    assert provider.client_secret.encode() not in stored and provider.issuer.encode() not in stored
    # Saved again without a secret: the one saved stays.
    config = shown["config"] | {"name": "Corp"}
    kept = admin.put(
        "/api/identity-provider",
        json={"config": config, "client_secret": None},
        headers=_csrf(admin),
    )
    assert kept.status_code == 200 and kept.json()["client_secret_set"] is True
    bad = admin.put(
        "/api/identity-provider",
        json={"config": config | {"issuer": "ftp://idp.example"}, "client_secret": None},
        headers=_csrf(admin),
    )
    assert bad.status_code == 400 and "https://" in bad.json()["detail"]
    assert admin.get("/api/identity-provider").json()["config"]["name"] == "Corp"
    entry = audit(admin, "auth.provider")[0]
    assert (entry["actor"], entry["outcome"]) == ("admin", "failure")


def test_requiring_two_factor_never_locks_out_a_provider_account(service, provider, admin):
    provider.set_account("ivy", groups=["ops"])
    through_provider(service, "ivy")[0].close()
    required = admin.patch(
        "/api/users/ivy", json={"two_factor_required": True}, headers=_csrf(admin)
    )
    assert required.status_code == 200
    client, _ = through_provider(service, "ivy")
    with closing(client):  # the provider asks for its own second factor
        assert client.get("/api/auth/me").json()["two_factor_due"] is False
        assert client.get("/api/stacks").status_code == 200
        refused = client.post(
            "/api/auth/two-factor/setup", json={"password": ""}, headers=_csrf(client)
        )
        assert refused.status_code == 403
