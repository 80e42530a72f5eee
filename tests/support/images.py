"""Images of the update tests: versions of one service, each failing its own way or fine,
made from the busybox test image by `docker commit` (no build, no network).

Fixtures (session scope, one set per test process: workers share the engine, so each
names its images with a token of its own and removes only those):

* ``built_images``: ``built_images.build(name, script, health=None, labels=None)`` -> the
  reference of a new image whose command is ``sh -c script``.
* ``images``: the versions ``good`` (healthy), ``plain`` (no healthcheck), ``sick`` (never
  healthy) and ``crashing`` (exits 3 at start): ``images[version]`` is its id,
  ``images.ref(version)`` its reference.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import docker
import pytest

from tests.support.stacks import BUSYBOX

SECOND = 1_000_000_000  # the engine counts healthcheck times in nanoseconds
#: Healthy soon (probes every second), and on a busy machine too: a probe may take 10 s
#: and three must fail in a row (the engine runs each as an exec, which load slows).
HEALTHY = {"Test": ["CMD", "true"], "Interval": SECOND, "Timeout": 10 * SECOND, "Retries": 3}
SICK = {"Test": ["CMD", "false"], "Interval": SECOND, "Timeout": SECOND, "Retries": 1}
SLEEP = "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"


class BuiltImages:
    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self.token = uuid.uuid4().hex[:6]
        self.made: list[str] = []

    def build(
        self, name: str, script: str, health: dict | None = None, labels: dict | None = None
    ) -> str:
        repository = f"stackyard-test/{name}-{self.token}"
        container = self.client.containers.create(BUSYBOX)
        try:
            conf: dict = {"Cmd": ["sh", "-c", script], "Labels": {"stackyard.test": name}}
            conf["Labels"] |= labels or {}
            if health:
                conf["Healthcheck"] = health
            container.commit(repository, "1", conf=conf)
        finally:
            container.remove()
        self.made.append(f"{repository}:1")
        return self.made[-1]

    def id(self, reference: str) -> str:
        return self.client.images.get(reference).id

    def remove(self) -> None:
        for reference in self.made:
            with contextlib.suppress(docker.errors.NotFound):
                self.client.images.remove(reference, force=True)


class Versions:
    def __init__(self, built: BuiltImages) -> None:
        self._refs = {
            "good": built.build("good", f"echo good starts; {SLEEP}", HEALTHY),
            "plain": built.build("plain", f"echo plain starts; {SLEEP}"),
            "sick": built.build("sick", f"echo sick starts; echo cannot reach db; {SLEEP}", SICK),
            "crashing": built.build("crashing", "echo bad config: no such key >&2; exit 3"),
        }
        self._ids = {version: built.id(ref) for version, ref in self._refs.items()}

    def __getitem__(self, version: str) -> str:
        return self._ids[version]

    def ref(self, version: str) -> str:
        return self._refs[version]


@pytest.fixture(scope="session")
def built_images(docker_client: docker.DockerClient) -> Iterator[BuiltImages]:
    built = BuiltImages(docker_client)
    yield built
    built.remove()


@pytest.fixture(scope="session")
def images(built_images: BuiltImages) -> Versions:
    return Versions(built_images)
