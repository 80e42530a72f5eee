"""An agent killed in the middle of a backup (SIGKILL, its stack stopped for the copy):
at its next start it starts the stack again, as a run of the backup that ends
"interrupted" and says why; the central's audit records how the backup ended, and the
fleet's attention list shows it."""

from __future__ import annotations

import uuid

import pytest

from tests.agents.helpers import add_agent
from tests.support.interrupted import attention
from tests.support.stacks import BUSYBOX, act, compose_text, service, start_restore, wait_run
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.docker

STACK = compose_text(app=service(BUSYBOX, command='["sleep", "3600"]', volumes="[data:/data]")) + (
    "volumes:\n  data: {}\n"
)


def test_an_agent_killed_during_a_backup_starts_its_stack_again(
    docker_engines,
    agent_processes,
    admin_client,
    holding_helper,
):
    (engine,) = docker_engines(1, images=[BUSYBOX, holding_helper])
    agent = agent_processes(engine, BACKUP_HELPER_IMAGE=holding_helper)
    record = add_agent(admin_client, agent, "alpha")
    base = f"/api/agents/{record['id']}"
    stack = f"cut-{uuid.uuid4().hex[:6]}"
    made = admin_client.post(f"{base}/stacks", json={"name": stack, "compose": STACK})
    assert made.status_code == 201, made.text
    assert act(admin_client, stack, "start", base=base)["status"] == "succeeded"
    hold = ["run", "--rm", "-v", f"{stack}_data:/data", BUSYBOX, "touch", "/data/.hold"]
    assert engine.docker(*hold).returncode == 0

    def states() -> set[str]:
        listed = engine.docker(
            "ps", "-a", "--filter", f"label=com.docker.compose.project={stack}",
            "--format", "{{.State}}",
        )  # fmt: skip
        return set(listed.stdout.split())

    started = admin_client.post(f"{base}/stacks/{stack}/backups", json={})
    assert started.status_code == 202, started.text
    wait_until(lambda: states() == {"exited"}, PATIENCE, "the stack to stop for the copy")
    agent.server.process.kill()
    agent.server.process.wait()
    assert states() == {"exited"}

    agent.restart()

    def recovered() -> dict | None:
        run = admin_client.get(f"{base}/stacks/{stack}/run").json()
        ended = run["id"] != started.json()["id"] and run["status"] != "running"
        return run if ended else None

    run = wait_until(recovered, PATIENCE, "the agent to resolve the backup it was killed in")
    assert (run["action"], run["status"]) == ("backup", "interrupted"), run
    assert any("stopped during a backup" in line["text"] for line in run["progress"]["lines"])
    assert states() == {"running"}
    listed = engine.docker("ps", "-a", "--filter", "label=stackyard.helper", "-q")
    assert listed.stdout.strip() == ""  # the held helper was swept
    archives = admin_client.get(f"{base}/backups").json()
    assert [a for a in archives if a["stack_id"] == stack] == []

    def audited() -> list[tuple[str, str]]:
        entries = admin_client.get("/api/audit", params={"limit": 100}).json()["items"]
        target = f"alpha: {stack}"
        return [
            (e["outcome"], e["detail"] or "")
            for e in entries
            if e["action"] == "backup.create" and e["target"] == target
        ]

    ended = wait_until(lambda: len(audited()) == 2 and audited(), 60, "the backup's end audited")
    assert ended[1][0] == "started" and ended[0][0] == "failure", ended
    # (The fleet shows the agent's report as pushed: within seconds of the run's end.)
    (said,) = wait_until(
        lambda: (said := attention(admin_client, stack)) and "starting it" in said[0] and said,
        15,
        "the interrupted backup resolved in the fleet's attention list",
    )
    assert said.startswith("The backup was interrupted") and "starting it again" in said


@pytest.mark.direct_only(
    "an agent killed and dialing again: test_an_agent_killed_during_a_backup_..."
)
def test_an_agent_killed_during_a_restore_undoes_it(
    docker_engines, agent_processes, admin_client, holding_helper, tmp_path
):
    """SIGKILL of the agent while a restore over its running stack has staged the volume
    and waits before the bind folder: at its next start the staged writes are gone, the
    data is as it was before the restore, and the stack runs again."""
    (engine,) = docker_engines(1, images=[BUSYBOX, holding_helper])
    agent = agent_processes(engine, BACKUP_HELPER_IMAGE=holding_helper)
    record = add_agent(admin_client, agent, "alpha")
    base = f"/api/agents/{record['id']}"
    stack = f"cut-{uuid.uuid4().hex[:6]}"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("before")
    compose = STACK.replace("volumes: [data:/data]", f"volumes: [data:/data, '{outside}:/outside']")
    made = admin_client.post(f"{base}/stacks", json={"name": stack, "compose": compose})
    assert made.status_code == 201, made.text
    assert act(admin_client, stack, "start", base=base)["status"] == "succeeded"

    def in_volume(script: str) -> str:
        run = ["run", "--rm", "-v", f"{stack}_data:/data", BUSYBOX, "sh", "-c", script]
        return engine.docker(*run).stdout

    in_volume("echo before > /data/file")
    backup = admin_client.post(f"{base}/stacks/{stack}/backups", json={"binds": [str(outside)]})
    assert backup.status_code == 202, backup.text
    archive = wait_run(admin_client, stack, base=base)["artifact"]
    in_volume("echo after > /data/file")
    (outside / ".hold").write_text("")
    started = start_restore(admin_client, archive, base=base, overwrite=True)
    assert started.status_code == 202, started.text
    wait_until(
        lambda: ".stackyard-restoring-" in in_volume("ls -a /data"),
        PATIENCE,
        "the volume's contents to be staged",
    )
    agent.server.process.kill()
    agent.server.process.wait()
    (outside / ".hold").unlink()

    agent.restart()
    run = wait_until(
        lambda: (
            (r := admin_client.get(f"{base}/stacks/{stack}/run").json())["id"]
            != started.json()["id"]
            and r["status"] != "running"
            and r
        ),
        PATIENCE,
        "the agent to resolve the restore it was killed in",
    )
    assert (run["action"], run["status"]) == ("restore", "interrupted"), run
    lines = [line["text"] for line in run["progress"]["lines"]]
    assert any("was interrupted: undone" in line for line in lines), lines
    assert in_volume("ls -A /data; cat /data/file") == "file\nafter\n"
    assert sorted(p.name for p in outside.iterdir()) == ["kept"]
    assert sorted(p.name for p in agent.stacks_dir.iterdir()) == [stack]
