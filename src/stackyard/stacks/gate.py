"""The health gate of an update: each container the update created is watched until it
is healthy (with a healthcheck) or has run without a restart for the settle time (without
one), within a time limit. The first that fails (unhealthy, exited, restarted, killed for
memory, removed, or not up in time) fails the gate, with why and its last log lines."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from stackyard.docker.engine import Engine
from stackyard.docker.lives import Life, Running, life_of, log_tail

#: Seconds between two looks at the containers.
POLL = 0.5


@dataclass(frozen=True)
class GateFailure:
    service: str
    why: str
    logs: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.service} {self.why}"


def trouble(life: Life | None) -> str | None:
    """Why a container that was just created is failing, or None while it is not."""
    if life is None:
        return "was removed"
    if life.oom_killed:
        return "was killed for lack of memory"
    if life.status == "restarting" or life.restart_count > 0:
        code = "" if life.exit_code is None else f" (it exited with code {life.exit_code})"
        return f"restarted{code}"
    if life.status in ("exited", "dead") and not completed(life):
        return f"exited with code {life.exit_code}"  # (its health may say unhealthy too)
    if life.health == "unhealthy":
        return "is unhealthy"  # (what its check printed is in the logs: see `printed`)
    return None


def printed(docker: Engine, container_id: str, life: Life | None) -> tuple[str, ...]:
    """What a failing container printed: its last log lines and its health check's last
    output. Container output, which may hold secrets: it goes in `GateFailure.logs`
    (shown to whoever may read the stack's logs), never in why it failed."""
    lines = log_tail(docker, container_id)
    if life is not None and life.health_output:
        lines += tuple(f"(health check) {line}" for line in life.health_output.splitlines())
    return lines


def completed(life: Life) -> bool:
    """A one-off job (migrations, say) that ended well and is not restarted: done."""
    return (
        life.status == "exited"
        and life.exit_code == 0
        and life.restart_policy in ("no", "", "on-failure")
    )


def ready(life: Life, elapsed: float, settle: float) -> bool:
    if completed(life):
        return True
    if life.health is not None:
        return life.health == "healthy"
    return life.status == "running" and elapsed >= settle


def late(life: Life | None, timeout: float) -> str:
    if life is not None and life.health is not None:
        return f"was not healthy within {timeout:g} s (its health: {life.health})"
    state = life.status if life else "gone"
    return f"was not running within {timeout:g} s (it is {state})"


def watch(
    docker: Engine, containers: list[Running], timeout: float, settle: float
) -> GateFailure | None:
    """Look at `containers` until each is up (None) or one fails (blocking: run it in a
    thread)."""
    began = time.monotonic()
    pending = list(containers)
    lives: dict[str, Life | None] = {}
    while pending:
        elapsed = time.monotonic() - began
        for running in list(pending):
            life = lives[running.container_id] = life_of(docker, running.container_id)
            why = trouble(life)
            if why is not None:
                return GateFailure(
                    running.service, why, printed(docker, running.container_id, life)
                )
            if life is not None and ready(life, elapsed, settle):
                pending.remove(running)
        if pending and elapsed >= timeout:
            first = pending[0]
            life = lives.get(first.container_id)
            return GateFailure(
                first.service, late(life, timeout), printed(docker, first.container_id, life)
            )
        if pending:
            time.sleep(POLL)
    return None


async def gate(
    docker: Engine, containers: list[Running], timeout: float, settle: float
) -> GateFailure | None:
    return await asyncio.to_thread(watch, docker, containers, timeout, settle)
