"""Argon2 password hashing."""

from __future__ import annotations

import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from stackyard.errors import Invalid
from stackyard.settings import MIN_PASSWORD_LENGTH

#: argon2-cffi's defaults: RFC 9106's low-memory profile (64 MiB, 3 passes, 4 lanes).
STANDARD = PasswordHasher()
#: The least Argon2id allows, for the test suite only (STACKYARD_TEST_CHEAP_PASSWORD_HASHES).
CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
_hasher = STANDARD
#: The password hash of an account made by an identity provider: no password opens it.
NO_PASSWORD = "!"


def configure(cheap: bool) -> None:
    """Choose the cost of the hashes this process makes (it verifies any)."""
    global _hasher
    _hasher = CHEAP if cheap else STANDARD
    _dummy_hash.cache_clear()


@functools.cache
def _dummy_hash() -> str:
    """Verified when the user does not exist, so that an unknown name costs the same time."""
    return _hasher.hash("stackyard-no-such-user")


def check_policy(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise Invalid(f"Password must be at least {MIN_PASSWORD_LENGTH} characters long")
    if len(password) > 1024:
        raise Invalid("Password must be at most 1024 characters long")


def hash_password(password: str) -> str:
    check_policy(password)
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        return (
            _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
        )
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
