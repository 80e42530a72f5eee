"""The background resolver: bounded, each folder state once, never in the list's way."""

import threading
import time
from pathlib import Path

from stackyard.stacks import warmup
from stackyard.stacks.warmup import Warmer


class Recorder:
    def __init__(self, delay: float = 0.05, fail: set[str] | None = None) -> None:
        self.delay = delay
        self.fail = fail or set()
        self.resolved: list[str] = []
        self.done = 0
        self.active = 0
        self.most = 0
        self.lock = threading.Lock()

    def resolve(self, folder: Path) -> None:
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
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
    rec = Recorder()
    warmer = Warmer(rec.resolve, rec.finished, workers=2, start_delay=0)
    began = time.monotonic()
    assert warmer.schedule(items(*(f"s{n}" for n in range(8)))) == 8
    assert time.monotonic() - began < 0.05  # scheduling never waits for the work
    assert warmer.wait(10) and warmer.idle()
    assert sorted(rec.resolved) == sorted(f"s{n}" for n in range(8))
    assert rec.most == 2
    assert rec.done == 1


def test_a_folder_is_queued_once_per_state_of_its_files():
    rec = Recorder(delay=0.1)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    assert warmer.schedule(items("a", "b")) == 2
    assert warmer.schedule(items("a", "b")) == 0  # already queued or running
    assert warmer.schedule(items("a", stamp=("changed",))) == 1
    assert warmer.wait(10)
    assert sorted(rec.resolved) == ["a", "a", "b"]


def test_a_failed_resolution_is_not_retried_for_the_same_files(monkeypatch):
    rec = Recorder(delay=0, fail={"a"})
    warmer = Warmer(rec.resolve, rec.finished, start_delay=0)
    warmer.schedule(items("a"))
    assert warmer.wait(10)
    assert warmer.schedule(items("a")) == 0
    assert warmer.schedule(items("a", stamp=("edited",))) == 1
    assert warmer.wait(10)
    monkeypatch.setattr(warmup, "RETRY_SECONDS", 0.0)
    assert warmer.schedule(items("a", stamp=("edited",))) == 1  # after a while: again
    assert warmer.wait(10)
    assert rec.resolved == ["a", "a", "a"]


def test_long_batches_are_written_as_they_go(monkeypatch):
    monkeypatch.setattr(warmup, "FLUSH_EVERY", 3)
    rec = Recorder(delay=0)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    warmer.schedule(items(*(f"s{n}" for n in range(7))))
    assert warmer.wait(10)
    assert rec.done == 3  # after 3, after 6, and the rest at the end


def test_closed_takes_nothing_more():
    rec = Recorder(delay=0.2)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=0)
    warmer.schedule(items("a", "b", "c"))
    time.sleep(0.05)
    warmer.close()
    assert warmer.wait(10)
    assert rec.resolved == ["a"]
    assert warmer.schedule(items("d")) == 0


def test_workers_let_the_request_that_queued_them_finish_first():
    """A new worker waits before its first resolution (the list that queued the work is
    answered without compose competing with it); closing meanwhile resolves nothing."""
    rec = Recorder(delay=0)
    warmer = Warmer(rec.resolve, rec.finished, workers=1, start_delay=2)
    warmer.schedule(items("a"))
    time.sleep(0.2)
    assert rec.resolved == []
    assert warmer.wait(10) and rec.resolved == ["a"]

    closing = Warmer(rec.resolve, rec.finished, workers=1, start_delay=5)
    closing.schedule(items("b"))
    closing.close()
    assert closing.wait(2)  # the waiting worker ends at once
    assert rec.resolved == ["a"]
