"""Children: the one seam for every program the service runs (compose config, compose
actions, the compose probe).

Each child:

- gets a minimal environment built by `child_env` (never the service's own variables);
- runs in its own session and process group (`start_new_session=True`), so that it is
  killed together with everything it started (the docker CLI runs compose as a child);
- runs under resource limits set in the child before exec (`Limits`): RLIMIT_DATA for
  memory, RLIMIT_CPU for CPU time, no core dumps, and SIGKILL when the service dies;
- started for work no request waits for (`tuning.in_background`: the resolutions the
  stack list queues), runs at a lower CPU priority, so that it does not slow the requests
  down;
- started for a request (`request_scope`), is killed with its group when the client goes
  away;
- is killed with its group (SIGTERM, a short grace, then SIGKILL) on timeout, on
  cancellation, when its output grows beyond a bound, and on shutdown (`kill_all`);
  after a normal exit, whatever is left in its group is killed too: no orphan outlives
  the call that started it;
- has its output decoded with `errors="replace"`: output that is not UTF-8 never raises.

Memory: RLIMIT_DATA, not RLIMIT_AS. The Go runtime of the compose binary reserves far more
address space than it uses: measured with compose 2.40, `docker compose config` aborts at
start-up under RLIMIT_AS of 256, 512 and 1024 MiB (it needs about 2 GiB of address space),
while under RLIMIT_DATA (which since Linux 4.7 counts private writable mappings, the Go
heap included) `config`, `up -d` and `down` run at 256 MiB and more; only 128 MiB and less
break it. Without a limit, compose fed a YAML alias bomb grew to 23 GB; under RLIMIT_DATA
1024 MiB it exited by itself after about 95 s (the 60 s timeout of `config` kills it first).
RLIMIT_CPU is per process: the soft limit sends SIGXCPU, the hard limit (a few CPU seconds
later) SIGKILL.

`preexec_fn` runs between fork and exec; it is kept to plain system calls (`setrlimit`,
`prctl`), all looked up in the parent, so that it takes no lock another thread may hold.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import resource
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stackyard.errors import Invalid, Unavailable
from stackyard.process import tuning
from stackyard.process.groups import signal_group
from stackyard.process.request_scope import current_scope

#: Seconds between SIGTERM and SIGKILL when a child is stopped.
GRACE_SECONDS = 2.0
#: Captured output (stdout and stderr together) of a bounded call, at most.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024

#: What a child may see of the service's environment, and why:
#: PATH to find the docker CLI, its plugins and credential helpers; HOME (or
#: DOCKER_CONFIG) for `~/.docker/config.json`, so that `docker login` credentials, the
#: credential helpers it names and its proxy settings still work for pulls; the DOCKER_*
#: variables that say how to reach the engine; proxy variables (both spellings) and
#: custom CA bundles to reach registries; LANG/LC_ALL/TZ for messages and times.
#: Everything else (STACKYARD_*, DATABASE_URL, COMPOSE_*, cloud credentials, ...) stays
#: out. The stack's own `.env` is read by compose itself from the project directory.
CHILD_ENV_KEYS = (
    "PATH",
    "HOME",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "DOCKER_API_VERSION",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "LANG",
    "LC_ALL",
    "TZ",
)


def child_env(
    docker_host: str | None = None, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of every child: the allow-listed variables of `source` (the
    service's environment by default), DOCKER_HOST set to `docker_host` when given."""
    source = os.environ if source is None else source
    env = {key: source[key] for key in CHILD_ENV_KEYS if source.get(key)}
    env.setdefault("PATH", os.defpath)
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    return env


@dataclass(frozen=True)
class Limits:
    """Resource limits of one child (each process of its group gets them)."""

    memory_mb: int = 1024
    cpu_seconds: int = 120


_default_limits = Limits()


def set_default_limits(limits: Limits) -> None:
    """The limits of children started without explicit ones (set from the settings)."""
    global _default_limits
    _default_limits = limits


_PR_SET_PDEATHSIG = 1
_SIGKILL = int(signal.SIGKILL)
_prctl = ctypes.CDLL(tuning.LIBC, use_errno=True).prctl if tuning.LIBC else None


def _capped(kind: int, soft: int, hard: int) -> tuple[int, int]:
    """(soft, hard) lowered to the hard limit the service itself runs under."""
    ceiling = resource.getrlimit(kind)[1]
    if ceiling == resource.RLIM_INFINITY:
        return soft, hard
    return min(soft, ceiling), min(hard, ceiling)


def _preexec(limits: Limits) -> Callable[[], None]:
    """The function the child runs between fork and exec. Everything is computed here,
    in the parent: the child only makes system calls (no imports, no locks)."""
    nice, renice = tuning.child_niceness(), os.nice
    memory = limits.memory_mb * 1024 * 1024
    data_limit = _capped(resource.RLIMIT_DATA, memory, memory)
    # SIGXCPU at the limit, SIGKILL a few CPU seconds later.
    cpu_limit = _capped(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5)
    setrlimit, prctl = resource.setrlimit, _prctl
    data, cpu, core = resource.RLIMIT_DATA, resource.RLIMIT_CPU, resource.RLIMIT_CORE

    def limit() -> None:
        setrlimit(data, data_limit)
        setrlimit(cpu, cpu_limit)
        setrlimit(core, (0, 0))
        if nice:  # relative to the service's own: always allowed, never raises it
            renice(nice)
        if prctl is not None:  # the child dies with the service, even on SIGKILL
            prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)

    return limit


# -- the registry of live process groups -----------------------------------------------
_live: set[int] = set()
_live_lock = threading.Lock()


def _register(pgid: int) -> None:
    with _live_lock:
        _live.add(pgid)
    scope = current_scope()
    if scope is not None:
        scope.adopt(pgid)


def _unregister(pgid: int) -> None:
    with _live_lock:
        _live.discard(pgid)
    scope = current_scope()
    if scope is not None:
        scope.release(pgid)


def _cancelled() -> bool:
    scope = current_scope()
    return scope is not None and scope.cancelled


def live_groups() -> set[int]:
    """The process groups of children that are running now."""
    with _live_lock:
        return set(_live)


def kill_all(grace: float = GRACE_SECONDS) -> None:
    """Stop every live child with its group: SIGTERM, up to `grace` seconds, SIGKILL.
    For the service's shutdown (also run at interpreter exit)."""
    groups = live_groups()
    if not groups:
        return
    alive = {pgid for pgid in groups if signal_group(pgid, signal.SIGTERM)}
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {pgid for pgid in alive if _group_has_live_member(pgid)}
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)


def _group_has_live_member(pgid: int) -> bool:
    """Whether a process of the group is still running (zombies do not count)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # state ppid pgrp ...
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


atexit.register(kill_all, 0.5)


# -- bounded calls (sync) --------------------------------------------------------------
@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


class TimedOut(Unavailable):
    """The child did not finish within its time; it was killed with its group."""


class OutputTooLarge(Invalid):
    """The child wrote more than its output bound; it was killed with its group."""


def run(
    args: Sequence[str],
    *,
    timeout: float,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    limits: Limits | None = None,
    max_output: int = MAX_OUTPUT_BYTES,
    what: str | None = None,
) -> Completed:
    """Run a child to its end, at most `timeout` seconds; stdout and stderr captured.

    Raises TimedOut (Unavailable) or OutputTooLarge (Invalid), OSError when the program
    cannot be started. `env` defaults to `child_env()`.
    """
    what = what or " ".join(args[:3])
    process = subprocess.Popen(
        list(args),
        cwd=cwd,
        env=dict(env) if env is not None else child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_preexec(limits or _default_limits),
        close_fds=True,
    )
    pgid = process.pid  # a session leader's group id is its pid
    _register(pgid)
    try:
        stdout, stderr = _collect(process, pgid, timeout, max_output, what)
        if _cancelled():
            raise Unavailable(f"{what} was stopped: the client went away")
        return Completed(
            process.returncode,
            stdout.decode(errors="replace"),
            stderr.decode(errors="replace"),
        )
    except BaseException:
        _stop_sync(process, pgid)
        raise
    finally:
        signal_group(pgid, signal.SIGKILL)  # anything the child left behind
        with contextlib.suppress(Exception):
            process.wait(5)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        _unregister(pgid)


def _collect(
    process: subprocess.Popen[bytes], pgid: int, timeout: float, max_output: int, what: str
) -> tuple[bytes, bytes]:
    assert process.stdout is not None and process.stderr is not None
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    total = 0
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "err")
        leader_done = False
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimedOut(f"{what} did not answer within {timeout:g} s")
            for key, _ in selector.select(min(remaining, 0.25)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                chunks[key.data].append(chunk)
                total += len(chunk)
                if total > max_output:
                    raise OutputTooLarge(f"{what} wrote more than {max_output // 2**20} MiB")
            if not leader_done and process.poll() is not None:
                # The child is done: what it left running holds the pipes open.
                leader_done = True
                signal_group(pgid, signal.SIGKILL)
        remaining = max(deadline - time.monotonic(), 0.1)
        try:
            process.wait(remaining)
        except subprocess.TimeoutExpired as exc:
            raise TimedOut(f"{what} did not answer within {timeout:g} s") from exc
    return b"".join(chunks["out"]), b"".join(chunks["err"])


def _stop_sync(process: subprocess.Popen[bytes], pgid: int) -> None:
    signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(GRACE_SECONDS)
    signal_group(pgid, signal.SIGKILL)


# -- streamed calls (async) ------------------------------------------------------------
async def stream(
    args: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    limits: Limits | None = None,
    timeout: float | None = None,
    what: str | None = None,
    stdin: AsyncIterator[bytes] | None = None,
    on_errors: Callable[[bytes], None] | None = None,
) -> int:
    """Run a child, stdout and stderr merged, each chunk of output to `on_output`; the
    exit code. On cancellation, on timeout (TimedOut) and on any error the child is
    stopped with its group before this returns or raises. `env` defaults to
    `child_env()`. `stdin`: what the child reads (closed at its end; none: nothing);
    `on_errors`: stderr apart, each chunk to it (stdout alone goes to `on_output`)."""
    what = what or " ".join(args[:3])
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *args,
            cwd=cwd,
            env=dict(env) if env is not None else child_env(),
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if on_errors is None else asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_preexec(limits or _default_limits),
            close_fds=True,
        )
    )
    try:
        process = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while the child was being made: it runs already, and may have started
        # children of its own (asyncio would kill the child alone): the whole group goes.
        with contextlib.suppress(Exception):
            made = await spawn
            signal_group(made.pid, signal.SIGKILL)
            await made.wait()
        raise
    pgid = process.pid
    _register(pgid)
    extras = []
    if stdin is not None:
        extras.append(asyncio.ensure_future(_feed(process, stdin)))
    if on_errors is not None:
        assert process.stderr is not None
        extras.append(asyncio.ensure_future(_drain(process.stderr, on_errors)))
    try:
        try:
            async with asyncio.timeout(timeout):
                code = await _pump(process, pgid, on_output)
                for extra in extras:
                    await extra  # (a feed that failed raises here)
                return code
        except TimeoutError as exc:
            raise TimedOut(f"{what} did not finish within {timeout:g} s") from exc
    except BaseException:
        await _stop_async(process, pgid)
        raise
    finally:
        for extra in extras:
            extra.cancel()
        signal_group(pgid, signal.SIGKILL)  # anything the child left behind
        _unregister(pgid)


async def _feed(process: asyncio.subprocess.Process, chunks: AsyncIterator[bytes]) -> None:
    """`chunks` to the child's stdin, then its end; a child that stopped reading (it
    failed, and says why) ends the feed quietly."""
    assert process.stdin is not None
    try:
        async for chunk in chunks:
            process.stdin.write(chunk)
            await process.stdin.drain()
        process.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        return


async def _drain(pipe: asyncio.StreamReader, to: Callable[[bytes], None]) -> None:
    while chunk := await pipe.read(65536):
        to(chunk)


async def _pump(
    process: asyncio.subprocess.Process, pgid: int, on_output: Callable[[bytes], None]
) -> int:
    assert process.stdout is not None
    reader = asyncio.ensure_future(process.stdout.read(65536))
    waiter = asyncio.ensure_future(process.wait())
    try:
        while True:
            done, _ = await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if reader in done:
                chunk = reader.result()
                if not chunk:
                    break
                on_output(chunk)
                reader = asyncio.ensure_future(process.stdout.read(65536))
            elif waiter in done:
                # The child is done: what it left running holds the pipe open.
                signal_group(pgid, signal.SIGKILL)
                await asyncio.wait({reader})
                chunk = reader.result()
                if not chunk:
                    break
                on_output(chunk)
                reader = asyncio.ensure_future(process.stdout.read(65536))
        return await waiter
    finally:
        for task in (reader, waiter):
            if not task.done():
                task.cancel()


async def _stop_async(process: asyncio.subprocess.Process, pgid: int) -> None:
    """SIGTERM to the group, a grace for the child to end, SIGKILL to the group. Runs
    to its end even when cancelled again (the SIGKILL is in the caller's finally too)."""
    signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(process.wait()), GRACE_SECONDS)
    signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(process.wait()), GRACE_SECONDS)
