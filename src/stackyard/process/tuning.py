"""How hard the service leans on the machine: its open-files limit raised and glibc's
malloc arenas limited once at start-up (`stackyard serve` and `agent`), and the children
of background work (`in_background`) run at a lower CPU priority than the requests."""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import ctypes.util
import os
import resource
from collections.abc import Iterator

#: The C library's name (None where none is found): its mallopt here, prctl in `children`.
LIBC = ctypes.util.find_library("c")

#: The most descriptors the service asks for (deep folder zips hold one per level).
OPEN_FILES_WANTED = 65536


def raise_open_files_limit(wanted: int = OPEN_FILES_WANTED) -> int:
    """Raise this process's soft limit of open descriptors towards its hard limit (as Go
    programs do at start-up): the soft limit is often 1024 under systemd. Children inherit
    it. Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # keep what there is: deep zips skip what is too deep, with a log line
    return soft


#: glibc's mallopt parameter M_ARENA_MAX, and the arenas the service keeps.
_M_ARENA_MAX = -8
MALLOC_ARENAS = 2


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Let glibc's malloc share a few arenas between threads (as MALLOC_ARENA_MAX does),
    unless the environment says otherwise. By default each worker thread may get an arena
    of its own, up to 8 per core, and keeps the memory freed in it: an S3 transfer's ten
    threads grew the service by 48-60 MiB for good (9-14 MiB with two arenas, as fast;
    bench/bench_destinations.py). Call at start-up, before threads start. False where the
    C library is not glibc."""
    if "MALLOC_ARENA_MAX" in os.environ or LIBC is None:
        return False
    mallopt = getattr(ctypes.CDLL(LIBC), "mallopt", None)
    return bool(mallopt is not None and mallopt(_M_ARENA_MAX, arenas) == 1)


def return_freed_memory() -> bool:
    """Give the heap memory freed so far back to the system (glibc's malloc_trim), as
    after start-up, whose imports and warm-up freed a few MiB that malloc would otherwise
    keep for good. False where the C library is not glibc."""
    if LIBC is None:
        return False
    malloc_trim = getattr(ctypes.CDLL(LIBC), "malloc_trim", None)
    return bool(malloc_trim is not None and malloc_trim(0) == 1)


#: How much nicer than the service children started `in_background` are: on a busy host
#: the kernel gives a waiting request about ten times their share of the CPU.
BACKGROUND_NICE = 10
_nice: contextvars.ContextVar[int] = contextvars.ContextVar("stackyard_child_nice", default=0)


@contextlib.contextmanager
def in_background() -> Iterator[None]:
    """Children started in this context run at `BACKGROUND_NICE`."""
    token = _nice.set(BACKGROUND_NICE)
    try:
        yield
    finally:
        _nice.reset(token)


def child_niceness() -> int:
    """How much nicer than the service a child started in this context runs."""
    return _nice.get()
