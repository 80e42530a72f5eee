"""Named volumes against the real engine: looked up, made with labels and options,
listed, removed; a missing and a used volume as the error tree's types."""

from __future__ import annotations

import uuid

import pytest

from stackyard.docker.volumes import create_volume, remove_volume, volume, volume_names
from stackyard.errors import Conflict, NotFound
from tests.support.stacks import BUSYBOX

pytestmark = pytest.mark.docker


def test_a_volume_is_made_found_listed_and_removed(docker_client, docker_labels):
    name = f"stackyard-test-{uuid.uuid4().hex[:8]}"
    assert volume(docker_client, name) is None
    options = {"type": "tmpfs", "o": "size=1m", "device": "tmpfs"}
    create_volume(docker_client, name, {**docker_labels, "purpose": "test"}, options)
    made = volume(docker_client, name)
    assert made is not None
    assert (made.name, made.driver, made.options) == (name, "local", options)
    assert name in volume_names(docker_client)
    remove_volume(docker_client, name)
    assert volume(docker_client, name) is None
    with pytest.raises(NotFound, match=f"Volume {name} does not exist"):
        remove_volume(docker_client, name)


def test_a_volume_in_use_is_a_conflict(docker_client, docker_labels):
    name = f"stackyard-test-{uuid.uuid4().hex[:8]}"
    create_volume(docker_client, name, docker_labels)
    user = docker_client.containers.create(
        BUSYBOX, ["true"], volumes={name: {"bind": "/v"}}, labels=docker_labels
    )
    try:
        with pytest.raises(Conflict, match=f"Volume {name} is in use"):
            remove_volume(docker_client, name)
    finally:
        user.remove(force=True)
        remove_volume(docker_client, name)
