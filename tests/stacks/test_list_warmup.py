"""The background resolver: bounded, each folder state once, never in the list's way."""

import threading
import time
from pathlib import Path

from stackyard.stacks import warmup
from stackyard.stacks.warmup import Warmer
from tests.support.waiting import PATIENCE, wait_until


class Recorder:
    """A resolver that records what it was given, when, and how many at once; each
    resolution takes `delay` seconds, or waits for `gate` to open."""

    def __init__(
        self, delay: float = 0.05, fail: set[str] | None = None, gate: bool = False
    ) -> None:
        self.delay = delay
        self.fail = fail or set()
        self.gate = threading.Event()
        if not gate:
            self.gate.set()
        self.started: list[float] = []
        self.resolved: list[str] = []
        self.done = 0
        self.active = 0
        self.most = 0
        self.lock = threading.Lock()

    def resolve(self, folder: Path) -> None:
        with self.lock:
            self.started.append(time.monotonic())
            self.active += 1
            self.most = max(self.most, self.active)
        self.gate.wait()
        time.sleep(self.delay)
        with self.lock:
            self.active -= 1
            self.resolved.append(folder.name)
        if folder.name in self.fail:
            raise RuntimeError("compose is not there")

    def finished(self) -> None:
        with self.lock:
            self.done += 1


def items(*names: str, stamp=("s",)) -> list[tuple[Path, tuple]]:
    return [(Path("/stacks") / name, stamp) for name in names]


def test_resolves_everything_a_few_at_a_time_and_writes_once_at_the_end():
    rec = Recorder(gate=True)  # no resolution ends before the gate opens
    warmer = Warmer(rec.resolve, rec.finished, workers=2, start_delay=0)
    assert warmer.schedule(items(*(f"s{n}" for n in range(8)))) == 8  # without waiting
    assert rec.resolved == [] and not warmer.idle()
    rec.gate.set()
    assert warmer.wait(PATIENCE) and warmer.idle()
    assert sorted(rec.resolved) == sorted(f"s{n}" for n in range(8))
    assert rec.most == 2
    assert rec.done == 1


def test_a_folder_is_queued_once_per_state_of_its_files():
    rec = Recorder(delay=0.1)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    assert warmer.schedule(items("a", "b")) == 2
    assert warmer.schedule(items("a", "b")) == 0  # already queued or running
    assert warmer.schedule(items("a", stamp=("changed",))) == 1
    assert warmer.wait(PATIENCE)
    assert sorted(rec.resolved) == ["a", "a", "b"]


def test_a_failed_resolution_is_not_retried_for_the_same_files(monkeypatch):
    rec = Recorder(delay=0, fail={"a"})
    warmer = Warmer(rec.resolve, rec.finished, start_delay=0)
    warmer.schedule(items("a"))
    assert warmer.wait(PATIENCE)
    assert warmer.schedule(items("a")) == 0
    assert warmer.schedule(items("a", stamp=("edited",))) == 1
    assert warmer.wait(PATIENCE)
    monkeypatch.setattr(warmup, "RETRY_SECONDS", 0.0)
    assert warmer.schedule(items("a", stamp=("edited",))) == 1  # after a while: again
    assert warmer.wait(PATIENCE)
    assert rec.resolved == ["a", "a", "a"]


def test_long_batches_are_written_as_they_go(monkeypatch):
    monkeypatch.setattr(warmup, "FLUSH_EVERY", 3)
    rec = Recorder(delay=0)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    warmer.schedule(items(*(f"s{n}" for n in range(7))))
    assert warmer.wait(PATIENCE)
    assert rec.done == 3  # after 3, after 6, and the rest at the end


def test_closed_takes_nothing_more():
    rec = Recorder(delay=0, gate=True)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    warmer.schedule(items("a", "b", "c"))
    wait_until(lambda: rec.started, what="the first resolution")
    warmer.close()
    rec.gate.set()
    assert warmer.wait(PATIENCE)
    assert rec.resolved == ["a"]
    assert warmer.schedule(items("d")) == 0


def test_workers_let_the_request_that_queued_them_finish_first():
    """A new worker waits before its first resolution (the list that queued the work is
    answered without compose competing with it); closing meanwhile resolves nothing."""
    rec = Recorder(delay=0)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=2)
    scheduled = time.monotonic()
    warmer.schedule(items("a"))
    assert warmer.wait(PATIENCE) and rec.resolved == ["a"]
    assert rec.started[0] - scheduled >= 2  # from what the resolver recorded

    closing = Warmer(rec.resolve, rec.finished, workers=1, start_delay=60)
    closing.schedule(items("b"))
    closing.close()
    assert closing.wait(30)  # the waiting worker ends at once, not after its minute
    assert rec.resolved == ["a"]
    assert rec.resolved == ["a"]
