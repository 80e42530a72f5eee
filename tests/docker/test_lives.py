"""How a container fares, as the health gate of an update reads it, against the real
engine: its exit code also once the engine restarted it (the engine's own record then
says 0)."""

from __future__ import annotations

import pytest

from stackyard.docker.lives import Life, life_of
from tests.support.stacks import BUSYBOX
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_container_restarted_and_running_again_says_how_it_exited(docker_client, docker_labels):
    container = docker_client.containers.run(
        BUSYBOX,
        ["sh", "-c", "sleep 2; exit 3"],
        detach=True,
        labels=docker_labels,
        restart_policy={"Name": "always"},
    )
    try:

        def running_again() -> Life | None:
            life = life_of(docker_client, str(container.id))
            return life if life and life.status == "running" and life.restart_count else None

        life = wait_until(running_again, what="the container running after a restart")
        assert container.client.api.inspect_container(container.id)["State"]["ExitCode"] == 0
        assert life.exit_code == 3
    finally:
        container.remove(force=True)


def test_a_container_says_its_exit_code_and_none_while_it_never_exited(
    docker_client, docker_labels
):
    container = docker_client.containers.run(
        BUSYBOX, ["sleep", "3600"], detach=True, labels=docker_labels
    )
    try:
        life = life_of(docker_client, str(container.id))
        assert life is not None and life.status == "running" and life.exit_code is None
    finally:
        container.remove(force=True)
    done = docker_client.containers.run(
        BUSYBOX, ["sh", "-c", "exit 5"], detach=True, labels=docker_labels
    )
    try:
        done.wait()
        life = life_of(docker_client, str(done.id))
        assert life is not None and life.status == "exited" and life.exit_code == 5
        assert life.restart_count == 0
    finally:
        done.remove(force=True)
    assert life_of(docker_client, str(done.id)) is None
