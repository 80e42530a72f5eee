"""Secrets at rest: sealed with Fernet (AES-128-CBC and HMAC-SHA256) under a key derived
from the service's secret key and a purpose, so that each kind of secret (registry
credentials, destination credentials, ...) has its own key. A `Sealer` is also a
`JsonStore` codec (`encode`/`decode`)."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken


class Sealer:
    def __init__(self, secret_key: str, purpose: str) -> None:
        derived = hashlib.sha256(f"stackyard/{purpose}\0".encode() + secret_key.encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def encode(self, data: bytes) -> bytes:
        return self._fernet.encrypt(data)

    def decode(self, data: bytes) -> bytes:
        """The sealed bytes; ValueError when they cannot be opened (another secret key)."""
        try:
            return self._fernet.decrypt(data)
        except InvalidToken as exc:
            raise ValueError("cannot be decrypted") from exc
