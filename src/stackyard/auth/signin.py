"""Sign-in: throttle check, password check, the second factor, session start.

What a refused sign-in answers tells a guesser nothing they did not send:

- an account with two-factor on answers "code needed" to a password alone, right or
  wrong: the password is judged together with the code, and a wrong password and a
  wrong code answer the same;
- while password sign-in is kept for admins, anyone else's right password answers as a
  wrong one does (after the same work);
- the limit on two-factor codes (`throttle.CodeLimit`) counts every attempt that sends a
  code, before its password is looked at;
- a code of the account's that was already used (the one that turned two-factor on, say)
  answers that it was used, with the right password or a wrong one alike: the answer
  depends on the code alone, never on the password.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta

from stackyard.auth import sessions, users
from stackyard.auth.principal import Principal, Role
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.totp import Totp, is_time_code
from stackyard.clock import utcnow
from stackyard.db import Database
from stackyard.db.models import User
from stackyard.errors import Forbidden, Unauthorized

#: The answer to a code already used, whatever the password.
CODE_USED = (
    "That code was already used (each code signs in once): wait for the next code your "
    "authenticator app shows"
)


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
    """The account has two-factor on: the same form again, with the code (said whatever
    the password was). The attempt still counts as failed until the code comes."""


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
    # A two-factor code waits its turn on the account first (refused: nothing counted),
    # then the throttle of every attempt (refused: the code was not checked after all).
    code = attempt.code is not None and is_time_code(attempt.code)
    if code:
        throttle.codes.begin(attempt.username)
    try:
        delay = throttle.begin(attempt.username, attempt.client_ip)
    except BaseException:
        if code:
            throttle.codes.end(attempt.username, right=False, checked=False)
        raise
    result: SignedIn | CodeNeeded | None = None
    try:
        if not delay:
            result = await asyncio.to_thread(_attempt, db, throttle, totp, attempt, ttl, local)
        else:
            async with throttle.serial(attempt.username, attempt.client_ip):
                await asyncio.sleep(delay)
                result = await asyncio.to_thread(_attempt, db, throttle, totp, attempt, ttl, local)
        return result
    finally:
        if code:
            throttle.codes.end(attempt.username, right=isinstance(result, SignedIn))


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
    refused = Unauthorized(_refusal(attempt, local))
    how = "password"
    with db.session() as session:
        user, right = users.password_of(session, attempt.username, attempt.password)
        if user is not None and user.totp_secret is not None and not attempt.code:
            return CodeNeeded()  # whatever the password: it is judged with the code
        if user is not None and attempt.code and totp.used_before(user, attempt.code):
            raise Unauthorized(CODE_USED)  # (before the password: said whatever it was)
        if user is None or not right or (local.admins_only and user.role != Role.admin):
            raise refused
        if user.totp_secret is not None:
            assert attempt.code is not None
            used = totp.check(session, user, attempt.code)
            if used is None:
                raise refused
            how = f"password and {used}"
        if user.disabled:
            raise Forbidden("This account is disabled; ask an admin")
        secret = sessions.open_session(session, user, ttl, attempt.client_ip, attempt.user_agent)
    throttle.succeeded(attempt.username, attempt.client_ip)
    return SignedIn(user, secret, how)


def _refusal(attempt: Attempt, local: LocalSignIn) -> str:
    """The one answer to every refused sign-in (but a disabled account's, which only the
    full credentials reach)."""
    said = "Invalid username, password or code" if attempt.code else "Invalid username or password"
    if local.admins_only:
        said += f" (password sign-in is kept for admins: others sign in with {local.provider})"
    return said


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
    """The signed-in user proves again that they know the password (before setting up
    two-factor, say); wrong guesses count towards the sign-in throttle."""
    throttle.begin(username, client_ip)
    users.check_password(db, user_id, password)
    throttle.succeeded(username, client_ip)


#: How fresh a sign-in at the identity provider must be to stand for the password that an
#: account of the provider does not have (before minting an API token).
RECENT = timedelta(minutes=15)


def token_grant(
    db: Database,
    throttle: LoginThrottle,
    principal: Principal,
    password: str,
    client_ip: str | None,
    local: LocalSignIn,
) -> datetime | None:
    """Before an API token is minted, the signed-in user proves it is them: with their
    password again, or with a sign-in at the identity provider of the last 15 minutes
    (an account of the provider has no password; while password sign-in is kept for
    admins, nobody else's password counts). Returns when the token is to end: None (until
    revoked) for a password, the end of that sign-in's session for the provider's."""
    user = users.get_by_id(db, principal.user_id)
    if users.has_password(user) and (principal.is_admin or not local.admins_only):
        reauthenticate(db, throttle, user.id, principal.username, password, client_ip)
        return None
    with db.session() as session:
        there = sessions.at_provider(session, principal)
    if there is None or utcnow() - there[0] > RECENT:
        raise Forbidden(
            "Sign in again at the identity provider first: this needs a sign-in there of "
            "the last 15 minutes"
        )
    return there[1]
