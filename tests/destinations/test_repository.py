"""Repository destinations: real backups kept in a real restic repository on a folder,
deduplicated across backups, pulled back as the spec's archive and restored, opened by
a fresh install with the recovery key alone."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from tests.schedules.test_schedules import wait_history
from tests.support.service import (
    ADMIN_PASSWORD,
    embedded_database_url,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import compose_text, service, wait_run
from tests.support.waiting import next_second, wait_until

pytestmark = pytest.mark.docker

database_url = embedded_database_url

#: The stack's service writes this much random data into its volume, once.
BLOB = 4 * 1024 * 1024
WRITER = (
    f'["sh", "-c", "[ -f /data/blob ] || head -c {BLOB} /dev/urandom > /data/blob; '
    "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done\"]"
)


def data_stack(make_stack) -> str:
    compose = compose_text(app=service(command=WRITER, volumes='["data:/data"]'))
    return make_stack("kept", compose + "volumes:\n  data:\n")


def started_data_stack(client, make_stack, docker_client) -> tuple[str, str]:
    """The data stack, started (its volume written): its id and its data's SHA-256."""
    stack = data_stack(make_stack)
    assert client.post(f"/api/stacks/{stack}/actions/start").status_code == 202
    assert wait_run(client, stack)["status"] == "succeeded"
    return stack, volume_digest(docker_client, f"{stack}_data")


def back_up(client, stack: str) -> str:
    before = {b["name"] for b in client.get("/api/backups").json()}
    assert client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    assert wait_run(client, stack)["status"] == "succeeded"
    (made,) = [b["name"] for b in client.get("/api/backups").json() if b["name"] not in before]
    return made


def volume_digest(docker_client, volume: str) -> str:
    out = docker_client.containers.run(
        "stackyard-test/helper:1",
        ["sha256sum", "/data/blob"],
        volumes={volume: {"bind": "/data"}},
        remove=True,
    )
    return out.decode().split()[0]


def repository_body(path: Path, **extra) -> dict:
    return {
        "name": "vault",
        "settings": {"type": "repository", "location": {"type": "folder", "path": str(path)}},
        **extra,
    }


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_backups_kept_deduplicated_in_a_repository_pull_back_and_restore(
    admin_client, make_stack, docker_client, tmp_path, app
):
    stack, original = started_data_stack(admin_client, make_stack, docker_client)
    repo = tmp_path / "repo"
    made = admin_client.post("/api/destinations/repositories", json=repository_body(repo))
    assert made.status_code == 201, made.text
    answer = made.json()
    # The recovery key is shown once: twelve groups a person can write down.
    assert re.fullmatch(r"([A-Z2-7]{4}-){11}[A-Z2-7]{4}", answer["recovery_key"])
    dest = answer["destination"]
    assert dest["type"] == "repository" and dest["secrets_set"] == ["repository_key"]
    assert answer["recovery_key"] not in admin_client.get("/api/destinations").text
    # It is a restic repository anyone can open with restic itself and the recovery key.
    keys = subprocess.run(
        ["restic", "-r", str(repo), "key", "list", "--json"],
        env={"RESTIC_PASSWORD": answer["recovery_key"], "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert answer["recovery_key_id"] in keys.stdout

    first = back_up(admin_client, stack)
    pushed = admin_client.post(f"/api/backups/{first}/push", json={"destination_id": dest["id"]})
    assert pushed.status_code == 202, pushed.text
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    after_first = folder_size(repo)
    # Encrypted: the volume's random bytes are not in the repository as they are.
    assert after_first > BLOB * 0.9

    second = back_up(admin_client, stack)
    admin_client.post(f"/api/backups/{second}/push", json={"destination_id": dest["id"]})
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    # The same data again adds next to nothing (the parts' metadata).
    assert folder_size(repo) - after_first < 0.15 * after_first

    listed = admin_client.get(f"/api/destinations/{dest['id']}/archives").json()
    assert {a["name"] for a in listed} == {first, second}

    # Pulled back once the local copy is gone: an archive the restore takes.
    assert admin_client.delete(f"/api/backups/{first}").status_code == 204
    pulled = admin_client.post(f"/api/destinations/{dest['id']}/archives/{first}/pull")
    assert pulled.status_code == 202, pulled.text
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    pulled_size = (Path(app.state.settings.data_dir) / "backups" / first).stat().st_size
    assert next(a["size"] for a in listed if a["name"] == first) == pulled_size
    verify = admin_client.post(f"/api/backups/{first}/verify")
    assert verify.status_code == 200 and verify.json()["ok"], verify.text
    clone = f"{stack}-back"
    restored = admin_client.post(f"/api/backups/{first}/restore", json={"stack": clone})
    assert restored.status_code == 202, restored.text
    run = wait_run(admin_client, clone)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert volume_digest(docker_client, f"{clone}_data") == original

    # Deleted from the repository: gone from its list.
    assert (
        admin_client.delete(f"/api/destinations/{dest['id']}/archives/{second}").status_code == 204
    )
    assert [
        a["name"] for a in admin_client.get(f"/api/destinations/{dest['id']}/archives").json()
    ] == [first]


def test_a_fresh_install_recovers_every_backup_with_the_recovery_key(
    admin_client, make_stack, docker_client, tmp_path, docker_cleanup
):
    stack, original = started_data_stack(admin_client, make_stack, docker_client)
    repo = tmp_path / "repo"
    answer = admin_client.post("/api/destinations/repositories", json=repository_body(repo)).json()
    name = back_up(admin_client, stack)
    admin_client.post(
        f"/api/backups/{name}/push", json={"destination_id": answer["destination"]["id"]}
    )
    assert wait_run(admin_client, stack)["status"] == "succeeded"

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    server = start_server(fresh, env=service_env(fresh))
    clone = f"{stack}-recovered"
    docker_cleanup.compose_project(clone)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            wrong = client.post(
                "/api/destinations/repositories",
                json=repository_body(repo, recovery_key="AAAA-" * 11 + "AAAA"),
            )
            assert wrong.status_code == 502 and "does not open" in wrong.json()["detail"]
            assert client.get("/api/destinations").json() == []
            recovered = client.post(
                "/api/destinations/repositories",
                json=repository_body(repo, recovery_key=answer["recovery_key"]),
            )
            assert recovered.status_code == 201, recovered.text
            assert recovered.json()["recovery_key"] is None
            dest = recovered.json()["destination"]["id"]
            assert [a["name"] for a in client.get(f"/api/destinations/{dest}/archives").json()] == [
                name
            ]
            pulled = client.post(f"/api/destinations/{dest}/archives/{name}/pull")
            assert pulled.status_code == 202, pulled.text
            assert wait_run(client, stack)["status"] == "succeeded"
            restored = client.post(f"/api/backups/{name}/restore", json={"stack": clone})
            assert restored.status_code == 202, restored.text
            assert wait_run(client, clone)["status"] == "succeeded"
    finally:
        server.stop()
    assert volume_digest(docker_client, f"{clone}_data") == original
    # The instance's own key is a real repository key beside the recovery key.
    keys = subprocess.run(
        ["restic", "-r", str(repo), "key", "list", "--json"],
        env={"RESTIC_PASSWORD": answer["recovery_key"], "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert keys.stdout.count('"id"') == 3  # the first instance's, the recovery key, the fresh one's


def test_scheduled_backups_to_a_repository_are_pruned_and_drilled_from_it(
    admin_client, make_stack, docker_client, tmp_path
):
    """A schedule's backups go straight into the repository (nothing on the host);
    retention there: the backups past the rule go in one forget and prune; a drill
    schedule takes the stack's latest backup from the repository, verifies it
    (restored, compared, started) and removes the copy it fetched."""
    stack, _ = started_data_stack(admin_client, make_stack, docker_client)
    repo = tmp_path / "repo"
    dest = admin_client.post("/api/destinations/repositories", json=repository_body(repo))
    dest_id = dest.json()["destination"]["id"]
    spec = {"name": "kept", "cron": "daily", "stacks": [stack], "destination_id": dest_id}
    backups = admin_client.post("/api/schedules", json={**spec, "keep_last": 3}).json()
    for count in (1, 2, 3):
        next_second()  # (archive names carry the second)
        assert admin_client.post(f"/api/schedules/{backups['id']}/run").status_code == 202
        assert wait_history(admin_client, backups["id"], count)[0]["outcome"] == "succeeded"
    archives = f"/api/destinations/{dest_id}/archives"
    assert len(admin_client.get(archives).json()) == 3

    updated = admin_client.put(f"/api/schedules/{backups['id']}", json={**spec, "keep_last": 1})
    assert updated.status_code == 200, updated.text
    next_second()
    assert admin_client.post(f"/api/schedules/{backups['id']}/run").status_code == 202
    newest = wait_history(admin_client, backups["id"], 4)[0]
    assert newest["outcome"] == "succeeded" and newest["pruned"] == 3
    assert [a["name"] for a in admin_client.get(archives).json()] == [newest["archive"]]
    # Written straight into the repository: nothing of them on the host.
    assert [b for b in admin_client.get("/api/backups").json() if b["stack_id"] == stack] == []

    # By hand, straight into a destination: only a repository takes it.
    other = admin_client.post(
        "/api/destinations",
        json={
            "name": "box",
            "settings": {"type": "sftp", "host": "127.0.0.1", "port": 1, "username": "x"},
            "secrets": {"password": "x"},
        },
    ).json()
    refused = admin_client.post(f"/api/destinations/{other['id']}/backups", json={"stack": stack})
    assert refused.status_code == 400 and "Only a repository" in refused.json()["detail"]

    drill = {**spec, "name": "proof", "kind": "drill", "settle_seconds": 1}
    drills = admin_client.post("/api/schedules", json=drill)
    assert drills.status_code == 201, drills.text
    assert drills.json()["kind"] == "drill"
    assert admin_client.post(f"/api/schedules/{drills.json()['id']}/run").status_code == 202
    (ran,) = wait_history(admin_client, drills.json()["id"], 1, timeout=300)
    assert (ran["outcome"], ran["archive"], ran["error"]) == (
        "succeeded",
        newest["archive"],
        None,
    ), ran
    record = admin_client.get(f"/api/stacks/{stack}/drills").json()[0]
    assert record["verified"] and record["archive"] == newest["archive"]
    assert record["compared"] == 1 and record["bytes"] >= BLOB
    # The copy fetched for the drill is gone; the repository keeps its backup.
    assert newest["archive"] not in {b["name"] for b in admin_client.get("/api/backups").json()}
    assert [a["name"] for a in admin_client.get(archives).json()] == [newest["archive"]]


def test_a_lock_left_by_a_killed_run_is_removed_and_a_live_ones_waited_for(
    admin_client, make_stack, tmp_path
):
    stack = make_stack("locked", compose_text(app=service()))
    repo = tmp_path / "repo"
    answer = admin_client.post("/api/destinations/repositories", json=repository_body(repo)).json()
    dest = answer["destination"]["id"]
    names = []
    for _ in range(2):
        names.append(back_up(admin_client, stack))
        admin_client.post(f"/api/backups/{names[-1]}/push", json={"destination_id": dest})
        assert wait_run(admin_client, stack)["status"] == "succeeded"
    env = {"RESTIC_PASSWORD": answer["recovery_key"], "PATH": "/usr/bin:/bin"}

    def restic_holding_a_lock() -> subprocess.Popen:
        """A backup that waits for its stdin: it holds a lock on the repository."""
        process = subprocess.Popen(
            ["restic", "-r", str(repo), "backup", "--stdin", "--stdin-filename", "x"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: any((repo / "locks").iterdir()), what="restic's lock")
        return process

    # SIGKILL: its lock stays, and a run that needs the repository alone is not wedged.
    killed = restic_holding_a_lock()
    killed.kill()
    killed.wait()
    assert any((repo / "locks").iterdir())
    deleted = admin_client.delete(f"/api/destinations/{dest}/archives/{names[0]}")
    assert deleted.status_code == 204, deleted.text

    # A prune killed as it holds its exclusive lock: the next run goes on, and the
    # repository is whole.
    names.append(back_up(admin_client, stack))
    admin_client.post(f"/api/backups/{names[-1]}/push", json={"destination_id": dest})
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    pruning = subprocess.Popen(
        ["restic", "-r", str(repo), "prune"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not any((repo / "locks").iterdir()):  # (looked at closely: a prune is quick)
        assert pruning.poll() is None and time.monotonic() < deadline, "no prune's lock seen"
        time.sleep(0.001)
    pruning.kill()
    pruning.wait()
    assert any((repo / "locks").iterdir())  # its exclusive lock, left
    deleted = admin_client.delete(f"/api/destinations/{dest}/archives/{names[-1]}")
    assert deleted.status_code == 204, deleted.text
    checked = subprocess.run(
        ["restic", "-r", str(repo), "check"], env=env, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # A live run's lock: the next run waits for it, then goes on.
    live = restic_holding_a_lock()
    done: list[int] = []
    waiting = threading.Thread(
        target=lambda: done.append(
            admin_client.delete(f"/api/destinations/{dest}/archives/{names[1]}").status_code
        )
    )
    waiting.start()
    try:
        with pytest.raises(AssertionError):  # still waiting while the lock is held
            wait_until(lambda: done, timeout=8, what="the delete")
    finally:
        live.stdin.close()
        live.wait()
    waiting.join(60)
    assert done == [204]
    use = admin_client.get(f"/api/destinations/{dest}/repository").json()
    assert use["backups"] == 0 and use["stacks"] == {}


@pytest.mark.parametrize("peer", ["sftp-key", "sftp-password", "s3"])
def test_a_repository_on_sftp_or_s3_keeps_and_gives_back_a_backup(
    admin_client, make_stack, peer, request, tmp_path
):
    stack = make_stack("remote", compose_text(app=service()))
    name = back_up(admin_client, stack)
    if peer == "s3":
        # (moto's signature check gets a `/` in a query wrong, and restic lists with one:
        # the server that does not check them, as for the S3 tests of prefixes.)
        s3 = request.getfixturevalue("s3_unsigned_server")
        body = s3.destination(s3.bucket(), "vault")
        body["settings"] = {"type": "repository", "location": {**body["settings"], "prefix": "r"}}
        secret = None  # (this server's keys are placeholders: "any")
    else:
        sftp = request.getfixturevalue("sftp_server")
        secrets = {"private_key": sftp.key} if peer == "sftp-key" else {"password": sftp.password}
        location = {
            "type": "sftp",
            "host": sftp.host,
            "port": sftp.port,
            "username": sftp.user,
            "folder": f"repo-{tmp_path.name[-10:]}",
        }
        body = {
            "name": "vault",
            "settings": {"type": "repository", "location": location},
            "secrets": secrets,
        }
        secret = next(iter(secrets.values()))
    made = admin_client.post("/api/destinations/repositories", json=body)
    assert made.status_code == 201, made.text
    dest = made.json()["destination"]
    if peer.startswith("sftp"):
        assert dest["host_key_fingerprint"] == sftp_fingerprint(request)
    pushed = admin_client.post(f"/api/backups/{name}/push", json={"destination_id": dest["id"]})
    assert pushed.status_code == 202
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    listed = admin_client.get(f"/api/destinations/{dest['id']}/archives").json()
    assert [a["name"] for a in listed] == [name]
    assert admin_client.delete(f"/api/backups/{name}").status_code == 204
    admin_client.post(f"/api/destinations/{dest['id']}/archives/{name}/pull")
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    verify = admin_client.post(f"/api/backups/{name}/verify")
    assert verify.status_code == 200 and verify.json()["ok"], verify.text
    # The size listed is the size of the archive the pull gave back.
    assert listed[0]["size"] == len(admin_client.get(f"/api/backups/{name}/download").content)
    if secret is not None:
        assert secret not in made.text and secret not in json.dumps(listed)


def sftp_fingerprint(request) -> str:
    from stackyard.sshkeys import fingerprint_of

    return fingerprint_of(request.getfixturevalue("sftp_server").host_key())


def test_a_push_killed_with_the_service_is_never_listed_and_the_next_one_succeeds(
    tmp_path, make_stack, docker_cleanup
):
    """SIGKILL of the service while restic stores a backup: no backup is listed (restic
    dies with the service before it writes the snapshot); after a restart the same backup
    is pushed whole, once; a snapshot that never got its size (a run killed after restic
    stored it) is no backup: never listed, said partial, and forgotten by a later
    retention once a day old."""
    env = service_env(tmp_path, STACKS_DIR=str(tmp_path / "stacks"))
    big = 160 * 1024 * 1024
    compose = compose_text(
        app=service(command=WRITER.replace(str(BLOB), str(big)), volumes='["data:/data"]')
    )
    stack = "killed-push"
    docker_cleanup.compose_project(stack)
    (tmp_path / "stacks" / stack).mkdir(parents=True, exist_ok=True)
    (tmp_path / "stacks" / stack / "compose.yaml").write_text(compose + "volumes:\n  data:\n")
    repo = tmp_path / "repo"
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            assert client.post(f"/api/stacks/{stack}/actions/start").status_code == 202
            assert wait_run(client, stack)["status"] == "succeeded"
            made = client.post("/api/destinations/repositories", json=repository_body(repo))
            answer = made.json()
            dest = answer["destination"]["id"]
            name = back_up(client, stack)
            client.post(f"/api/backups/{name}/push", json={"destination_id": dest})
            key = {"RESTIC_PASSWORD": answer["recovery_key"], "PATH": "/usr/bin:/bin"}

            def restic(*args: str) -> str:
                done = subprocess.run(
                    ["restic", "-r", str(repo), *args], env=key, capture_output=True, text=True
                )
                assert done.returncode == 0, done.stderr
                return done.stdout

            def snapshots() -> list[dict]:
                return json.loads(restic("snapshots", "--json", "--no-lock") or "[]")

            # restic has stored some of the data, not all of it.
            wait_until(
                lambda: sum(1 for p in (repo / "data").rglob("*") if p.is_file()) >= 3,
                what="restic to store a part of the backup",
            )
        server.process.kill()
        server.process.wait()
    finally:
        server.stop()
    assert snapshots() == []

    # A snapshot stored whole whose run was killed before it was tagged with its size
    # (made here as restic makes it, and two days old).
    instance = (tmp_path / "data" / "instance_id").read_text().strip()
    cut = f"{stack}--vm--20260101T000000Z.tar"
    tags = ["stackyard", f"archive:{cut}", f"stack:{stack}", f"instance:{instance}"]
    subprocess.run(
        ["restic", "-r", str(repo), "backup", "--stdin", "--stdin-filename", cut,
         "--time", "2026-01-01 00:00:00", *(a for t in tags for a in ("--tag", t))],
        input=b"cut short",
        env=key,
        check=True,
        capture_output=True,
    )  # fmt: skip

    again = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=again.url, timeout=120) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            assert client.get(f"/api/destinations/{dest}/archives").json() == []
            use = client.get(f"/api/destinations/{dest}/repository").json()
            assert (use["backups"], use["partial"]) == (0, 1)
            client.post(f"/api/backups/{name}/push", json={"destination_id": dest})
            assert wait_run(client, stack)["status"] == "succeeded"
            listed = client.get(f"/api/destinations/{dest}/archives").json()
            assert [a["name"] for a in listed] == [name]
            # Removing a backup (as retention does) forgets the day-old partial one too.
            gone = client.delete(f"/api/destinations/{dest}/archives/{name}")
            assert gone.status_code == 204
            use = client.get(f"/api/destinations/{dest}/repository").json()
            assert (use["backups"], use["partial"]) == (0, 0)
    finally:
        again.stop()
    assert snapshots() == []
    assert not list((tmp_path / "data" / "restic").glob("*"))
