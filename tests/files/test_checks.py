"""What the files API tells before a change: which upload targets exist (asked once
before a folder upload replaces files), and where each symlink leads."""

import os

import pytest

from stackyard.fs import beneath, syscalls


@pytest.fixture(params=["openat2", "walk"])
def resolver(request):
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param


@pytest.fixture
def tree(stacks_dir):
    (stacks_dir / "web" / "conf").mkdir(parents=True)
    (stacks_dir / "web" / "compose.yaml").write_text("services: {}\n")
    (stacks_dir / "web" / "conf" / "app.ini").write_text("[app]\n")
    (stacks_dir / "shared").mkdir()
    outside = stacks_dir.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not leak")
    os.symlink("conf/app.ini", stacks_dir / "web" / "to-file")
    os.symlink("../shared", stacks_dir / "web" / "to-dir")
    os.symlink("../../outside/secret.txt", stacks_dir / "web" / "climbs-out")
    os.symlink(str(outside), stacks_dir / "web" / "absolute")
    os.symlink("missing", stacks_dir / "web" / "dangling")
    os.symlink("loop", stacks_dir / "web" / "loop")
    os.mkfifo(stacks_dir / "shared" / "fifo")
    os.symlink("../shared/fifo", stacks_dir / "web" / "to-fifo")
    return stacks_dir


def test_entries_tell_where_links_lead(admin_client, tree, resolver):
    listing = admin_client.get("/api/files", params={"path": "web"})
    assert listing.status_code == 200, listing.text
    links = {e["name"]: e["link"] for e in listing.json()["entries"]}
    assert links == {
        "conf": None,
        "absolute": "outside",
        "climbs-out": "outside",
        "compose.yaml": None,
        "dangling": "broken",
        "loop": "broken",
        "to-dir": "dir",
        "to-fifo": "other",
        "to-file": "file",
    }


def test_a_link_into_a_linked_folder_resolves_as_the_operations_do(admin_client, tree, resolver):
    # web/to-dir -> ../shared; shared/up -> ../web: inside, through the link.
    os.symlink("../web", tree / "shared" / "up")
    os.symlink("../..", tree / "shared" / "too-far")
    listing = admin_client.get("/api/files", params={"path": "web/to-dir"})
    links = {e["name"]: e["link"] for e in listing.json()["entries"]}
    assert links["up"] == "dir" and links["too-far"] == "outside"
    # What the entry says is what a download does.
    followed = admin_client.get("/api/files/download", params={"path": "web/to-file"})
    assert followed.status_code == 200
    refused = admin_client.get("/api/files/download", params={"path": "web/climbs-out"})
    assert refused.status_code == 403 and "do not leak" not in refused.text


def test_exists_returns_the_paths_an_upload_would_replace(admin_client, tree, resolver):
    asked = [
        "web/compose.yaml",
        "web/new.txt",
        "web/conf/app.ini",
        "web/missing/deeper/x.txt",
        "web/compose.yaml/under-a-file",
        "web/dangling",
        "web/climbs-out",
        "web/absolute/secret.txt",  # its folder leads out: nothing there for us
        "./web//conf/app.ini",
    ]
    answer = admin_client.post("/api/files/exists", json={"paths": asked})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "existing": ["web/compose.yaml", "web/conf/app.ini", "web/dangling", "web/climbs-out"]
    }
    assert admin_client.post("/api/files/exists", json={"paths": []}).json() == {"existing": []}


@pytest.mark.parametrize(
    ("path", "status"), [("../outside/secret.txt", 403), ("/etc/passwd", 403), ("a\\b", 400)]
)
def test_exists_confines_every_path(admin_client, tree, path, status):
    answer = admin_client.post("/api/files/exists", json={"paths": ["web/compose.yaml", path]})
    assert answer.status_code == status, answer.text
    assert "existing" not in answer.json()


def test_exists_takes_a_bounded_number_of_paths(admin_client, tree):
    answer = admin_client.post("/api/files/exists", json={"paths": ["x"] * 5001})
    assert answer.status_code == 422


def test_exists_is_for_admins(user_client, client, tree):
    assert user_client.post("/api/files/exists", json={"paths": ["web"]}).status_code == 403
    assert client.post("/api/files/exists", json={"paths": ["web"]}).status_code == 401
