"""Deleting a stack: said before it is done (the plan), confirmed by the stack's name, and
never an erase: the folder, bind-mounted data included, goes to STACKS_DIR/.trash."""

import re

import pytest

from tests.support.stacks import act, compose_text, service

pytestmark = pytest.mark.docker

WITH_DATA = (
    compose_text(web=service(volumes='["./data:/data", "cache:/cache", "/tmp:/host-tmp:ro"]'))
    + "volumes:\n  cache: {}\n"
)


def make_with_data(make_stack, stacks_dir, name="del"):
    stack_id = make_stack(name, WITH_DATA)
    data = stacks_dir / stack_id / "data"
    data.mkdir()
    (data / "db.sqlite").write_bytes(b"x" * 1000)
    (data / "nested").mkdir()
    (data / "nested" / "a.txt").write_text("hello")
    return stack_id


def delete(client, stack_id, **params):
    return client.delete(f"/api/stacks/{stack_id}", params=params)


def test_plan_says_what_goes_and_what_stays(admin_client, make_stack, stacks_dir):
    stack_id = make_with_data(make_stack, stacks_dir)
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    response = admin_client.get(f"/api/stacks/{stack_id}/delete-plan")
    assert response.status_code == 200, response.text
    plan = response.json()
    assert plan["stack"] == stack_id and plan["error"] is None
    assert [c["name"] for c in plan["containers"]] == [f"{stack_id}-web-1"]
    assert plan["networks"] == [f"{stack_id}_default"]
    assert plan["volumes"] == [{"key": "cache", "name": f"{stack_id}_cache", "exists": True}]
    assert plan["external_binds"] == [{"path": "/tmp", "services": ["web"]}]
    folder = plan["folder"]
    assert folder["path"] == str(stacks_dir / stack_id)
    assert re.fullmatch(rf"\.trash/{stack_id}-\d{{8}}T\d{{6}}Z", folder["trash"])
    assert folder["binds"] == [{"path": "data", "services": ["web"]}]
    # compose.yaml, data/db.sqlite, data/nested/a.txt
    assert folder["files"] == 3 and folder["bytes"] >= 1005 and folder["complete"] is True


def test_plan_and_delete_are_admin_only(user_client, make_stack):
    stack_id = make_stack("adm", compose_text(web=service()))
    assert user_client.get(f"/api/stacks/{stack_id}/delete-plan").status_code == 403
    assert delete(user_client, stack_id, confirm=stack_id).status_code == 403


def test_plan_of_a_missing_stack_is_404(admin_client):
    assert admin_client.get("/api/stacks/nope/delete-plan").status_code == 404


@pytest.mark.parametrize("confirm", [None, "", "DEL", "wrong", "../x"])
def test_delete_without_the_exact_name_removes_nothing(
    admin_client, make_stack, stacks_dir, confirm
):
    stack_id = make_with_data(make_stack, stacks_dir)
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    params = {} if confirm is None else {"confirm": confirm}
    response = delete(admin_client, stack_id, **params)
    assert response.status_code == 400
    assert "confirm" in response.json()["detail"] and stack_id in response.json()["detail"]
    assert (stacks_dir / stack_id / "data" / "db.sqlite").exists()
    stack = admin_client.get(f"/api/stacks/{stack_id}").json()
    assert stack["state"] == "running"
    entry = admin_client.get("/api/audit").json()["items"][0]
    assert (entry["action"], entry["target"], entry["outcome"]) == (
        "stack.delete",
        stack_id,
        "failure",
    )


def test_delete_moves_the_folder_aside_with_its_data_and_keeps_volumes(
    admin_client, make_stack, stacks_dir, docker_client
):
    stack_id = make_with_data(make_stack, stacks_dir)
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    response = delete(admin_client, stack_id, confirm=stack_id)
    assert response.status_code == 200, response.text
    result = response.json()
    assert re.fullmatch(rf"\.trash/{stack_id}-\d{{8}}T\d{{6}}Z", result["trash"])
    assert result["containers"] == [f"{stack_id}-web-1"]
    assert result["networks"] == [f"{stack_id}_default"]
    assert result["volumes_removed"] == [] and result["volumes_kept"] == [f"{stack_id}_cache"]

    assert not (stacks_dir / stack_id).exists()
    aside = stacks_dir / result["trash"]
    assert (aside / "compose.yaml").read_text() == WITH_DATA
    assert (aside / "data" / "db.sqlite").read_bytes() == b"x" * 1000
    assert (aside / "data" / "nested" / "a.txt").read_text() == "hello"
    assert not docker_client.containers.list(
        all=True, filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    assert f"{stack_id}_cache" in {v.name for v in docker_client.volumes.list()}
    docker_client.volumes.get(f"{stack_id}_cache").remove()

    # The trash is no stack, and the stack is gone.
    assert stack_id not in [s["id"] for s in admin_client.get("/api/stacks").json()]
    assert ".trash" not in [s["id"] for s in admin_client.get("/api/stacks").json()]
    assert admin_client.get(f"/api/stacks/{stack_id}").status_code == 404

    entry = admin_client.get("/api/audit").json()["items"][0]
    assert (entry["action"], entry["target"], entry["outcome"]) == (
        "stack.delete",
        stack_id,
        "success",
    )
    assert result["trash"] in entry["detail"] and f"{stack_id}_cache" in entry["detail"]


def test_delete_with_volumes_removes_them(admin_client, make_stack, stacks_dir, docker_client):
    stack_id = make_with_data(make_stack, stacks_dir)
    assert act(admin_client, stack_id, "start")["status"] == "succeeded"
    response = delete(admin_client, stack_id, confirm=stack_id, remove_volumes=True)
    assert response.status_code == 200, response.text
    assert response.json()["volumes_removed"] == [f"{stack_id}_cache"]
    assert f"{stack_id}_cache" not in {v.name for v in docker_client.volumes.list()}
    assert (stacks_dir / response.json()["trash"] / "data" / "db.sqlite").exists()


def test_a_stack_deleted_twice_under_one_name_keeps_both_folders(
    admin_client, make_stack, stacks_dir
):
    stack_id = make_stack("twice", compose_text(web=service()))
    first = delete(admin_client, stack_id, confirm=stack_id).json()["trash"]
    (stacks_dir / stack_id).mkdir()
    (stacks_dir / stack_id / "compose.yaml").write_text(compose_text(web=service()) + "# 2\n")
    second = delete(admin_client, stack_id, confirm=stack_id).json()["trash"]
    assert first != second
    assert (stacks_dir / first / "compose.yaml").exists()
    assert (stacks_dir / second / "compose.yaml").read_text().endswith("# 2\n")


def test_a_stack_with_a_broken_compose_file_and_nothing_running_can_be_deleted(
    admin_client, make_stack, stacks_dir
):
    stack_id = make_stack("broken", "services:\n  web: [not, a, mapping]\n")
    plan = admin_client.get(f"/api/stacks/{stack_id}/delete-plan").json()
    assert plan["error"] and plan["containers"] == [] and plan["volumes"] == []
    response = delete(admin_client, stack_id, confirm=stack_id)
    assert response.status_code == 200, response.text
    assert (stacks_dir / response.json()["trash"] / "compose.yaml").exists()
