"""The files API: browse, edit, upload, download, confined to the stacks folder."""

import io
import os
import socket
import zipfile

import pytest

from tests.support.service import USER_PASSWORD  # noqa: F401 - the user_client fixture's
from tests.support.waiting import wait_until


@pytest.fixture
def tree(stacks_dir):
    (stacks_dir / "web" / "conf").mkdir(parents=True)
    (stacks_dir / "web" / "compose.yaml").write_text("services: {}\n")
    (stacks_dir / "web" / ".env").write_text("A=1\n")
    (stacks_dir / "web" / ".cache").mkdir()
    (stacks_dir / "web" / "conf" / "app.ini").write_text("[app]\n")
    os.symlink("conf/app.ini", stacks_dir / "web" / "link")
    return stacks_dir


@pytest.fixture
def outside(stacks_dir):
    secret = stacks_dir.parent / "outside-secret.txt"
    secret.write_text("do not leak")
    return secret


def names(response):
    return [e["name"] for e in response.json()["entries"]]


def test_listing_hides_dotfiles_unless_asked(admin_client, tree):
    listing = admin_client.get("/api/files", params={"path": "web"})
    assert listing.status_code == 200
    assert listing.json()["path"] == "web"
    assert names(listing) == ["conf", "compose.yaml", "link"]  # folders first
    shown = admin_client.get("/api/files", params={"path": "web", "hidden": True})
    assert names(shown) == [".cache", "conf", ".env", "compose.yaml", "link"]
    entries = {e["name"]: e for e in shown.json()["entries"]}
    assert entries["compose.yaml"]["type"] == "file" and entries["compose.yaml"]["size"] == 13
    assert entries["compose.yaml"]["mode"] == "0644"
    assert entries["link"] == {**entries["link"], "type": "symlink", "target": "conf/app.ini"}
    assert entries["conf"]["type"] == "dir" and entries["conf"]["path"] == "web/conf"
    assert names(admin_client.get("/api/files")) == ["web"]


def test_edit_with_unchanged_since_check(admin_client, tree):
    opened = admin_client.get("/api/files/content", params={"path": "web/compose.yaml"}).json()
    assert opened["content"] == "services: {}\n"
    other = admin_client.get("/api/files/content", params={"path": "web/compose.yaml"}).json()
    saved = admin_client.put(
        "/api/files/content",
        json={
            "path": "web/compose.yaml",
            "content": "services:\n  a:\n    image: busybox\n",
            "version": opened["version"],
        },
    )
    assert saved.status_code == 200 and saved.json()["version"] != opened["version"]
    stale = admin_client.put(
        "/api/files/content",
        json={"path": "web/compose.yaml", "content": "lost update", "version": other["version"]},
    )
    assert stale.status_code == 409 and "changed since it was opened" in stale.json()["detail"]
    assert (tree / "web" / "compose.yaml").read_text() == "services:\n  a:\n    image: busybox\n"
    assert sorted(p.name for p in (tree / "web").iterdir()) == [
        ".cache",
        ".env",
        "compose.yaml",
        "conf",
        "link",
    ]  # no temporary file left

    new = admin_client.put(
        "/api/files/content", json={"path": "web/new.txt", "content": "hi", "version": None}
    )
    assert new.status_code == 200 and (tree / "web" / "new.txt").read_text() == "hi"
    again = admin_client.put(
        "/api/files/content", json={"path": "web/new.txt", "content": "x", "version": None}
    )
    assert again.status_code == 409 and again.json()["detail"].startswith("Already exists")


def test_binary_files_are_not_edited_as_text(admin_client, tree):
    (tree / "web" / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    response = admin_client.get("/api/files/content", params={"path": "web/blob.bin"})
    assert response.status_code == 400 and "Not a text file" in response.json()["detail"]


def test_folder_rename_and_delete(admin_client, tree):
    assert admin_client.post("/api/files/folder", json={"path": "web/data"}).status_code == 201
    assert admin_client.post("/api/files/folder", json={"path": "web/data"}).status_code == 409
    moved = admin_client.post(
        "/api/files/move", json={"source": "web/data", "destination": "web/data2"}
    )
    assert moved.status_code == 200 and (tree / "web" / "data2").is_dir()
    clash = admin_client.post(
        "/api/files/move", json={"source": "web/data2", "destination": "web/compose.yaml"}
    )
    assert clash.status_code == 409
    into_itself = admin_client.post(
        "/api/files/move", json={"source": "web", "destination": "web/conf/web"}
    )
    assert into_itself.status_code == 400
    full = admin_client.delete("/api/files", params={"path": "web/conf"})
    assert full.status_code == 409 and "not empty" in full.json()["detail"]
    assert (tree / "web" / "conf" / "app.ini").exists()
    # Deleting a link removes the link, not what it points to.
    assert admin_client.delete("/api/files", params={"path": "web/link"}).status_code == 204
    assert not os.path.lexists(tree / "web" / "link") and (tree / "web" / "conf").is_dir()
    assert (
        admin_client.delete(
            "/api/files", params={"path": "web/conf", "recursive": True}
        ).status_code
        == 204
    )
    assert not (tree / "web" / "conf").exists()
    assert admin_client.delete("/api/files", params={"path": ""}).status_code == 400


def upload(client, path, data, **params):
    return client.put(
        "/api/files/upload",
        params={"path": path, **params},
        content=data,
        headers={"Content-Type": "application/octet-stream"},
    )


def test_upload_conflict_then_overwrite(admin_client, tree):
    created = upload(admin_client, "web/new/deep/file.bin", b"one")
    assert created.status_code == 201 and created.json() == {
        "path": "web/new/deep/file.bin",
        "size": 3,
    }
    assert (tree / "web" / "new" / "deep" / "file.bin").read_bytes() == b"one"
    exists = upload(admin_client, "web/new/deep/file.bin", b"two")
    assert exists.status_code == 409 and exists.json()["detail"].startswith("Already exists")
    assert (tree / "web" / "new" / "deep" / "file.bin").read_bytes() == b"one"
    replaced = upload(admin_client, "web/new/deep/file.bin", b"two", overwrite=True)
    assert replaced.status_code == 201
    assert (tree / "web" / "new" / "deep" / "file.bin").read_bytes() == b"two"
    assert [p.name for p in (tree / "web" / "new" / "deep").iterdir()] == ["file.bin"]


def test_interrupted_upload_leaves_the_original_intact(server, tmp_path):
    stacks = tmp_path / "stacks"
    (stacks / "web").mkdir(parents=True)
    original = stacks / "web" / "data.bin"
    original.write_bytes(b"original bytes")
    import httpx

    session = httpx.Client(base_url=server.url)
    session.post(
        "/api/auth/login",
        json={"username": "admin", "password": server.env["STACKYARD_ADMIN_PASSWORD"]},
    )
    csrf = session.cookies["stackyard_csrf"]
    cookie = session.cookies["stackyard_session"]
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"PUT /api/files/upload?path=web/data.bin&overwrite=true HTTP/1.1\r\n"
            + f"Host: {host}\r\nCookie: stackyard_session={cookie}\r\n".encode()
            + f"X-CSRF-Token: {csrf}\r\nContent-Length: 10000000\r\n".encode()
            + b"Content-Type: application/octet-stream\r\n\r\n"
            + b"x" * 300_000
        )
    # The server notices the client is gone; nothing of the partial upload stays.
    wait_until(
        lambda: not any(p.name.endswith(".upload") for p in (stacks / "web").iterdir()),
        what="the partial upload removed",
    )
    assert original.read_bytes() == b"original bytes"
    assert [p.name for p in (stacks / "web").iterdir()] == ["data.bin"]


def test_download_a_file(admin_client, tree):
    response = admin_client.get("/api/files/download", params={"path": "web/compose.yaml"})
    assert response.status_code == 200
    assert response.content == b"services: {}\n"
    assert response.headers["content-type"].startswith(
        ("application/yaml", "application/x-yaml", "text/yaml")
    )
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"compose.yaml\"; filename*=UTF-8''compose.yaml"
    )
    assert response.headers["content-length"] == "13"


def test_download_a_folder_as_a_streamed_zip(admin_client, tree):
    special = tree / "web" / "special"
    special.mkdir()
    os.mkfifo(special / "fifo")  # opening it would block the download forever
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(special / "socket"))
    os.symlink("/etc/passwd", special / "abs-link")
    (tree / "web" / "empty" / "nested").mkdir(parents=True)
    payload = os.urandom(3 * 1024 * 1024 + 17)
    (tree / "web" / "big.bin").write_bytes(payload)

    response = admin_client.get("/api/files/download", params={"path": "web"})
    sock.close()
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"web.zip\"; filename*=UTF-8''web.zip"
    )
    assert "content-length" not in response.headers
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None  # every CRC checks out
    assert sorted(archive.namelist()) == sorted(
        [
            "web/",
            "web/.cache/",
            "web/.env",
            "web/big.bin",
            "web/compose.yaml",
            "web/conf/",
            "web/conf/app.ini",
            "web/empty/",
            "web/empty/nested/",
            "web/special/",
        ]
    )  # the FIFO, the socket and both symlinks are not there
    assert archive.read("web/big.bin") == payload
    assert archive.read("web/conf/app.ini") == b"[app]\n"
    info = archive.getinfo("web/big.bin")
    assert info.compress_type == zipfile.ZIP_DEFLATED and info.file_size == len(payload)


@pytest.mark.parametrize(
    "path",
    ["..", "../outside-secret.txt", "/etc/passwd", "web/../../outside-secret.txt", "web/escape"],
)
def test_traversal_is_refused_everywhere(admin_client, tree, outside, path):
    os.symlink(outside, tree / "web" / "escape") if not (tree / "web" / "escape").exists() else 0
    before = sorted(p.name for p in tree.parent.iterdir())
    inside = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    attempts = [
        admin_client.get("/api/files", params={"path": path}),
        admin_client.get("/api/files/content", params={"path": path}),
        admin_client.get("/api/files/download", params={"path": path}),
        admin_client.put(
            "/api/files/content", json={"path": path, "content": "x", "version": None}
        ),
        upload(admin_client, path, b"pwned", overwrite=True),
        admin_client.post("/api/files/folder", json={"path": f"{path}/sub"}),
        admin_client.post(
            "/api/files/move", json={"source": "web/compose.yaml", "destination": path}
        ),
    ]
    if path != "web/escape":  # deleting that link removes the link itself, inside the root
        attempts.append(admin_client.delete("/api/files", params={"path": path, "recursive": True}))
    for response in attempts:
        assert response.status_code in (400, 403, 404, 409), response.text
        assert "do not leak" not in response.text and "root:x:0:0" not in response.text
    assert outside.read_text() == "do not leak"
    assert sorted(p.name for p in tree.parent.iterdir()) == before
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == inside  # nothing made
    assert (tree / "web" / "compose.yaml").exists()


def test_files_are_for_admins(user_client, tree):
    assert user_client.get("/api/files").status_code == 403
    assert user_client.get("/api/files/download", params={"path": "web"}).status_code == 403
    assert upload(user_client, "web/x", b"x").status_code == 403
