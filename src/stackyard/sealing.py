"""Secrets at rest: sealed with Fernet (AES-128-CBC and HMAC-SHA256) under a key derived
from the service's secret key and a purpose, so that each kind of secret (registry
credentials, destination credentials, ...) has its own key. A `Sealer` is also a
`JsonStore` codec (`encode`/`decode`).

A secret that cannot be opened (sealed under another secret key) has one rule,
`Sealer.unseal_json`: `SecretUnreadable`, naming the record and what to do, wherever the
secret is needed; never an empty value in its place."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from typing import TYPE_CHECKING, Any

from stackyard.errors import SecretUnreadable

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

    def seal_json(self, value: Any) -> str:
        """`value` as JSON, sealed, as text (for a database column)."""
        return self.encode(json.dumps(value).encode()).decode()

    def unseal_json(self, sealed: str, what: str) -> Any:
        """What `seal_json` sealed. SecretUnreadable when it was sealed under another
        secret key; `what` names the record in its detail ("destination 'offsite'")."""
        try:
            return json.loads(self.decode(sealed.encode()))
        except ValueError as exc:  # another key, or bytes that are no sealed JSON
            raise SecretUnreadable(what) from exc
