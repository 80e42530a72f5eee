import os
import stat
from pathlib import Path

import pytest

from stackyard import __version__
from stackyard.errors import ConfigError
from stackyard.settings import Settings

STRONG = "x" * 20 + "-strong-secret-value-0123456789"


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for key in list(os.environ):
        if key.startswith(("STACKYARD_", "STACKS_")) or key in (
            "DATABASE_URL",
            "APP_VERSION",
            "BACKUP_HELPER_IMAGE",
            "DOCKER_HOST",
        ):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_defaults_for_a_local_run(clean_env, tmp_path):
    settings = Settings()
    assert settings.stacks_dir == Path("stacks")
    assert settings.effective_stacks_host_dir == Path("stacks")
    assert settings.data_dir == Path("data")
    assert settings.app_version == __version__
    assert settings.host == "127.0.0.1"
    assert (settings.listen_port("central"), settings.listen_port("agent")) == (8080, 8081)
    assert settings.effective_database_url == f"sqlite:///{tmp_path / 'data' / 'stackyard.db'}"


def test_reads_environment_and_dotenv(clean_env, monkeypatch, tmp_path):
    (tmp_path / ".env").write_text("STACKS_DIR=/srv/stacks\nBACKUP_HELPER_IMAGE=helper:2\n")
    monkeypatch.setenv("STACKS_HOST_DIR", "/host/stacks")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u@db/stackyard")
    monkeypatch.setenv("APP_VERSION", "1.2.3")
    monkeypatch.setenv("STACKYARD_PORT", "9000")
    settings = Settings()
    assert settings.stacks_dir == Path("/srv/stacks")
    assert settings.effective_stacks_host_dir == Path("/host/stacks")
    assert settings.backup_helper_image == "helper:2"
    assert settings.effective_database_url == "postgresql+psycopg://u@db/stackyard"
    assert settings.app_version == "1.2.3"
    assert (settings.listen_port("central"), settings.listen_port("agent")) == (9000, 9000)


def test_app_version_must_be_semver(clean_env, monkeypatch):
    monkeypatch.setenv("APP_VERSION", "latest")
    with pytest.raises(ValueError, match="not a semantic version"):
        Settings()


def test_prepare_dirs_creates_missing_folders(tmp_path):
    settings = Settings(data_dir=tmp_path / "d", stacks_dir=tmp_path / "s")
    settings.prepare_dirs()
    assert (tmp_path / "d").is_dir() and (tmp_path / "s").is_dir()


def test_generated_secret_is_kept_private_and_stable(tmp_path):
    first = Settings(data_dir=tmp_path).effective_secret_key
    path = tmp_path / "secret_key"
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Settings(data_dir=tmp_path).effective_secret_key == first


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("secret_key", "changeme", "STACKYARD_SECRET_KEY is too weak"),
        ("secret_key", "short-secret", "STACKYARD_SECRET_KEY is too weak"),
        ("admin_password", "admin", "STACKYARD_ADMIN_PASSWORD is too weak"),
        ("admin_password", "password", "STACKYARD_ADMIN_PASSWORD is too weak"),
    ],
)
def test_unsafe_values_are_refused_outside_development(field, value, message):
    with pytest.raises(ConfigError, match=message) as caught:
        Settings(**{field: value}).check_safe("central")
    assert "STACKYARD_ENV=development" in caught.value.detail
    Settings(env="development", **{field: value}).check_safe("central")  # allowed there


def test_agent_mode_needs_a_strong_token():
    with pytest.raises(ConfigError, match="must be set in agent mode"):
        Settings(env="development").check_safe("agent")
    with pytest.raises(ConfigError, match="AGENT_TOKEN is too weak"):
        Settings(agent_token="secret").check_safe("agent")
    Settings(agent_token=STRONG).check_safe("agent")


def test_safe_settings_pass():
    Settings(secret_key=STRONG, admin_password="a-long-admin-passphrase").check_safe("central")
