"""The engine itself, against the real one: what it says of its host, its networks, a
pull that cannot be done."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest

from stackyard.docker.engine import engine_state, ping
from stackyard.docker.images import pull
from stackyard.docker.networks import network_names
from stackyard.errors import Unavailable

pytestmark = pytest.mark.docker


def test_the_engine_says_what_its_host_holds(docker_client):
    ping(docker_client)
    state = engine_state(docker_client)
    info = docker_client.info()
    assert state.name == info["Name"]
    assert state.root_dir == info["DockerRootDir"]
    assert 0 <= state.containers_running <= state.containers_total


def test_the_networks_are_named(docker_client):
    assert {"bridge", "host", "none"} <= network_names(docker_client)


def test_an_image_that_cannot_be_pulled_is_unavailable(docker_client):
    with pytest.raises(Unavailable, match=r"127\.0\.0\.1:9/nothing:1 cannot be pulled"):
        pull(docker_client, "127.0.0.1:9/nothing:1")


def test_a_pull_that_fails_midway_says_what_the_engine_said(
    docker_client, registry, docker_cleanup, tmp_path
):
    """A blob the registry lost: the engine's own words ("unknown blob"), not the missing
    image the SDK's pull would report."""
    (tmp_path / "random").write_bytes(os.urandom(4096))  # an image of its own
    (tmp_path / "Dockerfile").write_text("FROM stackyard-test/busybox:1\nCOPY random /\n")
    local = f"stackyard-test/lost:{uuid.uuid4().hex[:8]}"
    docker_client.images.build(path=str(tmp_path), tag=local, labels=docker_cleanup.labels)
    repository = f"stackyard/lost-{uuid.uuid4().hex[:6]}"
    registry.push(local, repository, "1")
    docker_client.images.remove(local)
    manifest = httpx.get(
        f"{registry.url}/v2/{repository}/manifests/1",
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    ).json()
    # Its configuration (the image itself: removed here too, so the engine must fetch it).
    config = manifest["config"]["digest"]
    gone = httpx.delete(f"{registry.url}/v2/{repository}/blobs/{config}")
    assert gone.status_code == 202, gone.text
    reference = f"{registry.host}/{repository}:1"
    docker_client.images.remove(reference)
    with pytest.raises(Unavailable) as raised:
        pull(docker_client, reference)
    assert raised.value.detail.startswith(f"{reference} cannot be pulled: ")
    assert "blob unknown" in raised.value.detail or "unknown blob" in raised.value.detail
    assert "No such image" not in raised.value.detail
