"""A provider's user as a Stackyard account: the role from their groups (at every
sign-in), the account found by the provider's subject, linked to a local account by a
verified email when the admin allows it, or made on first sign-in.

The provider is the authority on the role of its users: a sign-in that lowers it ends
every session and API token the account holds, and so does one refused because the user
is in no group that has a role here any more (`shut_out`). Only the last admin is kept an
admin, whatever the groups say: the service is never left without one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackyard.auth import sessions
from stackyard.auth.passwords import NO_PASSWORD
from stackyard.auth.principal import Role
from stackyard.auth.users import is_last_admin
from stackyard.db.models import User
from stackyard.errors import SignInRefused
from stackyard.identity.config import ProviderConfig


@dataclass(frozen=True)
class Arrival:
    """Who signed in, and what this sign-in changed about their account."""

    user: User
    how: str  # "created", "linked to the local account", "" (known already)
    role_change: str | None  # "operator → viewer", when the groups changed it
    dropped: bool  # the role went down: sessions and tokens were revoked
    #: The groups said less than admin for the last admin: still admin ("admin → viewer").
    kept_admin: str | None = None


def claim_values(claims: dict[str, Any], path: str) -> list[str]:
    """The values of a claim (a list, or one string), by a dotted path into nested ones."""
    value: Any = claims
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def role_of(claims: dict[str, Any], config: ProviderConfig) -> Role:
    """The highest role the user's groups map to; the default role (never admin) when
    none does; SignInRefused when there is no default."""
    groups = set(claim_values(claims, config.groups_claim))
    mapped = [rule.role for rule in config.roles if rule.value in groups]
    if mapped:
        return max(mapped, key=lambda role: role.rank)
    if config.default_role is not None:
        return Role(config.default_role)
    names = claims.get("_claim_names")
    left_out = isinstance(names, dict) and config.groups_claim in names
    if not groups and (left_out or claims.get("hasgroups") is True):
        raise SignInRefused(
            f"{config.name} left your groups out (too many to send: Entra ID's group "
            "overage): have it send only the groups assigned to this application",
            "groups_left_out",
        )
    raise SignInRefused(
        f"Your account at {config.name} is in no group that has a role here: ask an admin",
        "no_role",
    )


def arrive(
    session: Session, config: ProviderConfig, subject: str, claims: dict[str, Any]
) -> Arrival:
    role = role_of(claims, config)
    user = session.scalar(select(User).where(User.oidc_subject == subject))
    how = ""
    if user is None:
        user = _linkable(session, config, claims)
        if user is not None:
            user.oidc_subject = subject
            how = "linked to the local account"
        else:
            user = User(
                username=_free_name(session, claims, config),
                password_hash=NO_PASSWORD,
                role=role,
                oidc_subject=subject,
                email=_email(claims),
            )
            session.add(user)
            session.flush()
            how = "created"
    if user.disabled:
        raise SignInRefused("This account is disabled; ask an admin", "disabled")
    change, dropped = None, False
    if how != "created" and user.role != role:
        if is_last_admin(session, user):
            return Arrival(user, how, None, False, kept_admin=f"{user.role} → {role}")
        dropped = role.rank < Role(user.role).rank
        change = f"{user.role} → {role}"
        user.role = role
        if dropped:
            sessions.revoke_all(session, user.id)
    return Arrival(user, how, change, dropped)


def shut_out(session: Session, subject: str) -> str | None:
    """The provider gives its user no role here any more (in no mapped group): their
    account, if they have one, keeps nothing that works, as when a sign-in lowers the
    role. Returns its name (None: no account). The role itself stays as it was, for the
    admin to see; the next sign-in there sets it again."""
    user = session.scalar(select(User).where(User.oidc_subject == subject))
    if user is None:
        return None
    sessions.revoke_all(session, user.id)
    return user.username


def _email(claims: dict[str, Any]) -> str | None:
    email = claims.get("email")
    return email[:255] if isinstance(email, str) and "@" in email else None


def _linkable(session: Session, config: ProviderConfig, claims: dict[str, Any]) -> User | None:
    """The local account with the provider's email, when linking is on and the provider
    vouches for the email (`email_verified` true, not merely present)."""
    email = _email(claims)
    if not config.link_accounts or email is None or claims.get("email_verified") is not True:
        return None
    return session.scalar(
        select(User).where(func.lower(User.email) == email.lower(), User.oidc_subject.is_(None))
    )


_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def _free_name(session: Session, claims: dict[str, Any], config: ProviderConfig) -> str:
    """A new account's name from the chosen claim (else the email's local part, else
    "user"), made valid, and made unique with a number: a provider user called "admin"
    gets "admin-2", never the local admin."""
    said = claim_values(claims, config.username_claim)
    email = _email(claims)
    raw = said[0] if said else (email.split("@")[0] if email else "user")
    base = _NOT_NAME.sub("-", raw).strip("-._")[:56] or "user"
    name, n = base, 1
    while session.scalar(select(User.id).where(func.lower(User.username) == name.lower())):
        n += 1
        name = f"{base}-{n}"
    return name
