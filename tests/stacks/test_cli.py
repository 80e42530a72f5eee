"""`stackyard stack ...`: the same actions from a terminal, drawn with a progress bar."""

import subprocess

import pytest

from stackyard.stacks.runs import StackLock
from tests.support.service import STACKYARD_BIN, service_env
from tests.support.stacks import compose, compose_text, service
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def cli(tmp_path, *args):
    return subprocess.run(
        [str(STACKYARD_BIN), "stack", *args],
        env=service_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_up_list_down_from_the_command_line(tmp_path, make_stack, docker_client):
    stack_id = make_stack("cli", compose_text(web=service()))
    up = cli(tmp_path, "up", stack_id)
    assert up.returncode == 0, up.stderr
    assert f"Container {stack_id}-web-1 Started" in up.stderr  # the output under the bar
    assert "start" in up.stderr and "━" in up.stderr  # the bar itself
    (container,) = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    assert container.status == "running"

    listing = cli(tmp_path, "list")
    assert f"{stack_id}\trunning\t1/1 services running" in listing.stdout

    down = cli(tmp_path, "down", stack_id)
    assert down.returncode == 0, down.stderr
    assert (
        docker_client.containers.list(
            all=True, filters={"label": f"com.docker.compose.project={stack_id}"}
        )
        == []
    )


def test_cli_waits_for_nobody_and_reports_errors(tmp_path, make_stack):
    stack_id = make_stack("clibusy", compose_text(web=service()))
    lock = StackLock(tmp_path / "data" / "locks" / f"{stack_id}.lock")
    assert lock.try_acquire()  # as the service does while it runs an action
    try:
        busy = cli(tmp_path, "up", stack_id)
    finally:
        lock.release()
    assert busy.returncode == 1 and "is busy" in busy.stderr
    missing = cli(tmp_path, "up", "no-such-stack")
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    broken = make_stack("clibroken", compose_text(web=service(image="127.0.0.1:1/none:1")))
    failed = cli(tmp_path, "up", broken)
    assert failed.returncode == 1 and f"error: start of {broken}" in failed.stderr


def test_logs_from_the_command_line(tmp_path, make_stack, stacks_dir):
    stack_id = make_stack(
        "clilogs",
        compose_text(
            web=service(command='["sh", "-c", "echo to-out; echo to-err >&2; sleep 600"]'),
            other=service(command='["sh", "-c", "echo other-out; sleep 600"]'),
        ),
    )
    compose(stacks_dir, stack_id, "up", "-d")

    def logged() -> subprocess.CompletedProcess[str] | None:
        shown = cli(tmp_path, "logs", stack_id, "--tail", "10")
        return shown if "to-err" in shown.stderr and "other-out" in shown.stdout else None

    shown = wait_until(logged, what="both services' first lines")
    assert shown.returncode == 0, shown.stderr
    assert f"{stack_id}-web-1" in shown.stdout and "to-out" in shown.stdout
    assert "to-err" in shown.stderr and "to-err" not in shown.stdout  # stderr to stderr
    only = cli(tmp_path, "logs", stack_id, "other", "-t")
    assert "other-out" in only.stdout and "to-out" not in only.stdout
    assert "Z other-out" in only.stdout  # with its timestamp
    missing = cli(tmp_path, "logs", stack_id, "nope")
    assert missing.returncode == 1 and "has no container of service 'nope'" in missing.stderr
