import base64
import json

import pytest

from stackyard.errors import Invalid
from stackyard.registry.credentials import CredentialStore


def test_credentials_are_encrypted_at_rest_and_found_by_host(tmp_path):
    store = CredentialStore(tmp_path / "creds", "k" * 40, docker_config=tmp_path / "none.json")
    assert store.set("https://ghcr.io/", "bot", "s3cret-pass") == "ghcr.io"
    store.set("index.docker.io", "hubuser", "hub-pass")
    raw = (tmp_path / "creds").read_bytes()
    assert b"s3cret-pass" not in raw and b"bot" not in raw
    assert store.lookup("ghcr.io") == ("bot", "s3cret-pass")
    assert store.lookup("registry-1.docker.io") == ("hubuser", "hub-pass")  # Hub's API host
    assert store.registries() == [("docker.io", "hubuser"), ("ghcr.io", "bot")]
    assert store.delete("ghcr.io") and store.lookup("ghcr.io") is None


def test_a_changed_secret_key_is_a_clear_error_and_setting_again_recovers(tmp_path):
    store = CredentialStore(tmp_path / "creds", "k" * 40, docker_config=tmp_path / "none.json")
    store.set("ghcr.io", "bot", "pass-1")
    rekeyed = CredentialStore(tmp_path / "creds", "x" * 40, docker_config=tmp_path / "none.json")
    assert rekeyed.lookup("ghcr.io") is None  # checks go on without them
    with pytest.raises(Invalid, match="secret key changed"):
        rekeyed.registries()
    rekeyed.set("ghcr.io", "bot", "pass-2")
    assert rekeyed.lookup("ghcr.io") == ("bot", "pass-2")


def test_docker_login_entries_are_the_fallback(tmp_path):
    config = tmp_path / "config.json"
    auth = base64.b64encode(b"me:from-docker-login").decode()
    config.write_text(json.dumps({"auths": {"registry.example:5000": {"auth": auth}}}))
    store = CredentialStore(tmp_path / "creds", "k" * 40, docker_config=config)
    assert store.lookup("registry.example:5000") == ("me", "from-docker-login")
    store.set("registry.example:5000", "mine", "configured")
    assert store.lookup("registry.example:5000") == ("mine", "configured")
