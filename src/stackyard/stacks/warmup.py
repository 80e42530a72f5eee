"""Full resolutions (`docker compose config`) in the background, a few at a time.

The stack list reads what the files declare (`stackyard.compose.declared`) and never
waits for compose; it hands the stacks it has no current full resolution for to the
`Warmer`, so that the detail page, the update check and the actions find them resolved.
Each folder is queued once per state of its files (its fingerprint); one whose
resolution failed for a reason other than an invalid file (compose missing, a timeout)
is not tried again for the same files before `RETRY_SECONDS`. Workers are daemon threads
started on demand and ended when the queue is empty; compose runs through the process
seam, so the service's shutdown (`process.kill_all`) stops what they started.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: Full resolutions at once (each is a compose process, about a CPU-bound second): two,
#: with a core left for the requests (on two cores a first list of 300 stacks took
#: 45-85 ms with two, a steady 50 ms with one; bench/bench_list.py).
WORKERS = max(1, min(2, (os.cpu_count() or 2) - 1))
#: Resolutions between two writes of the project cache file.
FLUSH_EVERY = 25
#: Seconds before a resolution that failed (not as invalid) is tried again.
RETRY_SECONDS = 300.0
#: Seconds a new worker waits before its first resolution: the request that queued the
#: work (a stack list) is answered first, without compose processes competing with it.
START_DELAY = 1.0


class Warmer:
    def __init__(
        self,
        resolve: Callable[[Path], None],
        done: Callable[[], None],
        workers: int = WORKERS,
        start_delay: float = START_DELAY,
    ) -> None:
        """`resolve(folder)` resolves one folder fully (raising on failure); `done()` runs
        after resolutions (writes the cache, tells the summaries)."""
        self._resolve = resolve
        self._done = done
        self._workers = workers
        self._start_delay = start_delay
        self._queue: deque[tuple[Path, tuple[Any, ...]]] = deque()
        self._queued: dict[Path, tuple[Any, ...]] = {}  # queued or being resolved, with its stamp
        self._failed: dict[Path, tuple[tuple[Any, ...], float]] = {}
        self._running = 0
        self._since_flush = 0
        self._closed = False
        self._cond = threading.Condition()

    def schedule(self, items: Iterable[tuple[Path, tuple[Any, ...]]]) -> int:
        """Queue (folder, fingerprint) pairs not queued yet; returns how many were."""
        added = 0
        now = time.monotonic()
        with self._cond:
            if self._closed:
                return 0
            for folder, stamp in items:
                if self._queued.get(folder) == stamp:
                    continue
                failed = self._failed.get(folder)
                if failed and failed[0] == stamp and now - failed[1] < RETRY_SECONDS:
                    continue
                self._queued[folder] = stamp
                self._queue.append((folder, stamp))
                added += 1
            while self._running < min(self._workers, len(self._queue)):
                self._running += 1
                threading.Thread(target=self._work, name="stackyard-warmup", daemon=True).start()
        return added

    def idle(self) -> bool:
        with self._cond:
            return not self._queue and self._running == 0

    def wait(self, timeout: float) -> bool:
        """Until nothing is queued or running (True), or `timeout` seconds (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """Take nothing new; workers end after the resolution they are in."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._queued.clear()
            self._cond.notify_all()

    def _work(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._closed, self._start_delay)
        while True:
            with self._cond:
                item = self._queue.popleft() if self._queue and not self._closed else None
                if item is None:
                    # The last worker out writes what was resolved since the last write
                    # (and still counts as running meanwhile: `wait` waits for it).
                    if self._running > 1 or not self._since_flush:
                        self._running -= 1
                        self._cond.notify_all()
                        return
                    self._since_flush = 0
            if item is None:
                self._finish()
                continue
            folder, stamp = item
            try:
                self._resolve(folder)
            except Exception as exc:  # the list keeps showing the files' own reading
                log.info("Background resolution of %s failed: %s", folder.name, type(exc).__name__)
                with self._cond:
                    self._failed[folder] = (stamp, time.monotonic())
            with self._cond:
                if self._queued.get(folder) == stamp:
                    del self._queued[folder]
                self._since_flush += 1
                flush = self._since_flush >= FLUSH_EVERY
                if flush:
                    self._since_flush = 0
            if flush:
                self._finish()

    def _finish(self) -> None:
        try:
            self._done()
        except Exception:
            log.exception("Writing the resolved projects failed")
