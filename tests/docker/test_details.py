"""One container inspected, against the real engine: its image, labels and mounts as
typed values; a missing one is NotFound."""

from __future__ import annotations

import uuid

import pytest

from stackyard.docker.details import MountInfo, inspect_container
from stackyard.errors import NotFound
from tests.support.stacks import BUSYBOX

pytestmark = pytest.mark.docker


def test_a_container_says_its_image_labels_and_mounts(docker_client, docker_labels, tmp_path):
    volume = f"stackyard-test-{uuid.uuid4().hex[:8]}"
    container = docker_client.containers.create(
        BUSYBOX,
        ["true"],
        labels={**docker_labels, "role": "probe"},
        volumes={volume: {"bind": "/v", "mode": "ro"}, str(tmp_path): {"bind": "/host"}},
    )
    try:
        found = inspect_container(docker_client, str(container.id))
        assert found.id == container.id
        assert found.image == BUSYBOX
        assert found.image_id == container.image.id
        assert found.labels["role"] == "probe"
        mounts = {m.destination: m for m in found.mounts}
        assert mounts["/host"] == MountInfo("bind", str(tmp_path), "/host", None, False)
        assert mounts["/v"].type == "volume" and mounts["/v"].name == volume
        assert mounts["/v"].read_only
    finally:
        container.remove(force=True, v=True)
        docker_client.volumes.get(volume).remove(force=True)


def test_a_missing_container_is_not_found(docker_client):
    with pytest.raises(NotFound, match="Container 000000000000 does not exist"):
        inspect_container(docker_client, "0" * 64)
