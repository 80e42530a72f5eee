"""A stack's compose file or .env saved in the file browser is checked as the stack page
checks it: refused with compose's error, the file stays as it was."""

import os

import pytest

from tests.support.stacks import compose_text, service

pytestmark = pytest.mark.docker

GOOD = compose_text(web=service())
BAD = "services:\n  web:\n    restart: always\n"  # neither an image nor a build


def read(admin_client, path):
    return admin_client.get("/api/files/content", params={"path": path}).json()


def save(admin_client, path, content, version):
    return admin_client.put(
        "/api/files/content", json={"path": path, "content": content, "version": version}
    )


def test_an_invalid_compose_file_is_refused(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("checked", GOOD)
    path = f"{stack_id}/compose.yaml"
    opened = read(admin_client, path)

    refused = save(admin_client, path, BAD, opened["version"])
    assert refused.status_code == 400, refused.text
    assert "image" in refused.json()["detail"] or "build" in refused.json()["detail"]
    assert "stackyard-check" not in refused.json()["detail"]
    assert (stacks_dir / stack_id / "compose.yaml").read_text() == GOOD
    assert sorted(os.listdir(stacks_dir / stack_id)) == ["compose.yaml"]  # no scratch file

    broken_yaml = save(admin_client, path, "services: [\n", opened["version"])
    assert broken_yaml.status_code == 400

    fine = save(admin_client, path, GOOD + "# edited\n", opened["version"])
    assert fine.status_code == 200, fine.text
    assert (stacks_dir / stack_id / "compose.yaml").read_text() == GOOD + "# edited\n"
    assert sorted(os.listdir(stacks_dir / stack_id)) == ["compose.yaml"]


def test_an_env_that_breaks_the_compose_file_is_refused(admin_client, make_stack, stacks_dir):
    stack_id = make_stack(
        "env-checked",
        compose_text(web=service(image="${IMAGE:?IMAGE must be set}")),
        env="IMAGE=busybox\n",
    )
    path = f"{stack_id}/.env"
    opened = read(admin_client, path)
    refused = save(admin_client, path, "OTHER=1\n", opened["version"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"].startswith("Invalid .env file: ")
    assert "IMAGE must be set" in refused.json()["detail"]
    assert (stacks_dir / stack_id / ".env").read_text() == "IMAGE=busybox\n"

    fine = save(admin_client, path, "IMAGE=busybox:1\n", opened["version"])
    assert fine.status_code == 200, fine.text


def test_a_new_compose_file_in_a_stack_is_checked_too(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("new-name", GOOD)
    refused = save(admin_client, f"{stack_id}/docker-compose.yml", BAD, None)
    assert refused.status_code == 400
    assert not (stacks_dir / stack_id / "docker-compose.yml").exists()


def test_an_override_file_is_checked_merged_onto_the_compose_file(
    admin_client, make_stack, stacks_dir
):
    stack_id = make_stack("override", GOOD)
    path = f"{stack_id}/compose.override.yaml"
    refused = save(admin_client, path, "services:\n  web:\n    ports: [[nonsense]]\n", None)
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"].startswith("Invalid compose file: ")
    assert "stackyard-check" not in refused.json()["detail"]
    assert not (stacks_dir / stack_id / "compose.override.yaml").exists()
    # Adding to a service of the main file is fine: the override is read merged onto it.
    fine = save(admin_client, path, "services:\n  web:\n    environment: {A: '1'}\n", None)
    assert fine.status_code == 200, fine.text
    assert sorted(os.listdir(stacks_dir / stack_id)) == ["compose.override.yaml", "compose.yaml"]


def test_other_files_are_not_checked(admin_client, stacks_dir):
    (stacks_dir / "notes" / "deeper").mkdir(parents=True)  # no compose file: no stack
    (stacks_dir / "Not A Slug").mkdir()
    (stacks_dir / "Not A Slug" / "docker-compose.yml").write_text(GOOD)
    assert save(admin_client, "notes/.env", "not checked", None).status_code == 200
    assert save(admin_client, "notes/deeper/compose.yaml", BAD, None).status_code == 200
    assert save(admin_client, "compose.yaml", BAD, None).status_code == 200
    assert save(admin_client, "Not A Slug/compose.yaml", BAD, None).status_code == 200
    # The first compose file makes the folder a stack, not before.
    assert save(admin_client, "notes/compose.yaml", BAD, None).status_code == 200
    os.symlink("notes", stacks_dir / "linked")  # a link to a stack is no stack
    assert save(admin_client, "linked/docker-compose.yml", BAD, None).status_code == 200


def test_a_stale_version_is_a_conflict_before_any_check(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("stale", GOOD)
    answer = save(admin_client, f"{stack_id}/compose.yaml", BAD, "0-0")
    assert answer.status_code == 409
