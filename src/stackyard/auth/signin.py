"""Sign-in: throttle check, password check, session start."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from stackyard.auth import sessions, users
from stackyard.auth.throttle import LoginThrottle
from stackyard.db import Database
from stackyard.db.models import User
from stackyard.errors import Unauthorized


@dataclass(frozen=True)
class SignedIn:
    user: User
    session_secret: str


def sign_in(
    db: Database,
    throttle: LoginThrottle,
    username: str,
    password: str,
    ttl: timedelta,
    client_ip: str | None,
    user_agent: str | None,
) -> SignedIn:
    throttle.check(username, client_ip)
    try:
        with db.session() as session:
            user = users.authenticate(session, username, password)
            secret = sessions.open_session(session, user, ttl, client_ip, user_agent)
    except Unauthorized:
        throttle.failed(username, client_ip)
        raise
    throttle.succeeded(username)
    return SignedIn(user, secret)


def sign_out(db: Database, session_secret: str) -> None:
    with db.session() as session:
        sessions.close_session(session, session_secret)
