"""How sign-in through an identity provider is set up: by an admin in Settings (kept in
the admin settings, the client secret sealed and write-only), or by settings variables
(then read-only in the UI).

Before the admin settings, the set-up was a sealed file in the data folder; `adopt_file`
brings it in once, at the central's start."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from stackyard.auth.principal import Role
from stackyard.db.admin_settings import AdminSettings, Stored
from stackyard.errors import ConfigError, Invalid, ProviderError
from stackyard.fs.jsonstore import JsonStore, StoreCorrupt
from stackyard.identity.peer import check_url
from stackyard.jsonmodel import StrictModel
from stackyard.sealing import Sealer
from stackyard.settings import Settings

log = logging.getLogger(__name__)
#: Its name in the admin settings, and as `SecretUnreadable` names it.
NAME, WHAT = "identity-provider", "the identity provider"
#: The file of earlier versions (in the data folder), and its sealing purpose.
FILE, FILE_PURPOSE = "identity-provider.json", "identity-provider"

#: A claim's name, or a dotted path into nested claims (Keycloak's `realm_access.roles`).
CLAIM = r"^[A-Za-z0-9_:/.-]{1,100}$"


class RoleRule(StrictModel):
    value: str = Field(
        min_length=1, max_length=200, description="A group (or value of the groups claim)"
    )
    role: Role = Field(strict=False)


class ProviderConfig(StrictModel):
    # Every field is in an answer, defaults too: the schema says so to generated clients.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    enabled: bool = False
    name: str = Field(
        "SSO", min_length=1, max_length=40, description='Shown as "Sign in with <name>"'
    )
    issuer: str = Field(
        "", max_length=500, description="As the provider's discovery document names itself"
    )
    client_id: str = Field("", max_length=255)
    scopes: list[str] = Field(
        default_factory=lambda: ["openid", "profile", "email"],
        max_length=20,
        description="Asked for at sign-in; `openid` is required, add `groups` if the "
        "provider sends groups only when asked",
    )
    groups_claim: str = Field("groups", pattern=CLAIM)
    username_claim: str = Field(
        "preferred_username",
        pattern=CLAIM,
        description="The claim a new account's name is made from",
    )
    roles: list[RoleRule] = Field(
        default_factory=list,
        max_length=100,
        description="Group to role; a user in several groups gets the highest role",
    )
    default_role: Literal["operator", "viewer"] | None = Field(
        None,
        description="The role of a user in no mapped group; none: they are refused. Never admin.",
    )
    link_accounts: bool = Field(
        False,
        description="Let a provider account sign in as the local account with the same "
        "email, when the provider says the email is verified",
    )
    password_sign_in: Literal["everyone", "admins"] = Field(
        "everyone",
        description="Who may still sign in with a password while the provider is on "
        "(admins: the break-glass path)",
    )

    def check(self, has_secret: bool) -> None:
        """The rules across fields, for a configuration that is on."""
        if not self.enabled:
            return
        missing = [
            name
            for name, value in (
                ("issuer", self.issuer),
                ("client id", self.client_id),
                ("client secret", has_secret),
            )
            if not value
        ]
        if missing:
            raise Invalid(f"Sign-in through a provider needs its {', '.join(missing)}")
        if "openid" not in self.scopes:
            raise Invalid("The scopes must include openid")
        if any(not s or " " in s for s in self.scopes):
            raise Invalid("Each scope is one word")
        try:
            check_url(self.issuer, "The issuer")
        except ProviderError as exc:
            raise Invalid(str(exc)) from exc


class IdentitySettings:
    """The configuration in force: the settings variables' when they name an issuer,
    else what an admin saved."""

    def __init__(self, settings: Settings, admin: AdminSettings) -> None:
        self._admin = admin
        self.from_env = bool(settings.oidc_issuer)
        self._env = _from_settings(settings) if self.from_env else None

    def config(self) -> ProviderConfig:
        """The configuration (the client secret left sealed: who may sign in with a
        password, and how, is known without it)."""
        if self._env is not None:
            return self._env[0]
        return _config(self._admin.get(NAME))

    def secret_set(self) -> bool:
        """Whether a client secret is kept (without opening it)."""
        if self._env is not None:
            return bool(self._env[1])
        stored = self._admin.get(NAME)
        return stored is not None and stored.sealed is not None

    def client_secret(self) -> str:
        """The client secret ("" when none is kept); SecretUnreadable when it was sealed
        under another secret key."""
        if self._env is not None:
            return self._env[1]
        return self._secret(self._admin.get(NAME))

    def current(self) -> tuple[ProviderConfig, str]:
        """The configuration and the client secret (as `client_secret`)."""
        return self.config(), self.client_secret()

    def _secret(self, stored: Stored | None) -> str:
        secret = self._admin.secret(stored, WHAT) if stored is not None else None
        return str((secret or {}).get("client_secret", ""))

    def check(self, config: ProviderConfig, client_secret: str | None) -> None:
        """What `save` refuses before it writes anything (Invalid)."""
        if self.from_env:
            raise Invalid(
                "Sign-in through a provider is set by settings variables "
                "(STACKYARD_OIDC_*): change them there"
            )
        if client_secret is not None:
            config.check(bool(client_secret))
        elif config.enabled:
            config.check(bool(self._secret(self._admin.get(NAME))))

    def save(self, config: ProviderConfig, client_secret: str | None) -> None:
        """`client_secret` None keeps the one saved: opened when the provider is to be on
        (SecretUnreadable when it cannot be: enter it again), kept sealed as it is when
        it is off."""
        self.check(config, client_secret)
        value = {"config": config.model_dump(mode="json")}
        if client_secret is not None:
            secret = {"client_secret": client_secret} if client_secret else None
            self._admin.put(NAME, value, secret)
            return
        self._admin.put_value(NAME, value)


def _config(stored: Stored | None) -> ProviderConfig:
    """The saved configuration (the default, off, when there is none or it no longer
    reads as one)."""
    try:
        return ProviderConfig.model_validate((stored.value if stored else {}).get("config", {}))
    except ValidationError:
        return ProviderConfig()


def adopt_file(data_dir: Path, secret_key: str, admin: AdminSettings) -> None:
    """The set-up of the sealed file of earlier versions into the admin settings, then
    the file removed (only once it reads back). A file sealed under another secret key
    is left as it is (logged): the provider is set up again."""
    store = JsonStore(data_dir / FILE, codec=Sealer(secret_key, FILE_PURPOSE))
    try:
        doc: Any = store.read(None, strict=True)
    except StoreCorrupt:
        log.warning(
            "%s cannot be read with this instance's secret key (was STACKYARD_SECRET_KEY "
            "changed?): left as it is; set the identity provider up again",
            store.path,
        )
        return
    if doc is None:
        return
    if not isinstance(doc, dict):
        doc = {}
    secret = str(doc.get("client_secret") or "")
    value = {"config": doc.get("config") or {}}
    if admin.adopt({NAME: (value, {"client_secret": secret} if secret else None)}):
        store.remove()
        log.info("The identity provider's set-up moved from %s into the database", store.path)


def _from_settings(settings: Settings) -> tuple[ProviderConfig, str]:
    try:
        roles = []
        for pair in filter(None, (p.strip() for p in settings.oidc_roles.split(","))):
            value, sep, role = pair.rpartition("=")
            if not sep:
                raise ValueError(f"STACKYARD_OIDC_ROLES: {pair!r} is not group=role")
            roles.append(RoleRule(value=value.strip(), role=Role(role.strip())))
        config = ProviderConfig.model_validate(
            {
                "enabled": True,
                "name": settings.oidc_name,
                "issuer": settings.oidc_issuer,
                "client_id": settings.oidc_client_id,
                "scopes": settings.oidc_scopes.split(),
                "groups_claim": settings.oidc_groups_claim,
                "username_claim": settings.oidc_username_claim,
                "roles": roles,
                "default_role": settings.oidc_default_role or None,
                "link_accounts": settings.oidc_link_accounts,
                "password_sign_in": settings.oidc_password_sign_in,
            }
        )
        config.check(bool(settings.oidc_client_secret))
    except (ValueError, Invalid) as exc:  # ValidationError is a ValueError
        raise ConfigError(f"STACKYARD_OIDC_* settings: {exc}") from exc
    return config, settings.oidc_client_secret
