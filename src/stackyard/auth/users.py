"""User accounts: create, change password, delete, sign-in check, first-start admin."""

from __future__ import annotations

import re
import secrets
import sys

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackyard.auth import passwords
from stackyard.auth.audit import audited
from stackyard.auth.principal import Role
from stackyard.db import Database
from stackyard.db.models import LoginSession, User
from stackyard.errors import Conflict, Forbidden, Invalid, NotFound, Unauthorized

_USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
BOOTSTRAP_ADMIN = "admin"


def _check_username(username: str) -> None:
    if not _USERNAME.match(username):
        raise Invalid(
            "Username must be 1-64 characters: letters, digits, '_', '.', '-', "
            "starting with a letter or digit"
        )


def get_user(session: Session, username: str) -> User:
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(f"User {username!r} does not exist")
    return user


def list_users(db: Database) -> list[User]:
    with db.session() as session:
        return list(session.scalars(select(User).order_by(User.username)))


def _insert(session: Session, username: str, password: str, role: Role) -> User:
    _check_username(username)
    if session.scalar(select(User.id).where(User.username == username)) is not None:
        raise Conflict(f"User {username!r} already exists")
    user = User(username=username, password_hash=passwords.hash_password(password), role=role)
    session.add(user)
    session.flush()
    return user


def create_user(db: Database, actor: str, username: str, password: str, role: Role) -> User:
    with audited(db, actor, "user.create", username) as note, db.session() as session:
        note.detail = f"role={role}"
        return _insert(session, username, password, role)


def delete_user(db: Database, actor: str, username: str) -> None:
    with audited(db, actor, "user.delete", username), db.session() as session:
        if username == actor:
            raise Forbidden("You cannot delete your own account")
        user = get_user(session, username)
        if user.role == Role.admin and _admin_count(session) <= 1:
            raise Conflict("Cannot delete the last admin")
        session.delete(user)


def set_password(db: Database, actor: str, username: str, password: str) -> None:
    """An admin (or the CLI) sets someone's password; their sessions end."""
    with audited(db, actor, "user.set_password", username), db.session() as session:
        _store_password(session, get_user(session, username), password)


def change_own_password(db: Database, user_id: int, current: str, new: str) -> None:
    with db.session() as session:
        user = session.get(User, user_id)
        if user is None or not passwords.verify_password(user.password_hash, current):
            raise Invalid("The current password is not correct")
        _store_password(session, user, new)


def _store_password(session: Session, user: User, password: str) -> None:
    user.password_hash = passwords.hash_password(password)
    session.query(LoginSession).filter(LoginSession.user_id == user.id).delete()


def authenticate(session: Session, username: str, password: str) -> User:
    user = session.scalar(select(User).where(User.username == username))
    if not passwords.verify_password(user.password_hash if user else None, password):
        raise Unauthorized("Invalid username or password")
    assert user is not None
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
    return user


def _admin_count(session: Session) -> int:
    return session.scalar(select(func.count()).where(User.role == Role.admin)) or 0


def ensure_bootstrap_admin(db: Database, password: str | None) -> None:
    """On first start with no users, create `admin`; print a generated password once."""
    with db.session() as session:
        if session.scalar(select(func.count()).select_from(User)):
            return
        generated = password is None
        password = password or secrets.token_urlsafe(15)
        _insert(session, BOOTSTRAP_ADMIN, password, Role.admin)
    if generated:
        # Straight to the console, never through logging: shown once, stored nowhere.
        print(
            f"\n  Created the admin user {BOOTSTRAP_ADMIN!r} with the one-time password:\n\n"
            f"      {password}\n\n  Sign in and change it under Settings.\n",
            file=sys.stderr,
            flush=True,
        )
