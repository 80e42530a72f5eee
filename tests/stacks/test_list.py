"""The stack list reads the files and one container listing: no compose run, on the
real engine; full resolutions follow in the background."""

import threading

import pytest

from stackyard.process import children, tuning
from stackyard.stacks.warmup import Warmer
from tests.support.stacks import BIG, BUSYBOX, compose, compose_text, service

pytestmark = pytest.mark.docker


class ComposeRuns:
    """Counts every child started through the process seam, by the thread it ran on
    (and how much nicer than the service it was started)."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.niceness: list[int] = []
        self._lock = threading.Lock()
        run, stream = children.run, children.stream

        def counted_run(args, *a, **kw):
            with self._lock:
                self.calls.append((threading.current_thread().name, list(args)))
                self.niceness.append(tuning.child_niceness())
            return run(args, *a, **kw)

        async def counted_stream(args, *a, **kw):
            with self._lock:
                self.calls.append((threading.current_thread().name, list(args)))
            return await stream(args, *a, **kw)

        monkeypatch.setattr(children, "run", counted_run)
        monkeypatch.setattr(children, "stream", counted_stream)

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()
            self.niceness.clear()


@pytest.fixture
def runs(monkeypatch) -> ComposeRuns:
    return ComposeRuns(monkeypatch)


@pytest.fixture
def machine(app):
    return app.state.services.stacks.machine


@pytest.fixture
def held(machine, monkeypatch) -> list:
    """The background resolutions the list asks for, held back (released by the test)."""
    scheduled: list = []
    monkeypatch.setattr(machine.warmer, "schedule", lambda items: scheduled.extend(items))
    return scheduled


def stacks_of(client) -> dict[str, dict]:
    response = client.get("/api/stacks")
    assert response.status_code == 200, response.text
    return {s["id"]: s for s in response.json()}


def release(machine, held: list) -> None:
    Warmer.schedule(machine.warmer, list(held))
    held.clear()
    assert machine.warmer.wait(300)


def test_first_list_of_50_new_stacks_runs_no_compose(
    admin_client, machine, make_stack, stacks_dir, runs, held
):
    ids = [
        make_stack(
            f"s{n:02d}",
            compose_text(web=service(), db=service(image=BIG), job="    build: ."),
            env=f"N={n}\n",
        )
        for n in range(50)
    ]
    running, stopped = ids[3], ids[7]
    compose(stacks_dir, running, "up", "-d", "web", "db")
    compose(stacks_dir, stopped, "up", "-d", "web", "db")
    compose(stacks_dir, stopped, "stop")
    runs.clear()

    stacks = stacks_of(admin_client)

    assert runs.calls == []  # not one compose process for 50 stacks never seen
    assert len(held) == 50  # all of them to be resolved fully, in the background
    assert set(ids) <= set(stacks)
    first = stacks[ids[0]]
    assert first["state"] == "stopped" and first["error"] is None
    assert {s["name"]: s["image"] for s in first["services"]} == {
        "db": BIG,
        "job": None,
        "web": BUSYBOX,
    }
    up = stacks[running]
    assert up["state"] == "partial"  # `job` (a build) was not started
    by_name = {s["name"]: s for s in up["services"]}
    assert by_name["web"]["running"] and by_name["db"]["running"]
    assert by_name["web"]["containers"][0]["state"] == "running"
    assert by_name["web"]["containers"][0]["image"] == BUSYBOX
    down = stacks[stopped]
    assert down["state"] == "stopped"
    assert {c["state"] for s in down["services"] for c in s["containers"]} == {"exited"}

    # A warm list parses nothing, and still runs no compose.
    reads = machine.declared.reads
    again = stacks_of(admin_client)
    assert {k: (s["state"], s["services"][0]["image"]) for k, s in again.items()} == {
        k: (s["state"], s["services"][0]["image"]) for k, s in stacks.items()
    }
    assert machine.declared.reads == reads and runs.calls == []


def test_background_resolutions_warm_the_detail_and_the_update_summary(
    admin_client, machine, make_stack, runs, held
):
    ids = [make_stack(f"warm{n}", compose_text(web=service(), db=service())) for n in range(3)]
    stacks_of(admin_client)
    assert runs.calls == []
    release(machine, held)
    assert {args[-3] for _, args in runs.calls} == {"config"}  # compose config, per stack
    assert len(runs.calls) == 3
    assert all(thread == "stackyard-warmup" for thread, _ in runs.calls)
    assert runs.niceness == [tuning.BACKGROUND_NICE] * 3  # out of the requests' way
    runs.clear()

    reads = machine.declared.reads
    listed = stacks_of(admin_client)
    assert machine.declared.reads == reads  # resolved fully: the files are not read again
    assert [s["name"] for s in listed[ids[0]]["services"]] == ["db", "web"]
    assert admin_client.get(f"/api/stacks/{ids[0]}").status_code == 200
    summary = admin_client.get("/api/stacks/updates").json()
    images = {s["stack"]: [i["image"] for i in s["images"]] for s in summary["stacks"]}
    assert images[ids[1]] == [BUSYBOX, BUSYBOX]
    assert runs.calls == []  # neither the detail nor the summary ran compose
    assert held == []  # and the list asked for nothing more


def test_a_file_that_does_not_parse_is_invalid_with_the_parser_message(
    admin_client, make_stack, runs, held
):
    stack_id = make_stack("broken", "services:\n  web: [oops\n")
    stack = stacks_of(admin_client)[stack_id]
    assert stack["state"] == "invalid"
    assert stack["error"].startswith("Invalid compose file: compose.yaml: Invalid YAML: ")
    assert stack["services"] == []
    assert runs.calls == []


def test_what_only_compose_refuses_shows_once_resolved(admin_client, machine, make_stack, held):
    stack_id = make_stack("strict", compose_text(web=service(not_a_key="1")))
    assert stacks_of(admin_client)[stack_id]["state"] == "stopped"  # the files' reading
    release(machine, held)
    stack = stacks_of(admin_client)[stack_id]
    assert stack["state"] == "invalid"
    assert "not_a_key" in stack["error"]  # compose's own message


def test_includes_show_the_full_resolution_once_there_is_one(
    admin_client, machine, make_stack, stacks_dir, held
):
    stack_id = make_stack("incl", "include: [more.yaml]\n" + compose_text(web=service()))
    (stacks_dir / stack_id / "more.yaml").write_text(compose_text(db=service()))
    first = stacks_of(admin_client)[stack_id]
    assert [s["name"] for s in first["services"]] == ["web"]  # what the file itself says
    release(machine, held)
    resolved = stacks_of(admin_client)[stack_id]
    assert [s["name"] for s in resolved["services"]] == ["db", "web"]

    # Changed: the last full resolution is shown until the new one is made.
    (stacks_dir / stack_id / "compose.yaml").write_text(
        "include: [more.yaml]\n" + compose_text(web=service(), cache=service())
    )
    assert [s["name"] for s in stacks_of(admin_client)[stack_id]["services"]] == ["db", "web"]
    release(machine, held)
    assert [s["name"] for s in stacks_of(admin_client)[stack_id]["services"]] == [
        "cache",
        "db",
        "web",
    ]


def test_project_name_from_the_file_finds_its_containers(
    admin_client, make_stack, stacks_dir, docker_cleanup, runs, held
):
    stack_id = make_stack("named", "name: ${PROJECT:-Other_Name}\n" + compose_text(web=service()))
    docker_cleanup.compose_project("other_name")
    compose(stacks_dir, stack_id, "up", "-d")
    runs.clear()
    stack = stacks_of(admin_client)[stack_id]
    assert stack["state"] == "running"
    assert stack["services"][0]["containers"][0]["name"] == "other_name-web-1"
    assert runs.calls == []
