"""Pull and update pull only images that come from a registry: an image built or loaded
here (the update checker calls it local) is never pulled, and the update succeeds."""

import uuid

import pytest

from tests.support.stacks import BUSYBOX, act, compose_text, service

pytestmark = pytest.mark.docker


@pytest.fixture
def local_only(docker_client):
    """A tag of the test image under a name that exists in no registry."""
    repo = f"stackyard-local-only/{uuid.uuid4().hex[:8]}"
    docker_client.images.get(BUSYBOX).tag(repo, "1")
    yield f"{repo}:1"
    docker_client.images.remove(f"{repo}:1", noprune=True)


def lines(run) -> str:
    return "\n".join(line["text"] for line in run["progress"]["lines"])


def test_updating_a_stack_of_local_images_skips_the_pull(admin_client, make_stack, local_only):
    stack_id = make_stack("loc", compose_text(web=service(image=local_only)))
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    run = act(admin_client, stack_id, "update")
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert f"Not pulling web: {local_only} was built or loaded here" in lines(run)
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["state"] == "running"
    run = act(admin_client, stack_id, "pull")
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert "Nothing to pull from a registry" in lines(run)


def test_a_build_service_is_not_pulled(admin_client, make_stack, stacks_dir, local_only):
    stack_id = make_stack(
        "bld",
        compose_text(web=service(image=local_only, build="./app"), side=service(image=local_only)),
    )
    app = stacks_dir / stack_id / "app"
    app.mkdir()
    (app / "Dockerfile").write_text(f"FROM {local_only}\n")
    run = act(admin_client, stack_id, "pull")
    assert run["status"] == "succeeded", run["progress"]["errors"]
    text = lines(run)
    assert "Not pulling web: builds its image" in text
    assert "Not pulling side:" in text


def test_registry_images_are_still_pulled_beside_local_ones(
    admin_client, make_stack, registry, local_only, docker_client
):
    name = f"pull/{uuid.uuid4().hex[:8]}"
    registry.push(BUSYBOX, name, "1")
    remote = f"{registry.host}/{name}:1"
    docker_client.images.remove(remote, noprune=True)  # only the registry has it now
    stack_id = make_stack(
        "mix", compose_text(web=service(image=remote), side=service(image=local_only))
    )
    run = act(admin_client, stack_id, "update")
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert "Not pulling side:" in lines(run)
    assert "Not pulling web" not in lines(run)
    assert docker_client.images.get(remote)  # pulled
    assert admin_client.get(f"/api/stacks/{stack_id}").json()["state"] == "running"
