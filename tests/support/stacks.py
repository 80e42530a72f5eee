"""Stack folders for tests: real compose projects from the local test images, cleaned up."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from tests.support.waiting import wait_until

BUSYBOX = "stackyard-test/busybox:1"
BIG = "stackyard-test/big:1"
#: The helper image of the tests: busybox with GNU tar (see scripts/images/helper).
HELPER = "stackyard-test/helper:1"


def service(image: str = BUSYBOX, **extra: str) -> str:
    lines = [f"    image: {image}", "    labels: [stackyard.test=stack]"]
    lines += [f"    {key}: {value}" for key, value in extra.items()]
    return "\n".join(lines)


def compose_text(**services: str) -> str:
    body = "\n".join(f"  {name}:\n{spec}" for name, spec in services.items())
    return f"services:\n{body}\n"


@pytest.fixture
def make_stack(stacks_dir: Path, docker_cleanup):
    """make_stack(name, compose_text) -> stack id: a folder on disk, torn down after."""

    def make(name: str, compose: str, env: str = "") -> str:
        stack_id = f"{name}-{uuid.uuid4().hex[:6]}"
        folder = stacks_dir / stack_id
        folder.mkdir()
        (folder / "compose.yaml").write_text(compose)
        if env:
            (folder / ".env").write_text(env)
        docker_cleanup.compose_project(stack_id)
        return stack_id

    return make


def compose(stacks_dir: Path, stack_id: str, *args: str) -> subprocess.CompletedProcess:
    """Run `docker compose` by hand in a stack folder, as a user would."""
    done = subprocess.run(
        ["docker", "compose", *args],
        cwd=stacks_dir / stack_id,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def wait_run(client, stack_id: str, timeout: float = 180, base: str = "/api") -> dict:
    """The stack's run once it has ended. `base`: another host's routes (`/api/agents/1`)."""

    def ended() -> dict | None:
        response = client.get(f"{base}/stacks/{stack_id}/run")
        run = response.json() if response.status_code == 200 else None
        return run if run and run["status"] != "running" else None

    return wait_until(ended, timeout, f"the end of the run of {stack_id}")


def start_restore(client, name: str, base: str = "/api", **body):
    """A restore started as the UI starts it: its preview first, then the restore,
    confirming the paths outside the stack folder that the preview listed."""
    preview = client.post(f"{base}/backups/{name}/restore/preview", json=body)
    assert preview.status_code == 200, preview.text
    confirm = [write["path"] for write in preview.json()["outside"]]
    return client.post(f"{base}/backups/{name}/restore", json=body | {"confirm_paths": confirm})


def act(client, stack_id: str, action: str, base: str = "/api") -> dict:
    """Start an action through the API and wait for its end."""
    response = client.post(f"{base}/stacks/{stack_id}/actions/{action}")
    assert response.status_code == 202, response.text
    return wait_run(client, stack_id, base=base)
