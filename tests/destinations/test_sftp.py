"""SFTP destinations against OpenSSH's own sshd on loopback."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from pathlib import Path

import pytest
from tests.destinations.contract import an_archive, run_contract, run_stalled
from tests.support.peers import Relay, SftpServer, silent_listener
from tests.support.processes import free_port
from tests.support.waiting import wait_until

from stackyard.destinations import sftp
from stackyard.destinations.base import PARTIAL_PREFIX
from stackyard.destinations.model import Secrets, SftpSettings
from stackyard.destinations.sftp import SftpDestination, fetch_host_key
from stackyard.errors import DestinationDenied, DestinationUnreachable
from stackyard.sshkeys import fingerprint_of


def folder_of(server: SftpServer) -> tuple[str, Path]:
    name = f"backups-{uuid.uuid4().hex[:8]}"
    return name, server.home / name


def settings(server: SftpServer, folder: str, port: int | None = None) -> SftpSettings:
    return SftpSettings(
        host=server.host, port=port or server.port, username=server.user, folder=folder
    )


def raw(path: Path):
    return lambda: sorted(os.listdir(path)) if path.exists() else []


def foreign(path: Path):
    def put(name: str) -> None:
        path.mkdir(exist_ok=True)
        (path / name).write_text("someone else's")

    return put


@pytest.mark.parametrize("auth", ["password", "key"])
def test_the_contract_with_a_password_and_with_a_key(sftp_server, tmp_path, auth):
    name, path = folder_of(sftp_server)
    secrets = (
        Secrets(password=sftp_server.password)
        if auth == "password"
        else Secrets(private_key=sftp_server.key)
    )
    destination = SftpDestination(settings(sftp_server, name), secrets, sftp_server.host_key())
    run_contract(destination, tmp_path, raw(path), foreign(path))


def test_a_server_that_stalls_mid_transfer_ends_the_transfer(sftp_server, tmp_path):
    name, path = folder_of(sftp_server)
    secrets, key = Secrets(password=sftp_server.password), sftp_server.host_key()

    def through(port: int) -> SftpDestination:
        return SftpDestination(settings(sftp_server, name, port=port), secrets, key)

    direct = SftpDestination(settings(sftp_server, name), secrets, key)
    run_stalled(direct, through, sftp_server.port, tmp_path, raw(path))


def test_the_host_key_is_read_before_signing_in_and_pinned(sftp_server):
    found = asyncio.run(fetch_host_key(settings(sftp_server, "")))
    assert found.key == sftp_server.host_key()
    assert found.fingerprint.startswith("SHA256:")
    assert fingerprint_of(found.key) == found.fingerprint
    unpinned = SftpDestination(settings(sftp_server, ""), Secrets(password="x"), None)
    with pytest.raises(DestinationDenied, match="not pinned"):
        asyncio.run(unpinned.archives())


def test_a_changed_host_key_is_refused_before_the_password_is_sent(sftp_server, tmp_path):
    name, path = folder_of(sftp_server)
    pinned = sftp_server.host_key()
    sftp_server.new_host_key()
    destination = SftpDestination(
        settings(sftp_server, name), Secrets(password=sftp_server.password), pinned
    )
    local = an_archive(tmp_path)
    log = sftp_server.config_file.with_name("sshd.log")
    before = log.stat().st_size
    with pytest.raises(DestinationDenied, match="not the pinned one"):
        asyncio.run(destination.push(local, local.name, lambda done: None))
    assert not path.exists()

    # The client hung up at the key exchange: no authentication was ever tried. sshd
    # writes its `[preauth]` line once it has seen the client go.
    def logged() -> str | None:
        text = log.read_bytes()[before:].decode()
        return text if "[preauth]" in text else None

    attempt = wait_until(logged, what="sshd's [preauth] line")
    assert "password" not in attempt and "Accepted" not in attempt


def test_a_wrong_password_is_a_clear_error_and_leaves_nothing(sftp_server, tmp_path):
    name, path = folder_of(sftp_server)
    destination = SftpDestination(
        settings(sftp_server, name), Secrets(password="wrong"), sftp_server.host_key()
    )
    local = an_archive(tmp_path)
    with pytest.raises(DestinationDenied, match="refused user"):
        asyncio.run(destination.push(local, local.name, lambda done: None))
    assert not path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [local.name]


def test_an_unreachable_server_is_a_clear_error(sftp_server):
    closed = free_port()
    destination = SftpDestination(
        settings(sftp_server, "", port=closed), Secrets(password="x"), sftp_server.host_key()
    )
    with pytest.raises(DestinationUnreachable, match="cannot be reached"):
        asyncio.run(destination.test())
    with pytest.raises(DestinationUnreachable):
        asyncio.run(fetch_host_key(settings(sftp_server, "", port=closed)))
    # Not pinned yet and not there: said as it is, not as a key to pin.
    unpinned = SftpDestination(settings(sftp_server, "", port=closed), Secrets(password="x"), None)
    with pytest.raises(DestinationUnreachable, match="cannot be reached"):
        asyncio.run(unpinned.archives())


def test_a_server_that_never_answers_fails_at_the_connect_limit(sftp_server, monkeypatch):
    """A real listener that accepts and stays silent (no SSH banner): the test, the list
    and the first contact each end at the limit (one second here) with the cause."""
    monkeypatch.setattr(sftp, "CONNECT_TIMEOUT", 1.0)
    with silent_listener() as where:
        silent = settings(sftp_server, "", port=int(where.rsplit(":", 1)[1]))
        destination = SftpDestination(silent, Secrets(password="x"), sftp_server.host_key())
        for call in (destination.test, destination.archives, lambda: fetch_host_key(silent)):
            with pytest.raises(DestinationUnreachable, match="did not answer within 1 s"):
                asyncio.run(call())


def test_a_connection_cut_mid_upload_leaves_no_file_under_the_final_name(sftp_server, tmp_path):
    """A relay between us and sshd is cut after 8 MiB of a 64 MiB upload."""
    name, path = folder_of(sftp_server)
    relay = Relay(sftp_server.port, after=8 * 1024 * 1024, then="cut")
    destination = SftpDestination(
        settings(sftp_server, name, port=relay.port),
        Secrets(password=sftp_server.password),
        sftp_server.host_key(),
    )
    local = an_archive(tmp_path, size=64 * 1024 * 1024)
    with pytest.raises(DestinationUnreachable):
        asyncio.run(destination.push(local, local.name, lambda done: None))
    relay.close()
    left = os.listdir(path)
    assert local.name not in left
    assert all(n.startswith(PARTIAL_PREFIX) for n in left)  # swept a day later

    # The next push goes through and the archive is whole.
    good = SftpDestination(
        settings(sftp_server, name), Secrets(password=sftp_server.password), sftp_server.host_key()
    )
    asyncio.run(good.push(local, local.name, lambda done: None))
    assert (path / local.name).read_bytes() == local.read_bytes()
    shutil.rmtree(path)
