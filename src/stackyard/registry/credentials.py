"""Registry credentials: the ones configured in Stackyard (kept encrypted in the data
folder) and, failing those, the engine user's `docker login` entries."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from stackyard.errors import Invalid
from stackyard.files_atomic import write_atomic
from stackyard.registry.client import Credentials
from stackyard.registry.reference import DOCKER_HUB, DOCKER_HUB_API

log = logging.getLogger(__name__)
_HUB_ALIASES = {DOCKER_HUB, DOCKER_HUB_API, "index.docker.io", "https://index.docker.io/v1/"}


def _normal(host: str) -> str:
    host = host.strip().removeprefix("https://").removeprefix("http://").rstrip("/")
    return DOCKER_HUB if host in _HUB_ALIASES or host.startswith("index.docker.io") else host


class CredentialStore:
    def __init__(self, path: Path, secret_key: str, docker_config: Path | None = None) -> None:
        self.path = path
        key = base64.urlsafe_b64encode(
            hashlib.sha256(b"stackyard/registry-credentials\0" + secret_key.encode()).digest()
        )
        self._fernet = Fernet(key)
        self.docker_config = (
            docker_config
            or Path(os.environ.get("DOCKER_CONFIG", Path.home() / ".docker")) / "config.json"
        )
        self._lock = threading.Lock()

    def _load(self, strict: bool = True) -> dict[str, dict[str, str]]:
        """The stored entries. When they cannot be decrypted (the secret key changed),
        strict reading refuses; otherwise they count as absent (and are replaced by the
        next `set`)."""
        if not self.path.exists():
            return {}
        try:
            return json.loads(self._fernet.decrypt(self.path.read_bytes()))
        except InvalidToken as exc:
            if strict:
                raise Invalid(
                    "Stored registry credentials cannot be decrypted (the secret key "
                    "changed); set them again"
                ) from exc
            log.warning("Stored registry credentials cannot be decrypted; ignoring them")
            return {}

    def _save(self, entries: dict[str, dict[str, str]]) -> None:
        write_atomic(self.path, self._fernet.encrypt(json.dumps(entries).encode()), mode=0o600)

    def registries(self) -> list[tuple[str, str]]:
        """(registry, username) pairs; passwords never leave the store."""
        with self._lock:
            return sorted((host, e["username"]) for host, e in self._load().items())

    def set(self, registry: str, username: str, password: str) -> str:
        host = _normal(registry)
        if not host or "/" in host or not username or not password:
            raise Invalid("Registry host, username and password are required")
        with self._lock:
            entries = self._load(strict=False)
            entries[host] = {"username": username, "password": password}
            self._save(entries)
        return host

    def delete(self, registry: str) -> bool:
        host = _normal(registry)
        with self._lock:
            entries = self._load()
            found = entries.pop(host, None) is not None
            if found:
                self._save(entries)
        return found

    def lookup(self, api_host: str) -> Credentials | None:
        host = _normal(api_host)
        with self._lock:
            entry = self._load(strict=False).get(host)
        if entry:
            return entry["username"], entry["password"]
        return self._docker_login(host)

    def _docker_login(self, host: str) -> Credentials | None:
        try:
            auths = json.loads(self.docker_config.read_text()).get("auths") or {}
        except (OSError, ValueError):
            return None
        for key, value in auths.items():
            if _normal(key) == host and value.get("auth"):
                user, _, password = base64.b64decode(value["auth"]).decode().partition(":")
                return user, password
        return None
