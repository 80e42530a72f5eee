"""Runs of compose actions: one at a time per stack (also across processes: the CLI and
the service share a lock file), their live progress for followers, and the last run's
output kept for the stack."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from stackyard.compose.progress import ProgressFold
from stackyard.db.types import utcnow
from stackyard.errors import Conflict, StackyardError
from stackyard.files_atomic import write_atomic

log = logging.getLogger(__name__)
RunStatus = Literal["running", "succeeded", "failed"]
#: Followers get at most this many updates per second.
FOLLOW_INTERVAL = 0.1


class StackLock:
    """An exclusive, non-blocking lock on a stack, held through a lock file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@dataclass
class Run:
    id: str
    stack: str
    action: str
    fold: ProgressFold
    started_at: datetime = field(default_factory=utcnow)
    status: RunStatus = "running"
    finished_at: datetime | None = None
    exit_code: int | None = None
    version: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def feed_line(self, line: str) -> None:
        self.fold.feed_line(line)
        self._touch()

    def fail(self, message: str) -> None:
        self.fold.error(message)
        self._touch()

    def finish(self, exit_code: int) -> None:
        self.exit_code = exit_code
        self.fold.finish(exit_code)
        self.status = "succeeded" if exit_code == 0 and not self.fold.errors else "failed"
        self.finished_at = utcnow()
        self._touch()

    def _touch(self) -> None:
        self.version += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()  # wakes every follower waiting now; later ones see the new version

    async def changed_since(self, version: int) -> None:
        while self.version == version:
            await self._changed.wait()

    def state(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "stack": self.stack,
            "action": self.action,
            "status": self.status,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "exit_code": self.exit_code,
            "progress": self.fold.snapshot(),
        }


Steps = Callable[[Run], Awaitable[int]]


class RunBoard:
    def __init__(self, data_dir: Path) -> None:
        self.runs_dir = data_dir / "runs"
        self.locks_dir = data_dir / "locks"
        self._runs: dict[str, Run] = {}
        self._tasks: dict[str, asyncio.Task] = {}

    def busy(self, stack: str) -> str | None:
        run = self._runs.get(stack)
        return run.action if run and run.status == "running" else None

    def start(self, stack: str, action: str, fold: ProgressFold, steps: Steps) -> Run:
        """Start a run now, or refuse with Conflict when the stack is busy."""
        lock = StackLock(self.locks_dir / f"{stack}.lock")
        if not lock.try_acquire():
            busy = self.busy(stack)
            raise Conflict(f"Stack {stack!r} is busy" + (f" ({busy} in progress)" if busy else ""))
        run = Run(secrets.token_hex(8), stack, action, fold)
        self._runs[stack] = run
        self._tasks[stack] = asyncio.create_task(self._drive(run, lock, steps))
        return run

    async def run(self, stack: str, action: str, fold: ProgressFold, steps: Steps) -> Run:
        """Start a run and wait for its end."""
        run = self.start(stack, action, fold, steps)
        await asyncio.shield(self._tasks[stack])
        return run

    async def _drive(self, run: Run, lock: StackLock, steps: Steps) -> None:
        code = -1
        try:
            code = await steps(run)
        except StackyardError as exc:
            run.fail(exc.detail)
        except Exception as exc:  # the run ends as failed; the service goes on
            log.exception("Run %s of stack %s failed", run.action, run.stack)
            run.fail(f"Internal error: {type(exc).__name__}")
        finally:
            run.finish(code)
            lock.release()
            with contextlib.suppress(OSError):
                write_atomic(
                    self.runs_dir / f"{run.stack}.json",
                    json.dumps(run.state()).encode(),
                    mode=0o600,
                )

    def last(self, stack: str) -> dict[str, Any] | None:
        """The current or last run's state, also from before a restart."""
        run = self._runs.get(stack)
        if run is not None:
            return run.state()
        try:
            return json.loads((self.runs_dir / f"{stack}.json").read_text())
        except (OSError, ValueError):
            return None

    async def follow(self, stack: str) -> AsyncIterator[dict[str, Any]]:
        """The run's state now, then after each change (throttled), until it ends."""
        run = self._runs.get(stack)
        if run is None:
            state = self.last(stack)
            if state is not None:
                yield state
            return
        seen = -1
        while True:
            if run.version != seen:
                seen = run.version
                yield run.state()
            if run.status != "running":
                return
            await run.changed_since(seen)
            await asyncio.sleep(FOLLOW_INTERVAL)

    def forget(self, stack: str) -> None:
        self._runs.pop(stack, None)
        with contextlib.suppress(FileNotFoundError):
            (self.runs_dir / f"{stack}.json").unlink()
