"""Registry credentials: the ones an admin set (admin settings, one record a registry,
name and password sealed) and, failing those, the engine user's `docker login` entries.

Before the admin settings, the logins were one sealed file in the data folder;
`adopt_file` brings it in once, at the central's start."""

from __future__ import annotations

import base64
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackyard.errors import Invalid
from stackyard.fs.jsonstore import JsonStore, StoreCorrupt
from stackyard.registry.reference import DOCKER_HUB, DOCKER_HUB_API
from stackyard.sealing import Sealer

if TYPE_CHECKING:  # (the database loads with the first login asked for: an agent has none)
    from stackyard.db.admin_settings import AdminSettings, Stored

#: A registry user name and password (or token).
Credentials = tuple[str, str]
#: The credentials for a registry's API host, if any.
CredentialLookup = Callable[[str], Credentials | None]

log = logging.getLogger(__name__)
_HUB_ALIASES = {DOCKER_HUB, DOCKER_HUB_API, "index.docker.io", "https://index.docker.io/v1/"}
#: The admin settings' names of the logins: this and the registry's host.
PREFIX = "registry/"
#: The file of earlier versions (in the data folder), and its sealing purpose.
FILE, FILE_PURPOSE = "registry-credentials", "registry-credentials"


def _normal(host: str) -> str:
    host = host.strip().removeprefix("https://").removeprefix("http://").rstrip("/")
    return DOCKER_HUB if host in _HUB_ALIASES or host.startswith("index.docker.io") else host


def _what(host: str) -> str:
    """The login as `SecretUnreadable` names it."""
    return f"registry login {host!r}"


class CredentialStore:
    """`saved` gives the admin settings the logins are kept in, when first needed (None:
    this host keeps none, an agent's: its central checks its images)."""

    def __init__(
        self,
        saved: Callable[[], AdminSettings | None],
        docker_config: Path | None = None,
    ) -> None:
        self._saved = saved
        self.docker_config = (
            docker_config
            or Path(os.environ.get("DOCKER_CONFIG", Path.home() / ".docker")) / "config.json"
        )

    def _settings(self) -> AdminSettings:
        settings = self._saved()
        if settings is None:
            raise Invalid("This host keeps no registry logins: they are set on the central")
        return settings

    def _login(self, settings: AdminSettings, stored: Stored) -> Credentials:
        """The user name and password of a stored login (SecretUnreadable when they were
        sealed under another secret key)."""
        secret = settings.secret(stored, _what(stored.name.removeprefix(PREFIX))) or {}
        return str(secret.get("username", "")), str(secret.get("password", ""))

    def registries(self) -> list[tuple[str, str]]:
        """(registry, username) pairs; passwords never leave the store. SecretUnreadable,
        naming the first login sealed under another secret key: set it again."""
        settings = self._saved()
        if settings is None:
            return []
        logins = []
        for stored in settings.under(PREFIX):
            username, _ = self._login(settings, stored)
            logins.append((stored.name.removeprefix(PREFIX), username))
        return logins

    def set(self, registry: str, username: str, password: str) -> str:
        from stackyard.db.admin_settings import MAX_NAME

        host = _normal(registry)
        if not host or "/" in host or not username or not password:
            raise Invalid("Registry host, username and password are required")
        if len(PREFIX + host) > MAX_NAME:
            raise Invalid(f"A registry host has at most {MAX_NAME - len(PREFIX)} characters")
        self._settings().put(PREFIX + host, {}, {"username": username, "password": password})
        return host

    def delete(self, registry: str) -> bool:
        host = _normal(registry)
        return bool(host) and self._settings().delete(PREFIX + host)

    def lookup(self, api_host: str) -> Credentials | None:
        """The login set for the registry, else its `docker login` entry. A login sealed
        under another secret key is SecretUnreadable (never an anonymous try instead)."""
        host = _normal(api_host)
        settings = self._saved()
        if settings is not None and host:
            stored = settings.get(PREFIX + host)
            if stored is not None:
                return self._login(settings, stored)
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


def adopt_file(data_dir: Path, secret_key: str, settings: AdminSettings) -> None:
    """The logins of the sealed file of earlier versions into the admin settings, then
    the file removed (only once they read back). A file sealed under another secret key
    is left as it is (logged): its logins are set again."""
    from stackyard.db.admin_settings import MAX_NAME

    store = JsonStore(data_dir / FILE, codec=Sealer(secret_key, FILE_PURPOSE))
    try:
        raw = store.read(None, strict=True)
    except StoreCorrupt:
        log.warning(
            "%s cannot be read with this instance's secret key (was STACKYARD_SECRET_KEY "
            "changed?): left as it is; set the registry logins again",
            store.path,
        )
        return
    if raw is None:
        return
    records: dict[str, tuple[Any, Any]] = {}
    for host, login in _entries(raw).items():
        if len(PREFIX + host) > MAX_NAME:
            log.warning("The login of registry %r is not kept: its host is too long", host)
            continue
        records[PREFIX + host] = ({}, login)
    if settings.adopt(records):
        store.remove()
        log.info("Registry logins moved from %s into the database", store.path)


def _entries(raw: Any) -> dict[str, dict[str, str]]:
    """The well-formed entries of the file of earlier versions (the rest dropped)."""
    if not isinstance(raw, dict):
        return {}
    return {
        _normal(str(host)): {"username": str(e["username"]), "password": str(e["password"])}
        for host, e in raw.items()
        if isinstance(e, dict) and "username" in e and "password" in e
    }
