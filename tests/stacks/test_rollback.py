"""Updates that roll back when they fail: real images pushed to the loopback registry, each
newer one failing in its own way (unhealthy, exits at start, restarts in a loop) or fine;
the real engine runs them and the health gate judges them."""

from __future__ import annotations

import re
import uuid

import pytest

from stackyard.stacks.policy import UpdatePolicy
from tests.stacks.test_updates import check, summary_of
from tests.support.images import HEALTHY, SICK, SLEEP
from tests.support.stacks import act, compose_text, service

pytestmark = pytest.mark.docker

#: Quick gates for tests (the defaults are 120 s and 30 s).
QUICK = {"health_timeout": 30, "settle": 2}
#: A health check found failing at its first probe (as SICK's).
SICK_TIMING = {k: v for k, v in SICK.items() if k != "Test"}


class Release:
    """A repository of the loopback registry whose tag 1 this host runs."""

    def __init__(self, registry, docker_client, images) -> None:
        self.registry, self.docker, self.images = registry, docker_client, images
        self.name = f"roll/{uuid.uuid4().hex[:8]}"
        self.repo = f"{registry.host}/{self.name}"

    def publish(self, version: str, tag: str = "1") -> str:
        """Push `version` (one of `images`, or an image's reference) as `tag`; the local
        tag 1 stays on what this host pulled last."""
        local = self.local_id()
        image = self.images.ref(version) if ":" not in version else version
        digest = self.registry.push(image, self.name, tag)
        if local is not None:
            self.docker.api.tag(local, self.repo, "1")
        return digest

    def local_id(self) -> str | None:
        try:
            return self.docker.images.get(f"{self.repo}:1").id
        except Exception:
            return None


@pytest.fixture
def release(registry, docker_client, images) -> Release:
    return Release(registry, docker_client, images)


def running_image(docker_client, stack_id: str) -> str:
    (container,) = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    return container.image.id


def started(
    admin_client, make_stack, release: Release, first: str = "good", name: str = "roll", **extra
) -> str:
    release.publish(first)
    compose = (
        compose_text(web=service(f"{release.repo}:1", volumes='["data:/data"]', **extra))
        + "volumes:\n  data:\n"
    )
    stack_id = make_stack(name, compose)
    policy = admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK)
    assert policy.status_code == 204, policy.text
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    return stack_id


def write_data(docker_client, stack_id: str) -> None:
    (container,) = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    done = container.exec_run(["sh", "-c", "echo precious > /data/kept"])
    assert done.exit_code == 0


def read_data(docker_client, stack_id: str) -> str:
    (container,) = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    return container.exec_run(["cat", "/data/kept"]).output.decode().strip()


@pytest.mark.parametrize(
    ("version", "why", "extra"),
    [
        ("sick", r"web is unhealthy", {}),
        ("crashing", r"web exited with code 3", {}),
        # Seen between its exit and its restart, or after its first restart.
        (
            "crashing",
            r"web (restarted \(it exited with code 3\)|exited with code 3)",
            {"restart": "always"},
        ),
    ],
    ids=["unhealthy", "exits", "restart-loop"],
)
def test_a_failing_update_rolls_back_to_the_previous_digest_and_keeps_the_data(
    admin_client, make_stack, release, docker_client, images, version, why, extra
):
    stack_id = started(admin_client, make_stack, release, **extra)
    before = running_image(docker_client, stack_id)
    assert before == images["good"]
    write_data(docker_client, stack_id)
    release.publish(version)
    check(admin_client)
    assert summary_of(admin_client, stack_id)["has_update"] is True

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "failed" and run["rollback"] == "done", run["progress"]
    assert re.match(f"rolled back: {why}", run["progress"]["errors"][-1]), run["progress"]["errors"]
    assert running_image(docker_client, stack_id) == images["good"]
    assert read_data(docker_client, stack_id) == "precious"
    summary = summary_of(admin_client, stack_id)
    last = summary["last_update"]
    assert last["outcome"] == "rolled_back" and re.match(f"rolled back: {why}", last["detail"])
    expected_log = "cannot reach db" if version == "sick" else "bad config: no such key"
    assert any(expected_log in line for line in last["logs"]), last["logs"]
    (image,) = summary["images"]
    assert image["state"] == "update_available" and image["rolled_back"] is True
    # The stack's one state word says it (the old images run, healthy or starting).
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["state"] == "rolled_back"
    audit = admin_client.get("/api/audit", params={"action": "stack.update"}).json()["items"]
    entry = next(e for e in audit if e["target"] == stack_id and e["action"] == "stack.update")
    assert entry["outcome"] == "failure" and "rolled back" in entry["detail"]


def test_a_healthy_update_applies_and_keeps_the_previous_image_as_a_rollback_target(
    admin_client, make_stack, release, docker_client, images
):
    stack_id = started(admin_client, make_stack, release, first="plain")
    release.publish("good")
    check(admin_client)

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "succeeded" and run["rollback"] is None, run["progress"]
    assert "Update healthy" in [line["text"] for line in run["progress"]["lines"]]
    assert running_image(docker_client, stack_id) == images["good"]
    kept = docker_client.images.get(f"stackyard/rollback:{stack_id}.web")
    assert kept.id == images["plain"]
    summary = summary_of(admin_client, stack_id)
    assert summary["has_update"] is False and summary["last_update"]["outcome"] == "updated"
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["state"] == "running"


def test_the_auto_update_never_retries_a_rolled_back_digest_but_takes_a_newer_one(
    app, admin_client, make_stack, release, docker_client, images
):
    stack_id = started(admin_client, make_stack, release)
    auto = admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK | {"mode": "auto"})
    assert auto.status_code == 204
    release.publish("sick")

    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update)
    first = admin_client.get(f"/api/stacks/{stack_id}/run").json()
    assert first["rollback"] == "done"
    assert summary_of(admin_client, stack_id)["last_auto_update"]["outcome"] == "rolled_back"

    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update)
    assert admin_client.get(f"/api/stacks/{stack_id}/run").json()["id"] == first["id"]
    assert running_image(docker_client, stack_id) == images["good"]

    release.publish("plain")  # a newer one: tried
    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update)
    last = admin_client.get(f"/api/stacks/{stack_id}/run").json()
    assert last["id"] != first["id"] and last["status"] == "succeeded", last["progress"]
    assert running_image(docker_client, stack_id) == images["plain"]
    summary = summary_of(admin_client, stack_id)
    assert summary["last_auto_update"]["outcome"] == "updated"
    assert summary["images"][0]["rolled_back"] is False
    audit = admin_client.get("/api/audit", params={"action": "stack.update"}).json()["items"]
    mine = [
        (e["actor"], e["outcome"])
        for e in audit
        if e["target"] == stack_id and e["action"] == "stack.update"
    ]
    assert mine == [("auto-update", "success"), ("auto-update", "failure")]


def test_a_newer_version_tag_within_the_range_edits_the_compose_file_and_is_undone_on_rollback(
    admin_client, make_stack, release, stacks_dir, docker_client, images
):
    for version, tag in [
        ("good", "1.4.2"),
        ("sick", "1.5.0"),
        ("good", "2.0.0"),
        ("good", "1.6.0-rc.1"),
    ]:
        release.publish(version, tag)
    image = f"{release.repo}:1.4.2"
    stack_id = make_stack("tags", compose_text(web=service(image)))
    minor = admin_client.put(
        f"/api/stacks/{stack_id}/update-policy", json=QUICK | {"track": "minor"}
    )
    assert minor.status_code == 204
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    compose = (stacks_dir / stack_id / "compose.yaml").read_text()

    check(admin_client)
    (found,) = summary_of(admin_client, stack_id)["images"]
    assert (found["new_tag"], found["jump"], found["state"]) == (
        "1.5.0",
        "minor",
        "update_available",
    )

    run = act(admin_client, stack_id, "update")

    assert run["rollback"] == "done", run["progress"]
    lines = [line["text"] for line in run["progress"]["lines"]]
    assert f"web: {image} -> {release.repo}:1.5.0" in lines
    assert (stacks_dir / stack_id / "compose.yaml").read_text() == compose  # as it was
    assert running_image(docker_client, stack_id) == images["good"]
    (found,) = summary_of(admin_client, stack_id)["images"]
    assert found["new_tag"] == "1.5.0" and found["rolled_back"] is True

    release.publish("plain", "1.5.1")
    check(admin_client)
    assert summary_of(admin_client, stack_id)["images"][0]["new_tag"] == "1.5.1"
    run = act(admin_client, stack_id, "update")
    assert run["status"] == "succeeded", run["progress"]
    assert (stacks_dir / stack_id / "compose.yaml").read_text() == compose.replace("1.4.2", "1.5.1")
    assert running_image(docker_client, stack_id) == images["plain"]
    updated = summary_of(admin_client, stack_id)
    assert updated["has_update"] is False and updated["images"][0]["new_tag"] is None

    # Pre-releases only when asked; the major range reaches 2.0.0.
    prerelease = QUICK | {"track": "minor", "prereleases": True}
    admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=prerelease)
    assert summary_of(admin_client, stack_id)["images"][0]["new_tag"] == "1.6.0-rc.1"
    admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK | {"track": "major"})
    assert summary_of(admin_client, stack_id)["images"][0]["new_tag"] == "2.0.0"


def test_the_policy_and_a_rolled_back_update_from_the_command_line(
    tmp_path, make_stack, release, docker_client, images
):
    from tests.stacks.test_cli import cli

    release.publish("good")
    stack_id = make_stack("cli", compose_text(web=service(f"{release.repo}:1")))
    refused = cli(tmp_path, "policy", stack_id, "--settle", "40", "--health-timeout", "30")
    assert (
        refused.returncode == 1
        and "settle (40 s) must be shorter than health_timeout (30 s)" in refused.stderr
    )
    shown = cli(tmp_path, "policy", stack_id, "--settle", "2", "--health-timeout", "30")
    assert shown.returncode == 0, shown.stderr
    assert f"{stack_id}: its own policy" in shown.stdout and "  settle: 2" in shown.stdout
    assert cli(tmp_path, "up", stack_id).returncode == 0
    release.publish("crashing")
    checked = cli(tmp_path, "check")
    assert f"{stack_id}\tUPDATE\tweb: update_available" in checked.stdout

    update = cli(tmp_path, "update", stack_id)

    assert update.returncode == 1
    assert f"error: update of {stack_id}: rolled back: web exited with code 3" in update.stderr
    assert running_image(docker_client, stack_id) == images["good"]
    checked = cli(tmp_path, "check")
    assert "web: update_available [rolled back before]" in checked.stdout
    assert "last update rolled back: rolled back: web exited with code 3" in checked.stdout
    inherited = cli(tmp_path, "policy", stack_id, "--inherit")
    assert (
        f"{stack_id}: the host default" in inherited.stdout and "  settle: 30" in inherited.stdout
    )


def test_a_one_off_job_that_ends_well_passes_the_gate(
    admin_client, make_stack, release, docker_client, images
):
    """A migration service that runs once and exits 0 (no restart policy) is done, not
    failed: the update applies."""
    release.publish("good")
    compose = compose_text(
        web=service(f"{release.repo}:1"),
        migrate=service(f"{release.repo}:1", command='["sh", "-c", "echo migrated"]'),
    )
    stack_id = make_stack("job", compose)
    assert admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK).status_code == 204
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    release.publish("plain")
    check(admin_client)

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "succeeded" and run["rollback"] is None, run["progress"]
    assert running_image(docker_client, stack_id) == images["plain"]  # web; migrate ended


def test_an_update_killed_in_its_health_gate_is_undone_at_the_next_start(
    tmp_path, release, docker_client, images, docker_cleanup
):
    """SIGKILL while the new containers are being judged (the compose file already names
    the new tag): the next start puts the file and the previous image back."""
    import httpx

    from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
    from tests.support.waiting import wait_until

    for version, tag in [("good", "1.4.2"), ("plain", "1.5.0")]:
        release.publish(version, tag)
    stack_id = f"killed-{uuid.uuid4().hex[:6]}"
    folder = tmp_path / "stacks" / stack_id
    folder.mkdir(parents=True)
    compose = compose_text(web=service(f"{release.repo}:1.4.2"))
    (folder / "compose.yaml").write_text(compose)
    docker_cleanup.compose_project(stack_id)
    env = service_env(tmp_path)
    policy = {"track": "minor", "settle": 120, "health_timeout": 300}  # a long gate

    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            client.put(f"/api/stacks/{stack_id}/update-policy", json=policy).raise_for_status()
            assert act(client, stack_id, "start")["status"] == "succeeded"
            client.post("/api/stacks/updates/check").raise_for_status()
            client.post(f"/api/stacks/{stack_id}/actions/update").raise_for_status()

            def gating() -> bool:
                lines = client.get(f"/api/stacks/{stack_id}/run").json()["progress"]["lines"]
                return any(line["text"].startswith("Waiting for web") for line in lines)

            wait_until(gating, 120, "the update's health gate")
        server.process.kill()
        server.process.wait()
    finally:
        server.stop()
    assert "1.5.0" in (folder / "compose.yaml").read_text()  # killed half-way
    assert running_image(docker_client, stack_id) == images["plain"]

    again = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=again.url, timeout=60) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)

            def undone() -> dict | None:  # (the killed run reads as interrupted at once)
                run = client.get(f"/api/stacks/{stack_id}/run").json()
                said = any("going back" in line["text"] for line in run["progress"]["lines"])
                return run if said and run["status"] == "interrupted" else None

            run = wait_until(undone, 120, "the interrupted update undone")
    finally:
        again.stop()
    lines = [line["text"] for line in run["progress"]["lines"]]
    assert any("going back to what ran before it" in line for line in lines), lines
    assert "Rolled back: the previous images run again" in lines
    assert (folder / "compose.yaml").read_text() == compose
    assert running_image(docker_client, stack_id) == images["good"]
    journal = tmp_path / "data" / "journal.json"
    assert not journal.exists() or journal.read_text().strip() in ("{}", "")


def test_a_rollback_that_fails_too_says_so_with_what_runs_now(
    admin_client, make_stack, release, docker_client, built_images
):
    """The new version migrates the data and is unhealthy; the old one cannot read the
    migrated data: the rollback fails, and says what runs."""
    strict = built_images.build(
        "strict",
        'if [ -f /data/migrated ]; then echo "data of a newer version" >&2; exit 1; fi; ' + SLEEP,
        HEALTHY,
    )
    migrating = built_images.build("migrating", f"touch /data/migrated; {SLEEP}", SICK)
    stack_id = started(admin_client, make_stack, release, first=strict)
    assert running_image(docker_client, stack_id) == built_images.id(strict)
    release.publish(migrating)
    check(admin_client)

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "failed" and run["rollback"] == "failed", run["progress"]
    detail = run["progress"]["errors"][-1]
    assert detail.startswith("rolled back: web is unhealthy; the rollback failed too (web ")
    assert "running now: web " in detail and "exited with code 1" in detail
    last = summary_of(admin_client, stack_id)["last_update"]
    assert (last["outcome"], last["detail"]) == ("rollback_failed", detail)


def test_a_failing_update_of_a_stack_that_never_ran_says_there_is_nothing_to_go_back_to(
    admin_client, make_stack, release, images
):
    release.publish("crashing")
    stack_id = make_stack("never", compose_text(web=service(f"{release.repo}:1")))
    assert admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK).status_code == 204

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "failed" and run["rollback"] is None, run["progress"]
    assert run["progress"]["errors"][-1] == (
        "web exited with code 3; nothing ran before this update: there is nothing to go back to"
    )
    assert summary_of(admin_client, stack_id)["last_update"]["outcome"] == "failed"


def test_the_logs_of_a_failed_update_are_shown_only_to_those_who_may_read_logs(
    admin_client, user_client, viewer_client, make_stack, release, images
):
    """What the failing image printed may hold secrets: a viewer, who may not read the
    stack's logs, gets the outcome without them (null), as `/logs` answers them 403."""
    release.publish("crashing")
    stack_id = make_stack("told", compose_text(web=service(f"{release.repo}:1")))
    assert admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK).status_code == 204
    assert act(admin_client, stack_id, "update")["status"] == "failed"

    for reader in (admin_client, user_client):
        last = summary_of(reader, stack_id)["last_update"]
        assert any("bad config: no such key" in line for line in last["logs"]), last
    assert viewer_client.get(f"/api/stacks/{stack_id}/logs").status_code == 403
    hidden = viewer_client.get("/api/stacks/updates")
    assert hidden.status_code == 200
    assert "bad config" not in hidden.text
    (line,) = [s for s in hidden.json()["stacks"] if s["stack"] == stack_id]
    assert line["last_update"]["outcome"] == "failed" and line["last_update"]["logs"] is None


def test_a_stored_window_that_never_comes_skips_its_stack_and_the_pass_goes_on(
    app, admin_client, make_stack, registry, docker_client, images
):
    """A policy stored before windows were checked (31 February, which the API now
    refuses): the auto-update pass says so on that stack and updates the next one."""
    never, kept = (Release(registry, docker_client, images) for _ in range(2))
    stuck = started(admin_client, make_stack, never, name="a-never")
    fine = started(admin_client, make_stack, kept, name="b-fine")
    assert sorted([stuck, fine]) == [stuck, fine]  # the pass meets the bad one first
    refused = admin_client.put(
        f"/api/stacks/{stuck}/update-policy", json=QUICK | {"window": "0 0 31 2 *"}
    )
    assert refused.status_code == 400 and "never come" in refused.json()["detail"]
    assert (
        admin_client.put(
            f"/api/stacks/{fine}/update-policy", json=QUICK | {"mode": "auto"}
        ).status_code
        == 204
    )

    def as_stored_before(prefs) -> None:
        prefs.policy = UpdatePolicy.model_validate(QUICK | {"mode": "auto", "window": "0 0 31 2 *"})
        prefs.auto_update = True

    app.state.services.stacks.machine.prefs.change(stuck, as_stored_before)
    app.state.services.stacks.machine.changed()
    never.publish("plain")
    kept.publish("plain")

    app.state.test_portal.call(app.state.services.stacks.check_and_auto_update)

    assert running_image(docker_client, fine) == images["plain"]
    assert summary_of(admin_client, fine)["last_auto_update"]["outcome"] == "updated"
    assert running_image(docker_client, stuck) == images["good"]
    skipped = summary_of(admin_client, stuck)["last_auto_update"]
    assert skipped["outcome"] == "skipped" and "never come" in skipped["detail"], skipped


def test_what_a_failing_health_check_printed_is_in_the_logs_not_in_why(
    admin_client, viewer_client, make_stack, release, built_images
):
    """A health check's output is container output too: it is shown with the logs (to
    whoever may read them), never in the outcome's detail, which every role reads."""
    leaky = built_images.build(
        "leaky",
        SLEEP,
        {"Test": ["CMD-SHELL", "echo token=hunter2 refused; false"], **SICK_TIMING},
    )
    release.publish(leaky)
    stack_id = make_stack("leaky", compose_text(web=service(f"{release.repo}:1")))
    assert admin_client.put(f"/api/stacks/{stack_id}/update-policy", json=QUICK).status_code == 204

    run = act(admin_client, stack_id, "update")

    assert run["status"] == "failed"
    assert run["progress"]["errors"][-1].startswith("web is unhealthy; nothing ran before")
    last = summary_of(admin_client, stack_id)["last_update"]
    assert "hunter2" not in last["detail"]
    assert "(health check) token=hunter2 refused" in last["logs"]
    shown = viewer_client.get("/api/stacks/updates")
    assert shown.status_code == 200 and "hunter2" not in shown.text
    viewed = viewer_client.get(f"/api/stacks/{stack_id}/run").json()
    assert "hunter2" not in str(viewed)
