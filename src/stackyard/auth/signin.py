"""Sign-in: throttle check, password check, the second factor, session start."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from stackyard.auth import sessions, users
from stackyard.auth.principal import Principal, Role
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.totp import Totp
from stackyard.clock import utcnow
from stackyard.db import Database
from stackyard.db.models import User
from stackyard.errors import Forbidden


@dataclass(frozen=True)
class Attempt:
    """What someone sent to the sign-in form, and from where."""

    username: str
    password: str
    code: str | None
    client_ip: str | None
    user_agent: str | None


@dataclass(frozen=True)
class SignedIn:
    user: User
    session_secret: str
    how: str  # "password", "password and code", "password and recovery code"


@dataclass(frozen=True)
class CodeNeeded:
    """The password was right and the account has two-factor on: the same form again,
    with the code. The attempt still counts as failed until the code comes."""


@dataclass(frozen=True)
class LocalSignIn:
    """Who may sign in with a password: everyone, or (when an identity provider is the
    way in) admins only, as the break-glass path."""

    admins_only: bool = False
    provider: str = ""


async def sign_in(
    db: Database,
    throttle: LoginThrottle,
    totp: Totp,
    attempt: Attempt,
    ttl: timedelta,
    local: LocalSignIn,
) -> SignedIn | CodeNeeded:
    delay = throttle.begin(attempt.username, attempt.client_ip)
    if not delay:
        return await asyncio.to_thread(_attempt, db, throttle, totp, attempt, ttl, local)
    async with throttle.serial(attempt.username, attempt.client_ip):
        await asyncio.sleep(delay)
        return await asyncio.to_thread(_attempt, db, throttle, totp, attempt, ttl, local)


def _attempt(
    db: Database,
    throttle: LoginThrottle,
    totp: Totp,
    attempt: Attempt,
    ttl: timedelta,
    local: LocalSignIn,
) -> SignedIn | CodeNeeded:
    """One sign-in attempt, counted as failed by `LoginThrottle.begin` until it succeeds
    (a wrong two-factor code is a failed attempt like a wrong password)."""
    how = "password"
    with db.session() as session:
        user = users.authenticate(session, attempt.username, attempt.password)
        if local.admins_only and user.role != Role.admin:
            raise Forbidden(f"Sign in with {local.provider}: password sign-in is kept for admins")
        if user.totp_secret is not None:
            if not attempt.code:
                return CodeNeeded()
            how = f"password and {totp.check(user, attempt.code)}"
        secret = sessions.open_session(session, user, ttl, attempt.client_ip, attempt.user_agent)
    throttle.succeeded(attempt.username, attempt.client_ip)
    return SignedIn(user, secret, how)


def sign_out(db: Database, session_secret: str) -> str | None:
    """End the session; returns its sealed ID token when it was begun at a provider."""
    with db.session() as session:
        return sessions.close_session(session, session_secret)


def reauthenticate(
    db: Database,
    throttle: LoginThrottle,
    user_id: int,
    username: str,
    password: str,
    client_ip: str | None,
) -> None:
    """The signed-in user proves again that they know the password (before minting an
    API token); wrong guesses count towards the sign-in throttle."""
    throttle.begin(username, client_ip)
    users.check_password(db, user_id, password)
    throttle.succeeded(username, client_ip)


#: How fresh a sign-in at the identity provider must be to stand for the password that an
#: account of the provider does not have (before minting an API token).
RECENT = timedelta(minutes=15)


def recently_signed_in(db: Database, principal: Principal) -> None:
    with db.session() as session:
        begun = sessions.begun_at(session, principal)
    if begun is None or utcnow() - begun > RECENT:
        raise Forbidden(
            "Sign in again at the identity provider first: this needs a sign-in of the "
            "last 15 minutes"
        )
