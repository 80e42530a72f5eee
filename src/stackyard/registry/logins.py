"""The registry logins of one host, as the API and the CLI manage them: listed without
passwords, set, deleted (NotFound when there is none). Reached as
`StackService.registries`, so that routers never reach into the `Machine`'s stores."""

from __future__ import annotations

from stackyard.errors import NotFound
from stackyard.registry.credentials import CredentialStore


class RegistryLogins:
    def __init__(self, store: CredentialStore) -> None:
        self._store = store

    def list(self) -> list[tuple[str, str]]:
        """(registry, username) pairs, sorted; passwords never leave the store."""
        return self._store.registries()

    def set(self, registry: str, username: str, password: str) -> str:
        """Store (or replace) a login; returns the registry host as stored."""
        return self._store.set(registry, username, password)

    def delete(self, registry: str) -> None:
        if not self._store.delete(registry):
            raise NotFound(f"No credentials for {registry!r}")
