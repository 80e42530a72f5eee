"""Image update detection end to end: a real registry on loopback, the real engine."""

import uuid

import pytest

from tests.support.stacks import BIG, BUSYBOX, act, compose_text, service

pytestmark = pytest.mark.docker


def summary_of(client, stack_id) -> dict:
    stacks = client.get("/api/stacks/updates").json()["stacks"]
    return next(s for s in stacks if s["stack"] == stack_id)


def check(client) -> dict:
    response = client.post("/api/stacks/updates/check")
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def new_repo(registry):
    """new_repo() -> a repository whose tag 1 is the busybox image, known locally by its
    registry digest."""
    made = []

    def make() -> str:
        name = f"upd/{uuid.uuid4().hex[:8]}"
        registry.push(BUSYBOX, name, "1")
        made.append(f"{registry.host}/{name}")
        return made[-1]

    return make  # the registry fixture drops every local reference to it at the end


@pytest.fixture
def repo(new_repo) -> str:
    return new_repo()


def publish_newer(registry, docker_client, repo: str) -> str:
    """Someone pushes a newer image under the same tag; this host still has the old one."""
    name = repo.split("/", 1)[1]
    new_digest = registry.push(BIG, name, "1")
    docker_client.images.get(BUSYBOX).tag(repo, "1")  # the local tag stays on the old image
    return new_digest


def test_newer_digest_shows_an_update_and_updating_clears_it_at_once(
    admin_client, make_stack, registry, docker_client, repo
):
    stack_id = make_stack("upd", compose_text(web=service(image=f"{repo}:1")))
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"

    check(admin_client)
    first = summary_of(admin_client, stack_id)
    image = first["images"][0]
    assert (first["has_update"], image["state"]) == (False, "up_to_date")
    assert image["local_digest"] == image["remote_digest"]

    new_digest = publish_newer(registry, docker_client, repo)
    check(admin_client)
    stack = summary_of(admin_client, stack_id)
    assert stack["has_update"] is True
    assert stack["images"][0]["state"] == "update_available"
    assert stack["images"][0]["remote_digest"] == new_digest
    assert stack["images"][0]["checked_at"] is not None

    # Reading the summary asks no registry, however often.
    before = len(registry.requests())
    for _ in range(50):
        assert admin_client.get("/api/stacks/updates").status_code == 200
    assert len(registry.requests()) == before

    run = act(admin_client, stack_id, "update")
    assert run["status"] == "succeeded", run["progress"]["errors"]
    stack = summary_of(admin_client, stack_id)  # no new check: reconciled after the pull
    assert stack["has_update"] is False
    assert stack["images"][0]["local_digest"] == new_digest
    container = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )[0]
    assert container.image.id == docker_client.images.get(BIG).id


def test_each_distinct_reference_is_asked_once_per_pass(admin_client, make_stack, registry, repo):
    for i in range(3):
        make_stack(
            f"same{i}",
            compose_text(web=service(image=f"{repo}:1"), side=service(image=f"{repo}:1")),
        )
    before = len(registry.requests())
    summary = check(admin_client)
    asked = [r for r in registry.requests()[before:] if r[1].endswith("/manifests/1")]
    assert asked == [("HEAD", f"/v2/{repo.split('/', 1)[1]}/manifests/1")]
    states = {i["state"] for s in summary["stacks"] for i in s["images"]}
    assert states == {"up_to_date"}


def test_pinned_and_local_only_images_are_never_updates(admin_client, make_stack, registry, repo):
    digest = registry.push(BUSYBOX, repo.split("/", 1)[1], "1")
    stack_id = make_stack(
        "pinned",
        compose_text(
            pinned=service(image=f"{repo}@{digest}"),
            built=service(image=BUSYBOX),  # built on this machine: no registry digest
        ),
    )
    before = len(registry.requests())
    check(admin_client)
    states = {i["service"]: i["state"] for i in summary_of(admin_client, stack_id)["images"]}
    assert states == {"pinned": "pinned", "built": "local"}
    assert len(registry.requests()) == before  # neither was asked for


def test_token_protected_registry(admin_client, make_stack, token_registry, docker_client):
    name = f"upd/{uuid.uuid4().hex[:8]}"
    pushed = token_registry.push(BUSYBOX, name, "1")
    stack_id = make_stack("tok", compose_text(web=service(image=f"{token_registry.host}/{name}:1")))
    before = token_registry.token_request_count
    check(admin_client)
    image = summary_of(admin_client, stack_id)["images"][0]
    assert (image["state"], image["remote_digest"]) == ("up_to_date", pushed)
    assert token_registry.token_request_count > before


def test_registry_failures_are_recorded_not_fatal(admin_client, make_stack, repo):
    down = make_stack(
        "down",
        compose_text(
            a=service(image="127.0.0.1:1/none/a:1"), b=service(image="127.0.0.1:1/none/b:1")
        ),
    )
    good = make_stack("good", compose_text(web=service(image=f"{repo}:1")))
    check(admin_client)
    failed = summary_of(admin_client, down)["images"]
    assert {i["state"] for i in failed} == {"error"}
    assert all("cannot reach registry 127.0.0.1:1" in i["error"] for i in failed)
    assert summary_of(admin_client, good)["images"][0]["state"] == "up_to_date"


def test_auto_update_updates_opted_in_stacks_only(
    app, admin_client, make_stack, registry, docker_client, new_repo
):
    auto_repo, manual_repo = new_repo(), new_repo()
    opted = make_stack("auto", compose_text(web=service(image=f"{auto_repo}:1")))
    manual = make_stack("manual", compose_text(web=service(image=f"{manual_repo}:1")))
    for stack_id in (opted, manual):
        assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    assert (
        admin_client.put(f"/api/stacks/{opted}/auto-update", json={"enabled": True}).status_code
        == 204
    )
    assert admin_client.get(f"/api/stacks/{opted}").json()["auto_update"] is True
    assert admin_client.get(f"/api/stacks/{manual}").json()["auto_update"] is False
    publish_newer(registry, docker_client, auto_repo)
    publish_newer(registry, docker_client, manual_repo)

    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update)

    opted_summary, manual_summary = (
        summary_of(admin_client, opted),
        summary_of(admin_client, manual),
    )
    assert opted_summary["has_update"] is False
    assert opted_summary["last_auto_update"]["outcome"] == "updated"
    assert manual_summary["has_update"] is True and manual_summary["last_auto_update"] is None

    def image_of(stack_id):
        (container,) = docker_client.containers.list(
            filters={"label": f"com.docker.compose.project={stack_id}"}
        )
        return container.image.id

    assert image_of(opted) == docker_client.images.get(BIG).id
    assert image_of(manual) == docker_client.images.get(BUSYBOX).id


class _SummaryMachine:
    """What `UpdateService.summary` reads: the caches and the stack list, nothing else."""

    def __init__(self, tmp_path) -> None:
        from stackyard.compose.project import Project, Service
        from stackyard.registry.digests import DigestCache
        from stackyard.stacks.prefs import PrefsStore

        self.stacks_dir = tmp_path / "stacks"
        self.stacks_dir.mkdir()
        self.generation = 0
        self.digests = DigestCache(tmp_path / "digests.json")
        self.prefs = PrefsStore(tmp_path / "prefs.json")
        self.project = Project("shop", (Service("web", "ghcr.io/team/web:1", False),))
        self.store = type("Store", (), {"ids": staticmethod(lambda: ["shop"])})()

    def cached_project(self, stack_id):
        return self.project

    def changed(self) -> None:
        self.generation += 1


def test_the_summary_is_encoded_once_per_change_by_the_capability(tmp_path):
    """The router keeps no module-level cache: UpdateService hands out the JSON bytes."""
    import json
    from datetime import UTC, datetime

    from stackyard.registry.digests import LocalDigest, RemoteDigest
    from stackyard.stacks.prefs import UpdateOutcome
    from stackyard.stacks.updates import UpdateService

    machine = _SummaryMachine(tmp_path)
    service = UpdateService(machine)  # type: ignore[arg-type]
    first = service.summary_json(logs=True)
    assert service.summary_json(logs=True) is first  # nothing changed: the same bytes
    assert json.loads(first)["stacks"][0]["images"][0]["state"] == "unknown"

    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    machine.digests.update(
        {"ghcr.io/team/web:1": RemoteDigest("ok", "sha256:" + "2" * 64, now.isoformat())},
        {"ghcr.io/team/web:1": LocalDigest(True, ["sha256:" + "1" * 64], now.isoformat())},
        checked_at=now,
    )

    def opt_in(prefs) -> None:
        prefs.auto_update = True
        prefs.last_auto_update = UpdateOutcome(now, "failed", "x", "auto-update")

    machine.prefs.change("shop", opt_in)
    machine.changed()
    body = json.loads(service.summary_json(logs=True))
    assert body["last_check"] == "2025-01-02T03:04:05Z"
    (stack,) = body["stacks"]
    assert stack["has_update"] is True and stack["auto_update"] is True
    assert stack["last_auto_update"] == {
        "at": "2025-01-02T03:04:05Z",
        "outcome": "failed",
        "detail": "x",
        "by": "auto-update",
        "logs": [],
    }
    assert stack["images"][0]["checked_at"] == "2025-01-02T03:04:05Z"
