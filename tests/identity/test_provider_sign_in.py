"""Sign-in through a real OpenID Connect provider (oidc-provider on loopback) into a real
`stackyard serve`: roles from groups at every sign-in, accounts made and linked, key
rotation, the provider down, sign-out at the provider, password sign-in kept for admins,
what a removal at the provider takes away, and the limits of the anonymous way there."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
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
    ANSWER_WITHIN,
    USER_PASSWORD,
    ServerProcess,
    sign_in,
)
from tests.support.waiting import wait_until


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
    """The reason the callback sent the browser back to the sign-in page with: a code,
    for which the sign-in page has a message of its own (never text from the request)."""
    assert done.status_code == 303
    location = urlsplit(done.headers["location"])
    assert location.path == "/login", done.headers["location"]
    assert "stackyard_session" not in done.headers.get("set-cookie", "")
    [code] = parse_qs(location.query)["error"]
    assert code.isidentifier() and code == unquote(code), code
    return code


def from_address(service: ServerProcess, address: str) -> httpx.Client:
    """A browser on another machine: its requests come from `address` (any of
    127.0.0.0/8 reaches the service on 127.0.0.1)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=service.url, transport=transport, timeout=ANSWER_WITHIN)


def state_of(start: httpx.Response) -> str:
    """The `state` of a sign-in the start sent to the provider."""
    return parse_qs(urlsplit(start.headers["location"]).query)["state"][0]


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
        assert refusal(done) == "no_role"
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
    """A non-admin's right password answers as a wrong one does (no password oracle),
    and a session of theirs from before cannot mint an API token with the password."""
    made = admin.post(
        "/api/users",
        json={"username": "pete", "password": USER_PASSWORD, "role": "operator"},
        headers=_csrf(admin),
    )
    assert made.status_code == 201
    earlier = httpx.Client(base_url=service.url)
    sign_in(earlier, "pete", USER_PASSWORD)  # while passwords were for everyone
    use_provider(admin, provider, password_sign_in="admins")
    with httpx.Client(base_url=service.url) as client, closing(earlier):
        options = client.get("/api/auth/sign-in-options").json()
        assert options == {
            "provider": {"name": "Keycloak", "start_url": "/api/auth/oidc/start"},
            "password_sign_in": "admins",
        }
        right = client.post("/api/auth/login", json={"username": "pete", "password": USER_PASSWORD})
        wrong = client.post(
            "/api/auth/login", json={"username": "pete", "password": "not-the-password"}
        )
        assert right.status_code == wrong.status_code == 401
        assert right.json() == wrong.json()
        assert "Keycloak" in right.json()["detail"]
        assert "stackyard_session" not in client.cookies
        minted = earlier.post("/api/auth/tokens", json={"name": "x", "password": USER_PASSWORD})
        assert minted.status_code == 403, minted.text
        assert earlier.get("/api/auth/tokens").json() == []
        sign_in(client, "admin", ADMIN_PASSWORD)  # the break-glass path


def test_a_provider_that_is_down_or_silent_gives_a_clean_error_and_passwords_still_work(
    service, provider, admin
):
    provider.stop()
    try:
        with httpx.Client(base_url=service.url) as client:
            start = client.get("/api/auth/oidc/start", follow_redirects=False)
            assert refusal(start) == "provider_unreachable"
            sign_in(client, "admin", ADMIN_PASSWORD)
        # What did not answer, for the admin: in the service's log.
        wait_until(lambda: "cannot be reached" in service.log(), what="the reason, logged")
    finally:
        provider.start()
    # A provider that takes the connection and never answers: refused at its time limit.
    # (Its set-up was saved while it answered, as a save checks it: it goes silent after,
    # on its own port, and the document the service read is fetched again.)
    admin.put(
        "/api/identity-provider",
        json={
            "config": admin.get("/api/identity-provider").json()["config"],
            "client_secret": None,
        },
        headers={"X-CSRF-Token": admin.cookies["stackyard_csrf"]},
    ).raise_for_status()
    provider.stop()
    silent = socket.socket()
    silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    silent.bind(("127.0.0.1", provider.port))
    silent.listen(8)
    try:
        with httpx.Client(base_url=service.url, timeout=30) as client:
            start = client.get("/api/auth/oidc/start", follow_redirects=False)
            assert refusal(start) == "provider_unreachable"
        wait_until(lambda: "did not answer within 10 s" in service.log(), what="the reason")
    finally:
        silent.close()
        provider.start()


def test_the_settings_keep_the_secret_sealed_and_write_only(service, provider, admin):
    shown = admin.get("/api/identity-provider").json()
    assert shown["client_secret_set"] is True
    assert provider.client_secret not in str(shown)
    assert shown["callback_url"] == f"{service.url}/api/auth/oidc/callback"
    # Kept in the admin settings: the set-up as JSON, the client secret sealed apart.
    data = Path(service.env["STACKYARD_DATA_DIR"])
    assert not (data / "identity-provider.json").exists()
    with closing(sqlite3.connect(data / "stackyard.db")) as db:
        value, sealed = db.execute(
            "SELECT value, secret FROM settings WHERE key = 'identity-provider'"
        ).fetchone()
    assert provider.issuer in value and sealed
    assert provider.client_secret not in value + sealed
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


def test_a_user_removed_from_every_group_loses_their_sessions_and_tokens(service, provider, admin):
    """The sign-in refused because the user is in no mapped group any more ends every
    session and revokes every API token they hold, as a demotion does (and says so in
    the audit log)."""
    provider.set_account("remy", groups=["ops"])
    first, _ = through_provider(service, "remy")
    with closing(first):
        made = first.post("/api/auth/tokens", json={"name": "ci"}, headers=_csrf(first))
        assert made.status_code == 201, made.text
        bearer = {"Authorization": f"Bearer {made.json()['token']}"}
        assert first.get("/api/stacks", headers=bearer).status_code == 200

        provider.set_account("remy", groups=["interns"])
        second, done = through_provider(service, "remy")
        second.close()
        assert refusal(done) == "no_role"
        assert first.get("/api/auth/me").status_code == 401
        assert first.get("/api/stacks", headers=bearer).status_code == 401
    [entry] = [e for e in audit(admin, "auth.role_change") if e["target"] == "remy"]
    assert entry["actor"] == "Keycloak"
    assert "no group" in entry["detail"] and "sessions and API tokens revoked" in entry["detail"]


def test_a_provider_accounts_token_lasts_as_long_as_its_last_sign_in_there(
    service, provider, admin
):
    """An account of the provider proves itself there, not here: its API tokens work
    until its last sign-in at the provider would have expired as a session (the session
    lifetime), and each sign-in there renews them. A provider that stops signing the
    user in (the account removed or disabled there) ends the tokens with the sessions."""
    provider.set_account("tia", groups=["ops"])
    first, _ = through_provider(service, "tia")
    with closing(first):
        made = first.post("/api/auth/tokens", json={"name": "ci"}, headers=_csrf(first))
        assert made.status_code == 201, made.text
        token_id, bearer = made.json()["id"], {"Authorization": f"Bearer {made.json()['token']}"}
        [listed] = first.get("/api/auth/tokens").json()
    week = datetime.now(UTC) + timedelta(hours=7 * 24)  # the session lifetime (its default)
    assert abs(datetime.fromisoformat(listed["expires_at"]) - week) < timedelta(minutes=10)
    assert httpx.get(f"{service.url}/api/stacks", headers=bearer).status_code == 200
    # A week on without a sign-in there (the database's clock turned: the token's end
    # moved into the past, as the session lifetime's end would be by then).
    data = Path(service.env["STACKYARD_DATA_DIR"])
    with closing(sqlite3.connect(data / "stackyard.db")) as db:
        db.execute(
            "UPDATE api_tokens SET expires_at = '2000-01-01 00:00:00' WHERE id = ?", (token_id,)
        )
        db.commit()
    refused = httpx.get(f"{service.url}/api/stacks", headers=bearer)
    assert refused.status_code == 401 and "Keycloak" not in refused.text
    # Signed in there again: the token works again, until the new sign-in's end.
    again, _ = through_provider(service, "tia")
    with closing(again):
        [renewed] = again.get("/api/auth/tokens").json()
        assert renewed["expires_at"] > "2001"
    assert httpx.get(f"{service.url}/api/stacks", headers=bearer).status_code == 200


def test_starting_sign_ins_is_limited_per_address_and_never_evicts_another_browsers(
    service, provider
):
    """The way to the provider is anonymous: an address that starts sign-ins it never
    finishes is refused after a while, and only its own oldest unfinished sign-ins are
    forgotten; a sign-in another browser began meanwhile still finishes."""
    provider.set_account("bea", groups=["readers"])
    start_url = f"{service.url}/api/auth/oidc/start"
    with from_address(service, "127.0.6.1") as bea, from_address(service, "127.0.6.2") as flood:
        begun = bea.get(start_url, follow_redirects=False)
        assert begun.headers["location"].startswith(provider.issuer)
        starts = [flood.get(start_url, follow_redirects=False) for _ in range(40)]
        sent_there = [s for s in starts if s.headers["location"].startswith(provider.issuer)]
        refused = [s for s in starts if not s.headers["location"].startswith(provider.issuer)]
        assert 5 <= len(sent_there) <= 30 and refused, [s.headers["location"] for s in starts]
        assert {refusal(s) for s in refused} == {"throttled"}

        def callback(state: str) -> str:
            flood.cookies.set("stackyard_oidc_state", state, path="/api/auth/oidc")
            answer = flood.get(
                "/api/auth/oidc/callback", params={"state": state, "code": "made-up"}
            )
            return refusal(answer)

        # Its oldest are forgotten; its newest is still there (and then fails at the
        # provider, who never gave that code).
        assert callback(state_of(sent_there[0])) == "start_again"
        assert callback(state_of(sent_there[-1])) == "provider_error"
        done = sign_in_through_provider(bea, start_url, "bea", first=begun)
        assert done.status_code == 303 and done.headers["location"] == "/", done.headers


def test_the_discovery_document_is_fetched_at_most_once_a_minute(service, provider):
    """Every start used to fetch the provider's discovery document: kept for a minute now
    (and fetched anew when the set-up is saved), a start works without asking it."""
    with from_address(service, "127.0.6.3") as client:
        first = client.get("/api/auth/oidc/start", follow_redirects=False)
        assert first.headers["location"].startswith(provider.issuer)
        provider.stop()
        try:
            again = client.get("/api/auth/oidc/start", follow_redirects=False)
            assert again.headers["location"].startswith(provider.issuer), again.headers
        finally:
            provider.start()


def test_the_callbacks_code_and_state_stay_out_of_the_access_log(service, provider):
    provider.set_account("lou", groups=["readers"])
    client, done = through_provider(service, "lou")
    client.close()
    query = parse_qs(done.request.url.query.decode())
    code, state = query["code"][0], query["state"][0]
    wait_until(
        lambda: "/api/auth/oidc/callback?" in service.log() and "state=[redacted]" in service.log(),
        what="the callback in the access log",
    )
    log = service.log()
    assert code not in log and state not in log
