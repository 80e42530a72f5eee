"""A running container of the test image, labelled for the run's clean-up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.stacks import BUSYBOX


@pytest.fixture
def box(docker_client, docker_labels) -> Iterator[str]:
    """A running busybox container (its id) that does nothing until it is removed."""
    container = docker_client.containers.run(
        BUSYBOX, ["sleep", "3600"], detach=True, labels=docker_labels
    )
    yield str(container.id)
    container.remove(force=True)
