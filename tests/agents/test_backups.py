"""Backups of agents' stacks driven by the central: a scheduled backup made on an agent,
pushed to a real S3 endpoint and pruned there and on the agent; an agent's archive pushed
from the central and pulled into another agent, with nothing left in the spool."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from tests.agents.helpers import add_agent
from tests.schedules.test_schedules import wait_history
from tests.support.agents import AgentProcess
from tests.support.service import STACKYARD_BIN, service_env
from tests.support.stacks import BUSYBOX, act, compose_text, service, wait_run
from tests.support.waiting import next_second, wait_until

DATA = compose_text(app=service(BUSYBOX, command='["sleep", "3600"]', volumes="[data:/data]")) + (
    "volumes:\n  data: {}\n"
)


def wait_transfer(client, base: str, stack: str) -> dict:
    def ended() -> dict | None:
        answer = client.get(f"{base}/transfers/{stack}/run")
        run = answer.json() if answer.status_code == 200 else None
        return run if run and run["status"] != "running" else None

    return wait_until(ended, what=f"the transfer of {stack}")


@pytest.fixture(scope="module")
def alpha(shared_engines, shared_agents) -> AgentProcess:
    (engine,) = shared_engines(1)
    return shared_agents(engine, name="alpha")


@pytest.fixture
def agent_with_stack(alpha, admin_client):
    """The agent, known to this test's central, with a running stack of this test's own."""
    record = add_agent(admin_client, alpha, "alpha")
    base = f"/api/agents/{record['id']}"
    stack = f"shop-{uuid.uuid4().hex[:6]}"
    made = admin_client.post(f"{base}/stacks", json={"name": stack, "compose": DATA})
    assert made.status_code == 201, made.text
    assert act(admin_client, stack, "start", base=base)["status"] == "succeeded"
    return alpha, record, base, stack


def test_a_scheduled_backup_on_an_agent_goes_to_the_destination_with_retention(
    agent_with_stack, admin_client, s3_server, tmp_path, settings, agent_kind
):
    agent, record, base, stack = agent_with_stack
    bucket = s3_server.bucket()
    destination = admin_client.post("/api/destinations", json=s3_server.destination(bucket)).json()
    schedule = admin_client.post(
        "/api/schedules",
        json={
            "name": "nightly",
            "cron": "daily",
            "stacks": [stack],
            "destination_id": destination["id"],
            "keep_last": 1,
            "agent_id": record["id"],
        },
    )
    assert schedule.status_code == 201, schedule.text
    assert schedule.json()["agent_id"] == record["id"]
    schedule_id = schedule.json()["id"]

    made = []
    for count in (1, 2):
        if count == 2:
            next_second()  # archive names carry the second
        assert admin_client.post(f"/api/schedules/{schedule_id}/run").status_code == 202
        runs = wait_history(admin_client, schedule_id, count)
        newest = runs[0]
        assert newest["outcome"] == "succeeded", newest
        assert newest["size"] and newest["archive"].startswith(f"{stack}--alpha--")
        made.append(newest["archive"])
    assert runs[0]["pruned"] == 2  # the first archive, on the agent and at the destination

    # `stackyard schedule run` on this central's database runs it on a direct agent too; a
    # tunnel agent is reached by the running central alone, and the command says so.
    next_second()
    env = service_env(
        tmp_path,
        STACKS_DIR=str(settings.stacks_dir),
        DATABASE_URL=settings.effective_database_url,
        STACKYARD_SECRET_KEY=settings.effective_secret_key,
    )
    ran = subprocess.run(
        [str(STACKYARD_BIN), "schedule", "run", "nightly"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if agent_kind == "direct":
        assert ran.returncode == 0, ran.stderr
        ran_stack, outcome, detail = ran.stdout.strip().split("\t")
        assert (ran_stack, outcome) == (stack, "succeeded")
        assert detail.startswith(f"{stack}--alpha--")
        made.append(detail.split(" ")[0])
    else:  # its tunnel ends in the running central, not in the command's process
        assert ran.returncode == 1 and "which dials in" in ran.stderr, ran.stderr

    on_agent = [
        a["name"] for a in admin_client.get(f"{base}/backups").json() if a["stack_id"] == stack
    ]
    assert on_agent == [made[-1]]
    remote = admin_client.get(f"/api/destinations/{destination['id']}/archives").json()
    assert [a["name"] for a in remote] == [made[-1]]
    # The agent never saw the destination's secret: the central pushed it.
    assert s3_server.secret_key not in agent.server.log()
    assert (
        not list((tmp_path / "data" / "spool").glob("*"))
        if (tmp_path / "data" / "spool").exists()
        else True
    )


def test_an_agents_archive_is_pushed_from_the_central_and_pulled_into_another_agent(
    agent_with_stack, agent_processes, admin_client, s3_server, tmp_path
):
    _, _, base, stack = agent_with_stack
    bucket = s3_server.bucket()
    destination = admin_client.post("/api/destinations", json=s3_server.destination(bucket)).json()
    assert admin_client.post(f"{base}/stacks/{stack}/backups", json={}).status_code == 202
    [archive] = [a["name"] for a in _wait_archives(admin_client, base, stack)]

    pushed = admin_client.post(
        f"{base}/backups/{archive}/push", json={"destination_id": destination["id"]}
    )
    assert pushed.status_code == 202, pushed.text
    assert wait_transfer(admin_client, base, stack)["status"] == "succeeded"
    remote = admin_client.get(f"/api/destinations/{destination['id']}/archives").json()
    size = next(
        a["size"] for a in admin_client.get(f"{base}/backups").json() if a["name"] == archive
    )
    assert [(a["name"], a["size"]) for a in remote] == [(archive, size)]

    other = add_agent(admin_client, agent_processes(name="beta"), "beta")
    other_base = f"/api/agents/{other['id']}"
    pulled = admin_client.post(
        f"{other_base}/destinations/{destination['id']}/archives/{archive}/pull"
    )
    assert pulled.status_code == 202, pulled.text
    state = wait_transfer(admin_client, other_base, stack)
    assert state["status"] == "succeeded", state
    assert [a["name"] for a in admin_client.get(f"{other_base}/backups").json()] == [
        state["artifact"]
    ]
    again = admin_client.post(
        f"{other_base}/destinations/{destination['id']}/archives/{archive}/pull"
    )
    assert again.status_code == 409

    missing = admin_client.post(
        f"{base}/backups/nope--x--20260101T000000Z.tar/push",
        json={"destination_id": destination["id"]},
    )
    assert missing.status_code == 404
    spool = tmp_path / "data" / "spool"
    assert not spool.exists() or list(spool.iterdir()) == []


def _wait_archives(client, base: str, stack: str) -> list[dict]:
    """The stack's archives on the agent, once its backup has ended well."""
    run = wait_run(client, stack, base=base)
    assert run["status"] == "succeeded", run
    return _archives(client, base, stack)


def _archives(client, base: str, stack: str) -> list[dict]:
    """The archives of `stack` on the host at `base` (the host keeps other tests' too)."""
    return [a for a in client.get(f"{base}/backups").json() if a["stack_id"] == stack]


@pytest.mark.direct_only(
    "archives between a destination and an agent through a tunnel: "
    "test_an_agents_archive_is_pushed_..."
)
def test_a_scheduled_drill_on_an_agent_verifies_its_latest_backup_from_the_destination(
    agent_with_stack, admin_client, s3_server
):
    """The drill runs on the agent: the backup fetched from the destination through the
    central, restored into a scratch clone on the agent's engine, compared, started and
    removed; the fetched copy is removed from the agent after it."""
    _, record, base, stack = agent_with_stack
    bucket = s3_server.bucket()
    destination = admin_client.post("/api/destinations", json=s3_server.destination(bucket)).json()
    spec = {"cron": "daily", "stacks": [stack], "destination_id": destination["id"]}
    spec["agent_id"] = record["id"]
    backup = admin_client.post("/api/schedules", json={**spec, "name": "nightly"}).json()
    assert admin_client.post(f"/api/schedules/{backup['id']}/run").status_code == 202
    (made,) = wait_history(admin_client, backup["id"], 1)
    assert made["outcome"] == "succeeded", made
    assert admin_client.delete(f"{base}/backups/{made['archive']}").status_code == 204

    drill = {**spec, "name": "proof", "kind": "drill", "settle_seconds": 1}
    drills = admin_client.post("/api/schedules", json=drill).json()
    assert admin_client.post(f"/api/schedules/{drills['id']}/run").status_code == 202
    (ran,) = wait_history(admin_client, drills["id"], 1, timeout=300)
    assert (ran["outcome"], ran["archive"]) == ("succeeded", made["archive"]), ran
    (drilled,) = admin_client.get(f"{base}/stacks/{stack}/drills").json()
    assert drilled["verified"] and drilled["services"] == ["app: running"]
    assert drilled["compared"] == 1  # the volume
    assert [a for a in admin_client.get(f"{base}/backups").json() if a["stack_id"] == stack] == []


def test_an_agents_disk_is_read_previewed_and_pruned_through_the_central(
    agent_with_stack, admin_client
):
    """The disk of an agent's own engine, as the central shows it: what uses what, and a
    prune schedule on the agent (a preview, then exactly what it listed: dangling images
    only), its report in the agent's history."""
    _, record, base, stack = agent_with_stack
    report = admin_client.get(f"{base}/disk").json()
    volumes = {v["name"]: v for v in report["volumes"]}
    assert volumes[f"{stack}_data"]["stack"] == stack
    assert volumes[f"{stack}_data"]["protected"] == f"a volume of the stack {stack}"
    preview = admin_client.post(f"{base}/disk/prune/preview", json={"volumes": "unused"})
    assert preview.status_code == 200, preview.text
    assert f"{stack}_data" not in {i["name"] for i in preview.json()["items"]}
    body = {
        "name": f"tidy-{stack}",
        "kind": "prune",
        "cron": "weekly",
        "agent_id": record["id"],
        "prune": {"images": "dangling", "containers": False, "networks": False},
    }
    schedule = admin_client.post("/api/schedules", json=body).json()
    assert admin_client.post(f"/api/schedules/{schedule['id']}/run").status_code == 202
    (ran,) = wait_history(admin_client, schedule["id"], 1)
    assert ran["outcome"] == "succeeded", ran
    history = admin_client.get(f"{base}/disk/prunes").json()
    assert history[0]["origin"] == f"schedule 'tidy-{stack}'"
