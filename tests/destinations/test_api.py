"""Destinations through the API: secrets write-only and sealed, the host key pinned by
the first test, archives pushed, listed, pulled back and restored, deleted; admin only,
audited."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest
from tests.support.service import embedded_database_url
from tests.support.stacks import compose_text, service, wait_run
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

database_url = embedded_database_url


@pytest.fixture
def archive(admin_client, make_stack) -> tuple[str, str]:
    """A stack and a real archive of it on this host: (stack, archive name)."""
    stack = make_stack("dest", compose_text(app=service()))
    assert admin_client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    (made,) = admin_client.get("/api/backups").json()
    return stack, made["name"]


def sftp_body(server, folder: str, **secrets: str) -> dict:
    return {
        "name": f"box {folder}",
        "settings": {
            "type": "sftp",
            "host": server.host,
            "port": server.port,
            "username": server.user,
            "folder": folder,
        },
        "secrets": secrets or {"password": server.password},
    }


def test_sftp_round_trip_with_a_pinned_key(
    admin_client, user_client, sftp_server, archive, tmp_path, caplog, app
):
    caplog.set_level(logging.DEBUG)
    stack, name = archive
    folder = f"api-{tmp_path.name[-12:]}"

    # Trying the settings first shows the server's key; nothing is saved or pinned yet.
    tried = admin_client.post(
        "/api/destinations/test",
        json={k: v for k, v in sftp_body(sftp_server, folder).items() if k != "name"},
    )
    assert tried.status_code == 200, tried.text
    assert tried.json()["host_key"] == sftp_server.host_key()
    assert admin_client.get("/api/destinations").json() == []

    made = admin_client.post("/api/destinations", json=sftp_body(sftp_server, folder))
    assert made.status_code == 201, made.text
    destination = made.json()
    assert destination["secrets_set"] == ["password"]
    assert destination["host_key_fingerprint"] is None
    dest_id = destination["id"]

    tested = admin_client.post(f"/api/destinations/{dest_id}/test")
    assert tested.status_code == 200, tested.text
    assert tested.json()["host_key_fingerprint"] == tried.json()["host_key_fingerprint"]
    assert (
        admin_client.get(f"/api/destinations/{dest_id}").json()["host_key_fingerprint"]
        == tried.json()["host_key_fingerprint"]
    )

    pushed = admin_client.post(f"/api/backups/{name}/push", json={"destination_id": dest_id})
    assert pushed.status_code == 202, pushed.text
    run = wait_run(admin_client, stack)
    assert run["status"] == "succeeded" and run["action"] == "push", run
    assert run["progress"]["bytes_done"] == run["progress"]["bytes_total"] > 0
    local = admin_client.get(f"/api/backups/{name}/download").content
    assert (sftp_server.home / folder / name).read_bytes() == local

    listed = admin_client.get(f"/api/destinations/{dest_id}/archives").json()
    assert [(a["name"], a["size"]) for a in listed] == [(name, len(local))]

    # Pull it back after the local copy is gone, then restore it as a clone.
    assert admin_client.delete(f"/api/backups/{name}").status_code == 204
    pulled = admin_client.post(f"/api/destinations/{dest_id}/archives/{name}/pull")
    assert pulled.status_code == 202, pulled.text
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    assert admin_client.get(f"/api/backups/{name}/download").content == local
    pulled_file = app.state.settings.data_dir / "backups" / name
    assert pulled_file.stat().st_mode & 0o777 == 0o600  # it holds the stack's .secrets
    again = admin_client.post(f"/api/destinations/{dest_id}/archives/{name}/pull")
    assert again.status_code == 409  # it is here already
    clone = f"{stack}-copy"
    restored = admin_client.post(f"/api/backups/{name}/restore", json={"stack": clone})
    assert restored.status_code == 202, restored.text
    assert wait_run(admin_client, clone)["status"] == "succeeded"
    assert clone in {s["id"] for s in admin_client.get("/api/stacks").json()}

    # Operators and viewers reach none of it.
    for method, path in [
        ("GET", "/api/destinations"),
        ("POST", f"/api/destinations/{dest_id}/test"),
        ("GET", f"/api/destinations/{dest_id}/archives"),
        ("POST", f"/api/backups/{name}/push"),
    ]:
        assert (
            user_client.request(method, path, json={"destination_id": dest_id}).status_code == 403
        )

    removed = admin_client.delete(f"/api/destinations/{dest_id}/archives/{name}")
    assert removed.status_code == 204
    assert admin_client.get(f"/api/destinations/{dest_id}/archives").json() == []
    assert admin_client.delete(f"/api/destinations/{dest_id}").status_code == 204

    # The password is in no answer, no log line, and not in the database in the clear.
    everything = json.dumps([tried.json(), destination, tested.json(), listed])
    assert sftp_server.password not in everything
    assert sftp_server.password not in caplog.text
    audit = {(e["action"], e["outcome"]) for e in admin_client.get("/api/audit").json()["items"]}
    for action in (
        "destination.create",
        "destination.test",
        "backup.push",
        "backup.pull",
        "destination.archive.delete",
        "destination.delete",
    ):
        assert (action, "success") in audit, action


def test_secrets_are_sealed_kept_on_update_and_the_key_forgotten_with_the_host(
    admin_client, sftp_server, settings, tmp_path
):
    made = admin_client.post(
        "/api/destinations", json=sftp_body(sftp_server, "keep", private_key=sftp_server.key)
    ).json()
    dest_id = made["id"]
    assert made["secrets_set"] == ["private_key"]
    assert admin_client.post(f"/api/destinations/{dest_id}/test").status_code == 200

    row = (
        sqlite3.connect(settings.effective_database_url.removeprefix("sqlite:///"))
        .execute("select config, secrets, host_key from destinations where id = ?", (dest_id,))
        .fetchone()
    )
    assert "BEGIN OPENSSH" not in row[1] and sftp_server.key.split("\n")[1] not in row[1]
    assert "private_key" not in row[0]

    # A rename without secrets keeps the key; the test still signs in.
    renamed = admin_client.patch(f"/api/destinations/{dest_id}", json={"name": "renamed"})
    assert renamed.status_code == 200 and renamed.json()["secrets_set"] == ["private_key"]
    assert admin_client.post(f"/api/destinations/{dest_id}/test").status_code == 200

    # Another port (the same server through another address) forgets the pinned key.
    moved = dict(sftp_body(sftp_server, "keep")["settings"], port=sftp_server.port + 1)
    changed = admin_client.patch(f"/api/destinations/{dest_id}", json={"settings": moved})
    assert changed.status_code == 200 and changed.json()["host_key_fingerprint"] is None

    # A changed host key is refused with a clear error, the pinned one kept.
    back = dict(moved, port=sftp_server.port)
    junk = admin_client.patch(f"/api/destinations/{dest_id}", json={"host_key": "ssh-ed25519 A"})
    assert junk.status_code == 400 and "public key" in junk.json()["detail"]
    wrong = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBz3Iq0mK2mS0qF7oQ2r1wX1b8B4yZtGgC3H4l0kMZ9m"
    pinned = admin_client.patch(
        f"/api/destinations/{dest_id}", json={"settings": back, "host_key": wrong}
    )
    assert pinned.status_code == 200, pinned.text
    refused = admin_client.post(f"/api/destinations/{dest_id}/test")
    assert refused.status_code == 502
    assert "not the pinned one" in refused.json()["detail"]

    bad = admin_client.post("/api/destinations", json=sftp_body(sftp_server, "x", password=""))
    assert bad.status_code == 400 and "password or a private key" in bad.json()["detail"]
    taken = admin_client.post(
        "/api/destinations", json={**sftp_body(sftp_server, "y"), "name": "renamed"}
    )
    assert taken.status_code == 409


def test_s3_and_nfs_settings_through_the_api(admin_client, s3_server, archive):
    stack, name = archive
    bucket = s3_server.bucket()
    made = admin_client.post(
        "/api/destinations",
        json=s3_server.destination(bucket, "bucket"),
    )
    assert made.status_code == 201, made.text
    dest_id = made.json()["id"]
    assert made.json()["secrets_set"] == ["secret_key"]
    assert s3_server.secret_key not in made.text
    assert admin_client.post(f"/api/destinations/{dest_id}/test").status_code == 200
    admin_client.post(f"/api/backups/{name}/push", json={"destination_id": dest_id})
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    assert [
        a["name"] for a in admin_client.get(f"/api/destinations/{dest_id}/archives").json()
    ] == [name]
    second = admin_client.post(f"/api/backups/{name}/push", json={"destination_id": dest_id})
    assert second.status_code == 202
    failed = wait_run(admin_client, stack)
    assert failed["status"] == "failed"
    assert "already on the destination" in failed["progress"]["errors"][-1]

    def pushes() -> list[tuple[str, str | None]]:  # newest first, the ends recorded
        entries = admin_client.get("/api/audit").json()["items"]
        return [
            (e["outcome"], e["detail"])
            for e in entries
            if e["action"] == "backup.push" and e["outcome"] != "started"
        ]

    ended = wait_until(lambda: found if len(found := pushes()) == 2 else None)
    assert [outcome for outcome, _ in ended] == ["failure", "success"]
    assert "already on the destination" in ended[0][1]

    nfs = admin_client.post(
        "/api/destinations",
        json={
            "name": "nas",
            "settings": {
                "type": "nfs",
                "server": "127.0.0.1",
                "export": "/srv/none",
                "options": "rw,soft,timeo=10,retrans=1",
            },
        },
    )
    assert nfs.status_code == 201, nfs.text
    nfs_id = nfs.json()["id"]
    assert nfs.json()["settings"]["subdirectory"] == ""
    failure = admin_client.post(f"/api/destinations/{nfs_id}/test")
    assert failure.status_code == 502 and "NFS 127.0.0.1:/srv/none" in failure.json()["detail"]
    assert admin_client.delete(f"/api/destinations/{nfs_id}").status_code == 204
    unsafe = admin_client.post(
        "/api/destinations",
        json={
            "name": "bad",
            "settings": {
                "type": "nfs",
                "server": "nas",
                "export": "/x",
                "subdirectory": "../../etc",
            },
        },
    )
    assert unsafe.status_code == 422
