"""How the engine's container events are judged (pure logic; the real engine's events,
restart loops included, are in test_sources.py)."""

from stackyard.docker.events import ContainerEvent
from stackyard.events import Event
from stackyard.notifications.containers import LOOP_SECONDS, ContainerWatcher


def _watcher(updating: set[str] | None = None) -> tuple[ContainerWatcher, list[Event]]:
    said: list[Event] = []
    watcher = ContainerWatcher(
        lambda: None,  # type: ignore[arg-type,return-value]
        lambda project: project,
        said.append,
        lambda stack: stack in (updating or set()),
    )
    return watcher, said


def _event(action: str, at: float, exit_code: int | None = None) -> ContainerEvent:
    return ContainerEvent(
        action, "c1", "hog", {"com.docker.compose.project": "shop"}, exit_code, at
    )


def _told(said: list[Event]) -> list[tuple[str, str, bool]]:
    return [(e.name, e.text, e.ended) for e in said]


def test_an_oom_kill_and_the_death_it_causes_are_one_failure_in_either_order():
    watcher, said = _watcher()
    # The kernel killed two processes of the container; the engine's events for the
    # second came after the one for its death.
    for event in (_event("oom", 1.0), _event("die", 1.1, 137), _event("oom", 1.2)):
        watcher.seen(event)
    assert _told(said) == [("container_oom", "hog was killed: out of memory", False)]
    # Long after, another life: its death first, then the kill that caused it.
    later = 1.2 + LOOP_SECONDS + 1
    for event in (_event("start", later), _event("die", later + 1, 137), _event("oom", later + 1)):
        watcher.seen(event)
    assert [e.text for e in said[1:]] == ["hog exited unexpectedly with code 137"]


def test_a_container_killed_for_memory_at_each_start_is_one_problem_said_three_times():
    """`mem_limit: 8m`, `restart: always`: nine kills in 40 s were nine messages."""
    watcher, said = _watcher()
    at = 0.0
    for life in range(9):
        watcher.seen(_event("start", at))
        kill = (_event("oom", at + 1), _event("die", at + 1.01, 137))
        for event in kill[::-1] if life % 2 else kill:  # the engine tells them in any order
            watcher.seen(event)
        at += 4.5
    watcher.seen(_event("stop", at))
    assert [(e.name, e.ended) for e in said] == [
        ("container_oom", False),  # first seen
        ("container_restarting", False),  # recognised as a loop
        ("container_restarting", True),  # resolved
    ]
    assert said[1].text == "hog keeps being killed for want of memory (3 times within 5 minutes)"
    assert said[2].text == "hog was stopped"


def test_a_crash_loop_is_said_when_first_seen_when_it_is_a_loop_and_when_it_ends():
    watcher, said = _watcher()
    for n in range(6):
        watcher.seen(_event("start", n * 2.0))
        watcher.seen(_event("die", n * 2.0 + 1, 4))
    watcher._quiet(11.0 + LOOP_SECONDS + 1)
    assert _told(said) == [
        ("container_exited", "hog exited unexpectedly with code 4", False),
        (
            "container_restarting",
            "hog keeps exiting (3 times within 5 minutes, the last with code 4)",
            False,
        ),
        ("container_restarting", "hog has run 5 minutes without exiting", True),
    ]


def test_what_the_containers_of_a_stack_being_updated_do_is_the_updates_to_say():
    """A failed update was three messages (unhealthy, "resolved: removed", rolled back):
    its containers' troubles are left to the update's own outcome."""
    updating = {"shop"}
    watcher, said = _watcher(updating)
    for event in (
        _event("health_status: unhealthy", 1.0),
        _event("start", 2.0),
        _event("die", 3.0, 3),
        _event("oom", 4.0),
        _event("destroy", 5.0),
    ):
        watcher.seen(event)
    assert said == [] or all(e.ended for e in said)  # ends of what was never said: dropped
    updating.clear()  # the update is over: news again
    watcher.seen(_event("health_status: unhealthy", 6.0))
    assert [(e.name, e.ended) for e in said if not e.ended] == [("container_unhealthy", False)]
