"""The `stackyard` command as a user runs it: real subprocesses, a real server."""

import http.client
import subprocess
import time
import uuid

import httpx
import pyotp
import pytest

from stackyard import __version__
from tests.support.receivers import HttpReceiver
from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    STACKYARD_BIN,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import compose_text, service


def run(tmp_path, *args, input=None, env=None):
    return subprocess.run(
        [str(STACKYARD_BIN), *args],
        input=input,
        capture_output=True,
        text=True,
        env=env or service_env(tmp_path),
        cwd=tmp_path,
        timeout=60,
    )


def login(url, username, password) -> httpx.Response:
    return httpx.post(f"{url}/api/auth/login", json={"username": username, "password": password})


def test_version_command():
    done = subprocess.run([str(STACKYARD_BIN), "version"], capture_output=True, text=True)
    assert done.stdout.strip() == __version__


def test_user_and_token_commands_work_against_the_service(tmp_path):
    created = run(tmp_path, "user", "create", "bob", "--password-stdin", input="bob-password-1\n")
    assert created.returncode == 0, created.stderr
    admin = run(
        tmp_path, "user", "create", "ops", "--admin", "--password-stdin", input="ops-password-1\n"
    )
    assert admin.returncode == 0, admin.stderr
    again = run(tmp_path, "user", "create", "bob", "--password-stdin", input="bob-password-2\n")
    assert again.returncode == 1 and "already exists" in again.stderr
    short = run(tmp_path, "user", "create", "eve", "--password-stdin", input="short\n")
    assert short.returncode == 1 and "at least 8 characters" in short.stderr
    changed = run(tmp_path, "user", "passwd", "bob", "--password-stdin", input="bob-password-9\n")
    assert changed.returncode == 0, changed.stderr
    token = run(tmp_path, "token", "create", "ops")
    assert token.returncode == 0 and token.stdout.startswith("sy_")
    assert run(tmp_path, "token", "create", "ghost").returncode == 1

    server = start_server(tmp_path, env=service_env(tmp_path))
    try:
        assert login(server.url, "bob", "bob-password-1").status_code == 401
        bob = login(server.url, "bob", "bob-password-9")
        assert bob.status_code == 200 and bob.json()["user"]["role"] == "viewer"
        headers = {"Authorization": f"Bearer {token.stdout.strip()}"}
        me = httpx.get(f"{server.url}/api/auth/me", headers=headers)
        assert me.json()["username"] == "ops" and me.json()["role"] == "admin"
        audit = httpx.get(f"{server.url}/api/audit", headers=headers).json()["items"]
        assert {(e["actor"], e["action"], e["target"], e["outcome"]) for e in audit} >= {
            ("cli", "user.create", "bob", "success"),
            ("cli", "user.create", "bob", "failure"),
            ("cli", "user.set_password", "bob", "success"),
        }
    finally:
        server.stop()


def test_an_admin_who_lost_their_phone_resets_two_factor_from_the_command_line(tmp_path):
    server = start_server(tmp_path, env=service_env(tmp_path))
    try:
        with httpx.Client(base_url=server.url) as admin:
            sign_in(admin, "admin", ADMIN_PASSWORD)
            setup = admin.post("/api/auth/two-factor/setup", json={"password": ADMIN_PASSWORD})
            code = pyotp.TOTP(setup.json()["secret"]).now()
            assert admin.post("/api/auth/two-factor/confirm", json={"code": code}).is_success
        assert login(server.url, "admin", ADMIN_PASSWORD).json()["code_needed"] is True
        reset = run(tmp_path, "user", "reset-two-factor", "admin")
        assert reset.returncode == 0, reset.stderr
        assert "is off" in reset.stdout
        assert login(server.url, "admin", ADMIN_PASSWORD).json()["user"]["username"] == "admin"
        assert run(tmp_path, "user", "reset-two-factor", "ghost").returncode == 1
    finally:
        server.stop()


def test_first_start_prints_a_generated_admin_password_once(tmp_path):
    env = service_env(tmp_path)
    del env["STACKYARD_ADMIN_PASSWORD"]
    server = start_server(tmp_path, env=env)
    server.stop()
    log = server.log()
    assert "one-time password" in log
    password = log.split("one-time password:")[1].split()[0]
    assert password != ADMIN_PASSWORD and len(password) >= 16

    again = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=again.url) as client:
            sign_in(client, "admin", password)
            assert client.get("/api/auth/me").json()["password_change_due"] is True
            changed = client.put(
                "/api/auth/password",
                json={"current_password": password, "new_password": "a brand new passphrase"},
            )
            assert changed.status_code == 204, changed.text
            assert client.get("/api/auth/me").json()["password_change_due"] is False
        assert "one-time password" not in again.log()
    finally:
        again.stop()


def test_unsafe_settings_are_refused_at_start(tmp_path):
    env = service_env(tmp_path, STACKYARD_SECRET_KEY="changeme")
    done = subprocess.run(
        [str(STACKYARD_BIN), "serve", "--port", "1"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "STACKYARD_SECRET_KEY is too weak" in done.stderr
    assert "changeme" not in done.stdout + done.stderr.replace("STACKYARD_SECRET_KEY", "")


def test_secrets_stay_out_of_the_server_log(tmp_path):
    env = service_env(tmp_path)
    server = start_server(tmp_path, env=env)
    try:
        assert login(server.url, "admin", "wrong-password").status_code == 401
        session = httpx.Client(base_url=server.url)
        assert (
            session.post(
                "/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD}
            ).status_code
            == 200
        )
        token = session.post(
            "/api/auth/tokens",
            json={"name": "t", "password": ADMIN_PASSWORD},
            headers={"X-CSRF-Token": session.cookies["stackyard_csrf"]},
        ).json()["token"]
        assert httpx.get(f"{server.url}/api/auth/me?token={token}").status_code == 401
    finally:
        server.stop()
    log = server.log()
    assert "POST /api/auth/login" in log  # the access log is on
    for secret in (
        ADMIN_PASSWORD,
        env["STACKYARD_SECRET_KEY"],
        session.cookies["stackyard_session"],
    ):
        assert secret not in log


def test_one_error_handler_reports_every_command_s_errors(tmp_path, monkeypatch):
    """In process: a StackyardError from any command (nested groups too) becomes
    `error: <detail>` on stderr and exit status 1, with no traceback."""
    from pathlib import Path

    from typer.testing import CliRunner

    import stackyard.cli
    from stackyard.cli import app

    for key, value in service_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    done = CliRunner().invoke(app, ["token", "create", "ghost"])
    assert done.exit_code == 1
    assert done.stderr.strip() == "error: User 'ghost' does not exist"
    assert "Traceback" not in done.output
    # ... and it is the only one: no command catches StackyardError itself.
    package = Path(stackyard.cli.__file__).parent
    catching = [p.name for p in package.glob("*.py") if "except StackyardError" in p.read_text()]
    assert catching == ["__init__.py"]


def test_a_connection_left_idle_by_a_browser_is_still_served(live_server):
    """Browsers keep an idle connection for minutes and send a later request on it (an
    upload after the user answered a dialog, say). A server that closes it after a few
    seconds loses the request that crosses its close: the browser cannot send a file
    again, and the user read "Cannot reach the Stackyard server" (seen in a CI run). The
    connection is left idle past uvicorn's default of 5 s, then used again."""
    url = httpx.URL(live_server.url)
    connection = http.client.HTTPConnection(url.host, url.port, timeout=30)
    try:
        connection.request("GET", "/api/health")
        first = connection.getresponse()
        first.read()
        assert first.status == 200
        used = connection.sock
        time.sleep(6)  # idle: this is what is tested, not a wait for something to happen
        connection.request("GET", "/api/health")
        again = connection.getresponse()
        again.read()
        assert again.status == 200
        assert connection.sock is used  # the same connection, not a new one
    finally:
        connection.close()


@pytest.mark.docker
def test_a_schedule_run_from_the_command_line_tells_the_service_s_notifications(tmp_path):
    """`stackyard schedule run` builds its scheduler as the service builds its own: what
    the run raises goes to the same notifications, queued in the database for the service
    to send (the command itself sends nothing)."""
    stack = f"cli-{uuid.uuid4().hex[:6]}"
    (tmp_path / "stacks" / stack).mkdir(parents=True)
    (tmp_path / "stacks" / stack / "compose.yaml").write_text(compose_text(app=service()))
    env = service_env(tmp_path)
    with HttpReceiver() as receiver:
        server = start_server(tmp_path, env=env)
        try:
            with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                for rule in client.get("/api/notifications/rules").json():
                    client.delete(f"/api/notifications/rules/{rule['id']}").raise_for_status()
                client.post(
                    "/api/notifications/channels",
                    json={"name": "hook", "kind": "webhook", "secrets": {"url": receiver.url}},
                ).raise_for_status()
                client.post(
                    "/api/notifications/rules",
                    json={"name": "backups", "events": ["backup_succeeded"]},
                ).raise_for_status()
                client.post(
                    "/api/schedules",
                    json={"name": "nightly", "stacks": [stack], "cron": "daily", "keep_last": 1},
                ).raise_for_status()
        finally:
            server.stop()

        ran = run(tmp_path, "schedule", "run", "nightly", env=env)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith(f"{stack}\tsucceeded\t")
        assert receiver.requests == []

        server = start_server(tmp_path, env=env)
        try:
            events = [e for r in receiver.wait_for(1) for e in r.json()["events"]]
            assert [(e["name"], e["subject"]) for e in events] == [("backup_succeeded", stack)]
        finally:
            server.stop()
