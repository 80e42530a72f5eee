"""Extra Docker engines (tests/support/engines.py): separate hosts on one machine."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import docker
import pytest

from tests.support.docker import TEST_LABEL, DockerCleanup

pytestmark = pytest.mark.docker

BUSYBOX = "stackyard-test/busybox:1"
COMPOSE = f"""\
services:
  app:
    image: {BUSYBOX}
    volumes: [data:/data]
    networks: [inner]
networks:
  inner:
volumes:
  data:
"""


def project_containers(client: docker.DockerClient, project: str):
    return client.containers.list(
        all=True, filters={"label": f"com.docker.compose.project={project}"}
    )


def test_each_engine_is_a_host_of_its_own(
    docker_engines, docker_client: docker.DockerClient, docker_cleanup: DockerCleanup
):
    engines = docker_engines(2)
    assert len({e.docker_host for e in engines}) == 2
    assert all(len(e.docker_host) < 108 for e in engines)

    projects = []
    for engine in engines:
        project = docker_cleanup.compose_project(f"sy-eng-{uuid.uuid4().hex[:6]}")
        projects.append(project)
        folder: Path = engine.stacks_dir / project
        folder.mkdir()
        (folder / "compose.yaml").write_text(COMPOSE)
        engine.compose(folder, "-p", project, "up", "-d")

    for engine, own in zip(engines, projects, strict=True):
        (container,) = project_containers(engine.client, own)
        assert container.status == "running"
        # Its own network, from its own address pool; its own named volume.
        network = container.attrs["NetworkSettings"]["Networks"][f"{own}_inner"]
        assert network["IPAddress"].startswith(engine.prefix)
        assert engine.client.volumes.get(f"{own}_data")
        # Nothing of the other engine's project, nor of the main engine's.
        assert {
            c.labels.get("com.docker.compose.project")
            for c in engine.client.containers.list(all=True)
        } == {own}
        for other in projects:
            if other != own:
                assert project_containers(engine.client, other) == []
        assert project_containers(docker_client, own) == []

    # The main engine's default bridge (docker0) still works.
    assert Path("/sys/class/net/docker0").exists()
    output = docker_client.containers.run(
        BUSYBOX,
        ["sh", "-c", "ip -4 -o addr show eth0"],
        remove=True,
        labels={TEST_LABEL: docker_cleanup.run_id},
    )
    assert b"inet 172.17." in output


def test_a_stopped_engine_leaves_nothing_behind(docker_engines):
    (engine,) = docker_engines(1)
    engine.docker("network", "create", "own")
    engine.docker("run", "-d", "--name", "held", "--network", "own", BUSYBOX)
    root, bridge = engine.root, engine.bridge
    assert Path(f"/sys/class/net/{bridge}").exists()
    engine.stop()
    assert not root.exists()
    assert not Path(f"/sys/class/net/{bridge}").exists()
    # Nor the bridge of a network it created.
    assert not any(
        Path(f"/sys/class/net/{link}/bridge").exists() and link.startswith("br-")
        for link in os.listdir("/sys/class/net")
        if engine.prefix
        in subprocess.run(
            ["ip", "-o", "-4", "addr", "show", "dev", link], capture_output=True, text=True
        ).stdout
    )
    with open("/proc/self/mountinfo") as info:
        assert str(root) not in info.read()
