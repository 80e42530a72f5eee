"""Resolving credentials: sign-in sessions (cookie) and API tokens (bearer).

An API token works until it is revoked; one minted on the strength of a sign-in at the
identity provider (an account of the provider's has no password to ask for) also ends
when that sign-in would have as a session, `expires_at`, moved on by each later sign-in
there (`identity.accounts`). The provider is asked again at least once a session
lifetime: someone removed or disabled there keeps no token for longer. A token of an
account of the provider's without an end (made before tokens had one) works only once a
sign-in there has given it one."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, or_, select
from sqlalchemy.orm import Session

from stackyard.auth.passwords import NO_PASSWORD
from stackyard.auth.principal import Principal, Role
from stackyard.auth.tokens import hash_secret, new_secret
from stackyard.clock import utcnow
from stackyard.db.models import ApiToken, LoginSession, User
from stackyard.errors import Unauthorized

_TOUCH_EVERY = timedelta(minutes=1)


def open_session(
    session: Session,
    user: User,
    ttl: timedelta,
    client_ip: str | None,
    user_agent: str | None,
    id_token: str | None = None,
) -> str:
    """Start a sign-in session; returns the secret that goes into the cookie. `id_token`:
    the identity provider's (sealed), for a session begun there."""
    now = utcnow()
    session.execute(delete(LoginSession).where(LoginSession.expires_at < now))
    secret = new_secret()
    session.add(
        LoginSession(
            token_hash=hash_secret(secret),
            user_id=user.id,
            expires_at=now + ttl,
            client_ip=client_ip,
            user_agent=(user_agent or "")[:255] or None,
            id_token=id_token,
        )
    )
    return secret


def close_session(session: Session, secret: str) -> str | None:
    """End a session; returns its sealed ID token, if it was begun at a provider."""
    login = session.scalar(
        select(LoginSession).where(LoginSession.token_hash == hash_secret(secret))
    )
    if login is None:
        return None
    session.delete(login)
    return login.id_token


def revoke_all(session: Session, user_id: int, keep_session: str | None = None) -> None:
    """End every sign-in session and API token of a user (but `keep_session`)."""
    sessions = delete(LoginSession).where(LoginSession.user_id == user_id)
    if keep_session is not None:
        sessions = sessions.where(LoginSession.token_hash != hash_secret(keep_session))
    session.execute(sessions)
    session.execute(delete(ApiToken).where(ApiToken.user_id == user_id))


def principal_from_session(session: Session, secret: str) -> Principal:
    digest = hash_secret(secret)
    row = session.execute(
        select(LoginSession, User)
        .join(User, User.id == LoginSession.user_id)
        .where(LoginSession.token_hash == digest)
    ).first()
    now = utcnow()
    if row is None or row.LoginSession.expires_at <= now or row.User.disabled:
        raise Unauthorized("Not signed in or the session has expired")
    login, user = row
    if now - login.last_seen_at > _TOUCH_EVERY:
        login.last_seen_at = now
    # (an account of the identity provider has no password to set two-factor up with:
    # the provider asks for its own second factor)
    due = user.totp_required and user.totp_secret is None and user.password_hash != NO_PASSWORD
    return Principal(user.id, user.username, Role(user.role), "session", digest, secret, due)


def _token_in_force(now: datetime) -> ColumnElement[bool]:
    """The API tokens that work at `now` (joined with their users)."""
    return or_(
        ApiToken.expires_at > now,
        and_(ApiToken.expires_at.is_(None), User.password_hash != NO_PASSWORD),
    )


def principal_from_token(session: Session, token: str) -> Principal:
    digest = hash_secret(token)
    now = utcnow()
    row = session.execute(
        select(ApiToken, User)
        .join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == digest, _token_in_force(now))
    ).first()
    if row is None or row.User.disabled:
        raise Unauthorized("Invalid API token, or it has expired")
    api_token, user = row
    if api_token.last_used_at is None or now - api_token.last_used_at > _TOUCH_EVERY:
        api_token.last_used_at = now
    return Principal(user.id, user.username, Role(user.role), "token", digest)


def at_provider(session: Session, principal: Principal) -> tuple[datetime, datetime] | None:
    """When the session that proved `principal` began at the identity provider, and when
    it ends; None for an API token or a session begun with a password."""
    if principal.via != "session":
        return None
    query = select(LoginSession.created_at, LoginSession.expires_at).where(
        LoginSession.token_hash == principal.credential_hash, LoginSession.id_token.is_not(None)
    )
    row = session.execute(query).first()
    return None if row is None else (row.created_at, row.expires_at)


def role_now(session: Session, principal: Principal) -> Role | None:
    """The role the user behind `principal` has now, by the credential that proved them;
    None when that credential no longer works (signed out, expired, revoked, the account
    disabled or removed). For what stays open: streams, shells."""
    model = LoginSession if principal.via == "session" else ApiToken
    query = (
        select(User.disabled, User.role)
        .join(model, model.user_id == User.id)
        .where(model.token_hash == principal.credential_hash)
    )
    if principal.via == "session":
        query = query.where(LoginSession.expires_at > utcnow())
    else:
        query = query.where(_token_in_force(utcnow()))
    row = session.execute(query).first()
    return None if row is None or row.disabled else Role(row.role)


def still_valid(session: Session, principal: Principal) -> bool:
    """Whether the credential that proved `principal` still works, for the same role
    (for long streams)."""
    return role_now(session, principal) == principal.role
