"""Two-factor sign-in for local accounts: time-based one-time codes (RFC 6238, 30 s,
six digits, SHA-1: what every authenticator app reads from the QR code) and recovery
codes.

- The secret is sealed at rest (`Sealer`, its own purpose); while being enrolled it is
  kept apart (`totp_pending`) until a code from the app proves it was scanned.
- A code is accepted for the step before and after the current one (clock drift), and
  never twice: the last step used is kept, and a code at or before it is refused.
- Ten recovery codes are shown once when enrolment ends; only their hashes are kept, and
  each works once.
- "Used" is marked in the database, by a conditional update whose row count says whether
  this sign-in was the one that used it: of many sign-ins with one code at the same time,
  in one process or several, exactly one gets in.
- Wrong codes are guesses like wrong passwords: the sign-in that checks them runs under
  the same throttle (`auth.signin`), and codes have a limit per account of their own
  (`auth.throttle.CodeLimit`), which recovery codes are not held back by.
"""

from __future__ import annotations

import hmac
import io
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import pyotp
from sqlalchemy import CursorResult, or_, update
from sqlalchemy.orm import Session

from stackyard.auth import sessions
from stackyard.auth.tokens import hash_secret
from stackyard.auth.users import get_user, has_password
from stackyard.db import Database
from stackyard.db.models import User
from stackyard.errors import Conflict, Forbidden, Invalid, Unauthorized
from stackyard.sealing import Sealer

RECOVERY_CODES = 10
#: Steps either side of now that still count (30 s each).
DRIFT = 1


@dataclass(frozen=True)
class Enrolment:
    secret: str
    uri: str
    qr_svg: str


def _normal(code: str) -> str:
    return code.replace(" ", "").replace("-", "").strip().lower()


def is_time_code(code: str) -> bool:
    """Whether `code` is shaped as the app's six digits (else it is taken for a recovery
    code: twelve hexadecimal characters, which may be digits only)."""
    normal = _normal(code)
    return len(normal) == 6 and normal.isdigit()


class Totp:
    def __init__(self, db: Database, secret_key: str, issuer: str = "Stackyard") -> None:
        self._db = db
        self._sealer = Sealer(secret_key, "totp")
        self._issuer = issuer

    def _open(self, sealed: str) -> str:
        return self._sealer.decode(sealed.encode()).decode()

    def _seal(self, secret: str) -> str:
        return self._sealer.encode(secret.encode()).decode()

    # -- enrolment ------------------------------------------------------------------------
    def begin(self, user_id: int) -> Enrolment:
        """A new secret to scan; two-factor is on only once `confirm` saw a code from it."""
        with self._db.session() as session:
            user = _user(session, user_id)
            if user.totp_secret is not None:
                raise Conflict("Two-factor sign-in is already on; turn it off first")
            if not has_password(user):
                raise Invalid(
                    "This account signs in through the identity provider, which asks for "
                    "its own second factor"
                )
            secret = pyotp.random_base32()
            user.totp_pending = self._seal(secret)
            username = user.username
        uri = pyotp.TOTP(secret).provisioning_uri(name=username, issuer_name=self._issuer)
        return Enrolment(secret, uri, qr_svg(uri))

    def confirm(self, user_id: int, code: str) -> list[str]:
        """Turn two-factor on with a code from the app; returns the recovery codes (shown
        once, kept only as hashes)."""
        with self._db.session() as session:
            user = _user(session, user_id)
            if user.totp_pending is None:
                raise Conflict("Start the set-up first: there is no code to confirm")
            secret = self._open(user.totp_pending)
            step = _matching_step(secret, code, None)
            if step is None:
                raise Invalid("That code is not right: enter the six digits the app shows now")
            codes = [
                f"{secrets.token_hex(3)}-{secrets.token_hex(3)}" for _ in range(RECOVERY_CODES)
            ]
            user.totp_secret = user.totp_pending
            user.totp_pending = None
            user.totp_last_step = step
            user.totp_recovery = json.dumps([hash_secret(_normal(c)) for c in codes])
        return codes

    def turn_off(self, user_id: int) -> None:
        """The user turns it off (their password was asked again): not while an admin
        requires it."""
        with self._db.session() as session:
            user = _user(session, user_id)
            if user.totp_required:
                raise Forbidden("An admin requires two-factor sign-in for this account")
            if user.totp_secret is None:
                raise Conflict("Two-factor sign-in is not on")
            _clear(user)

    def reset(self, username: str) -> None:
        """An admin resets someone's two-factor sign-in (a lost phone): it is off, their
        sessions end and their API tokens are revoked; if it is required they set it up
        again at their next sign-in."""
        with self._db.session() as session:
            user = get_user(session, username)
            _clear(user)
            sessions.revoke_all(session, user.id)

    # -- sign-in --------------------------------------------------------------------------
    def used_before(self, user: User, code: str) -> bool:
        """Whether `code` is the account's code of a time step already used (by the
        set-up or a sign-in): the person typed a code their app still shows, and is told
        to wait for the next one rather than that something they typed is wrong."""
        if user.totp_secret is None or user.totp_last_step is None or not is_time_code(code):
            return False
        step = _matching_step(self._open(user.totp_secret), code, None)
        return step is not None and step <= user.totp_last_step

    def check(self, session: Session, user: User, code: str) -> str | None:
        """Check a code (or a recovery code) for `user` and mark it used, in the sign-in's
        transaction; returns which it was, or None when neither fits or another sign-in
        used it first (its update committed first: this one's changes no row)."""
        assert user.totp_secret is not None
        normal = _normal(code)
        if is_time_code(normal):
            step = _matching_step(self._open(user.totp_secret), normal, user.totp_last_step)
            if step is None:
                return None
            fresh = or_(User.totp_last_step.is_(None), User.totp_last_step < step)
            return "code" if _changed(session, user.id, fresh, totp_last_step=step) else None
        unused: list[str] = json.loads(user.totp_recovery or "[]")
        digest = hash_secret(normal)
        if not any(hmac.compare_digest(digest, h) for h in unused):
            return None
        left = json.dumps([h for h in unused if h != digest])
        # As read: another sign-in's recovery code, used meanwhile, makes this one fail
        # (typed again, it works).
        same = User.totp_recovery == user.totp_recovery
        return "recovery code" if _changed(session, user.id, same, totp_recovery=left) else None


def status(user: User) -> tuple[bool, int]:
    """Whether two-factor is on, and how many recovery codes are left."""
    return user.totp_secret is not None, len(json.loads(user.totp_recovery or "[]"))


def _user(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise Unauthorized("Not signed in")
    return user


def _changed(session: Session, user_id: int, condition: Any, **values: Any) -> bool:
    """Update the user's row with `values` only while `condition` holds; whether it did.
    (The ORM's copy of the row is not refreshed: the sign-in reads nothing of it after.)"""
    statement = (
        update(User)
        .where(User.id == user_id, condition)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    result = cast(CursorResult[Any], session.execute(statement))
    return result.rowcount == 1


def _clear(user: User) -> None:
    user.totp_secret = user.totp_pending = user.totp_recovery = None
    user.totp_last_step = None


def _matching_step(secret: str, code: str, last_step: int | None) -> int | None:
    """The time step whose code `code` is (now, or `DRIFT` either side), never one at or
    before `last_step`."""
    code = _normal(code)
    if not (code.isdigit() and len(code) == 6):
        return None
    totp = pyotp.TOTP(secret)
    now = totp.timecode(datetime.now(UTC))
    for step in range(now - DRIFT, now + DRIFT + 1):
        fresh = last_step is None or step > last_step
        if fresh and hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def qr_svg(uri: str) -> str:
    """The QR code as a standalone SVG document: with its namespace, which a browser needs
    to draw it as an image (segno's `svg_inline` leaves it out, for SVG inside HTML)."""
    import segno  # (on first use: it is not needed to start)

    buffer = io.BytesIO()
    segno.make(uri, error="m").save(
        buffer, kind="svg", xmldecl=False, svgns=True, scale=4, border=2
    )
    return buffer.getvalue().decode()
