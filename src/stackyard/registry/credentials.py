"""Registry credentials: the ones configured in Stackyard (kept encrypted in the data
folder) and, failing those, the engine user's `docker login` entries."""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stackyard.errors import Invalid
from stackyard.fs.jsonstore import JsonStore, StoreCorrupt
from stackyard.registry.reference import DOCKER_HUB, DOCKER_HUB_API
from stackyard.sealing import Sealer

#: A registry user name and password (or token).
Credentials = tuple[str, str]
#: The credentials for a registry's API host, if any.
CredentialLookup = Callable[[str], Credentials | None]

log = logging.getLogger(__name__)
_UNREADABLE = (
    "Stored registry credentials cannot be decrypted (the secret key changed); set them again"
)
_HUB_ALIASES = {DOCKER_HUB, DOCKER_HUB_API, "index.docker.io", "https://index.docker.io/v1/"}


def _normal(host: str) -> str:
    host = host.strip().removeprefix("https://").removeprefix("http://").rstrip("/")
    return DOCKER_HUB if host in _HUB_ALIASES or host.startswith("index.docker.io") else host


Entries = dict[str, dict[str, str]]


class CredentialStore:
    def __init__(self, path: Path, secret_key: str, docker_config: Path | None = None) -> None:
        self.path = path
        self._store = JsonStore(path, codec=Sealer(secret_key, "registry-credentials"))
        self.docker_config = (
            docker_config
            or Path(os.environ.get("DOCKER_CONFIG", Path.home() / ".docker")) / "config.json"
        )
        self._lock = threading.Lock()

    def _load(self, strict: bool = True) -> Entries:
        """The stored entries. When they cannot be decrypted (the secret key changed),
        strict reading refuses; otherwise they count as absent (and are replaced by the
        next `set`)."""
        try:
            return _entries(self._store.read({}, strict=strict))
        except StoreCorrupt as exc:
            raise Invalid(_UNREADABLE) from exc

    def registries(self) -> list[tuple[str, str]]:
        """(registry, username) pairs; passwords never leave the store."""
        with self._lock:
            return sorted((host, e["username"]) for host, e in self._load().items())

    def set(self, registry: str, username: str, password: str) -> str:
        host = _normal(registry)
        if not host or "/" in host or not username or not password:
            raise Invalid("Registry host, username and password are required")

        def put(raw: Any) -> Entries:
            entries = _entries(raw)
            entries[host] = {"username": username, "password": password}
            return entries

        with self._lock:
            self._store.update(put, {})
        return host

    def delete(self, registry: str) -> bool:
        host = _normal(registry)
        found = False

        def drop(raw: Any) -> Entries:
            nonlocal found
            entries = _entries(raw)
            found = entries.pop(host, None) is not None
            return entries

        with self._lock:
            if host not in self._load():
                return False
            try:
                self._store.update(drop, {}, strict=True)
            except StoreCorrupt as exc:
                raise Invalid(_UNREADABLE) from exc
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


def _entries(raw: Any) -> Entries:
    """The well-formed entries of a decoded store (anything else is dropped)."""
    if not isinstance(raw, dict):
        return {}
    return {
        str(host): {"username": str(e["username"]), "password": str(e["password"])}
        for host, e in raw.items()
        if isinstance(e, dict) and "username" in e and "password" in e
    }
