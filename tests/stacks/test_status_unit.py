"""A stack's status from its containers (`stack_status`, `ContainerIndex`): pure logic,
no engine. Read through the public functions only."""

from dataclasses import replace
from pathlib import Path

from stackyard.compose.project import Project, Service
from stackyard.docker.containers import ContainerInfo
from stackyard.stacks.status import ContainerIndex, stack_status


def container(
    name: str,
    service: str,
    state: str = "running",
    project: str = "shop",
    working_dir: str | None = "/srv/stacks/shop",
    image: str = "nginx:1",
) -> ContainerInfo:
    return ContainerInfo(
        id=f"id-{name}",
        name=name,
        project=project,
        service=service,
        working_dir=working_dir,
        state=state,
        status="Up 1 minute" if state == "running" else "Exited (0)",
        health=None,
        image=image,
        ports=(),
    )


def project(*services: str) -> Project:
    return Project("shop", tuple(Service(s, f"{s}:1", False) for s in services))


def test_every_service_running_is_running():
    status = stack_status(
        "shop", project("web", "db"), [container("shop-web-1", "web"), container("shop-db-1", "db")]
    )
    assert status.state == "running"
    assert [(s.name, s.running) for s in status.services] == [("web", True), ("db", True)]


def test_some_running_is_partial():
    status = stack_status(
        "shop",
        project("web", "db"),
        [container("shop-web-1", "web"), container("shop-db-1", "db", state="exited")],
    )
    assert status.state == "partial"


def test_nothing_running_is_stopped_and_services_without_containers_show():
    status = stack_status("shop", project("web", "db"), [])
    assert status.state == "stopped"
    assert [(s.name, s.image, s.containers) for s in status.services] == [
        ("web", "web:1", ()),
        ("db", "db:1", ()),
    ]


def test_orphan_containers_show_and_count_as_partial():
    status = stack_status("shop", project("web"), [container("shop-old-1", "old")])
    assert [s.name for s in status.services] == ["web", "old"]
    assert status.state == "partial"
    assert status.services[1].image == "nginx:1"  # from the container: not in the project


def test_an_unreadable_compose_file_is_invalid_unless_something_runs():
    assert stack_status("shop", None, [], "Invalid compose file").state == "invalid"
    running = stack_status("shop", None, [container("shop-web-1", "web")], "Invalid compose file")
    assert running.state == "partial" and running.error == "Invalid compose file"


def test_without_a_project_the_containers_decide():
    status = stack_status("shop", None, [container("shop-web-1", "web")])
    assert status.state == "running"
    assert [s.name for s in status.services] == ["web"]


def test_containers_are_found_by_project_name_or_by_folder():
    roots = [Path("/srv/stacks"), Path("/host/stacks")]
    by_name = container("shop-web-1", "web", working_dir=None)
    by_folder = container("manual-1", "web", project="manual", working_dir="/host/stacks/shop/")
    other = container("blog-web-1", "web", project="blog", working_dir="/srv/stacks/blog")
    index = ContainerIndex([other, by_folder, by_name], roots)
    assert [c.name for c in index.of("shop", "shop")] == ["manual-1", "shop-web-1"]
    assert [c.name for c in index.of("blog", None)] == ["blog-web-1"]  # the id as project
    assert index.of("none", None) == []


def test_a_renamed_project_is_found_by_its_name():
    renamed = container("store-web-1", "web", project="store", working_dir=None)
    index = ContainerIndex([renamed], [Path("/srv/stacks")])
    assert [c.name for c in index.of("shop", "store")] == ["store-web-1"]
    assert index.of("shop", None) == []


def sick(name: str, service: str, health: str | None = "unhealthy", state: str = "running"):
    return replace(container(name, service, state=state), health=health)


def test_an_unhealthy_container_makes_the_stack_unhealthy_though_every_service_runs():
    status = stack_status(
        "shop", project("web", "db"), [sick("shop-web-1", "web"), container("shop-db-1", "db")]
    )
    assert status.state == "unhealthy"


def test_health_starting_is_running():
    status = stack_status("shop", project("web"), [sick("shop-web-1", "web", "starting")])
    assert status.state == "running"


def test_the_states_come_in_their_order_of_precedence():
    """restarting > unhealthy > invalid > partial > rolled back > running > stopped."""
    web = project("web", "db")
    restarting = sick("shop-db-1", "db", health=None, state="restarting")
    unhealthy = sick("shop-web-1", "web")
    assert stack_status("shop", web, [unhealthy, restarting]).state == "restarting"
    assert stack_status("shop", web, [unhealthy], rolled_back=True).state == "unhealthy"
    assert stack_status("shop", None, [unhealthy], "Invalid compose file").state == "unhealthy"
    half = [container("shop-web-1", "web")]
    assert stack_status("shop", web, half, rolled_back=True).state == "partial"
    both = [container("shop-web-1", "web"), container("shop-db-1", "db")]
    assert stack_status("shop", web, both, rolled_back=True).state == "rolled_back"
    assert stack_status("shop", web, [], rolled_back=True).state == "stopped"
