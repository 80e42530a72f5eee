"""cleanup_labelled removes exactly what carries the label (or a registered project)."""

from __future__ import annotations

import uuid

import pytest
from docker.errors import NotFound

from tests.support.docker import COMPOSE_PROJECT_LABEL, TEST_LABEL, cleanup_labelled

BUSYBOX = "stackyard-test/busybox:1"

pytestmark = pytest.mark.docker


def _gone(getter, ident: str) -> bool:
    try:
        getter(ident)
    except NotFound:
        return True
    return False


def test_cleanup_labelled_removes_only_labelled(docker_client, docker_run_id):
    client = docker_client
    # A value of its own, so this test never races the run-wide docker_cleanup.
    value = f"{docker_run_id}-cleanup-{uuid.uuid4().hex[:6]}"
    labels = {TEST_LABEL: value}
    project = f"sytestcleanup{uuid.uuid4().hex[:8]}"
    suffix = uuid.uuid4().hex[:8]

    keep_volume = client.volumes.create(name=f"sy-unlabelled-{suffix}")
    other_run = client.volumes.create(
        name=f"sy-other-run-{suffix}", labels={TEST_LABEL: f"{value}-other"}
    )
    try:
        network = client.networks.create(f"sy-net-{suffix}", labels=labels)
        volume = client.volumes.create(name=f"sy-vol-{suffix}", labels=labels)
        container = client.containers.run(
            BUSYBOX,
            name=f"sy-ctr-{suffix}",
            labels=labels,
            network=network.name,
            volumes={volume.name: {"bind": "/data", "mode": "rw"}},
            detach=True,
        )
        image = container.commit(
            repository="stackyard-test/cleanup", tag=suffix, conf={"Labels": labels}
        )
        project_ctr = client.containers.create(
            BUSYBOX, name=f"{project}-web-1", labels={COMPOSE_PROJECT_LABEL: project}
        )
        project_vol = client.volumes.create(
            name=f"{project}_data", labels={COMPOSE_PROJECT_LABEL: project}
        )

        report = cleanup_labelled(client, TEST_LABEL, value, compose_projects=[project])

        assert _gone(client.containers.get, container.id)
        assert _gone(client.containers.get, project_ctr.id)
        assert _gone(client.networks.get, network.id)
        assert _gone(client.volumes.get, volume.name)
        assert _gone(client.volumes.get, project_vol.name)
        assert _gone(client.images.get, image.id)
        assert sorted(report.volumes) == sorted([volume.name, project_vol.name])
        assert not report.errors

        # Untouched: an unlabelled volume, another run's volume, the base image.
        assert client.volumes.get(keep_volume.name).name == keep_volume.name
        assert client.volumes.get(other_run.name).name == other_run.name
        client.images.get(BUSYBOX)
    finally:
        keep_volume.remove(force=True)
        other_run.remove(force=True)
        # In case an assertion failed before the cleanup ran.
        cleanup_labelled(client, TEST_LABEL, value, compose_projects=[project])


def test_cleanup_refuses_empty_label_value(docker_client):
    with pytest.raises(ValueError):
        cleanup_labelled(docker_client, TEST_LABEL, "")
    with pytest.raises(ValueError):
        cleanup_labelled(docker_client, TEST_LABEL, "x", compose_projects=[""])


def test_docker_cleanup_fixture(docker_client, docker_cleanup, docker_labels):
    """The fixture hands out the run's labels and a compose-project registry."""
    assert docker_cleanup.labels == docker_labels
    assert docker_cleanup.compose_project("sytestproj") == "sytestproj"
    c = docker_client.containers.create(BUSYBOX, labels=docker_labels)
    report = docker_cleanup.run()
    assert c.name in report.containers
    assert _gone(docker_client.containers.get, c.id)
