"""Every change made through the files API is in the audit log: who, what, which path."""

import os


def audit(admin_client) -> list[tuple[str, str, str, str]]:
    items = admin_client.get("/api/audit", params={"limit": 100}).json()["items"]
    return [
        (e["actor"], e["action"], e["target"], e["outcome"])
        for e in reversed(items)
        if e["action"].startswith("file.")
    ]


def test_changes_are_audited(admin_client, stacks_dir):
    (stacks_dir / "web").mkdir()
    assert admin_client.post("/api/files/folder", json={"path": "web/conf"}).status_code == 201
    saved = admin_client.put(
        "/api/files/content", json={"path": "web/.secrets", "content": "K=v\n", "version": None}
    )
    assert saved.status_code == 200, saved.text
    uploaded = admin_client.put(
        "/api/files/upload", params={"path": "web/conf/a.bin"}, content=b"12345"
    )
    assert uploaded.status_code == 201, uploaded.text
    again = admin_client.put("/api/files/upload", params={"path": "web/conf/a.bin"}, content=b"x")
    assert again.status_code == 409
    moved = admin_client.post(
        "/api/files/move", json={"source": "web/conf/a.bin", "destination": "web/conf/b.bin"}
    )
    assert moved.status_code == 200, moved.text
    deleted = admin_client.delete("/api/files", params={"path": "web/conf", "recursive": True})
    assert deleted.status_code == 204

    assert audit(admin_client) == [
        ("admin", "file.mkdir", "web/conf", "success"),
        ("admin", "file.save", "web/.secrets", "success"),
        ("admin", "file.upload", "web/conf/a.bin", "success"),
        ("admin", "file.upload", "web/conf/a.bin", "failure"),
        ("admin", "file.move", "web/conf/a.bin -> web/conf/b.bin", "success"),
        ("admin", "file.delete", "web/conf", "success"),
    ]
    items = admin_client.get("/api/audit", params={"limit": 100}).json()["items"]
    upload = next(e for e in items if e["action"] == "file.upload" and e["outcome"] == "success")
    assert upload["detail"] == "5 bytes"
    failed = next(e for e in items if e["action"] == "file.upload" and e["outcome"] == "failure")
    assert "Already exists" in failed["detail"]
    # Never the content of a file.
    assert "K=v" not in str(items)
    assert not os.path.exists(stacks_dir / "web" / "conf")


def test_odd_paths_are_audited_without_failing(admin_client, stacks_dir):
    long = "a/" * 200 + "x"
    refused = admin_client.delete("/api/files", params={"path": long})
    assert refused.status_code == 404
    nul = admin_client.post("/api/files/folder", json={"path": "bad\x00name"})
    assert nul.status_code == 400
    entries = audit(admin_client)
    assert entries[0][1:] == ("file.delete", entries[0][2], "failure")
    assert len(entries[0][2]) <= 255 and entries[0][2].endswith("…")
    assert entries[1] == ("admin", "file.mkdir", "bad\\0name", "failure")


def test_reads_are_not_audited(admin_client, stacks_dir):
    (stacks_dir / "a.txt").write_text("hi")
    admin_client.get("/api/files")
    admin_client.get("/api/files/content", params={"path": "a.txt"})
    admin_client.get("/api/files/download", params={"path": "a.txt"})
    admin_client.post("/api/files/exists", json={"paths": ["a.txt"]})
    assert audit(admin_client) == []
