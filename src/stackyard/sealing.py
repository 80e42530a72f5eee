"""Secrets at rest: sealed with Fernet (AES-128-CBC and HMAC-SHA256) under a key derived
from the service's secret key and a purpose, so that each kind of secret (registry
credentials, destination credentials, ...) has its own key. A `Sealer` is also a
`JsonStore` codec (`encode`/`decode`)."""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.fernet import Fernet


class Sealer:
    def __init__(self, secret_key: str, purpose: str) -> None:
        derived = hashlib.sha256(f"stackyard/{purpose}\0".encode() + secret_key.encode()).digest()
        self._key = base64.urlsafe_b64encode(derived)

    @functools.cached_property
    def _fernet(self) -> Fernet:
        # cryptography loads with the first secret sealed or opened, not at every start.
        from cryptography.fernet import Fernet

        return Fernet(self._key)

    def encode(self, data: bytes) -> bytes:
        return self._fernet.encrypt(data)

    def decode(self, data: bytes) -> bytes:
        """The sealed bytes; ValueError when they cannot be opened (another secret key)."""
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.decrypt(data)
        except InvalidToken as exc:
            raise ValueError("cannot be decrypted") from exc
