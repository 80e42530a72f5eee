"""API tokens for scripts: bearer secrets of a user, stored hashed, shown once."""

from __future__ import annotations

from sqlalchemy import select

from stackyard.auth.tokens import TOKEN_PREFIX, hash_secret, new_secret
from stackyard.auth.users import get_user
from stackyard.db import Database
from stackyard.db.models import ApiToken
from stackyard.errors import Invalid, NotFound


def create_token(db: Database, user_id: int, name: str) -> tuple[ApiToken, str]:
    """Returns the stored row and the secret (which is not stored)."""
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise Invalid("Token name must be 1-100 characters")
    secret = new_secret(TOKEN_PREFIX)
    with db.session() as session:
        token = ApiToken(user_id=user_id, name=name, token_hash=hash_secret(secret))
        session.add(token)
        session.flush()
    return token, secret


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
