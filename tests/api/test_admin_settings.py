"""The admin settings' one home, on a real app and database: what earlier versions kept
in sealed files of the data folder moves in at start-up, once; and a secret sealed under
another secret key is a clear error naming it wherever it is needed, until entered again
(destinations, notification channels, registry logins, the identity provider alike)."""

from __future__ import annotations

import secrets
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.fs.jsonstore import JsonStore
from stackyard.sealing import Sealer
from tests.support.service import ADMIN_PASSWORD, new_client, settings_in, sign_in, started

PROVIDER = {
    "enabled": True,
    "name": "Corp",
    "issuer": "https://sso.example.com/realms/homelab",
    "client_id": "stackyard",
}
S3 = {
    "type": "s3",
    "endpoint_url": "http://127.0.0.1:9",
    "bucket": "archives",
    "access_key": "stackyard",
}


def unreadable(what: str) -> str:
    return (
        f"The secret of {what} cannot be read with this instance's secret key "
        "(was STACKYARD_SECRET_KEY changed?): enter it again"
    )


def admin_of(app: FastAPI) -> TestClient:
    client = new_client(app)
    sign_in(client, "admin", ADMIN_PASSWORD)
    return client


def test_settings_kept_in_files_by_earlier_versions_move_into_the_database(
    central_app, tmp_path, database_url
):
    settings = settings_in(tmp_path, database_url=database_url)
    settings.prepare_dirs()
    key, data = settings.effective_secret_key, settings.data_dir
    # The files as earlier versions wrote them: sealed JSON documents, one per kind.
    files = {
        data / "identity-provider.json": (
            "identity-provider",
            {"config": PROVIDER, "client_secret": "provider-secret"},
        ),
        data / "registry-credentials": (
            "registry-credentials",
            {"ghcr.io": {"username": "bot", "password": "registry-pass"}},
        ),
    }
    for path, (purpose, document) in files.items():
        JsonStore(path, codec=Sealer(key, purpose)).write(document)

    for _ in range(2):  # and a second start finds them where the first put them
        with started(central_app, settings):
            admin = admin_of(central_app)
            shown = admin.get("/api/identity-provider").json()
            assert shown["config"] | PROVIDER == shown["config"]
            assert shown["client_secret_set"] is True
            assert central_app.state.services.identity.settings.client_secret() == "provider-secret"
            assert admin.get("/api/registries").json() == [
                {"registry": "ghcr.io", "username": "bot"}
            ]
            logins = central_app.state.services.stacks.machine.credentials
            assert logins.lookup("ghcr.io") == ("bot", "registry-pass")
        left = [p.name for p in data.iterdir() if p.name.startswith(("identity", "registry"))]
        assert left == []  # the files and their lock files


def test_a_file_sealed_under_another_key_stays_until_set_up_again(
    central_app, tmp_path, database_url
):
    """Nothing of it can be read: it is left as it is (and logged), never taken for an
    empty set-up that would replace it."""
    settings = settings_in(tmp_path, database_url=database_url)
    settings.prepare_dirs()
    old = Path(settings.data_dir / "identity-provider.json")
    other = Sealer(secrets.token_urlsafe(48), "identity-provider")
    JsonStore(old, codec=other).write({"config": PROVIDER, "client_secret": "s"})
    with started(central_app, settings):
        shown = admin_of(central_app).get("/api/identity-provider").json()
        assert shown["config"]["enabled"] is False and shown["client_secret_set"] is False
    assert old.exists()


def test_a_secret_sealed_under_another_key_is_a_clear_error_until_entered_again(
    central_app, tmp_path, database_url, forged_provider
):
    # A provider on loopback: a set-up turned on is checked against its discovery document.
    here = PROVIDER | {"issuer": forged_provider.issuer}
    with started(central_app, settings_in(tmp_path, database_url=database_url)):
        admin = admin_of(central_app)
        made = admin.post(
            "/api/destinations",
            json={"name": "offsite", "settings": S3, "secrets": {"secret_key": "s3-secret"}},
        )
        assert made.status_code == 201, made.text
        destination = made.json()["id"]
        login = {"registry": "ghcr.io", "username": "bot", "password": "registry-pass"}
        assert admin.put("/api/registries", json=login).status_code == 200
        provider = {"config": here, "client_secret": "provider-secret"}
        assert admin.put("/api/identity-provider", json=provider).status_code == 200
        hook = {"url": "http://127.0.0.1:9/hook/token-in-the-path"}
        channel = admin.post(
            "/api/notifications/channels",
            json={"name": "ops", "kind": "webhook", "secrets": hook},
        )
        assert channel.status_code == 201, channel.text
        channel_id = channel.json()["id"]

    # The same data folder and database, another secret key.
    with started(central_app, settings_in(tmp_path, database_url=database_url)):
        admin = admin_of(central_app)

        # Each use of the destination says why it cannot be used.
        for method, path in [
            ("POST", f"/api/destinations/{destination}/test"),
            ("GET", f"/api/destinations/{destination}/archives"),
        ]:
            answer = admin.request(method, path)
            assert answer.status_code == 503, answer.text
            assert answer.json() == {"detail": unreadable("destination 'offsite'")}
        # Its page stays, asking for the secrets as for one without them.
        assert admin.get(f"/api/destinations/{destination}").json()["secrets_set"] == []
        renamed = admin.patch(f"/api/destinations/{destination}", json={"name": "far"})
        assert renamed.json() == {"detail": unreadable("destination 'offsite'")}

        listed = admin.get("/api/registries")
        assert listed.status_code == 503
        assert listed.json() == {"detail": unreadable("registry login 'ghcr.io'")}

        # The provider's set-up is no secret: shown, and who signs in how is known; saved
        # to stay on without entering the secret again, it is refused.
        shown = admin.get("/api/identity-provider").json()
        assert shown["config"]["issuer"] == here["issuer"] and shown["client_secret_set"]
        kept = admin.put("/api/identity-provider", json={"config": here, "client_secret": None})
        assert kept.status_code == 503
        assert kept.json() == {"detail": unreadable("the identity provider")}
        options = admin.get("/api/auth/sign-in-options").json()
        assert options["provider"]["name"] == "Corp"

        # A channel's test says why instead of sending without its URL; its page stays.
        tried = admin.post(f"/api/notifications/channels/{channel_id}/test")
        assert tried.status_code == 503, tried.text
        assert tried.json() == {"detail": unreadable("notification channel 'ops'")}
        assert admin.get(f"/api/notifications/channels/{channel_id}").json()["secrets_set"] == []
        renamed = admin.patch(f"/api/notifications/channels/{channel_id}", json={"name": "x"})
        assert renamed.json() == {"detail": unreadable("notification channel 'ops'")}

        # Entered again, each is in use again.
        hook["url"] = "http://127.0.0.1:9/hook/new-token"
        again = admin.patch(f"/api/notifications/channels/{channel_id}", json={"secrets": hook})
        assert again.status_code == 200, again.text
        assert again.json()["secrets_set"] == ["url"]
        entered = admin.patch(
            f"/api/destinations/{destination}", json={"secrets": {"secret_key": "new-s3"}}
        )
        assert entered.status_code == 200 and entered.json()["secrets_set"] == ["secret_key"]
        login["password"] = "new-registry-pass"
        assert admin.put("/api/registries", json=login).status_code == 200
        assert admin.get("/api/registries").json() == [{"registry": "ghcr.io", "username": "bot"}]
        provider["client_secret"] = "new-provider-secret"
        assert admin.put("/api/identity-provider", json=provider).status_code == 200
        assert central_app.state.services.identity.settings.client_secret() == "new-provider-secret"
        off = {"config": here | {"enabled": False}, "client_secret": None}
        assert admin.put("/api/identity-provider", json=off).status_code == 200
