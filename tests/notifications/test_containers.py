"""How the engine's container events are judged (pure logic; the real engine's events are
in test_sources.py)."""

from stackyard.docker.events import ContainerEvent
from stackyard.notifications.containers import ContainerWatcher
from stackyard.notifications.events import Event


def _watcher() -> tuple[ContainerWatcher, list[Event]]:
    said: list[Event] = []
    return ContainerWatcher(lambda: None, lambda _project: None, said.append), said  # type: ignore[arg-type,return-value]


def _event(action: str, at: float, exit_code: int | None = None) -> ContainerEvent:
    return ContainerEvent(action, "c1", "hog", {}, exit_code, at)


def test_an_oom_kill_is_said_once_a_life_also_when_more_come_after_the_death():
    watcher, said = _watcher()
    # The kernel killed two processes of the container; the engine's events for the
    # second came after the one for its death.
    for event in (_event("oom", 1.0), _event("die", 1.1, 137), _event("oom", 1.2)):
        watcher.seen(event)
    assert [(e.name, e.text) for e in said] == [("container_oom", "hog was killed: out of memory")]
    # A new life: its own OOM kill is news again.
    watcher.seen(_event("start", 5.0))
    watcher.seen(_event("oom", 6.0))
    assert [e.name for e in said] == ["container_oom", "container_oom"]
