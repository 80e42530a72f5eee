"""Sign-in: throttle check, password check, session start."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from stackyard.auth import sessions, users
from stackyard.auth.throttle import LoginThrottle
from stackyard.db import Database
from stackyard.db.models import User


@dataclass(frozen=True)
class SignedIn:
    user: User
    session_secret: str


async def sign_in(
    db: Database,
    throttle: LoginThrottle,
    username: str,
    password: str,
    ttl: timedelta,
    client_ip: str | None,
    user_agent: str | None,
) -> SignedIn:
    delay = throttle.begin(username, client_ip)
    if not delay:
        return await asyncio.to_thread(
            _attempt, db, throttle, username, password, ttl, client_ip, user_agent
        )
    async with throttle.serial(username, client_ip):
        await asyncio.sleep(delay)
        return await asyncio.to_thread(
            _attempt, db, throttle, username, password, ttl, client_ip, user_agent
        )


def _attempt(
    db: Database,
    throttle: LoginThrottle,
    username: str,
    password: str,
    ttl: timedelta,
    client_ip: str | None,
    user_agent: str | None,
) -> SignedIn:
    """One sign-in attempt, counted as failed by `LoginThrottle.begin` until it succeeds."""
    with db.session() as session:
        user = users.authenticate(session, username, password)
        secret = sessions.open_session(session, user, ttl, client_ip, user_agent)
    throttle.succeeded(username, client_ip)
    return SignedIn(user, secret)


def sign_out(db: Database, session_secret: str) -> None:
    with db.session() as session:
        sessions.close_session(session, session_secret)


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
