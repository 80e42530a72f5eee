"""Link loops, over-long names, trees deeper than PATH_MAX, download file names: clear
4xx answers that change nothing, or the whole job done."""

import asyncio
import io
import logging
import os
import re
import zipfile
from urllib.parse import unquote

import pytest

from stackyard.files import upload, zipstream
from tests.fs.trees import deep_tree, remove_tree


def upload_request(client, path, data, **params):
    return client.put(
        "/api/files/upload",
        params={"path": path, **params},
        content=data,
        headers={"Content-Type": "application/octet-stream"},
    )


def every_route(client, path):
    """Each files route once on `path` (or a path through it)."""
    return {
        "list": client.get("/api/files", params={"path": path}),
        "read": client.get("/api/files/content", params={"path": path}),
        "download": client.get("/api/files/download", params={"path": path}),
        "save": client.put(
            "/api/files/content", json={"path": f"{path}/new.txt", "content": "x", "version": None}
        ),
        "save-over": client.put(
            "/api/files/content", json={"path": path, "content": "x", "version": "1-1"}
        ),
        "upload": upload_request(client, f"{path}/up.bin", b"x"),
        "mkdir": client.post("/api/files/folder", json={"path": f"{path}/sub"}),
        "delete": client.delete("/api/files", params={"path": f"{path}/x", "recursive": True}),
        "move-from": client.post(
            "/api/files/move", json={"source": f"{path}/x", "destination": "web/y"}
        ),
        "move-to": client.post(
            "/api/files/move", json={"source": "web/file.txt", "destination": f"{path}/y"}
        ),
    }


def tree_listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def web(stacks_dir):
    (stacks_dir / "web").mkdir()
    (stacks_dir / "web" / "file.txt").write_text("keep")
    os.symlink("loop-b", stacks_dir / "web" / "loop-a")
    os.symlink("loop-a", stacks_dir / "web" / "loop-b")
    return stacks_dir / "web"


def test_a_symlink_loop_is_a_400_everywhere(admin_client, stacks_dir, web):
    before = tree_listing(stacks_dir)
    for route, answer in every_route(admin_client, "web/loop-a").items():
        assert answer.status_code == 400, (route, answer.text)
        assert "symbolic links" in answer.json()["detail"], route
        assert str(stacks_dir) not in answer.text
    # The loop's own entries can still be named: deleted or renamed as links.
    assert tree_listing(stacks_dir) == before
    moved = admin_client.post(
        "/api/files/move", json={"source": "web/loop-a", "destination": "web/loop-c"}
    )
    assert moved.status_code == 200
    assert admin_client.delete("/api/files", params={"path": "web/loop-c"}).status_code == 204


@pytest.mark.parametrize("where", ["web/{}", "web/{}/deeper"])
def test_a_name_over_255_bytes_is_a_400_everywhere(admin_client, stacks_dir, web, where):
    path = where.format("n" * 300)
    before = tree_listing(stacks_dir)
    answers = every_route(admin_client, path)
    answers["move-to-long"] = admin_client.post(
        "/api/files/move", json={"source": "web/file.txt", "destination": path}
    )
    answers["upload-long"] = upload_request(admin_client, path, b"x")
    for route, answer in answers.items():
        assert answer.status_code == 400, (route, answer.text)
        assert "too long" in answer.json()["detail"], route
    assert tree_listing(stacks_dir) == before


def test_a_2500_level_tree_is_deleted_whole(admin_client, stacks_dir, web):
    deep_tree(web, "deep", 2500)
    try:
        refused = admin_client.delete("/api/files", params={"path": "web/deep"})
        assert refused.status_code == 409 and "not empty" in refused.json()["detail"]
        answer = admin_client.delete("/api/files", params={"path": "web/deep", "recursive": True})
        assert answer.status_code == 204, answer.text
        assert not os.path.lexists(web / "deep")
        assert sorted(os.listdir(web)) == ["file.txt", "loop-a", "loop-b"]
    finally:
        remove_tree(web, "deep")


def test_a_600_level_upload_is_refused_and_leaves_nothing(admin_client, stacks_dir, web):
    path = "/".join(f"level{i:03d}" for i in range(600)) + "/file.bin"  # 5,000 bytes
    before = tree_listing(stacks_dir)
    answer = upload_request(admin_client, f"web/{path}", b"data")
    assert answer.status_code == 400 and "too long" in answer.json()["detail"]
    assert tree_listing(stacks_dir) == before


def test_a_failed_upload_removes_the_folders_it_created(stacks_dir, web):
    async def broken_body():
        yield b"some bytes"
        raise ConnectionResetError("client gone")

    before = tree_listing(stacks_dir)
    deep = "/".join(["d"] * 300)  # 300 new folders: within the limits
    with pytest.raises(ConnectionResetError):
        asyncio.run(upload.receive(stacks_dir, f"web/new/{deep}/x.bin", broken_body(), False))
    assert tree_listing(stacks_dir) == before
    (web / "kept").mkdir()
    with pytest.raises(ConnectionResetError):
        asyncio.run(upload.receive(stacks_dir, "web/kept/a/b/x.bin", broken_body(), False))
    assert tree_listing(stacks_dir) == sorted([*before, "web/kept"])  # only what it made went


def test_a_2500_level_zip_holds_the_deepest_file(admin_client, stacks_dir, web):
    deep_tree(web, "deep", 2500)
    try:
        answer = admin_client.get("/api/files/download", params={"path": "web/deep"})
        assert answer.status_code == 200
        archive = zipfile.ZipFile(io.BytesIO(answer.content))
        deepest = "deep/" + "d/" * 2499 + "leaf.txt"
        assert archive.read(deepest) == b"deepest"
        assert len([n for n in archive.namelist() if n.endswith("/f")]) == 2499
    finally:
        remove_tree(web, "deep")


def test_what_is_too_deep_for_the_budget_is_skipped_with_one_line_each(
    monkeypatch, caplog, tmp_path
):
    deep_tree(tmp_path, "deep", 300)
    (tmp_path / "deep" / "wide").mkdir()
    monkeypatch.setattr(zipstream, "MAX_DEPTH", 100)
    try:
        with caplog.at_level(logging.WARNING, logger=zipstream.__name__):
            names = zipfile.ZipFile(
                io.BytesIO(b"".join(zipstream.zip_folder(tmp_path / "deep")))
            ).namelist()
        skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
        assert len(skipped) == 1 and "more than 100 folders deep" in skipped[0]
        assert "deep/" + "d/" * 100 + "f" in names  # everything above the budget is there
        assert "deep/wide/" in names
        assert not any(n.startswith("deep/" + "d/" * 101) for n in names)
    finally:
        remove_tree(tmp_path, "deep")


PARAM = re.compile(r';\s*([^=\s;]+)=("(?:[^"\\]|\\.)*"|[^;]*)')


def parse_disposition(header: str) -> tuple[list[str], str]:
    """(the parameter names as sent, the file name of `filename*` as RFC 8187 reads it)."""
    kind = header.split(";", 1)[0]
    params = [(m.group(1), m.group(2)) for m in PARAM.finditer(header[len(kind) :])]
    exact = dict(params)["filename*"]
    charset, _language, encoded = exact.split("'", 2)
    assert charset == "UTF-8"
    return [kind] + [name for name, _value in params], unquote(encoded, errors="strict")


@pytest.mark.parametrize(
    "name", ['x"; filename="evil.exe', "line\nbreak", "日本", "semi;colon%41 'q'", "plain"]
)
def test_download_names_are_quoted_and_encoded(admin_client, stacks_dir, web, name):
    (web / name).mkdir()
    (web / name / "inner.txt").write_text("inner")
    (web / f"{name}.txt").write_text("file")
    for path, expected in ((f"web/{name}", f"{name}.zip"), (f"web/{name}.txt", f"{name}.txt")):
        answer = admin_client.get("/api/files/download", params={"path": path})
        assert answer.status_code == 200, answer.text
        header = answer.headers["content-disposition"]
        assert header.isascii() and "\n" not in header and "\r" not in header
        keys, filename = parse_disposition(header)
        assert keys == ["attachment", "filename", "filename*"]
        assert filename == expected
        fallback = header.split('filename="', 1)[1].split('"', 1)[0]
        assert fallback.isascii() and '"' not in fallback and "\\" not in fallback
    zipped = admin_client.get("/api/files/download", params={"path": f"web/{name}"})
    assert zipfile.ZipFile(io.BytesIO(zipped.content)).read(f"{name}/inner.txt") == b"inner"
