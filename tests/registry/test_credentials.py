import base64
import json

import pytest
from sqlalchemy import select

from stackyard.db.models import Setting
from stackyard.errors import SecretUnreadable
from stackyard.registry.credentials import CredentialStore
from tests.support.admin_settings import admin_settings_on

KEY, OTHER_KEY = "k" * 40, "x" * 40


def _store(database_url, tmp_path, key=KEY, docker_config=None) -> CredentialStore:
    settings = admin_settings_on(database_url, key)
    return CredentialStore(lambda: settings, docker_config or tmp_path / "none.json")


def test_credentials_are_encrypted_at_rest_and_found_by_host(database_url, tmp_path):
    store = _store(database_url, tmp_path)
    assert store.set("https://ghcr.io/", "bot", "s3cret-pass") == "ghcr.io"
    store.set("index.docker.io", "hubuser", "hub-pass")
    settings = store._saved()
    with settings.db.session() as session:
        rows = session.scalars(select(Setting)).all()
        raw = " ".join(f"{r.key} {r.value} {r.secret}" for r in rows)
    assert "s3cret-pass" not in raw and "bot" not in raw
    assert store.lookup("ghcr.io") == ("bot", "s3cret-pass")
    assert store.lookup("registry-1.docker.io") == ("hubuser", "hub-pass")  # Hub's API host
    assert store.registries() == [("docker.io", "hubuser"), ("ghcr.io", "bot")]
    assert store.delete("ghcr.io") and store.lookup("ghcr.io") is None
    assert not store.delete("ghcr.io")


def test_a_changed_secret_key_is_a_clear_error_and_setting_again_recovers(database_url, tmp_path):
    _store(database_url, tmp_path).set("ghcr.io", "bot", "pass-1")
    rekeyed = _store(database_url, tmp_path, OTHER_KEY)
    # Never an anonymous try in their place, nor an empty list: the login is named.
    for read in (lambda: rekeyed.lookup("ghcr.io"), rekeyed.registries):
        with pytest.raises(SecretUnreadable, match=r"registry login 'ghcr\.io'.*enter it again"):
            read()
    rekeyed.set("ghcr.io", "bot", "pass-2")
    assert rekeyed.lookup("ghcr.io") == ("bot", "pass-2")
    assert rekeyed.registries() == [("ghcr.io", "bot")]


def test_docker_login_entries_are_the_fallback(database_url, tmp_path):
    config = tmp_path / "config.json"
    auth = base64.b64encode(b"me:from-docker-login").decode()
    config.write_text(json.dumps({"auths": {"registry.example:5000": {"auth": auth}}}))
    store = _store(database_url, tmp_path, docker_config=config)
    assert store.lookup("registry.example:5000") == ("me", "from-docker-login")
    store.set("registry.example:5000", "mine", "configured")
    assert store.lookup("registry.example:5000") == ("mine", "configured")


def test_a_host_that_keeps_no_logins_has_the_docker_login_entries_alone(tmp_path):
    """An agent: its central keeps the logins and checks its images."""
    store = CredentialStore(lambda: None, tmp_path / "none.json")
    assert store.registries() == [] and store.lookup("ghcr.io") is None
