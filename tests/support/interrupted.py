"""For tests of work cut short: a helper image that holds a capture or a restore mid-way
(`holding_helper`), and what the fleet's attention list says of a stack."""

from __future__ import annotations

import uuid

import pytest

#: A helper whose `tar` and `sh` wait while /data/.hold exists: a capture, or a restore
#: preparing a target (its scripts run by `sh -c`), held mid-way. (A wrapper of `stat`
#: would not do: busybox's shell runs its own applets, whatever PATH says.)
HOLDING = '#!/bin/sh\nwhile [ -e /data/.hold ]; do sleep 0.2; done\nexec "/bin/${0##*/}" "$@"\n'


@pytest.fixture
def holding_helper(tmp_path, docker_client, docker_cleanup) -> str:
    context = tmp_path / "holding-helper"
    context.mkdir()
    for name in ("tar", "sh"):
        (context / name).write_text(HOLDING)
        (context / name).chmod(0o755)
    (context / "Dockerfile").write_text(
        "FROM stackyard-test/busybox:1\nCOPY tar sh /usr/local/bin/\nENV PATH=/usr/local/bin:/bin\n"
    )
    tag = f"stackyard-test/holding-helper:{uuid.uuid4().hex[:8]}"
    docker_client.images.build(path=str(context), tag=tag, labels=docker_cleanup.labels)
    return tag


def attention(client, stack_id: str) -> list[str]:
    """What the fleet's attention list says of the stack."""
    items = client.get("/api/dashboard/fleet").json()["attention"]
    return [item["message"] for item in items if item["stack"] == stack_id]
