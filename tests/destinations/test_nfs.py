"""NFS destinations on the real engine: the helper I/O on a plain local volume (this
machine's kernel has no NFS client), and the real mount failure of an NFS volume."""

from __future__ import annotations

import asyncio
import random
import secrets
import uuid

import pytest
from tests.destinations.contract import run_contract

from stackyard.destinations.model import NfsSettings
from stackyard.destinations.nfs import NfsDestination, ensure_volume, remove_volume, volume_name
from stackyard.docker.helper import HelperMount, Helpers
from stackyard.errors import DestinationError

IMAGE = "stackyard-test/busybox:1"


@pytest.fixture
def helpers(docker_client):
    return Helpers(docker_client, IMAGE, owner=f"test-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def local_volume(docker_client, docker_labels):
    volume = docker_client.volumes.create(f"nfs-io-{uuid.uuid4().hex[:8]}", labels=docker_labels)
    yield volume.name
    volume.remove(force=True)


def ls(helpers: Helpers, volume: str, folder: str) -> list[str]:
    out = helpers.check_output(
        [HelperMount("volume", volume, "/v")], ["sh", "-c", f"ls -1A /v/{folder} 2>/dev/null; true"]
    )
    return sorted(out.split())


@pytest.mark.parametrize("subdirectory", ["", "site/backups"])
def test_the_contract_through_helpers(helpers, local_volume, tmp_path, subdirectory):
    settings = NfsSettings(server="nas.example", export="/srv/backups", subdirectory=subdirectory)
    destination = NfsDestination(helpers, local_volume, settings)

    def put(name: str) -> None:
        helpers.check_output(
            [HelperMount("volume", local_volume, "/v")],
            [
                "sh",
                "-c",
                f'mkdir -p "/v/{subdirectory}" && echo other > "/v/{subdirectory}/$0"',
                name,
            ],
        )

    run_contract(destination, tmp_path, lambda: ls(helpers, local_volume, subdirectory), put)


def test_settings_are_kept_to_a_shell_safe_set():
    for bad in (
        {"subdirectory": "a/../b"},
        {"subdirectory": "$(reboot)"},
        {"options": "rw;id"},
        {"options": "addr=10.0.0.1"},
        {"server": "a b"},
        {"export": "/srv/`x`"},
    ):
        with pytest.raises(ValueError):
            NfsSettings(**{"server": "nas", "export": "/srv", **bad})
    assert NfsSettings(server="nas", export="srv/x/", subdirectory="/a/b/").export == "/srv/x"
    assert NfsSettings(server="nas", export="/srv", subdirectory="/a/b/").subdirectory == "a/b"


def test_the_volume_is_made_again_when_its_settings_change_and_is_this_services_own(
    docker_client, helpers
):
    """Another service on the same engine with a destination of the same id has a volume
    of its own: neither uses, changes nor removes the other's."""
    destination_id = random.randint(10**6, 10**7)
    other = secrets.token_hex(6)
    first = NfsSettings(server="127.0.0.1", export="/srv/a")
    try:
        name = ensure_volume(docker_client, helpers.owner, destination_id, first)
        assert name == volume_name(helpers.owner, destination_id)
        assert name == f"svc-nfs-dest-{helpers.owner}-{destination_id}"
        theirs = ensure_volume(
            docker_client, other, destination_id, NfsSettings(server="127.0.0.2", export="/t")
        )
        assert theirs != name
        made = docker_client.api.inspect_volume(name)
        assert made["Driver"] == "local"
        assert made["Options"] == {"type": "nfs", "o": "addr=127.0.0.1,rw", "device": ":/srv/a"}
        assert ensure_volume(docker_client, helpers.owner, destination_id, first) == name
        assert docker_client.api.inspect_volume(name)["CreatedAt"] == made["CreatedAt"]

        changed = NfsSettings(server="127.0.0.1", export="/srv/b", options="rw,nfsvers=4.1")
        ensure_volume(docker_client, helpers.owner, destination_id, changed)
        again = docker_client.api.inspect_volume(name)
        assert again["Options"] == {
            "type": "nfs",
            "o": "addr=127.0.0.1,rw,nfsvers=4.1",
            "device": ":/srv/b",
        }
        assert docker_client.api.inspect_volume(theirs)["Options"]["device"] == ":/t"
        remove_volume(docker_client, helpers.owner, destination_id)
        assert docker_client.api.inspect_volume(theirs)["Options"]["device"] == ":/t"
    finally:
        remove_volume(docker_client, helpers.owner, destination_id)
        remove_volume(docker_client, other, destination_id)
    assert not {name, theirs} & {v.name for v in docker_client.volumes.list()}


def test_a_mount_failure_is_a_clean_destination_error(docker_client, helpers, tmp_path):
    """Nothing serves NFS on 127.0.0.1 (and this kernel has no NFS client): the engine
    fails to mount the volume when the helper starts."""
    destination_id = random.randint(10**6, 10**7)
    settings = NfsSettings(
        server="127.0.0.1", export="/srv/none", options="rw,soft,timeo=10,retrans=1"
    )
    try:
        volume = ensure_volume(docker_client, helpers.owner, destination_id, settings)
        destination = NfsDestination(helpers, volume, settings)
        with pytest.raises(DestinationError, match=r"NFS 127\.0\.0\.1:/srv/none"):
            asyncio.run(destination.test())
        with pytest.raises(DestinationError):
            asyncio.run(destination.archives())
    finally:
        remove_volume(docker_client, helpers.owner, destination_id)
    # No helper is left behind.
    assert not docker_client.containers.list(
        all=True, filters={"label": f"stackyard.helper={helpers.owner}"}
    )
