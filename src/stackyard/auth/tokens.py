"""Random bearer secrets (session cookies, API tokens) and how they are stored: hashed."""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: How an API token begins (what the logs recognise one by).
TOKEN_PREFIX = "sy_"


def new_secret(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    # High-entropy secrets need no slow hash; a plain SHA-256 keeps look-ups indexable.
    return hashlib.sha256(secret.encode()).hexdigest()


def csrf_token(secret_key: str, session_secret: str) -> str:
    """The CSRF token bound to one session (signed double-submit)."""
    return hmac.new(secret_key.encode(), session_secret.encode(), hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
