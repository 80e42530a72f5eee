"""The provider's set-up from settings variables, and the rules across its fields."""

import pytest

from stackyard.errors import ConfigError, Invalid
from stackyard.identity.config import IdentitySettings, ProviderConfig
from stackyard.settings import Settings
from tests.support.admin_settings import admin_settings_on
from tests.support.service import sqlite_url

SECRET = "k" * 48


def _from_env(tmp_path, **env) -> IdentitySettings:
    settings = Settings(data_dir=tmp_path, **env)
    return IdentitySettings(settings, admin_settings_on(sqlite_url(tmp_path), SECRET))


def test_settings_variables_set_the_provider_and_make_it_read_only(tmp_path):
    identity = _from_env(
        tmp_path,
        oidc_issuer="https://sso.example.com/realms/homelab",
        oidc_client_id="stackyard",
        oidc_client_secret="s3cret",
        oidc_roles="yard-admins=admin, yard ops=operator",
        oidc_default_role="viewer",
        oidc_password_sign_in="admins",
    )
    config, secret = identity.current()
    assert (config.enabled, secret) == (True, "s3cret")
    assert [(r.value, r.role) for r in config.roles] == [
        ("yard-admins", "admin"),
        ("yard ops", "operator"),
    ]
    assert (config.default_role, config.password_sign_in) == ("viewer", "admins")
    with pytest.raises(Invalid, match="STACKYARD_OIDC_"):
        identity.save(config, None)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"oidc_roles": "admins:admin"}, "is not group=role"),
        ({"oidc_roles": "admins=root"}, "root"),
        ({"oidc_default_role": "admin"}, "default_role"),
        ({"oidc_client_secret": ""}, "client secret"),
        ({"oidc_issuer": "http://sso.example.com"}, "https://"),
        ({"oidc_scopes": "profile email"}, "openid"),
    ],
)
def test_wrong_settings_variables_stop_the_start_with_what_is_wrong(tmp_path, env, said):
    base = {
        "oidc_issuer": "https://sso.example.com",
        "oidc_client_id": "stackyard",
        "oidc_client_secret": "s",
    }
    with pytest.raises(ConfigError, match="STACKYARD_OIDC_") as raised:
        _from_env(tmp_path, **(base | env))
    assert said in str(raised.value)


def test_a_saved_setup_needs_what_it_cannot_work_without(tmp_path):
    identity = _from_env(tmp_path)
    with pytest.raises(Invalid, match="issuer, client id, client secret"):
        identity.save(ProviderConfig(enabled=True), None)
    off = ProviderConfig(enabled=False, issuer="https://sso.example.com")
    identity.save(off, None)  # off: saved as it is
    assert identity.current() == (off, "")
