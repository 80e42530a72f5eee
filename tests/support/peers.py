"""Real destination peers on loopback, one of each per test worker (session scope).

* ``sftp_server``: OpenSSH's own ``sshd`` on a free loopback port with its own config
  and host key, serving SFTP only (``internal-sftp``) to one system user made for the
  session (``stackyard-sftp-<worker>``, no login shell, removed at the end) who signs in
  with a random password or with a key.
* ``s3_server``: moto's S3 server (``moto_server``), an S3 HTTP endpoint in memory.

The benchmarks use them too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import boto3
import httpx
import pytest
from botocore.config import Config

from tests.support.processes import free_port, stop_process

SSHD = "/usr/sbin/sshd"
MOTO = "moto_server"


@dataclass
class SftpServer:
    host: str
    port: int
    user: str
    password: str
    key: str  # the user's private key (OpenSSH PEM)
    key_file: Path
    home: Path
    host_key_file: Path
    config_file: Path
    process: subprocess.Popen[bytes]

    def host_key(self) -> str:
        """The public host key line, as pinned."""
        return " ".join(self.host_key_file.with_suffix(".pub").read_text().split()[:2])

    def new_host_key(self) -> None:
        """Give the server another host key (a reinstalled server, or an impostor)."""
        stop_process(self.process)
        for suffix in ("", ".pub"):
            self.host_key_file.with_suffix(suffix).unlink(missing_ok=True)
        _keygen(self.host_key_file)
        self.process = _start_sshd(self.config_file, self.port)


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)], check=True
    )


def _start_sshd(config: Path, port: int) -> subprocess.Popen[bytes]:
    log = config.with_name("sshd.log").open("ab")
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd ended: {config.with_name('sshd.log').read_text()[-2000:]}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=1) as conn,
        ):
            if conn.recv(4).startswith(b"SSH-"):
                return process
        time.sleep(0.1)
    stop_process(process)
    raise RuntimeError("sshd did not answer in time")


@contextlib.contextmanager
def running_sshd(tag: str) -> Iterator[SftpServer]:
    """sshd on a free loopback port for a user `stackyard-sftp-<tag>` made for it."""
    if os.geteuid() != 0:
        raise RuntimeError("the SFTP tests start sshd and make a system user: run them as root")
    root = Path(tempfile.mkdtemp(prefix="stackyard-sshd-"))
    root.chmod(0o755)
    user = f"stackyard-sftp-{tag}"[:32]
    home = root / "home"
    subprocess.run(["userdel", user], capture_output=True)
    subprocess.run(
        [
            "useradd",
            "--no-create-home",
            "--home-dir",
            str(home),
            "--shell",
            "/usr/sbin/nologin",
            user,
        ],
        check=True,
    )
    try:
        home.mkdir()
        shutil.chown(home, user, user)
        password = secrets.token_urlsafe(18)
        subprocess.run(["chpasswd"], input=f"{user}:{password}".encode(), check=True)
        host_key, key = root / "host_key", root / "user_key"
        _keygen(host_key)
        _keygen(key)
        keys = root / "authorized"
        keys.mkdir()
        (keys / user).write_text(key.with_suffix(".pub").read_text())
        port = free_port()
        Path("/run/sshd").mkdir(exist_ok=True)
        config = root / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"PidFile {root / 'sshd.pid'}",
                    f"AuthorizedKeysFile {keys}/%u",
                    f"AllowUsers {user}",
                    "PermitRootLogin no",
                    "PasswordAuthentication yes",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "Subsystem sftp internal-sftp",
                    "ForceCommand internal-sftp",
                    "MaxStartups 100",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        process = _start_sshd(config, port)
        server = SftpServer(
            "127.0.0.1", port, user, password, key.read_text(), key, home, host_key, config, process
        )
        try:
            yield server
        finally:
            stop_process(server.process)
    finally:
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def sftp_server(worker_id: str) -> Iterator[SftpServer]:
    with running_sshd(worker_id) as server:
        yield server


@dataclass
class S3Server:
    url: str
    access_key: str = ""
    secret_key: str = ""

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(s3={"addressing_style": "path"}),
        )

    def destination(self, bucket: str, name: str = "bucket") -> dict:
        """The body that makes a Stackyard destination of `bucket` on this server."""
        return {
            "name": name,
            "settings": {
                "type": "s3",
                "endpoint_url": self.url,
                "bucket": bucket,
                "access_key": self.access_key,
            },
            "secrets": {"secret_key": self.secret_key},
        }

    def bucket(self) -> str:
        """A new, empty bucket."""
        name = f"b-{secrets.token_hex(6)}"
        self.client().create_bucket(Bucket=name)
        return name


_IAM_SETUP = ("CreateUser", "PutUserPolicy", "CreateAccessKey")
_ALLOW_S3 = (
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}'
)


def _iam_user(url: str) -> tuple[str, str]:
    """A user allowed everything on S3, and its access key (the unauthenticated setup)."""
    iam = boto3.client(
        "iam",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="setup",
        aws_secret_access_key="setup",
    )
    iam.create_user(UserName="stackyard")
    iam.put_user_policy(UserName="stackyard", PolicyName="s3", PolicyDocument=_ALLOW_S3)
    key = iam.create_access_key(UserName="stackyard")["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


@contextlib.contextmanager
def running_moto(signed: bool) -> Iterator[S3Server]:
    executable = shutil.which(MOTO) or str(Path(sys.executable).with_name(MOTO))
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="stackyard-moto-")) / "moto.log"
    env = dict(os.environ)
    if signed:
        # Requests are signed and checked (IAM) once the first three, which make the
        # test's user, its policy and its key, are done.
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(len(_IAM_SETUP))
    with log.open("ab") as out:
        process = subprocess.Popen(
            [executable, "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/moto-api/", timeout=1).status_code < 500:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield S3Server(url, *_iam_user(url)) if signed else S3Server(url, "any", "any")
    finally:
        stop_process(process)
        shutil.rmtree(log.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """Signatures checked: a wrong secret is refused."""
    with running_moto(signed=True) as server:
        yield server


@pytest.fixture(scope="session")
def s3_unsigned_server() -> Iterator[S3Server]:
    """Signatures not checked: moto's check gets a `/` in a query (`prefix=a/b/`) wrong,
    so prefixes are tested here."""
    with running_moto(signed=False) as server:
        yield server


@contextlib.contextmanager
def silent_listener() -> Iterator[str]:
    """A real listener on loopback that accepts connections and never answers (a server
    that hangs): yields its `127.0.0.1:PORT`."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in [*accepted, listener]:
            connection.close()


class Relay:
    """A TCP relay to 127.0.0.1:`port` for any number of connections that, once `after`
    bytes went through it (both ways, all connections), either cuts every connection
    (`then="cut"`: a server that went away) or stops passing anything on while keeping
    them open (`then="stall"`: a server that hangs mid-transfer) until `resume` (the
    server answers again) or `close`."""

    def __init__(self, port: int, after: int, then: Literal["cut", "stall"]) -> None:
        self.target = port
        self.after = after
        self.then = then
        self.passed = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.tripped = threading.Event()
        self.resumed = threading.Event()
        self.moving = threading.Event()  # (resumed or closed)
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.moving.is_set() or self.resumed.is_set():
            try:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                return
            self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                with self._lock:
                    self.passed += len(data)
                    if self.passed >= self.after and not self.resumed.is_set():
                        self.tripped.set()
                if self.tripped.is_set() and not self.resumed.is_set():
                    if self.then == "cut":
                        self.close()
                        return
                    self.moving.wait()
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):  # this connection is over, both ways
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def resume(self) -> None:
        self.resumed.set()
        self.moving.set()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.moving.set()
        for sock in [*self.sockets, self.listener]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
