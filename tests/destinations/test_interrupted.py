"""A real service killed (SIGKILL) in the middle of a pull whose server stalled: nothing of
the download is kept after the restart, nothing says it succeeded, and the destination's
archive is untouched."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from tests.destinations.contract import an_archive
from tests.support.peers import Relay
from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
from tests.support.waiting import wait_until

from stackyard.destinations.model import Secrets, SftpSettings
from stackyard.destinations.sftp import SftpDestination

MIB = 1024 * 1024


def test_a_service_killed_during_a_stalled_pull_keeps_nothing_of_it(sftp_server, tmp_path):
    folder = f"backups-{uuid.uuid4().hex[:8]}"
    settings = SftpSettings(
        host=sftp_server.host, port=sftp_server.port, username=sftp_server.user, folder=folder
    )
    secrets = Secrets(password=sftp_server.password)
    archive = an_archive(tmp_path, size=8 * MIB)
    direct = SftpDestination(settings, secrets, sftp_server.host_key())
    asyncio.run(direct.push(archive, archive.name, lambda done: None))
    (tmp_path / "stacks").mkdir()
    kept = tmp_path / "data" / "backups"
    env = service_env(tmp_path)

    with Relay(sftp_server.port, after=2 * MIB, then="stall") as relay:
        server = start_server(tmp_path, env=env)
        try:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                body = {
                    "name": "nas",
                    "settings": settings.model_dump() | {"port": relay.port},
                    "secrets": {"password": sftp_server.password},
                    "host_key": sftp_server.host_key(),
                }
                made = client.post("/api/destinations", json=body)
                assert made.status_code == 201, made.text
                pulled = client.post(
                    f"/api/destinations/{made.json()['id']}/archives/{archive.name}/pull"
                )
                assert pulled.status_code == 202, pulled.text
            wait_until(relay.tripped.is_set, what="the pull to stall mid-transfer")
            wait_until(
                lambda: [p for p in kept.glob(".*") if p.is_file()],
                what="the download's temporary file",
            )
            server.process.kill()
            server.process.wait()
        finally:
            server.stop()

    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            wait_until(lambda: list(kept.iterdir()) == [], what="the leftover swept at start")
            pulls = [
                e for e in client.get("/api/audit").json()["items"] if e["action"] == "backup.pull"
            ]
            assert [e["outcome"] for e in pulls] == ["started"]  # never a success
        # What the destination holds is untouched.
        assert (sftp_server.home / folder / archive.name).read_bytes() == archive.read_bytes()

    finally:
        server.stop()
