"""A stack's compose project reads no file outside the stack's folder: refused on save,
shown as the stack's error in the list, refused for actions, and the outside contents
never reach a response."""

import json
import os
import uuid
from pathlib import Path

import pytest

from stackyard.compose.probe import compose_tool
from stackyard.compose.project import run_config
from stackyard.compose.references import check_references
from stackyard.errors import Invalid
from tests.support.stacks import BUSYBOX, compose_text, service, wait_run

pytestmark = pytest.mark.docker

PASSWD = "root:x:0:0"


@pytest.fixture
def token() -> str:
    return f"leaked{uuid.uuid4().hex}"


@pytest.fixture
def other(stacks_dir: Path, token: str) -> Path:
    """Another stack, with a secret and a compose file of its own."""
    folder = stacks_dir / "other"
    folder.mkdir()
    (folder / "compose.yaml").write_text(compose_text(web=service()))
    (folder / ".secrets").write_text(f"LEAKED={token}\n")
    (folder / "base.yaml").write_text(
        f"services:\n  base:\n    image: {BUSYBOX}\n    labels: [token={token}]\n"
    )
    return folder


#: (id, compose text, the reference the refusal names). Each reads a file outside.
OUTSIDE = [
    ("include-host-file", "include: /etc/passwd\n", "include '/etc/passwd'"),
    ("include-list", "include:\n  - ../other/.secrets\n", "include '../other/.secrets'"),
    (
        "include-env-file",
        "include:\n  - path: inner.yaml\n    env_file: ../other/.secrets\n",
        "include env_file '../other/.secrets'",
    ),
    (
        "include-env-file-list",
        "include:\n  - path: [inner.yaml]\n    env_file: [.env, /etc/passwd]\n",
        "include env_file '/etc/passwd'",
    ),
    (
        "include-project-directory",
        "include:\n  - path: inner.yaml\n    project_directory: ../other\n",
        "include project_directory '../other'",
    ),
    (
        "extends-file",
        "services:\n  web:\n    extends: {file: ../other/base.yaml, service: base}\n",
        "extends file '../other/base.yaml'",
    ),
    (
        "env-file",
        f"services:\n  web:\n    image: {BUSYBOX}\n    env_file: ../other/.secrets\n",
        "env_file '../other/.secrets'",
    ),
    (
        "env-file-long",
        f"services:\n  web:\n    image: {BUSYBOX}\n    env_file:\n      - path: /etc/passwd\n",
        "env_file '/etc/passwd'",
    ),
    (
        "label-file",
        f"services:\n  web:\n    image: {BUSYBOX}\n    label_file: [../other/.secrets]\n",
        "label_file '../other/.secrets'",
    ),
    (
        "variable",
        f"services:\n  web:\n    image: {BUSYBOX}\n    env_file: ${{HOME}}/.docker/config.json\n",
        "env_file '${HOME}/.docker/config.json'",
    ),
    ("nested-include", "include: [nested.yaml]\n", "env_file '../other/.secrets' in nested.yaml"),
]
INNER = f"services:\n  inner:\n    image: {BUSYBOX}${{LEAKED}}\n    labels: ['a=${{LEAKED}}']\n"
NESTED = f"services:\n  n:\n    image: {BUSYBOX}\n    env_file: ../other/.secrets\n"


def stack_folder(stacks_dir: Path, name: str, compose: str) -> Path:
    folder = stacks_dir / name
    folder.mkdir()
    (folder / "compose.yaml").write_text(compose)
    (folder / "inner.yaml").write_text(INNER)
    (folder / "nested.yaml").write_text(NESTED)
    return folder


@pytest.mark.parametrize(("name", "compose", "named"), OUTSIDE, ids=[c[0] for c in OUTSIDE])
def test_outside_references_are_refused_before_compose_runs(
    stacks_dir, other, token, name, compose, named
):
    folder = stack_folder(stacks_dir, name, compose)
    with pytest.raises(Invalid) as caught:
        run_config(compose_tool(), folder)
    detail = caught.value.detail
    assert named in detail and "outside the stack folder" in detail
    assert token not in detail and PASSWD not in detail


def test_symlinked_compose_file_and_env_leaving_the_folder_are_refused(stacks_dir, other, token):
    linked = stacks_dir / "linked"
    linked.mkdir()
    (linked / "compose.yaml").symlink_to(other / "base.yaml")
    with pytest.raises(Invalid, match=r"compose\.yaml is a link that leaves the stack folder"):
        run_config(compose_tool(), linked)

    (linked / "compose.yaml").unlink()
    (linked / "compose.yaml").write_text(compose_text(web=service(image=f"{BUSYBOX}${{LEAKED}}")))
    (linked / ".env").symlink_to(other / ".secrets")
    with pytest.raises(Invalid, match=r"\.env is a link that leaves the stack folder"):
        run_config(compose_tool(), linked)
    with pytest.raises(Invalid, match=r"\.env is a link"):
        run_config(compose_tool(), linked, [linked / "compose.yaml"], linked / ".env")


def test_compose_file_set_in_env_is_checked(stacks_dir, other):
    folder = stack_folder(stacks_dir, "cf", compose_text(web=service()))
    (folder / ".env").write_text("COMPOSE_FILE=compose.yaml:../other/base.yaml\n")
    with pytest.raises(Invalid, match=r"COMPOSE_FILE '\.\./other/base\.yaml'"):
        run_config(compose_tool(), folder)


def test_references_inside_the_folder_are_fine(stacks_dir):
    folder = stacks_dir / "inside"
    (folder / "sub").mkdir(parents=True)
    (folder / ".secrets").write_text("PASSWORD=own-secret\n")
    (folder / ".env").write_text("SUB=sub\n")
    (folder / "sub" / "common.yaml").write_text(
        f"services:\n  common:\n    image: {BUSYBOX}\n    env_file: common.env\n"
    )
    (folder / "sub" / "common.env").write_text("A=1\n")
    (folder / "sub" / "inc.yaml").write_text(f"services:\n  inc:\n    image: {BUSYBOX}\n")
    (folder / "link.yaml").symlink_to(folder / "sub" / "inc.yaml")  # a link that stays inside
    (folder / "compose.yaml").write_text(
        "include:\n  - ${SUB}/inc.yaml\n"
        "services:\n"
        "  web:\n"
        "    extends: {file: sub/common.yaml, service: common}\n"
        "    env_file: [.secrets, {path: missing.env, required: false}]\n"
    )
    config = run_config(compose_tool(), folder)
    assert set(config["services"]) == {"web", "inc"}
    assert config["services"]["web"]["environment"]["PASSWORD"] == "own-secret"
    check_references(folder, [folder / "link.yaml"])


def test_remote_includes_are_refused(tmp_path):
    (tmp_path / "compose.yaml").write_text("include: oci://registry.example/compose:1\n")
    with pytest.raises(Invalid, match="is remote"):
        check_references(tmp_path)


# -- through the API ----------------------------------------------------------------
def test_saving_an_outside_reference_is_refused(admin_client, make_stack, stacks_dir, other, token):
    stack_id = make_stack("save", compose_text(web=service()))
    folder = stacks_dir / stack_id
    (folder / "inner.yaml").write_text(INNER)
    (folder / "nested.yaml").write_text(NESTED)
    before = (folder / "compose.yaml").read_text()
    for _, compose, named in OUTSIDE:
        refused = admin_client.put(f"/api/stacks/{stack_id}/compose", json={"content": compose})
        assert refused.status_code == 400, refused.text
        assert named in refused.json()["detail"]
        assert ".stackyard-check" not in refused.json()["detail"]
        assert token not in refused.text and PASSWD not in refused.text
        assert (folder / "compose.yaml").read_text() == before

    created = admin_client.post(
        "/api/stacks", json={"name": "new one", "compose": "include: [../other/compose.yaml]\n"}
    )
    assert created.status_code == 400 and "outside the stack folder" in created.json()["detail"]
    assert not (stacks_dir / "new-one").exists()


def test_hand_written_outside_references_show_as_the_stack_error(
    admin_client, stacks_dir, other, token, docker_cleanup
):
    names = []
    for name, compose, _ in OUTSIDE:
        stack_folder(stacks_dir, name, compose)
        names.append(name)
    linked = stacks_dir / "linked-env"
    linked.mkdir()
    (linked / "compose.yaml").write_text(compose_text(web=service(image=f"{BUSYBOX}${{LEAKED}}")))
    (linked / ".env").symlink_to(other / ".secrets")
    names.append("linked-env")
    (stacks_dir / "linked-compose").mkdir()
    (stacks_dir / "linked-compose" / "compose.yaml").symlink_to("/etc/passwd")
    names.append("linked-compose")
    for name in names:
        docker_cleanup.compose_project(name)

    listing = admin_client.get("/api/stacks")
    assert listing.status_code == 200
    assert token not in listing.text and PASSWD not in listing.text
    stacks = {s["id"]: s for s in listing.json()}
    for name in names:
        assert stacks[name]["state"] == "invalid", name
        assert "leaves the stack folder" in stacks[name]["error"] or (
            "outside the stack folder" in stacks[name]["error"]
        ), stacks[name]["error"]

    for name in ("include-env-file", "linked-env", "env-file"):
        detail = admin_client.get(f"/api/stacks/{name}")
        # (the store may refuse to read a .env that is a link out of the folder)
        assert detail.status_code in (200, 403) and token not in detail.text, detail.text
        started = admin_client.post(f"/api/stacks/{name}/actions/start")
        assert started.status_code == 202, started.text
        run = wait_run(admin_client, name)
        assert run["status"] == "failed"
        assert "stack folder" in json.dumps(run)
        assert token not in json.dumps(run)

    checked = admin_client.post("/api/stacks/updates/check")
    assert checked.status_code == 200 and token not in checked.text
    assert os.path.exists(other / ".secrets")  # nothing was touched
