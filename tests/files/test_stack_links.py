"""A stack's compose file, .env and .secrets are confined to the stack folder, like every
path under the stacks folder: a symlink inside it is followed, one out of it refused.

(Here rather than in tests/stacks: it is the files capability's confinement, applied to
the stack routes.)"""

import os

import pytest

from stackyard.fs import beneath, syscalls
from tests.support.stacks import compose_text, service

pytestmark = pytest.mark.docker


@pytest.fixture(autouse=True, params=["openat2", "walk"])
def resolver(request):
    """On the kernel's openat2 and on the fallback walk alike."""
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param


HOST_FILE = "root:x:0:0:root:/root:/bin/bash\nLEAKED=yes\n"


@pytest.fixture
def outside(tmp_path):
    secret = tmp_path / "host-file"
    secret.write_text(HOST_FILE)
    return secret


def unchanged(path):
    return path.read_text() == HOST_FILE


def test_an_env_linked_out_of_the_stack_folder_is_refused(
    admin_client, make_stack, stacks_dir, outside
):
    stack_id = make_stack("linked-env", compose_text(web=service()))
    os.symlink(outside, stacks_dir / stack_id / ".env")

    shown = admin_client.get(f"/api/stacks/{stack_id}")
    assert shown.status_code == 403, shown.text
    assert ".env" in shown.json()["detail"] and "outside the stack folder" in shown.json()["detail"]
    assert "root:x" not in shown.text and "LEAKED" not in shown.text

    saved = admin_client.put(f"/api/stacks/{stack_id}/env", json={"content": "A=1\n"})
    assert saved.status_code == 403, saved.text
    assert "root:x" not in saved.text and "LEAKED" not in saved.text
    assert unchanged(outside) and os.path.islink(stacks_dir / stack_id / ".env")
    assert sorted(os.listdir(stacks_dir / stack_id)) == [".env", "compose.yaml"]


def test_secrets_linked_out_of_the_stack_folder_are_refused(
    admin_client, make_stack, stacks_dir, outside
):
    stack_id = make_stack("linked-secrets", compose_text(web=service()))
    os.symlink(os.path.relpath(outside, stacks_dir / stack_id), stacks_dir / stack_id / ".secrets")

    read = admin_client.get(f"/api/stacks/{stack_id}/secrets")
    assert read.status_code == 403, read.text
    assert ".secrets" in read.json()["detail"]
    assert "root:x" not in read.text and "LEAKED" not in read.text

    saved = admin_client.put(f"/api/stacks/{stack_id}/secrets", json={"content": "S=1\n"})
    assert saved.status_code == 403, saved.text
    assert unchanged(outside) and os.path.islink(stacks_dir / stack_id / ".secrets")

    shown = admin_client.get(f"/api/stacks/{stack_id}")  # the stack itself still shows
    assert shown.status_code == 200 and "LEAKED" not in shown.text


def test_links_inside_the_stack_folder_still_work(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("inner-links", compose_text(web=service()))
    folder = stacks_dir / stack_id
    (folder / "config").mkdir()
    (folder / "config" / "real.env").write_text("GREETING=hi\n")
    os.symlink("config/real.env", folder / ".env")
    (folder / "config" / "secrets").write_text("TOKEN=s3cret\n")
    os.symlink("config/../config/secrets", folder / ".secrets")

    shown = admin_client.get(f"/api/stacks/{stack_id}")
    assert shown.status_code == 200, shown.text
    assert shown.json()["env"] == "GREETING=hi\n" and shown.json()["has_secrets"] is True
    assert admin_client.get(f"/api/stacks/{stack_id}/secrets").json()["content"] == (
        "TOKEN=s3cret\n"
    )

    saved = admin_client.put(f"/api/stacks/{stack_id}/env", json={"content": "GREETING=yo\n"})
    assert saved.status_code == 200, saved.text
    assert (folder / "config" / "real.env").read_text() == "GREETING=yo\n"
    assert os.readlink(folder / ".env") == "config/real.env"  # the link stays a link
    stored = admin_client.put(f"/api/stacks/{stack_id}/secrets", json={"content": "TOKEN=new\n"})
    assert stored.status_code in (200, 204), stored.text
    assert (folder / "config" / "secrets").read_text() == "TOKEN=new\n"
    assert os.path.islink(folder / ".secrets")
    assert sorted(os.listdir(folder)) == [".env", ".secrets", "compose.yaml", "config"]


def test_a_compose_file_linked_out_is_refused(admin_client, make_stack, stacks_dir, tmp_path):
    stack_id = make_stack("linked-compose", compose_text(web=service()))
    real = tmp_path / "elsewhere.yaml"
    real.write_text(compose_text(web=service()) + "# LEAKED\n")
    os.unlink(stacks_dir / stack_id / "compose.yaml")
    os.symlink(real, stacks_dir / stack_id / "compose.yaml")
    shown = admin_client.get(f"/api/stacks/{stack_id}")
    assert shown.status_code == 403 and "compose.yaml" in shown.json()["detail"]
    assert "LEAKED" not in shown.text
