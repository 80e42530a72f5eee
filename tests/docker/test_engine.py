"""The engine itself, against the real one: what it says of its host, its networks, a
pull that cannot be done."""

from __future__ import annotations

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
