"""User accounts: create, change password, delete, sign-in check, first-start admin."""

from __future__ import annotations

import logging
import re
import secrets
import sys
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.orm import Session

from stackyard.auth import passwords, sessions
from stackyard.auth.principal import LEGACY_ROLES, Role
from stackyard.db import Database
from stackyard.db.models import User
from stackyard.errors import Conflict, Forbidden, Invalid, NotFound, Unauthorized

log = logging.getLogger(__name__)
_USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,189}$")
BOOTSTRAP_ADMIN = "admin"


def _check_username(username: str) -> None:
    if not _USERNAME.match(username):
        raise Invalid(
            "Username must be 1-64 characters: letters, digits, '_', '.', '-', "
            "starting with a letter or digit"
        )


def account_named(db: Database, username: str) -> str | None:
    """The name of the account called `username` as it is stored; None when there is none
    (what a sign-in form was sent is anyone's text)."""
    with db.session() as session:
        return session.scalar(select(User.username).where(User.username == username))


def has_password(user: User) -> bool:
    return user.password_hash != passwords.NO_PASSWORD


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


def create_user(db: Database, username: str, password: str, role: Role) -> User:
    with db.session() as session:
        return _insert(session, username, password, role)


def delete_user(db: Database, actor: str, username: str) -> None:
    """Remove an account; its sessions and API tokens go with it."""
    with db.session() as session:
        if username == actor:
            raise Forbidden("You cannot delete your own account")
        user = get_user(session, username)
        _keep_an_admin(session, user)
        sessions.revoke_all(session, user.id)
        session.delete(user)


def update_user(
    db: Database,
    actor: str,
    username: str,
    role: Role | None,
    disabled: bool | None,
    email: str | None = None,
    two_factor_required: bool | None = None,
) -> tuple[User, str]:
    """Change a user's role, disable/enable the account, set their email (what an identity
    provider's verified email links by; "" clears it) or require two-factor sign-in.
    Disabling ends every session and revokes every API token the user holds; so does a
    change of role. Returns the user and what changed ("no change" when nothing did)."""
    with db.session() as session:
        user = get_user(session, username)
        changes = []
        revoke = False
        if role is not None and role != user.role:
            if username == actor:
                raise Forbidden("You cannot change your own role")
            _keep_an_admin(session, user)
            user.role = role
            changes.append(f"role={role}")
            revoke = True
        if disabled is not None and disabled != user.disabled:
            if username == actor:
                raise Forbidden("You cannot disable your own account")
            if disabled:
                _keep_an_admin(session, user)
            user.disabled = disabled
            changes.append("disabled" if disabled else "enabled")
            revoke = True
        if email is not None and (email or None) != user.email:
            _check_email(session, user, email)
            user.email = email or None
            changes.append(f"email={email or '(none)'}")
        if two_factor_required is not None and two_factor_required != user.totp_required:
            user.totp_required = two_factor_required
            changes.append("two-factor " + ("required" if two_factor_required else "optional"))
        if revoke:
            sessions.revoke_all(session, user.id)
        return user, ", ".join(changes) or "no change"


def _check_email(session: Session, user: User, email: str) -> None:
    if email and not _EMAIL.match(email):
        raise Invalid("An email address looks like name@example.org")
    taken = session.scalar(
        select(User.username).where(func.lower(User.email) == email.lower(), User.id != user.id)
    )
    if email and taken is not None:
        raise Conflict(f"The user {taken!r} has this email already")


def _keep_an_admin(session: Session, user: User) -> None:
    """Refuse to take away the last enabled admin."""
    if is_last_admin(session, user):
        raise Conflict("This is the last admin: make another admin first")


def is_last_admin(session: Session, user: User) -> bool:
    """Whether `user` is the only enabled admin (whom nothing may take away: not the users
    API, not a sign-in through the identity provider)."""
    return user.role == Role.admin and not user.disabled and _admin_count(session) <= 1


def set_password(db: Database, username: str, password: str) -> None:
    """An admin (or the CLI) sets someone's password: their sessions end and their API
    tokens are revoked."""
    with db.session() as session:
        user = get_user(session, username)
        user.password_hash = passwords.hash_password(password)
        sessions.revoke_all(session, user.id)


def change_own_password(
    db: Database, user_id: int, current: str, new: str, keep_session: str | None
) -> None:
    """Every other session ends and every API token is revoked: a password change is
    what someone does who fears a credential leaked."""
    with db.session() as session:
        user = session.get(User, user_id)
        if user is None or not passwords.verify_password(user.password_hash, current):
            raise Invalid("The current password is not correct")
        user.password_hash = passwords.hash_password(new)
        user.password_change_due = False
        sessions.revoke_all(session, user.id, keep_session=keep_session)


def get_by_id(db: Database, user_id: int) -> User:
    with db.session() as session:
        user = session.get(User, user_id)
        if user is None:
            raise Unauthorized("Not signed in")
        return user


def check_password(db: Database, user_id: int, password: str) -> None:
    """Re-authentication for sensitive actions (creating an API token)."""
    with db.session() as session:
        user = session.get(User, user_id)
        if user is None or not passwords.verify_password(user.password_hash, password):
            raise Forbidden("The password is not correct")


def password_of(session: Session, username: str, password: str) -> tuple[User | None, bool]:
    """The account called `username` (None: there is none) and whether `password` is its
    password, after the same work either way (an unknown name costs a hash too). Says
    nothing of whether the account may sign in: the sign-in decides (`auth.signin`)."""
    user = session.scalar(select(User).where(User.username == username))
    right = passwords.verify_password(user.password_hash if user else None, password)
    if user is not None and right and passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
    return user, right


def _admin_count(session: Session) -> int:
    query = select(func.count()).where(User.role == Role.admin, User.disabled.is_(False))
    return session.scalar(query) or 0


def migrate_legacy_roles(db: Database) -> int:
    """Start-up reconcile: accounts with a role from before the split get its successor
    (`user` becomes `operator`). Idempotent; returns how many accounts changed."""
    changed = 0
    with db.session() as session:
        for old, new in LEGACY_ROLES.items():
            result = cast(
                CursorResult[Any],
                session.execute(update(User).where(User.role == old).values(role=new)),
            )
            changed += result.rowcount or 0
    if changed:
        log.info("users: %d account(s) moved from a legacy role to its successor", changed)
    return changed


def ensure_bootstrap_admin(db: Database, password: str | None) -> None:
    """On first start with no users, create `admin`; print a generated password once."""
    with db.session() as session:
        if session.scalar(select(func.count()).select_from(User)):
            return
        generated = password is None
        password = password or secrets.token_urlsafe(15)
        _insert(session, BOOTSTRAP_ADMIN, password, Role.admin).password_change_due = generated
    if generated:
        # Straight to the console, never through logging: shown once, stored nowhere.
        print(
            f"\n  Created the admin user {BOOTSTRAP_ADMIN!r} with the one-time password:\n\n"
            f"      {password}\n\n  Sign in and change it under Settings.\n",
            file=sys.stderr,
            flush=True,
        )
