"""Runs of compose actions: one at a time per stack (also across processes: the CLI and
the service share a lock file), their live progress for followers, and the last run's
output kept for the stack.

`RunState` is the one typed shape of a run: the API serves it, the CLI draws it, and
`runs/<stack>.json` keeps the last one (read back tolerantly: a file written by an older
version, with fields missing or extra, still loads)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import fcntl
import logging
import os
import secrets
import types
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from stackyard.clock import utcnow
from stackyard.compose.progress import ProgressFold, ProgressState
from stackyard.errors import Conflict, StackyardError
from stackyard.fs.jsonstore import JsonStore
from stackyard.process.request_scope import detached

log = logging.getLogger(__name__)
#: "partial": it ended without an error, but left out some of what was asked for (a
#: restore that did not write a part of the archive; its lines say which and why).
#: "interrupted": the service stopped (killed, restarted) while it ran.
RunStatus = Literal["running", "succeeded", "partial", "failed", "interrupted"]
#: What an interrupted run's errors say.
INTERRUPTED = "The service stopped while this ran (killed or restarted): it did not finish"
#: How the runs started in this context came to be, when not by a user's request ("the
#: auto-update", "schedule 'nightly'"): said with the news of their end.
RUN_ORIGIN: contextvars.ContextVar[str | None] = contextvars.ContextVar("run_origin", default=None)
#: What became of an update that failed its health gate: rolled back, or that failed too.
Rollback = Literal["done", "failed"]
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


@dataclass(frozen=True)
class RunState:
    """A run as followers, the API and the CLI see it."""

    id: str
    stack: str
    action: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None
    exit_code: int | None
    progress: ProgressState
    artifact: str | None = None  # what the run made: a backup's archive name
    summary: str | None = None  # what it did, in a line (the paths a restore wrote)
    rollback: Rollback | None = None  # an update that failed its health gate
    #: Its output was left out of this answer (for whoever may not read the stack's
    #: logs): its lines are not "none".
    output_hidden: bool = False


_RUN_STATE = TypeAdapter(RunState)
#: In place of a run's errors, for whoever may not read its output.
OUTPUT_HIDDEN = "Failed: its output is shown to those who may read the stack's logs"


def without_output(state: RunState) -> RunState:
    """The run's state and stages without what its commands and hooks printed (which may
    hold secrets): for whoever may not read the stack's logs."""
    errors = [OUTPUT_HIDDEN] if state.progress.errors else []
    progress = dataclasses.replace(state.progress, lines=[], errors=errors)
    return dataclasses.replace(state, progress=progress, output_hidden=True)


def dump_state(state: RunState) -> Any:
    """The state as JSON values (what the API sends and the run file keeps)."""
    return _RUN_STATE.dump_python(state, mode="json")


def load_state(raw: object, stack: str) -> RunState | None:
    """A run file's state, tolerantly: unknown fields are ignored, missing ones take a
    neutral value (a run without a status counts as failed); None when it is no run."""
    if not isinstance(raw, dict):
        return None
    filled = _filled(RunState, raw, {"stack": stack, "status": "failed"})
    try:
        return _RUN_STATE.validate_python(filled)
    except ValidationError:
        return None


_EPOCH = datetime.fromtimestamp(0, UTC)


def _filled(cls: type, raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`raw` with the fields of dataclass `cls` only, the missing ones (also in nested
    dataclasses and lists of them) set to `overrides` or a neutral value of their type."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if f.name in raw:
            out[f.name] = _filled_value(hint, raw[f.name])
        elif f.name in overrides:
            out[f.name] = overrides[f.name]
        else:
            out[f.name] = _neutral(hint)
    return out


def _filled_value(hint: Any, value: Any) -> Any:
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return _filled(typing.cast(type, hint), value, {})
    if typing.get_origin(hint) is list and isinstance(value, list):
        (item,) = typing.get_args(hint)
        return [_filled_value(item, v) for v in value]
    return value


def _neutral(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        return None
    if origin is Literal:
        return args[0]
    if origin is list:
        return []
    if dataclasses.is_dataclass(hint):
        return _filled(typing.cast(type, hint), {}, {})
    return {str: "", int: 0, float: 0.0, bool: False, datetime: _EPOCH}.get(hint)


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
    #: What the run made, for callers that go on with it (a backup's archive name).
    artifact: str | None = None
    #: What it did, in a line (its audit entry says it too).
    summary: str | None = None
    #: An update that failed its health gate: whether it was rolled back.
    rollback: Rollback | None = None
    #: Parts of what was asked for that the run left out (`leave_out`).
    left_out: int = 0
    #: The run tells what became of work a killed service left: it ends "interrupted".
    recovering: bool = False
    _changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _ended: list[Callable[[Run], None]] = field(default_factory=list, repr=False)

    def when_ended(self, callback: Callable[[Run], None]) -> None:
        """Call `callback` with the run once it has ended (at once if it has)."""
        if self.status == "running":
            self._ended.append(callback)
        else:
            callback(self)

    def feed_line(self, line: str) -> None:
        self.fold.feed_line(line)
        self._touch()

    def advance(
        self, bytes_done: int, bytes_total: int, items_done: int, items_total: int, stage: str = ""
    ) -> None:
        """Where a transfer (backup, restore) stands."""
        self.fold.advance(bytes_done, bytes_total, items_done, items_total, stage)
        self._touch()

    def leave_out(self, line: str) -> None:
        """A part of what was asked for that the run does not do, and why: the run ends
        as partial (unless it fails)."""
        self.left_out += 1
        self.feed_line(line)

    def fail(self, message: str) -> None:
        self.fold.error(message)
        self._touch()

    def finish(self, exit_code: int) -> None:
        self.exit_code = exit_code
        self.fold.finish(exit_code)
        if self.recovering:
            self.status = "interrupted"
        elif exit_code != 0 or self.fold.errors:
            self.status = "failed"
        else:
            self.status = "partial" if self.left_out else "succeeded"
        self.finished_at = utcnow()
        self._touch()
        for callback in self._ended:
            try:
                callback(self)
            except Exception:
                log.exception("A callback at the end of run %s failed", self.id)
        self._ended.clear()

    def _touch(self) -> None:
        self.version += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()  # wakes every follower waiting now; later ones see the new version

    async def changed_since(self, version: int) -> None:
        while self.version == version:
            await self._changed.wait()

    def state(self) -> RunState:
        return RunState(
            id=self.id,
            stack=self.stack,
            action=self.action,
            status=self.status,
            started_at=self.started_at,
            finished_at=self.finished_at,
            exit_code=self.exit_code,
            progress=self.fold.snapshot(),
            artifact=self.artifact,
            summary=self.summary,
            rollback=self.rollback,
        )


def outcome(state: RunState) -> tuple[str, str | None]:
    """An ended run as an audit entry says it: outcome and detail."""
    if state.status == "succeeded":
        return "success", state.summary
    if state.status == "partial":
        said = "partial: parts of it were left out (see the run)"
        return "success", f"{said}; {state.summary}" if state.summary else said
    errors = state.progress.errors
    return "failure", errors[-1] if errors else state.status


def ended_by(run: Run) -> Callable[[Callable[[str, str | None], None]], None]:
    """For an audit entry of the work of `run` (`AuditNote.ends`): its outcome when it
    ends."""
    return lambda record: run.when_ended(lambda ended: record(*outcome(ended.state())))


Steps = Callable[[Run], Awaitable[int]]


class RunBoard:
    def __init__(self, data_dir: Path) -> None:
        self.runs_dir = data_dir / "runs"
        self.locks_dir = data_dir / "locks"
        self._runs: dict[str, Run] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Called with every run that ended, and how it was started (`RUN_ORIGIN`).
        self.ended: list[Callable[[RunState, str | None], None]] = []

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
        origin = RUN_ORIGIN.get()
        run.when_ended(lambda ended: self._ended(ended.state(), origin))
        self._runs[stack] = run
        # Kept as running from its start: should the service die, the next start finds
        # it (unlocked) and says it was interrupted.
        with contextlib.suppress(OSError):
            self._file(stack).write(dump_state(run.state()))
        # The run outlives the request that started it: its children are not the request's.
        self._tasks[stack] = asyncio.create_task(self._drive(run, lock, steps), context=detached())
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
                self._file(run.stack).write(dump_state(run.state()))

    def _ended(self, state: RunState, origin: str | None) -> None:
        for listener in self.ended:
            try:
                listener(state, origin)
            except Exception:
                log.exception("A listener of the end of run %s failed", state.id)

    def held(self, stack: str) -> bool:
        """Whether a run of the stack goes on now, in this process or another."""
        lock = StackLock(self.locks_dir / f"{stack}.lock")
        if not lock.try_acquire():
            return True
        lock.release()
        return False

    def _file(self, stack: str) -> JsonStore:
        return JsonStore(self.runs_dir / f"{stack}.json")

    def last(self, stack: str) -> RunState | None:
        """The current or last run's state, also from before a restart."""
        run = self._runs.get(stack)
        if run is not None:
            return run.state()
        try:
            state = load_state(self._file(stack).read(), stack)
        except OSError:
            return None
        if state is None or state.status != "running" or self.held(stack):
            return state  # (held: another process, the CLI say, runs it now)
        progress = dataclasses.replace(state.progress, errors=[*state.progress.errors, INTERRUPTED])
        return dataclasses.replace(state, status="interrupted", progress=progress)

    async def follow(self, stack: str) -> AsyncIterator[RunState]:
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

    @staticmethod
    async def wait(run: Run) -> None:
        """Until `run` has ended."""
        while run.status == "running":
            await run.changed_since(run.version)

    def forget(self, stack: str) -> None:
        self._runs.pop(stack, None)
        self._file(stack).remove()


def progress_reporter(
    run: Run, total: int, items: int, stage: str = ""
) -> Callable[[int, int], None]:
    """A progress callback for work in another thread (or on the loop): `report(done,
    items_done)` hands it to the run on its loop, a few times a second at most."""
    loop = asyncio.get_running_loop()
    last = [0.0]

    def report(done: int, items_done: int) -> None:
        now = loop.time()
        if now - last[0] < 0.1 and items_done < items:
            return
        last[0] = now
        loop.call_soon_threadsafe(run.advance, done, max(total, done), items_done, items, stage)

    return report
