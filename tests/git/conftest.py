"""Stacks from git: real git servers on loopback (tests/support/git_servers.py), the real
engine, the service in-process."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.git_servers import GitDaemon, Work, git_daemon
from tests.support.service import embedded_database_url

#: Stacks from git are about git and Docker, not the database: the embedded default.
database_url = embedded_database_url

#: A service that runs until stopped and is healthy at its first probe (the deploy's gate
#: passes in about a second).
SLEEPER = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"]
HEALTHY = {"test": ["CMD", "true"], "interval": "1s", "retries": 3}
SICK = {"test": ["CMD", "false"], "interval": "1s", "timeout": "1s", "retries": 1}


def app_compose(version: str, health: dict[str, object] = HEALTHY, **extra: object) -> str:
    """A one-service compose file whose container says `version` in its environment."""
    web = {
        "image": "stackyard-test/busybox:1",
        "command": SLEEPER,
        "environment": {"VERSION": version},
        "healthcheck": health,
        "labels": ["stackyard.test=stack"],
        **extra,
    }
    return json.dumps({"services": {"web": web}}, indent=2) + "\n"


@pytest.fixture
def git_root(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    root.mkdir()
    return root


@pytest.fixture
def work(tmp_path: Path, git_root: Path) -> Work:
    """A working clone whose origin is `git_root/stacks.git`."""
    return Work.create(tmp_path / "work", git_root / "stacks.git")


@pytest.fixture
def daemon(git_root: Path) -> Iterator[GitDaemon]:
    with git_daemon(git_root) as server:
        yield server


@pytest.fixture
def quick_gate(admin_client) -> None:
    """The host's default gate made short (a healthy service passes it at once anyway)."""
    answer = admin_client.put("/api/stacks/update-policy", json={"health_timeout": 20, "settle": 2})
    assert answer.status_code == 204, answer.text


@pytest.fixture
def unique() -> str:
    return uuid.uuid4().hex[:6]
