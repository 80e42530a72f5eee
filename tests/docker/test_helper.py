"""A helper that outlives its caller (the self-update's), against the real engine: it
runs alone with its mounts, environment and labels, and is gone when it ends."""

from __future__ import annotations

import uuid

import pytest

from stackyard.docker.helper import HelperError, HelperMount, start_detached
from tests.support.stacks import BUSYBOX
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_detached_helper_runs_alone_and_is_removed_when_it_ends(
    docker_client, docker_labels, tmp_path
):
    name = f"stackyard-test-{uuid.uuid4().hex[:8]}"
    start_detached(
        docker_client,
        BUSYBOX,
        ["sh", "-c", 'echo "$WORD" > /out/said'],
        name=name,
        mounts=[HelperMount("bind", str(tmp_path), "/out")],
        environment={"WORD": "hello"},
        labels=docker_labels,
    )
    wait_until(lambda: (tmp_path / "said").exists(), what="the helper's file")
    assert (tmp_path / "said").read_text() == "hello\n"
    wait_until(  # (the low-level list: the high-level one inspects, racing the removal)
        lambda: not docker_client.api.containers(all=True, filters={"name": name}),
        what="the helper removed",
    )


def test_a_helper_that_cannot_start_is_a_helper_error(docker_client, docker_labels):
    with pytest.raises(HelperError, match="could not be started"):
        start_detached(
            docker_client,
            "127.0.0.1:9/nothing:1",
            ["true"],
            name=f"stackyard-test-{uuid.uuid4().hex[:8]}",
            mounts=[],
            environment={},
            labels=docker_labels,
        )
