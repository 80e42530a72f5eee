"""Self-update on a real deployment: the image in two releases on a loopback registry,
the service deployed from it with deploy/compose.yaml, updated by its own API."""

from __future__ import annotations

import contextlib
import io
import subprocess
import time
import uuid

import docker
import httpx
import pytest

from tests.support.receivers import HttpReceiver
from tests.support.service import USER_PASSWORD, sign_in
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

#: Tags that are never the latest release, pushed beside the releases.
NOT_RELEASES = ("1", "1.1", "latest", "1.2.0-rc.1", "v2.0.0-beta", "nightly")
HELPER = "stackyard.self-update"


#: What a broken release runs instead of the service (its entrypoint: whatever command a
#: deployment gives): a program that exits at once, or one that runs and never answers.
BROKEN = {
    "exits": 'ENTRYPOINT ["sh", "-c", "echo this release is broken >&2; exit 3"]\n',
    "silent": 'ENTRYPOINT ["sh", "-c", "echo this release never answers >&2; exec sleep 3600"]\n',
}
#: How long a new release that never answers has its health asked for
#: (STACKYARD_UPDATE_HEALTH_SECONDS; the others have the default, 120 s, which a loaded
#: machine may need).
SILENT_SECONDS = "20"


def build_release(
    client: docker.DockerClient, base: str, version: str, broken: str | None = None
) -> str:
    """The service's image as release `version` (what APP_VERSION says); `broken`: one
    of BROKEN's."""
    dockerfile = f"FROM {base}\nENV APP_VERSION={version}\nLABEL stackyard.test.release={version}\n"
    dockerfile += BROKEN[broken] if broken else ""
    tag = f"stackyard-test/release:{version}-{uuid.uuid4().hex[:8]}"  # tests run side by side
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return tag


@pytest.fixture
def broken(request) -> str | None:
    """How the newest release is broken (BROKEN), if it is."""
    return getattr(request, "param", None)


@pytest.fixture
def releases(registry, docker_client, stackyard_image, broken):
    """A repository on the loopback registry with 1.0.0 and 1.1.0 (and tags that are not
    releases, all on the newest image); only 1.0.0 is on this host."""
    repository = f"sy-self/{uuid.uuid4().hex[:8]}"
    old = build_release(docker_client, stackyard_image, "1.0.0")
    new = build_release(docker_client, stackyard_image, "1.1.0", broken)
    registry.push(old, repository, "1.0.0")
    digests = {"1.1.0": registry.push(new, repository, "1.1.0")}
    for tag in NOT_RELEASES:
        registry.push(new, repository, tag)
    full = f"{registry.host}/{repository}"
    for tag in ("1.1.0", *NOT_RELEASES):
        docker_client.images.remove(f"{full}:{tag}")  # to be pulled by the update
    yield full, repository, digests
    for tag in ("1.0.0", "1.1.0"):
        for image in (f"{full}:{tag}", old, new):
            with contextlib.suppress(docker.errors.APIError):  # gone, or used by a leftover
                docker_client.images.remove(image)


def wait_version(url: str, version: str, timeout: float = 120) -> list[tuple[float, bool]]:
    """Until /api/health answers `version`; (time, answered) of each try."""
    tries = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"{url}/api/health", timeout=1)
            tries.append((time.monotonic(), True))
            if answer.json().get("version") == version:
                return tries
        except (httpx.TransportError, ValueError):
            tries.append((time.monotonic(), False))
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer {version} within {timeout}s")


def helpers(client: docker.DockerClient) -> list:
    """The update helpers there are (listed without inspecting each: one that ends and is
    removed meanwhile would answer 404)."""
    return client.api.containers(all=True, filters={"label": HELPER})


def update_entries(client: httpx.Client, count: int) -> list[tuple[str, str, str]]:
    """The audit log's `count` entries of updates (actor, outcome, detail), oldest first,
    once there are that many (the outcome is recorded moments after the helper ends)."""

    def entries() -> list[tuple[str, str, str]]:
        items = client.get("/api/audit").json()["items"]
        found = [
            (e["actor"], e["outcome"], e["detail"])
            for e in reversed(items)
            if e["action"] == "system.update"
        ]
        return found if len(found) >= count else []

    return wait_until(entries, what=f"{count} system.update entries in the audit log")


def deploy_first_release(deploy, repository: str, tmp_path, **variables: str):
    """Release 1.0.0 deployed as a user would, with its variables in an env file (where
    the update finds them again), on the host's network (to reach the loopback registry)."""
    (tmp_path / "stacks").mkdir()
    return deploy(
        env_file=True,
        host_network=True,
        STACKYARD_IMAGE=repository,
        STACKYARD_VERSION="1.0.0",
        STACKS_DIR=str(tmp_path / "stacks"),
        **variables,
    )


#: Labels compose sets for the image (its id, a hash of the configuration that holds it)
#: and for a recreation (the container it replaced).
_CHANGING_LABELS = (
    "com.docker.compose.image",
    "com.docker.compose.config-hash",
    "com.docker.compose.replace",
)


def deployed_settings(container) -> dict:
    """What the deployment decides of the service's container: its environment (but the
    image's own release variable), mounts, network, ports, restart policy and compose's
    labels."""
    attrs = container.attrs
    host = attrs["HostConfig"]
    return {
        "env": sorted(e for e in attrs["Config"]["Env"] if not e.startswith("APP_VERSION=")),
        "mounts": sorted(
            (m["Type"], m.get("Source"), m["Destination"], m["RW"]) for m in attrs["Mounts"]
        ),
        "host": {k: host[k] for k in ("NetworkMode", "PortBindings", "RestartPolicy")},
        "labels": {
            k: v
            for k, v in attrs["Config"]["Labels"].items()
            if k.startswith("com.docker.compose.") and k not in _CHANGING_LABELS
        },
    }


def listen(client: httpx.Client, receiver: HttpReceiver, *events: str) -> None:
    """A webhook channel at `receiver` for `events` alone (other containers on the shared
    engine are news too)."""
    for rule in client.get("/api/notifications/rules").json():
        client.delete(f"/api/notifications/rules/{rule['id']}")
    assert (
        client.post(
            "/api/notifications/rules", json={"name": "e", "events": list(events)}
        ).status_code
        == 201
    )
    hook = {"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}}
    assert client.post("/api/notifications/channels", json=hook).status_code == 201


def heard(receiver: HttpReceiver, count: int) -> list[dict]:
    def events() -> list[dict] | None:
        found = [e for r in receiver.requests for e in r.json()["events"]]
        return found if len(found) >= count else None

    return wait_until(events, 120, f"{count} notification(s)")


def test_the_service_updates_itself_to_the_latest_release(
    releases, deploy, docker_client, tmp_path
):
    repository, _, _ = releases
    deployment = deploy_first_release(deploy, repository, tmp_path)
    before = deployed_settings(deployment.container())
    # An older release and a floating tag on the host: the first goes after the update.
    old = docker_client.images.get(f"{repository}:1.0.0")
    old.tag(repository, "0.9.0")
    old.tag(repository, "nightly")
    (env_file,) = deployment.env_files
    env_before = env_file.read_bytes()
    assert f"STACKS_DIR={tmp_path / 'stacks'}".encode() in env_before
    assert "BACKUP_HELPER_IMAGE=stackyard-test/helper:1" in before["env"]  # from the env file
    receiver = HttpReceiver()  # (the service is on the host's network)
    with deployment.client() as client:
        listen(client, receiver, "release_available", "self_update_done")
        status = client.get("/api/system/update").json()
        assert status["update_supported"] is True, status
        versions = (status["current_version"], status["latest_version"])
        assert versions == ("1.0.0", "1.1.0"), status["check_error"]
        assert status["update_available"] is True and status["repository"] == repository

        client.post(
            "/api/users", json={"username": "olga", "password": USER_PASSWORD, "role": "operator"}
        )
        with httpx.Client(base_url=deployment.url, timeout=30) as operator:
            sign_in(operator, "olga", USER_PASSWORD)
            assert operator.post("/api/system/update").status_code == 403

        started = client.post("/api/system/update")
        assert started.status_code == 202, started.text
        assert started.json()["to_version"] == "1.1.0"
    wait_version(deployment.url, "1.1.0")

    service = deployment.container()
    assert service.attrs["Config"]["Image"] == f"{repository}:1.1.0"
    # Nothing of the deployment changed but the image: the image's own STACKS_DIR did
    # not replace the .env's, and the new version sticks for a later `up -d`.
    assert deployed_settings(service) == before
    wait_until(lambda: helpers(docker_client) == [], what="the helper gone")  # it removed itself
    with deployment.client() as client:  # the same data volume: the same admin
        status = client.get("/api/system/update").json()
        assert status["current_version"] == "1.1.0" and status["update_available"] is False
        assert status["last_update"]["status"] == "succeeded"
        assert "STACKYARD_VERSION=1.1.0 written to" in status["last_update"]["output"]
        assert f"Removed the old release {repository}:0.9.0" in status["last_update"]["output"]
        assert status["last_update"]["from_version"] == "1.0.0"
        assert update_entries(client, 2) == [
            ("admin", "started", "1.0.0 -> 1.1.0"),
            ("admin", "success", "1.0.0 -> 1.1.0: updated"),
        ]
    tags = {
        t
        for image in docker_client.images.list(repository)
        for t in image.tags
        if t.startswith(f"{repository}:")
    }
    assert tags == {f"{repository}:{t}" for t in ("1.0.0", "1.1.0", "nightly")}
    assert env_file.read_bytes() == env_before.replace(
        b"STACKYARD_VERSION=1.0.0\n", b"STACKYARD_VERSION=1.1.0\n"
    )
    # Told of the release by the old version, of the update by the new one.
    said = heard(receiver, 2)
    receiver.close()
    assert [(e["name"], e["text"]) for e in said] == [
        ("release_available", "Stackyard 1.1.0 is out (this is 1.0.0)"),
        ("self_update_done", "Stackyard 1.0.0 -> 1.1.0: updated"),
    ]
    shell = {k: v for k, v in deployment.env.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    again = subprocess.run(
        [*deployment.compose_command(), "up", "-d"], capture_output=True, text=True, env=shell
    )
    assert again.returncode == 0, again.stderr
    assert deployment.container().attrs["Config"]["Image"] == f"{repository}:1.1.0"


@pytest.mark.parametrize(
    ("broken", "why", "last_words"),
    [
        ("exits", "it exited", "this release is broken"),
        ("silent", f"not healthy within {SILENT_SECONDS} s (running, but", "never answers"),
    ],
    indirect=["broken"],
)
def test_a_release_that_does_not_serve_is_rolled_back(
    releases, deploy, docker_client, tmp_path, broken, why, last_words
):
    """The new release exits at once, or runs and never answers its health: the helper
    brings 1.0.0 back by its image id, and says so with the new release's last words;
    nothing of the deployment changed."""
    repository, _, _ = releases
    limit = {"STACKYARD_UPDATE_HEALTH_SECONDS": SILENT_SECONDS} if broken == "silent" else {}
    deployment = deploy_first_release(deploy, repository, tmp_path, **limit)
    before = deployed_settings(deployment.container())
    image_before = deployment.container().image.id
    (env_file,) = deployment.env_files
    env_before = env_file.read_bytes()
    receiver = HttpReceiver()
    with deployment.client() as client:
        listen(client, receiver, "self_update_rolled_back")
        assert client.post("/api/system/update").status_code == 202
    wait_until(lambda: helpers(docker_client) == [], 240, "the helper done")
    wait_version(deployment.url, "1.0.0")
    with deployment.client() as client:
        last = client.get("/api/system/update").json()["last_update"]
        updates = update_entries(client, 2)
    assert last["status"] == "rolled_back", last
    assert last["why"].startswith(f"the new release is not healthy: {why}"), last
    assert f"The new release is not healthy: {why}" in last["output"]
    assert last_words in last["output"]  # its last log lines
    assert "Rolled back to 1.0.0" in last["output"]
    assert updates[0] == ("admin", "started", "1.0.0 -> 1.1.0")
    assert updates[1][:2] == ("admin", "failure")
    assert updates[1][2].startswith("1.0.0 -> 1.1.0: rolled back (the new release is not")
    (event,) = heard(receiver, 1)
    receiver.close()
    assert (event["name"], event["severity"]) == ("self_update_rolled_back", "critical")
    assert event["text"] == f"Stackyard {updates[1][2]}"
    service = deployment.container()
    assert service.attrs["Config"]["Image"] == f"{repository}:1.0.0"
    assert service.image.id == image_before
    assert deployed_settings(service) == before
    assert env_file.read_bytes() == env_before


@pytest.mark.parametrize("broken", ["exits"], indirect=True)
def test_every_update_is_recorded_and_told_not_only_the_first(
    releases, deploy, docker_client, tmp_path, broken
):
    """Two updates to a broken release, one after the other: each is rolled back, and
    each is audited and told once (the first one's outcome, still in the data folder and
    marked recorded, is not taken for the second one's). The status says what happened
    to the release it offers again."""
    repository, _, _ = releases
    deployment = deploy_first_release(deploy, repository, tmp_path)
    receiver = HttpReceiver()
    finished = []
    with deployment.client() as client:
        listen(client, receiver, "self_update_rolled_back")
    for attempt in (1, 2):
        with deployment.client() as client:
            assert client.post("/api/system/update").status_code == 202
        wait_until(lambda: helpers(docker_client) == [], 240, f"helper {attempt} done")
        wait_version(deployment.url, "1.0.0")
        with deployment.client() as client:
            updates = update_entries(client, 2 * attempt)
            status = client.get("/api/system/update").json()
        finished.append(status["last_update"]["finished_at"])
    assert [outcome for _, outcome, _ in updates] == ["started", "failure"] * 2
    assert updates[3][2].startswith("1.0.0 -> 1.1.0: rolled back (the new release is not")
    assert finished[0] != finished[1]
    said = heard(receiver, 2)
    receiver.close()
    assert [e["name"] for e in said] == ["self_update_rolled_back"] * 2
    # The broken release is offered again, with what became of it.
    assert status["update_available"] is True and status["latest_version"] == "1.1.0"
    last = status["last_update"]
    assert (last["status"], last["to_version"]) == ("rolled_back", "1.1.0")


def test_a_failed_pull_leaves_the_old_version_running(releases, deploy, registry, tmp_path):
    repository, name, digests = releases
    deployment = deploy_first_release(deploy, repository, tmp_path)
    before = deployment.container().id
    with deployment.client() as client:
        assert client.get("/api/system/update").json()["latest_version"] == "1.1.0"
        removed = httpx.delete(f"{registry.url}/v2/{name}/manifests/{digests['1.1.0']}")
        assert removed.status_code == 202
        failed = client.post("/api/system/update")
        assert failed.status_code == 503
        assert "could not be pulled; nothing was changed" in failed.json()["detail"]
        assert client.get("/api/health").json()["version"] == "1.0.0"
        entries = client.get("/api/audit").json()["items"]
        assert any(e["action"] == "system.update" and e["outcome"] == "failure" for e in entries)
    assert deployment.container().id == before


def test_a_plain_docker_run_cannot_update_itself(releases, docker_client, docker_cleanup, tmp_path):
    from tests.support.docker import TEST_LABEL
    from tests.support.service import ADMIN_PASSWORD, free_port

    repository, _, _ = releases
    port = free_port()
    container = docker_client.containers.run(
        f"{repository}:1.0.0",
        detach=True,
        ports={"8080/tcp": ("127.0.0.1", port)},
        environment={
            "STACKYARD_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "STACKYARD_UPDATE_CHECK_INTERVAL": "0",
        },
        volumes={"/var/run/docker.sock": {"bind": "/var/run/docker.sock"}},
        labels={TEST_LABEL: docker_cleanup.run_id},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_version(url, "1.0.0", timeout=60)
        with httpx.Client(base_url=url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            status = client.get("/api/system/update").json()
            assert status["update_supported"] is False
            assert "not started by docker compose" in status["reason"]
            refused = client.post("/api/system/update")
            assert refused.status_code == 400 and "docker compose" in refused.json()["detail"]
    finally:
        container.remove(force=True)
