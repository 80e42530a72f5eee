"""Folder zips: chunking, deflate on several threads, Zip64, and files a non-root service
cannot read."""

import io
import os
import subprocess
import threading
import zipfile

import httpx
import pytest
from zlib_ng import zlib_ng

from stackyard.files.zipstream import CHUNK, zip_folder
from tests.support.service import ADMIN_PASSWORD, service_env, start_server


def test_the_archive_starts_at_once_then_leaves_in_1_mib_chunks(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.bin").write_bytes(os.urandom(900_000))
    chunks = list(zip_folder(folder))
    assert chunks[0].startswith(b"PK\x03\x04") and len(chunks[0]) < 200  # the root's header
    assert len(chunks) >= 5
    assert all(len(c) == CHUNK for c in chunks[1:-1]) and 0 < len(chunks[-1]) <= CHUNK


def _mixed_folder(folder):
    """Files empty, within one block, across blocks (text that refers back across a
    block's edge), and incompressible, in nested folders."""
    words = b" ".join(b"stack%d compose volume" % (i % 997) for i in range(400_000))
    contents = {
        "empty": b"",
        "small.txt": b"hello\n" * 10,
        "text/long.txt": words[: 3 * CHUNK + 12345],
        "text/exactly-a-block.txt": words[:CHUNK],
        "bin/random.bin": os.urandom(2 * CHUNK + 1),
    }
    contents |= {f"many/f{i:03d}.txt": words[i * 1000 : i * 1000 + i * 37] for i in range(150)}
    for name, data in contents.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return contents


def test_members_deflated_on_several_threads_come_back_byte_for_byte(tmp_path):
    """Blocks deflated apart and joined make each member one deflate stream that Info-ZIP's
    unzip and Python's zipfile both read back, and that compresses as one compressor
    would (the blocks share their window)."""
    folder = tmp_path / "mixed"
    contents = _mixed_folder(folder)
    archive_path = tmp_path / "mixed.zip"
    archive_path.write_bytes(b"".join(zip_folder(folder)))

    tested = subprocess.run(["unzip", "-t", "-q", str(archive_path)], capture_output=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    archive = zipfile.ZipFile(archive_path)
    assert archive.testzip() is None
    for name, data in contents.items():
        assert archive.read(f"mixed/{name}") == data, name
    long = archive.getinfo("mixed/text/long.txt")
    single = zlib_ng.compressobj(6, zlib_ng.DEFLATED, -15)
    one_stream = len(single.compress(contents["text/long.txt"]) + single.flush())
    assert long.compress_size <= one_stream * 1.01


def test_a_zip_stopped_halfway_leaves_no_thread_and_no_open_file(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(40):
        (folder / f"f{i:02d}.bin").write_bytes(os.urandom(CHUNK // 2))
    descriptors = len(os.listdir("/proc/self/fd"))
    chunks = zip_folder(folder)
    next(chunks), next(chunks)
    assert any(t.name.startswith("zip-deflate") for t in threading.enumerate())
    chunks.close()  # as when the browser goes away
    assert not any(t.name.startswith("zip-deflate") for t in threading.enumerate())
    assert len(os.listdir("/proc/self/fd")) == descriptors


def test_sparse_files_come_back_byte_for_byte_without_their_holes_read(tmp_path):
    """Holes (not read: zeros) before, between and after data, a chunk's edge inside one."""
    folder = tmp_path / "sparse"
    folder.mkdir()
    layouts = {
        "middle.img": ((0, b"a" * 3_000_000), (CHUNK * 10 + 7, b"b" * 5), (CHUNK * 20, b"")),
        "leading.img": ((CHUNK * 3 + 1, os.urandom(CHUNK + 3)),),
        "trailing.img": ((0, b"c" * 10), (CHUNK * 5 + 3, b"")),
        "only-a-hole.img": ((CHUNK * 2 + 9, b""),),
    }
    for name, pieces in layouts.items():
        with open(folder / name, "wb") as fh:
            for offset, data in pieces:
                fh.seek(offset)
                fh.write(data)
            fh.truncate(max(offset + len(data) for offset, data in pieces))
    (folder / "empty").write_bytes(b"")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(zip_folder(folder))))
    for path in folder.iterdir():
        assert archive.read(f"sparse/{path.name}") == path.read_bytes(), path.name


def test_a_file_over_4_gib_uses_zip64(admin_client, stacks_dir, tmp_path, monkeypatch):
    # Read back by the standard library's zip reader with zlib-ng as its inflate and CRC
    # engine (the same formats): inflating 4 GiB with zlib takes 12 s, with zlib-ng 0.6.
    monkeypatch.setattr(zipfile, "zlib", zlib_ng)
    monkeypatch.setattr(zipfile, "crc32", zlib_ng.crc32)
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
