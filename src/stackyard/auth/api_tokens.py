"""API tokens for scripts: bearer secrets of a user, stored hashed, shown once. One
minted on a sign-in at the identity provider ends with it (`auth.sessions`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from stackyard.auth.tokens import TOKEN_PREFIX, hash_secret, new_secret
from stackyard.auth.users import get_user, has_password
from stackyard.db import Database
from stackyard.db.models import ApiToken, User
from stackyard.errors import Invalid, NotFound


def create_token(
    db: Database, user_id: int, name: str, expires_at: datetime | None = None
) -> tuple[ApiToken, str]:
    """Returns the stored row and the secret (which is not stored). `expires_at`: the end
    of the sign-in at the provider it was minted on (None: until revoked, which an
    account of the provider's never gets: it would not work)."""
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise Invalid("Token name must be 1-100 characters")
    secret = new_secret(TOKEN_PREFIX)
    with db.session() as session:
        user = session.get(User, user_id)
        if user is not None and not has_password(user) and expires_at is None:
            raise Invalid(
                f"{user.username} signs in through the identity provider: its API tokens "
                "are made after a sign-in there (Settings, API tokens)"
            )
        token = ApiToken(
            user_id=user_id, name=name, token_hash=hash_secret(secret), expires_at=expires_at
        )
        session.add(token)
        session.flush()
    return token, secret


def renew_at_provider(session: Session, user: User, until: datetime) -> None:
    """The user signed in at the identity provider again (a session until `until`): their
    tokens minted on such sign-ins last as long, and so do all of an account of the
    provider's (one made before tokens had an end, too)."""
    sooner = ApiToken.expires_at < until
    which = sooner if has_password(user) else or_(ApiToken.expires_at.is_(None), sooner)
    tokens = update(ApiToken).where(ApiToken.user_id == user.id, which).values(expires_at=until)
    session.execute(tokens.execution_options(synchronize_session=False))


def list_tokens(db: Database, user_id: int) -> list[ApiToken]:
    with db.session() as session:
        query = select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id)
        return list(session.scalars(query))


def revoke_token(db: Database, user_id: int, token_id: int) -> None:
    with db.session() as session:
        token = session.get(ApiToken, token_id)
        if token is None or token.user_id != user_id:
            raise NotFound(f"API token {token_id} does not exist")
        session.delete(token)


def tokens_of(db: Database, username: str) -> list[ApiToken]:
    """Any user's tokens (for admins)."""
    with db.session() as session:
        user_id = get_user(session, username).id
    return list_tokens(db, user_id)


def revoke_token_of(db: Database, username: str, token_id: int) -> None:
    """An admin revokes someone's token."""
    with db.session() as session:
        user_id = get_user(session, username).id
    revoke_token(db, user_id, token_id)
