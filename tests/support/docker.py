"""Docker fixtures for tests that use the real engine.

Register from ``tests/conftest.py`` with ``pytest_plugins = ["tests.support.docker", ...]``.

Everything a test creates in Docker should carry ``docker_labels``
(``{TEST_LABEL: <this run's id>}``) or belong to a compose project registered with
``docker_cleanup.compose_project(name)``; the ``docker_cleanup`` fixture then removes
it when the test ends, and the session sweeps this run's label once more at its end.
Nothing without this run's label and outside a registered project is ever touched.

Note: the label value is per *session*, so a ``docker_cleanup`` teardown removes
everything labelled for this run, including objects made by other fixtures with
``docker_labels``. Session-scoped objects should therefore use their own label value
(e.g. ``{TEST_LABEL: f"{run_id}-session"}``) and clean up after themselves.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import docker
import pytest
import requests
from docker.errors import APIError, DockerException, NotFound

TEST_LABEL = "stackyard.test"
COMPOSE_PROJECT_LABEL = "com.docker.compose.project"

#: Unique for this pytest process: ``<utc time>-<pid>-<random>``.
RUN_ID = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{os.getpid()}-{uuid.uuid4().hex[:8]}"

SETUP_HINT = "run `scripts/setup.sh --test` (it installs Docker and starts the daemon)"


class CleanupError(RuntimeError):
    """Some labelled Docker objects could not be removed."""


@dataclass
class CleanupReport:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _label_filter(key: str, value: str) -> dict[str, str]:
    if not key or not value:
        # A bare key would match every run's objects: refuse.
        raise ValueError("label key and value must both be non-empty")
    return {"label": f"{key}={value}"}


def cleanup_labelled(
    client: docker.DockerClient,
    label_key: str,
    label_value: str,
    compose_projects: Iterable[str] = (),
) -> CleanupReport:
    """Remove every container (forced), network, volume and image labelled
    ``label_key=label_value``, and the containers, networks and volumes of each compose
    project in ``compose_projects`` (``com.docker.compose.project=<name>``).

    Objects that vanish meanwhile are ignored. Raises :class:`CleanupError` listing
    what could not be removed, after trying everything.
    """
    filters = [_label_filter(label_key, label_value)]
    for project in compose_projects:
        filters.append(_label_filter(COMPOSE_PROJECT_LABEL, project))
    report = CleanupReport()

    def attempt(kind: str, name: str, fn) -> bool:
        try:
            fn()
        except NotFound:
            return True
        except APIError as exc:
            report.errors.append(f"{kind} {name}: {exc.explanation or exc}")
            return False
        return True

    def remove_all(kind: str, listing, remove, removed: list[str]) -> None:
        """Each object any filter finds, once."""
        seen: set[str] = set()
        for flt in filters:
            for obj in listing(filters=flt):
                if obj.id not in seen:
                    seen.add(obj.id)
                    if attempt(kind, obj.name, lambda obj=obj: remove(obj)):
                        removed.append(obj.name)

    # Containers first: they hold networks, volumes and images. v=True also drops a
    # container's *anonymous* volumes (never named ones).
    remove_all(
        "container",
        lambda filters: client.containers.list(all=True, filters=filters),
        lambda c: c.remove(force=True, v=True),
        report.containers,
    )
    remove_all("network", client.networks.list, lambda n: n.remove(), report.networks)
    remove_all("volume", client.volumes.list, lambda v: v.remove(force=True), report.volumes)

    # Images: only this run's label (compose projects' images are left alone). An
    # image can be the parent of another labelled one, so retry for a few rounds.
    # (The engine's listing: the SDK's `images.list()` inspects each image after listing,
    # and fails when another test process removed one meanwhile.)
    pending = {i["Id"]: i for i in client.api.images(all=True, filters=filters[0])}
    errors: list[str] = []
    for _ in range(5):
        if not pending:
            break
        errors = []
        for image_id, image in list(pending.items()):
            name = (image.get("RepoTags") or [image_id[7:19]])[0]
            try:
                client.images.remove(image_id, force=True)
            except NotFound:
                pass
            except APIError as exc:
                errors.append(f"image {name}: {exc.explanation or exc}")
                continue
            report.images.append(name)
            del pending[image_id]
    report.errors.extend(errors)

    if report.errors:
        raise CleanupError(
            f"could not remove some objects labelled {label_key}={label_value}: "
            + "; ".join(report.errors)
        )
    return report


@pytest.fixture(scope="session")
def docker_run_id() -> str:
    """This test session's run id (the value of :data:`TEST_LABEL`)."""
    return RUN_ID


@pytest.fixture(scope="session")
def docker_labels(docker_run_id: str) -> dict[str, str]:
    """Labels for everything a test creates in Docker: ``{TEST_LABEL: run_id}``."""
    return {TEST_LABEL: docker_run_id}


@pytest.fixture(scope="session")
def docker_client(docker_run_id: str) -> Iterator[docker.DockerClient]:
    """A docker SDK client for the local engine. Fails (never skips) without one."""
    error = None
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except (DockerException, requests.exceptions.RequestException) as exc:
        error = str(exc)
    if error is not None:  # fail outside `except`: no chained traceback
        pytest.fail(
            f"no Docker daemon answers ({error}); {SETUP_HINT}, "
            "or scripts/dockerd.sh if the daemon died",
            pytrace=False,
        )
    yield client
    # Session sweep for anything labelled for this run that a test left behind.
    try:
        cleanup_labelled(client, TEST_LABEL, docker_run_id)
    except (DockerException, CleanupError) as exc:  # pragma: no cover - best effort
        print(f"warning: end-of-session docker cleanup: {exc}")
    finally:
        client.close()


class DockerCleanup:
    """Handed to tests by the ``docker_cleanup`` fixture."""

    def __init__(self, client: docker.DockerClient, run_id: str) -> None:
        self.client = client
        self.run_id = run_id
        self.labels = {TEST_LABEL: run_id}
        self.projects: list[str] = []

    def compose_project(self, name: str) -> str:
        """Register a compose project whose containers, networks and volumes are
        removed at teardown. Returns ``name``."""
        if not name:
            raise ValueError("compose project name must be non-empty")
        if name not in self.projects:
            self.projects.append(name)
        return name

    def run(self) -> CleanupReport:
        return cleanup_labelled(self.client, TEST_LABEL, self.run_id, self.projects)


@pytest.fixture
def docker_cleanup(
    docker_client: docker.DockerClient, docker_run_id: str
) -> Iterator[DockerCleanup]:
    """At teardown, removes everything labelled for this run and every registered
    compose project (``docker_cleanup.compose_project(name)``)."""
    cleanup = DockerCleanup(docker_client, docker_run_id)
    yield cleanup
    cleanup.run()
