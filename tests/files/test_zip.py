"""Folder zips: chunking, Zip64, and files a non-root service cannot read."""

import io
import os
import zipfile

import httpx
import pytest

from stackyard.files.zipstream import CHUNK, zip_folder
from tests.support.service import ADMIN_PASSWORD, service_env, start_server


def test_the_archive_leaves_in_1_mib_chunks(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.bin").write_bytes(os.urandom(900_000))
    chunks = list(zip_folder(folder))
    assert len(chunks) >= 4
    assert all(len(c) == CHUNK for c in chunks[:-1]) and 0 < len(chunks[-1]) <= CHUNK


def test_a_file_over_4_gib_uses_zip64(admin_client, stacks_dir, tmp_path):
    folder = stacks_dir / "huge"
    folder.mkdir()
    size = 4 * 1024**3 + 123_456
    with open(folder / "sparse.img", "wb") as fh:  # sparse: no disk used
        fh.truncate(size)
        fh.seek(size - 5)
        fh.write(b"tail!")
    (folder / "small.txt").write_text("after the big one")
    target = tmp_path / "huge.zip"
    with admin_client.stream("GET", "/api/files/download", params={"path": "huge"}) as response:
        assert response.status_code == 200
        with open(target, "wb") as out:
            for chunk in response.iter_bytes():
                out.write(chunk)
    with zipfile.ZipFile(target) as archive:
        info = archive.getinfo("huge/sparse.img")
        assert info.file_size == size
        assert archive.read("huge/small.txt") == b"after the big one"
        with archive.open(info) as member:  # reading to the end checks the CRC
            member.seek(size - 5)
            assert member.read() == b"tail!"


def test_unreadable_files_are_skipped_without_failing_the_download(tmp_path):
    """Root reads every file: this service runs without that privilege."""
    stacks = tmp_path / "stacks"
    folder = stacks / "app"
    folder.mkdir(parents=True)
    (folder / "readable.txt").write_text("ok")
    (folder / "locked.txt").write_text("secret")
    (folder / "locked-dir").mkdir()
    (folder / "locked-dir" / "inner.txt").write_text("inner")
    os.chmod(folder / "locked.txt", 0o000)
    os.chmod(folder / "locked-dir", 0o000)
    server = start_server(tmp_path, env=service_env(tmp_path), honour_permissions=True)
    try:
        client = httpx.Client(base_url=server.url)
        client.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})
        response = client.get("/api/files/download", params={"path": "app"})
        assert response.status_code == 200
        archive = zipfile.ZipFile(io.BytesIO(response.content))
        assert archive.testzip() is None
        assert "app/readable.txt" in archive.namelist()
        assert "app/locked.txt" not in archive.namelist()
        assert "app/locked-dir/inner.txt" not in archive.namelist()
        assert archive.read("app/readable.txt") == b"ok"
    finally:
        server.stop()
    assert "skipped unreadable" in server.log()


@pytest.mark.parametrize("level", [0, 9])
def test_compression_level_setting(tmp_path, level):
    folder = tmp_path / "lvl"
    folder.mkdir()
    (folder / "zeros").write_bytes(b"\0" * 1_000_000)
    archive = zipfile.ZipFile(io.BytesIO(b"".join(zip_folder(folder, level))))
    info = archive.getinfo("lvl/zeros")
    assert (info.compress_size > 900_000) is (level == 0)
    assert archive.read("lvl/zeros") == b"\0" * 1_000_000
