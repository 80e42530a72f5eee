"""How sign-in through an identity provider is set up: by an admin in Settings (kept in
the data folder, sealed, the client secret write-only), or by settings variables (then
read-only in the UI)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from stackyard.auth.principal import Role
from stackyard.errors import ConfigError, Invalid, ProviderError
from stackyard.fs.jsonstore import JsonStore
from stackyard.identity.peer import check_url
from stackyard.jsonmodel import StrictModel
from stackyard.sealing import Sealer
from stackyard.settings import Settings

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

    def __init__(self, settings: Settings, data_dir: Path, secret_key: str) -> None:
        self._store = JsonStore(
            data_dir / "identity-provider.json", codec=Sealer(secret_key, "identity-provider")
        )
        self.from_env = bool(settings.oidc_issuer)
        self._env = _from_settings(settings) if self.from_env else None

    def current(self) -> tuple[ProviderConfig, str]:
        """The configuration and the client secret."""
        if self._env is not None:
            return self._env
        doc = self._store.read({})
        try:
            config = ProviderConfig.model_validate(doc.get("config", {}))
        except ValidationError:
            config = ProviderConfig()
        return config, str(doc.get("client_secret", ""))

    def save(self, config: ProviderConfig, client_secret: str | None) -> None:
        """`client_secret` None keeps the one saved."""
        if self.from_env:
            raise Invalid(
                "Sign-in through a provider is set by settings variables "
                "(STACKYARD_OIDC_*): change them there"
            )

        def change(doc: dict[str, str]) -> dict[str, object]:
            secret = doc.get("client_secret", "") if client_secret is None else client_secret
            config.check(bool(secret))
            return {"config": config.model_dump(mode="json"), "client_secret": secret}

        self._store.update(change, {})


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
