"""The one place configuration is read: environment variables and an optional `.env` file."""

from __future__ import annotations

import ipaddress
import secrets
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stackyard import __version__
from stackyard.errors import ConfigError
from stackyard.fs.atomic import write_atomic

#: Values people paste from examples; refused as secrets outside development.
_KNOWN_WEAK = {
    "",
    "admin",
    "changeme",
    "change-me",
    "password",
    "secret",
    "stackyard",
    "development",
    "dev",
    "test",
}
MIN_SECRET_LENGTH = 32
MIN_PASSWORD_LENGTH = 8
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Environment(StrEnum):
    production = "production"
    development = "development"


class CookieSecure(StrEnum):
    auto = "auto"  # Secure when the request came over https
    always = "true"
    never = "false"


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


#: What a process serves: the central service, or an agent.
Mode = Literal["central", "agent"]


class Settings(BaseSettings):
    """Every setting, with the environment variable that sets it.

    Construct with keyword arguments (field names) in tests; the service reads the
    environment and `.env` in the working directory.
    """

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    env: Environment = Field(Environment.production, validation_alias=_env("STACKYARD_ENV"))
    stacks_dir: Path = Field(Path("./stacks"), validation_alias=_env("STACKS_DIR"))
    stacks_host_dir: Path | None = Field(None, validation_alias=_env("STACKS_HOST_DIR"))
    backup_helper_image: str = Field(
        "debian:bookworm-slim", validation_alias=_env("BACKUP_HELPER_IMAGE")
    )
    backup_level: int = Field(1, ge=0, le=9, validation_alias=_env("STACKYARD_BACKUP_LEVEL"))
    host_name: str | None = Field(None, validation_alias=_env("STACKYARD_HOST_NAME"))
    data_dir: Path = Field(Path("./data"), validation_alias=_env("STACKYARD_DATA_DIR"))
    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    app_version: str = Field(__version__, validation_alias=_env("APP_VERSION"))
    docker_host: str | None = Field(None, validation_alias=_env("DOCKER_HOST"))
    host: str = Field("127.0.0.1", validation_alias=_env("STACKYARD_HOST"))
    port: int | None = Field(None, validation_alias=_env("STACKYARD_PORT"))
    secret_key: str | None = Field(None, validation_alias=_env("STACKYARD_SECRET_KEY"))
    admin_password: str | None = Field(None, validation_alias=_env("STACKYARD_ADMIN_PASSWORD"))
    agent_token: str | None = Field(None, validation_alias=_env("STACKYARD_AGENT_TOKEN"))
    session_ttl_hours: int = Field(
        24 * 7, ge=1, validation_alias=_env("STACKYARD_SESSION_TTL_HOURS")
    )
    cookie_secure: CookieSecure = Field(
        CookieSecure.auto, validation_alias=_env("STACKYARD_COOKIE_SECURE")
    )
    log_level: str = Field("INFO", validation_alias=_env("STACKYARD_LOG_LEVEL"))
    zip_level: int = Field(6, ge=0, le=9, validation_alias=_env("STACKYARD_ZIP_LEVEL"))
    update_check_interval: int = Field(
        6 * 3600, ge=0, validation_alias=_env("STACKYARD_UPDATE_CHECK_INTERVAL")
    )
    update_health_seconds: int = Field(
        120, ge=5, le=3600, validation_alias=_env("STACKYARD_UPDATE_HEALTH_SECONDS")
    )
    max_json_bytes: int = Field(
        2 * 1024 * 1024, ge=1024, validation_alias=_env("STACKYARD_MAX_JSON_BYTES")
    )
    trusted_proxies: str = Field("", validation_alias=_env("STACKYARD_TRUSTED_PROXIES"))
    subprocess_memory_mb: int = Field(
        1024, ge=64, validation_alias=_env("STACKYARD_SUBPROCESS_MEMORY_MB")
    )
    subprocess_cpu_seconds: int = Field(
        120, ge=1, validation_alias=_env("STACKYARD_SUBPROCESS_CPU_SECONDS")
    )
    schedule_grace_minutes: int = Field(
        60, ge=0, validation_alias=_env("STACKYARD_SCHEDULE_GRACE_MINUTES")
    )
    agent_timeout: float = Field(
        5.0, gt=0, le=120, validation_alias=_env("STACKYARD_AGENT_TIMEOUT")
    )
    agent_tls: bool = Field(True, validation_alias=_env("STACKYARD_AGENT_TLS"))
    #: An agent that dials its central: the central's URL (`stackyard agent --connect`).
    connect_url: str | None = Field(None, validation_alias=_env("STACKYARD_CONNECT_URL"))
    #: The address users open the UI at: links in notifications are made from it.
    public_url: str | None = Field(None, validation_alias=_env("STACKYARD_PUBLIC_URL"))
    #: Seconds between looks at the whole fleet for conditions to notify of (while
    #: some channel is enabled); 0: only when someone opens the dashboard.
    notify_check_seconds: float = Field(
        60.0, ge=0, validation_alias=_env("STACKYARD_NOTIFY_CHECK_SECONDS")
    )
    #: Seconds in which a channel earns one more send (three to spare when quiet); what
    #: comes while it has none is sent as digests.
    notify_window_seconds: float = Field(
        2.0, ge=0, le=3600, validation_alias=_env("STACKYARD_NOTIFY_WINDOW_SECONDS")
    )
    #: Seconds before a failed delivery is tried again (doubled at each failure).
    notify_retry_seconds: float = Field(
        5.0, gt=0, le=3600, validation_alias=_env("STACKYARD_NOTIFY_RETRY_SECONDS")
    )
    #: Sign-in through an OpenID Connect provider, set here instead of in Settings (the
    #: UI then shows it read-only): `stackyard.identity.config`.
    oidc_issuer: str | None = Field(None, validation_alias=_env("STACKYARD_OIDC_ISSUER"))
    oidc_client_id: str = Field("", validation_alias=_env("STACKYARD_OIDC_CLIENT_ID"))
    oidc_client_secret: str = Field("", validation_alias=_env("STACKYARD_OIDC_CLIENT_SECRET"))
    oidc_name: str = Field("SSO", validation_alias=_env("STACKYARD_OIDC_NAME"))
    oidc_scopes: str = Field("openid profile email", validation_alias=_env("STACKYARD_OIDC_SCOPES"))
    oidc_groups_claim: str = Field("groups", validation_alias=_env("STACKYARD_OIDC_GROUPS_CLAIM"))
    oidc_username_claim: str = Field(
        "preferred_username", validation_alias=_env("STACKYARD_OIDC_USERNAME_CLAIM")
    )
    #: `group=role` pairs, comma-separated: `stackyard-admins=admin,ops=operator`.
    oidc_roles: str = Field("", validation_alias=_env("STACKYARD_OIDC_ROLES"))
    oidc_default_role: str = Field("", validation_alias=_env("STACKYARD_OIDC_DEFAULT_ROLE"))
    oidc_link_accounts: bool = Field(False, validation_alias=_env("STACKYARD_OIDC_LINK_ACCOUNTS"))
    oidc_password_sign_in: str = Field(
        "everyone", validation_alias=_env("STACKYARD_OIDC_PASSWORD_SIGN_IN")
    )
    agent_tls_cert: Path | None = Field(None, validation_alias=_env("STACKYARD_AGENT_TLS_CERT"))
    agent_tls_key: Path | None = Field(None, validation_alias=_env("STACKYARD_AGENT_TLS_KEY"))
    #: For the test suite only: Argon2id at its lowest cost (a sign-in costs a millisecond
    #: instead of tens), so that a thousand tests that sign in do not spend minutes on it.
    test_cheap_password_hashes: bool = Field(
        False, validation_alias=_env("STACKYARD_TEST_CHEAP_PASSWORD_HASHES")
    )

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("an http:// or https:// address, as users open the UI")
        return value.rstrip("/") if value else None

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: str) -> str:
        _parse_networks(value)  # raises ValueError naming the bad entry
        return value

    @cached_property
    def trusted_proxy_networks(self) -> tuple[IPNetwork, ...]:
        """The reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed."""
        return _parse_networks(self.trusted_proxies)

    @field_validator("app_version")
    @classmethod
    def _semver(cls, value: str) -> str:
        from stackyard.version import parse_semver

        parse_semver(value)  # raises ValueError with a clear message
        return value

    def listen_port(self, mode: Mode) -> int:
        """The port the service listens on (`--port` aside): 8080, or 8081 for an agent."""
        return self.port or (8080 if mode == "central" else 8081)

    @property
    def development(self) -> bool:
        return self.env is Environment.development

    @property
    def effective_stacks_host_dir(self) -> Path:
        return self.stacks_host_dir or self.stacks_dir

    @cached_property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'stackyard.db').resolve()}"

    def prepare_dirs(self) -> None:
        """Create the data and stacks folders if they are missing. The data folder (the
        database, the secret key, caches) is readable by its owner only."""
        self._private_data_dir()
        self.stacks_dir.mkdir(parents=True, exist_ok=True)

    def _private_data_dir(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.data_dir.stat().st_mode & 0o077:
            self.data_dir.chmod(0o700)

    @cached_property
    def effective_secret_key(self) -> str:
        """The configured secret, or one generated once and kept in the data folder."""
        if self.secret_key is not None:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if not path.exists():
            self._private_data_dir()
            # Written whole or not at all: a crash never leaves an empty key behind.
            write_atomic(path, secrets.token_urlsafe(48).encode(), mode=0o600)
        key = path.read_text().strip()
        if not key:
            raise ConfigError(f"{path} is empty: remove it to have a new key generated")
        return key

    @cached_property
    def instance_id(self) -> str:
        """This service's own name among those sharing a database: made once and kept in
        the data folder, so that a restart knows the work its previous life held."""
        path = self.data_dir / "instance_id"
        if not path.exists():
            self._private_data_dir()
            write_atomic(path, secrets.token_hex(16).encode(), mode=0o600)
        return path.read_text().strip()

    def check_safe(self, mode: str) -> None:
        """Refuse unsafe values outside development, naming what to change."""
        if mode == "agent" and not self.agent_token:
            raise ConfigError("STACKYARD_AGENT_TOKEN must be set in agent mode")
        if self.development:
            return
        problems = []
        if self.secret_key is not None and _weak(self.secret_key, MIN_SECRET_LENGTH):
            problems.append(
                f"STACKYARD_SECRET_KEY is too weak (use at least {MIN_SECRET_LENGTH} random "
                "characters, or unset it to have one generated in the data folder)"
            )
        if self.admin_password is not None and _weak(self.admin_password, MIN_PASSWORD_LENGTH):
            problems.append(
                f"STACKYARD_ADMIN_PASSWORD is too weak (use at least {MIN_PASSWORD_LENGTH} "
                "characters that are not a common default)"
            )
        if mode == "agent" and _weak(self.agent_token or "", MIN_SECRET_LENGTH):
            problems.append(
                f"STACKYARD_AGENT_TOKEN is too weak (use at least {MIN_SECRET_LENGTH} "
                "random characters, for example from `stackyard agent token`)"
            )
        if problems:
            raise ConfigError(
                "Refusing to start with unsafe settings: "
                + "; ".join(problems)
                + ". Set STACKYARD_ENV=development to allow them on a development machine."
            )

    def secrets(self) -> list[str]:
        """Secret values that must never reach a log line."""
        values = [self.secret_key, self.admin_password, self.agent_token]
        return [v for v in values if v]


def _parse_networks(value: str) -> tuple[IPNetwork, ...]:
    networks = []
    for item in value.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError as exc:
            raise ValueError(
                f"STACKYARD_TRUSTED_PROXIES: {item!r} is not an IP address or network"
            ) from exc
    return tuple(networks)


def _weak(value: str, min_length: int) -> bool:
    return len(value) < min_length or value.strip().lower() in _KNOWN_WEAK
