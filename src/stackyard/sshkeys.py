"""SSH keys, the one way they are read and made: a server's host key as offered (read
before any credential is sent, then pinned by whoever asked), fingerprints, and key pairs
Stackyard makes (deploy keys). Used by SFTP destinations and git repositories alike;
each classifies the connection errors of `server_host_key` for its own kind of peer.
(asyncssh loads with the first key read or made: a start reads none.)"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stackyard.errors import Invalid

if TYPE_CHECKING:
    import asyncssh


@dataclass(frozen=True)
class HostKey:
    """An SSH server's host key: the OpenSSH public key line and its SHA-256 fingerprint."""

    key: str
    fingerprint: str


def host_key_of(key: asyncssh.SSHKey) -> HostKey:
    line = key.export_public_key("openssh").decode().strip()
    return HostKey(key=line, fingerprint=key.get_fingerprint("sha256"))


@functools.lru_cache(maxsize=4096)  # (every tunnel agent's key, at every list of agents)
def fingerprint_of(line: str) -> str:
    """The SHA-256 fingerprint of an OpenSSH public key line; Invalid for anything else."""
    import asyncssh

    try:
        return host_key_of(asyncssh.import_public_key(line.strip())).fingerprint
    except (asyncssh.KeyImportError, ValueError) as exc:
        raise Invalid("The key is not an OpenSSH public key line") from exc


async def server_host_key(host: str, port: int, timeout: float) -> HostKey | None:
    """The host key the server offers now (no credential is sent to read it); None when
    it offered none. Raises what asyncssh raises (OSError, TimeoutError, asyncssh.Error):
    the caller classifies it for its kind of peer."""
    import asyncssh

    async with asyncio.timeout(timeout):
        key = await asyncssh.get_server_host_key(host, port, config=None)
    return None if key is None else host_key_of(key)


def new_key_pair(comment: str) -> tuple[str, str]:
    """A new Ed25519 key pair: (the private key in OpenSSH format, the public key line)."""
    import asyncssh

    key = asyncssh.generate_private_key("ssh-ed25519", comment=comment)
    private = key.export_private_key("openssh").decode()
    public = key.export_public_key("openssh").decode().strip()
    return private, public
