"""Stacks as real compose projects on the real engine, through the API."""

import json
import stat
import threading

import pytest

from stackyard.stacks.runs import StackLock
from tests.support.service import started
from tests.support.stacks import act, compose, compose_text, service, wait_run
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

SLOW_STOP = service(
    command='["sh", "-c", "trap \\"\\" TERM; while true; do sleep 1; done"]', stop_grace_period="3s"
)


def read_sse(lines) -> list[tuple[str, str]]:
    """(event, data) pairs, framed by blank lines as the SSE format says."""
    events, event, data = [], "message", []
    for line in lines:
        if not line:
            if data or event != "message":
                events.append((event, "\n".join(data)))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data.append(line.split(":", 1)[1].strip())
    return events


def listed(client, stack_id):
    return next(s for s in client.get("/api/stacks").json() if s["id"] == stack_id)


def test_create_start_stop_down_and_status(admin_client, stacks_dir, docker_cleanup, docker_client):
    created = admin_client.post(
        "/api/stacks",
        json={
            "name": "My Web App",
            "compose": compose_text(web=service(), worker=service()),
            "env": "GREETING=hi\n",
        },
    )
    assert created.status_code == 201, created.text
    stack_id = created.json()["id"]
    docker_cleanup.compose_project(stack_id)
    assert stack_id == "my-web-app"
    assert (stacks_dir / stack_id / "compose.yaml").is_file()
    assert (stacks_dir / stack_id / ".env").read_text() == "GREETING=hi\n"
    assert listed(admin_client, stack_id)["state"] == "stopped"

    run = act(admin_client, stack_id, "start")
    assert run["status"] == "succeeded" and run["progress"]["percent"] == 100.0
    stack = listed(admin_client, stack_id)
    assert stack["state"] == "running"
    web = next(s for s in stack["services"] if s["name"] == "web")
    assert web["running"] and web["containers"][0]["state"] == "running"
    assert web["containers"][0]["image"] == "stackyard-test/busybox:1"
    assert docker_client.containers.get(web["containers"][0]["name"]).status == "running"

    assert act(admin_client, stack_id, "restart")["status"] == "succeeded"
    assert act(admin_client, stack_id, "stop")["status"] == "succeeded"
    stack = listed(admin_client, stack_id)
    assert stack["state"] == "stopped"
    assert all(c["state"] == "exited" for s in stack["services"] for c in s["containers"])

    assert act(admin_client, stack_id, "down")["status"] == "succeeded"
    assert all(not s["containers"] for s in listed(admin_client, stack_id)["services"])


def test_stack_running_before_stackyard_started_is_picked_up(
    central_app, settings, make_stack, stacks_dir
):
    stack_id = make_stack("byhand", compose_text(web=service(), db=service()))
    compose(stacks_dir, stack_id, "up", "-d")  # by hand, before the service exists
    with started(central_app, settings) as client:
        client.post(
            "/api/auth/login", json={"username": "admin", "password": settings.admin_password}
        )
        stack = listed(client, stack_id)
    assert stack["state"] == "running"
    assert {s["name"] for s in stack["services"]} == {"web", "db"}


def test_partially_running_stack(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("partial", compose_text(web=service(), db=service()))
    compose(stacks_dir, stack_id, "up", "-d")
    compose(stacks_dir, stack_id, "stop", "db")
    stack = listed(admin_client, stack_id)
    assert stack["state"] == "partial"
    running = {s["name"]: s["running"] for s in stack["services"]}
    assert running == {"web": True, "db": False}


#: A service whose healthcheck always fails: unhealthy a few seconds after its start.
FAILING_HEALTH = service(
    command='["sleep", "3600"]',
    healthcheck="{test: [CMD, 'false'], interval: 1s, timeout: 1s, retries: 1}",
)


def test_an_unhealthy_stack_says_so_in_the_list_its_page_and_the_fleet(
    admin_client, make_stack, stacks_dir
):
    """Both services run, one fails its healthcheck: the stack's one state word is
    "unhealthy" wherever it is read (never "running"), and the dashboard counts it so."""
    stack_id = make_stack(
        "sick", compose_text(web=FAILING_HEALTH, db=service(command='["sleep", "3600"]'))
    )
    compose(stacks_dir, stack_id, "up", "-d")

    def unhealthy() -> dict | None:
        stack = listed(admin_client, stack_id)
        return stack if stack["state"] == "unhealthy" else None

    stack = wait_until(unhealthy, what="the stack unhealthy in the list")
    assert all(s["running"] for s in stack["services"])  # both run: health decides
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["state"] == "unhealthy"
    fleet = admin_client.get("/api/dashboard/fleet").json()
    (local,) = [card for card in fleet["hosts"] if card["kind"] == "local"]
    assert local["report"]["stacks"]["unhealthy"] >= 1
    assert fleet["breakdown"]["unhealthy"] >= 1
    assert any(
        item["stack"] == stack_id and item["severity"] == "critical" for item in fleet["attention"]
    )


def test_invalid_compose_is_refused_and_the_old_file_kept(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("edit", compose_text(web=service()))
    path = stacks_dir / stack_id / "compose.yaml"
    before = path.read_text()
    bad = admin_client.put(
        f"/api/stacks/{stack_id}/compose",
        json={"content": "services:\n  web:\n    image: [not, a, string]\n"},
    )
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("Invalid compose file:")
    assert "image" in bad.json()["detail"]
    assert ".stackyard-check" not in bad.json()["detail"]  # names the user's file
    assert path.read_text() == before
    assert [p.name for p in path.parent.iterdir()] == ["compose.yaml"]  # no temporary left

    good = compose_text(web=service(), extra=service())
    saved = admin_client.put(f"/api/stacks/{stack_id}/compose", json={"content": good})
    assert saved.status_code == 200
    assert path.read_text() == good
    assert {s["name"] for s in saved.json()["services"]} == {"web", "extra"}

    refused = admin_client.post(
        "/api/stacks", json={"name": "broken", "compose": "services: [oops"}
    )
    assert refused.status_code == 400 and "Invalid compose file" in refused.json()["detail"]
    assert ".creating-" not in refused.json()["detail"]
    assert not (stacks_dir / "broken").exists()
    assert [p.name for p in stacks_dir.iterdir() if p.name.startswith(".")] == []


def test_env_is_validated_against_the_compose_file(admin_client, make_stack, stacks_dir):
    stack_id = make_stack(
        "env",
        compose_text(web=service(image="${IMAGE:?IMAGE is required}")),
        env="IMAGE=stackyard-test/busybox:1\n",
    )
    refused = admin_client.put(f"/api/stacks/{stack_id}/env", json={"content": "OTHER=1\n"})
    assert refused.status_code == 400 and "IMAGE is required" in refused.json()["detail"]
    assert refused.json()["detail"].startswith("Invalid .env file: ")
    assert (stacks_dir / stack_id / ".env").read_text() == "IMAGE=stackyard-test/busybox:1\n"
    ok = admin_client.put(
        f"/api/stacks/{stack_id}/env", json={"content": "IMAGE=stackyard-test/big:1\n"}
    )
    assert ok.status_code == 200
    assert ok.json()["services"][0]["image"] == "stackyard-test/big:1"


def test_secrets_are_admin_only_and_private(admin_client, user_client, make_stack, stacks_dir):
    stack_id = make_stack("sec", compose_text(web=service()))
    assert (
        user_client.put(f"/api/stacks/{stack_id}/secrets", json={"content": "X=1"}).status_code
        == 403
    )
    assert user_client.get(f"/api/stacks/{stack_id}/secrets").status_code == 403
    assert (
        admin_client.put(
            f"/api/stacks/{stack_id}/secrets", json={"content": "TOKEN=abc\n"}
        ).status_code
        == 204
    )
    path = stacks_dir / stack_id / ".secrets"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert admin_client.get(f"/api/stacks/{stack_id}/secrets").json() == {"content": "TOKEN=abc\n"}
    detail = admin_client.get(f"/api/stacks/{stack_id}").json()
    assert detail["has_secrets"] is True and "TOKEN=abc" not in str(detail)
    audit = admin_client.get("/api/audit").json()["items"][0]
    assert (audit["action"], audit["target"], audit["outcome"]) == (
        "stack.secrets",
        stack_id,
        "success",
    )


def test_a_second_action_on_a_busy_stack_is_refused(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("busy", compose_text(web=SLOW_STOP))
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    assert admin_client.post(f"/api/stacks/{stack_id}/actions/stop").status_code == 202
    second = admin_client.post(f"/api/stacks/{stack_id}/actions/start")
    assert second.status_code == 409
    assert second.json() == {"detail": f"Stack {stack_id!r} is busy (stop in progress)"}
    final = wait_run(admin_client, stack_id)
    assert (final["action"], final["status"]) == ("stop", "succeeded")  # not interleaved
    assert listed(admin_client, stack_id)["state"] == "stopped"


def test_the_lock_is_shared_with_other_processes(admin_client, make_stack, settings):
    """The CLI and the service take the same lock file."""
    stack_id = make_stack("locked", compose_text(web=service()))
    lock = StackLock(settings.data_dir / "locks" / f"{stack_id}.lock")
    assert lock.try_acquire()
    try:
        refused = admin_client.post(f"/api/stacks/{stack_id}/actions/start")
        assert refused.status_code == 409
    finally:
        lock.release()
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"


def test_progress_streams_live_and_a_late_follower_catches_up(admin_client, make_stack):
    stack_id = make_stack("sse", compose_text(web=SLOW_STOP, other=service()))
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    admin_client.post(f"/api/stacks/{stack_id}/actions/stop")

    def stopping() -> bool:  # the page is opened mid-run
        run = admin_client.get(f"/api/stacks/{stack_id}/run").json()
        return any("Stopping" in line["text"] for line in run["progress"]["lines"])

    wait_until(stopping, what="the stop under way")
    with admin_client.stream("GET", f"/api/stacks/{stack_id}/run/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_sse(response.iter_lines())
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "end" and kinds.count("state") >= 2
    assert events[-1][1] == "{}"  # browsers drop an event without data
    first, last = json.loads(events[0][1]), json.loads(events[-2][1])
    assert first["status"] == "running" and first["action"] == "stop"
    assert any("Stopping" in ln["text"] for ln in first["progress"]["lines"])
    assert last["status"] == "succeeded" and last["progress"]["percent"] == 100.0
    assert wait_run(admin_client, stack_id)["id"] == first["id"]


def test_failed_action_reports_compose_errors(admin_client, make_stack):
    stack_id = make_stack("fails", compose_text(web=service(image="127.0.0.1:1/none/x:1")))
    run = act(admin_client, stack_id, "start")
    assert run["status"] == "failed"
    assert run["exit_code"] != 0
    assert run["progress"]["errors"]
    assert any(ln["level"] == "error" for ln in run["progress"]["lines"])
    assert listed(admin_client, stack_id)["state"] == "stopped"


def test_delete_keeps_named_volumes_unless_asked(
    admin_client, make_stack, stacks_dir, docker_client
):
    spec = compose_text(web=service(volumes="[data:/data]")) + "volumes:\n  data: {}\n"
    first = make_stack("del", spec)
    second = make_stack("delv", spec)
    for stack_id in (first, second):
        assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    assert admin_client.delete(f"/api/stacks/{first}", params={"confirm": first}).status_code == 200
    assert (
        admin_client.delete(
            f"/api/stacks/{second}", params={"confirm": second, "remove_volumes": True}
        ).status_code
        == 200
    )
    assert not (stacks_dir / first).exists() and not (stacks_dir / second).exists()
    volumes = {v.name for v in docker_client.volumes.list()}
    assert f"{first}_data" in volumes and f"{second}_data" not in volumes
    docker_client.volumes.get(f"{first}_data").remove()
    assert admin_client.get(f"/api/stacks/{first}").status_code == 404
    # A new stack of the same name starts without the old one's history.
    (stacks_dir / first).mkdir()
    (stacks_dir / first / "compose.yaml").write_text(spec)
    never = admin_client.get(f"/api/stacks/{first}/run")
    assert never.status_code == 200 and never.json() is None
    assert admin_client.get("/api/stacks/nope/run").status_code == 404


def test_plain_users_operate_but_do_not_create_or_delete(user_client, make_stack):
    stack_id = make_stack("ops", compose_text(web=service()))
    assert act(user_client, stack_id, "start")["status"] == "succeeded"
    assert user_client.post("/api/stacks", json={"name": "x", "compose": ""}).status_code == 403
    assert user_client.delete(f"/api/stacks/{stack_id}").status_code == 403


@pytest.mark.parametrize("name", ["../../etc", "..", "/abs/path", "a/../../b"])
def test_names_cannot_escape_the_stacks_folder(admin_client, stacks_dir, name, docker_cleanup):
    response = admin_client.post(
        "/api/stacks", json={"name": name, "compose": compose_text(web=service())}
    )
    if response.status_code == 201:
        stack_id = response.json()["id"]
        docker_cleanup.compose_project(stack_id)
        assert (stacks_dir / stack_id).parent == stacks_dir
        assert "/" not in stack_id and ".." not in stack_id
    else:
        assert response.status_code == 400
    outside = [p for p in stacks_dir.parent.iterdir() if p.name in ("etc", "b", "abs-path")]
    assert outside == []
    for bad in ("..%2F..%2Fetc", "%2e%2e", "UPPER", "a.b"):
        assert admin_client.get(f"/api/stacks/{bad}").status_code in (400, 404)


def test_unknown_stack_and_action(admin_client):
    assert admin_client.get("/api/stacks/nope").status_code == 404
    assert admin_client.post("/api/stacks/nope/actions/start").status_code == 404
    assert admin_client.post("/api/stacks/nope/actions/explode").status_code == 422
    assert admin_client.get("/api/stacks/nope/run/events").status_code == 404


def test_concurrent_list_while_an_action_runs(admin_client, make_stack):
    """Listing stays available (and shows the busy action) during a run."""
    stack_id = make_stack("listbusy", compose_text(web=SLOW_STOP))
    act(admin_client, stack_id, "start")
    admin_client.post(f"/api/stacks/{stack_id}/actions/stop")
    results = []
    thread = threading.Thread(target=lambda: results.append(listed(admin_client, stack_id)))
    thread.start()
    thread.join(30)
    assert results and results[0]["busy"] == "stop"
    wait_run(admin_client, stack_id)
