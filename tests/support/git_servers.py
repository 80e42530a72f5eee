"""Real git servers on loopback, and a working clone to write the commits they serve.

* :class:`Work`: a bare repository (the "origin") and a working clone of it that a test
  writes, commits (signed or not) and pushes with the ``git`` command.
* :func:`ssh_signing_key`: an ed25519 key for SSH-signed commits (``git verify-commit``
  checks them against an allowed-signers file).
* Three servers of the bare repositories under a folder the caller gives (``root``), each
  on a free loopback port, each a context manager with ``url_for(name)``, ``stop()`` and
  ``start()`` (the server down, and back on the same port) and ``close()``:

  * :func:`git_daemon`: ``git daemon``, ``git://127.0.0.1:PORT/<name>``, no auth.
  * :func:`git_http`: smart HTTP through ``git http-backend`` (CGI) behind HTTP Basic auth,
    in a process of its own (this module, run with ``sys.executable``) so that a test's
    event loop never serves it; ``http://127.0.0.1:PORT/<name>``. It logs every request
    it got (method, path and query, and the user name only) for ``requests()``.
  * :func:`git_ssh`: OpenSSH's ``sshd`` (started as :mod:`tests.support.peers` starts it
    for SFTP: own config, own host key) for a system user made for it (removed at the
    end) whose shell is ``git-shell``; keys only, each ``restrict``-ed;
    ``ssh://USER@127.0.0.1:PORT/<root>/<name>``. Needs root.

A bare repository ``root / name`` is what ``url_for(name)`` serves: ``Work.create(folder,
root / "app.git")`` makes one.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import io
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import IO, Self, cast

from tests.support.peers import _keygen, _start_sshd
from tests.support.processes import free_port, stop_process
from tests.support.waiting import wait_until

GIT = "git"
HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
GIT_SHELL = "/usr/bin/git-shell"

#: Seconds a server gets to listen after it was started.
STARTUP = 30.0


def _isolated_env(**extra: str) -> dict[str, str]:
    """The environment for the tests' own git commands: no system or global config of the
    machine's (a signing default or a URL rewrite there would change what is tested)."""
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    env.update(extra)
    return env


def _git(*args: str, cwd: Path | None = None) -> str:
    """Run ``git`` and return its standard output, stripped; a failure raises with what git
    said on standard error."""
    done = subprocess.run(
        [GIT, *args], cwd=cwd, env=_isolated_env(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout.strip()


class Work:
    """A working clone whose ``origin`` is a bare repository on disk (the one a server
    serves): a test writes files, commits and pushes here."""

    NAME = "Stackyard Tests"
    EMAIL = "tests@stackyard.invalid"

    def __init__(self, folder: Path, origin: Path) -> None:
        self.folder = folder
        self.origin = origin

    @classmethod
    def create(cls, folder: Path, origin: Path) -> Work:
        """A new bare repository at `origin` (initial branch ``main``) and a new working
        clone of it at `folder`, with a committer name and e-mail of its own."""
        origin.parent.mkdir(parents=True, exist_ok=True)
        _git("init", "-q", "--bare", "--initial-branch=main", str(origin))
        folder.mkdir(parents=True, exist_ok=True)
        _git("init", "-q", "--initial-branch=main", str(folder))
        work = cls(folder, origin)
        work.git("remote", "add", "origin", str(origin))
        work.git("config", "user.name", cls.NAME)
        work.git("config", "user.email", cls.EMAIL)
        return work

    def git(self, *args: str) -> str:
        """Any git command in the clone; its standard output, stripped."""
        return _git(*args, cwd=self.folder)

    def write(self, rel: str, text: str) -> Path:
        """Write `text` to the file at `rel` (folders made as needed); not committed yet."""
        path = self.folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def remove(self, rel: str) -> None:
        """Remove the file or folder at `rel`; not committed yet."""
        path = self.folder / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()

    def commit(
        self, message: str, *, signing_key: Path | None = None, allow_empty: bool = False
    ) -> str:
        """Commit everything in the clone (new, changed and removed files) and return the
        commit's full sha. With `signing_key` (a private key, :func:`ssh_signing_key`) the
        commit is SSH-signed."""
        self.git("add", "--all")
        signing = (
            ["-c", "gpg.format=ssh", "-c", f"user.signingkey={signing_key}"]
            if signing_key is not None
            else []
        )
        command = [*signing, "commit", "-q", "-m", message]
        if signing_key is not None:
            command.append("-S")
        if allow_empty:
            command.append("--allow-empty")
        self.git(*command)
        return self.head()

    def push(self, branch: str = "main", *, force: bool = False) -> None:
        """Push `branch` to the origin (`force`: even when that drops commits there)."""
        self.git("push", "-q", *(["--force"] if force else []), "origin", branch)

    def checkout(self, branch: str, create: bool = False) -> None:
        """Switch to `branch` (`create`: a new one, from the current commit)."""
        self.git("checkout", "-q", *(["-b"] if create else []), branch)

    def head(self) -> str:
        """The full sha of the commit checked out."""
        return self.git("rev-parse", "HEAD")


def ssh_signing_key(folder: Path, name: str) -> tuple[Path, str]:
    """A new ed25519 key without a passphrase at ``folder / name``: the private key's path
    and the public key line (``ssh-ed25519 AAAA... name``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True
    )
    return path, path.with_name(f"{name}.pub").read_text().strip()


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def _wait_listening(process: subprocess.Popen[bytes], port: int, what: str, log: Path) -> None:
    """Wait until `process` accepts connections on `port`; fail with the end of its log
    if it ends first."""

    def up() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"{what} ended: {log.read_text(errors='replace')[-2000:]}")
        return _accepts(port)

    try:
        wait_until(up, timeout=STARTUP, what=f"{what} listening on 127.0.0.1:{port}")
    except BaseException:
        stop_process(process)
        raise


class _Server:
    """What every server here shares: a process on a fixed loopback port that can be
    stopped and started again, and a context manager that closes it."""

    port: int
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the server (its port refuses connections until :meth:`start`)."""
        stop_process(self.process)
        self.process = None

    def close(self) -> None:
        """Stop the server and remove what it made for itself."""
        self.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()


# ----------------------------------------------------------------- git daemon
class GitDaemon(_Server):
    """``git daemon`` serving every repository under `root` (no auth) on loopback."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="stackyard-git-daemon-"))
        self.log = self.workdir / "daemon.log"

    def url_for(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        """Start the daemon (again) on its port and wait until it accepts connections."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    GIT,
                    "daemon",
                    "--reuseaddr",
                    f"--base-path={self.root}",
                    "--export-all",
                    "--informative-errors",
                    "--listen=127.0.0.1",
                    f"--port={self.port}",
                    "--verbose",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        _wait_listening(self.process, self.port, "git daemon", self.log)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def git_daemon(root: Path) -> GitDaemon:
    """A started :class:`GitDaemon` of `root`; close it (or use it in ``with``)."""
    server = GitDaemon(root)
    server.start()
    return server


# ----------------------------------------------------------------- smart HTTP
class GitHttp(_Server):
    """Smart HTTP (``git http-backend``) behind HTTP Basic auth, in a process of its own.

    `username` and `password` may be changed between :meth:`stop` and :meth:`start` (a
    rotated token)."""

    def __init__(self, root: Path, username: str, password: str) -> None:
        self.root = root
        self.username = username
        self.password = password
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="stackyard-git-http-"))
        self.log = self.workdir / "server.log"
        self.request_log = self.workdir / "requests.log"
        self.request_log.touch()

    def url_for(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def requests(self) -> list[str]:
        """Every request the server got so far, one ``METHOD /path?query USER`` line each
        (``-`` for no or unreadable credentials). A line is written before the answer is
        sent, so a git command that returned has all of its requests here."""
        return self.request_log.read_text().splitlines()

    def start(self) -> None:
        """Start the server (again) on its port and wait until it accepts connections."""
        env = {
            **os.environ,
            "STACKYARD_GIT_HTTP_PASSWORD": self.password,
        }
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    __name__,
                    str(self.port),
                    str(self.root),
                    self.username,
                    str(self.request_log),
                ],
                cwd=Path(__file__).resolve().parents[2],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        _wait_listening(self.process, self.port, "the git HTTP server", self.log)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def git_http(root: Path, username: str, password: str) -> GitHttp:
    """A started :class:`GitHttp` of `root` for `username` and `password`; close it (or
    use it in ``with``)."""
    server = GitHttp(root, username, password)
    server.start()
    return server


class _BackendHandler(BaseHTTPRequestHandler):
    """One request: check the Basic credentials, then hand it to ``git http-backend`` as
    CGI, streaming the body in and the answer out (a pack can be large). HTTP/1.0: the
    connection's end is the answer's end, so the CGI output needs no length."""

    server: _BackendServer

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _user(self) -> tuple[str, bool]:
        """The user name the request gave (or ``-``) and whether the credentials are right."""
        scheme, _, encoded = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return "-", False
        try:
            user, _, password = base64.b64decode(encoded, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return "-", False
        right = hmac.compare_digest(user.encode(), self.server.username.encode())
        right &= hmac.compare_digest(password.encode(), self.server.password.encode())
        return user or "-", right

    def _serve(self) -> None:
        user, right = self._user()
        self.server.record(f"{self.command} {self.path} {user}")
        if not right:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_USER": user,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
        }
        if "Content-Length" in self.headers:
            env["CONTENT_LENGTH"] = self.headers["Content-Length"]
        for header, value in self.headers.items():  # Git-Protocol, Content-Encoding, ...
            env.setdefault(f"HTTP_{header.upper().replace('-', '_')}", value)
        backend = subprocess.Popen(
            [HTTP_BACKEND],
            env=env,
            cwd=self.server.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sys.stderr,
        )
        assert backend.stdin is not None and backend.stdout is not None
        feeding = threading.Thread(target=self._feed, args=(backend.stdin,), daemon=True)
        feeding.start()
        try:
            self._answer(cast(io.BufferedReader, backend.stdout))
        finally:
            feeding.join()
            backend.stdout.close()
            backend.wait()

    def _feed(self, sink: IO[bytes]) -> None:
        """Copy the request body into the backend (a length, or chunks when the client
        streams it), then close its input."""
        try:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    sink.write(self.rfile.read(size))
                    self.rfile.readline()  # the CRLF after the chunk
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                    pass
            else:
                left = int(self.headers.get("Content-Length") or 0)
                while left > 0 and (data := self.rfile.read(min(left, 65536))):
                    sink.write(data)
                    left -= len(data)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.close()

    def _answer(self, source: io.BufferedReader) -> None:
        """Turn the CGI output (headers, a blank line, the body) into the HTTP answer."""
        status, headers = 200, []
        while (line := source.readline().rstrip(b"\r\n")) != b"":
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            else:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        while data := source.read1(65536):
            self.wfile.write(data)


class _BackendServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, root: Path, username: str, password: str, log: Path) -> None:
        self.root = root
        self.username = username
        self.password = password
        self._log = log.open("a")
        self._lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _BackendHandler)

    def record(self, line: str) -> None:
        with self._lock:
            self._log.write(line + "\n")
            self._log.flush()


def _serve_http(argv: list[str]) -> None:
    """The HTTP server's process: ``PORT ROOT USERNAME REQUEST_LOG``, the password in
    ``STACKYARD_GIT_HTTP_PASSWORD`` (not on a command line anyone can list)."""
    port, root, username, log = argv
    password = os.environ["STACKYARD_GIT_HTTP_PASSWORD"]
    _BackendServer(int(port), Path(root), username, password, Path(log)).serve_forever()


# ----------------------------------------------------------------- ssh
class GitSsh(_Server):
    """OpenSSH's ``sshd`` for one system user made for it (``stackyard-git-<random>``)
    whose shell is ``git-shell``: it can fetch by absolute path and do nothing else (the
    repositories are root's, so pushes are refused: a deploy key). Public keys only; each
    authorized key is ``restrict``-ed (no terminal, no forwarding). Needs root (the user,
    and ``sshd`` itself).

    The user reads the repositories under `root`: the folders above it that others could
    not pass through are made passable (``o+x``, not listable; left so, as another server
    may be using them meanwhile: pytest's own temporary folders are ``0700``), and
    ``url_for`` makes the repository readable by others (``o+rX``); git writes new files
    with the umask, ``022`` here."""

    def __init__(self, root: Path) -> None:
        if os.geteuid() != 0:
            raise RuntimeError("the git ssh server starts sshd and makes a system user: root")
        self.root = root.resolve()
        self.workdir = Path(tempfile.mkdtemp(prefix="stackyard-git-sshd-"))
        self.workdir.chmod(0o755)
        self.user = f"stackyard-git-{secrets.token_hex(4)}"
        self.home = self.workdir / "home"
        self.host_key_file = self.workdir / "host_key"
        self.authorized_keys = self.workdir / "authorized_keys"
        self.config_file = self.workdir / "sshd_config"
        self.port = free_port()
        subprocess.run(
            [
                "useradd",
                "--no-create-home",
                "--home-dir",
                str(self.home),
                "--shell",
                GIT_SHELL,
                self.user,
            ],
            check=True,
        )
        try:
            # `*`: no password at all, yet not a locked account (`!`) that sshd would refuse.
            subprocess.run(["usermod", "-p", "*", self.user], check=True)
            self.home.mkdir()
            # git refuses a repository another user owns unless told it is safe.
            (self.home / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
            shutil.chown(self.home, self.user, self.user)
            shutil.chown(self.home / ".gitconfig", self.user, self.user)
            self.authorized_keys.touch(mode=0o644)
            _keygen(self.host_key_file)
            self._passable(self.root)
            self.config_file.write_text(
                "\n".join(
                    [
                        f"Port {self.port}",
                        "ListenAddress 127.0.0.1",
                        f"HostKey {self.host_key_file}",
                        f"PidFile {self.workdir / 'sshd.pid'}",
                        f"AuthorizedKeysFile {self.authorized_keys}",
                        f"AllowUsers {self.user}",
                        "PermitRootLogin no",
                        "PubkeyAuthentication yes",
                        "PasswordAuthentication no",
                        "KbdInteractiveAuthentication no",
                        "UsePAM no",
                        # The key file is root's, in a folder of root's: what StrictModes
                        # would ask of a user's own ~/.ssh does not apply.
                        "StrictModes no",
                        "MaxStartups 100",
                        "LogLevel VERBOSE",
                        "",
                    ]
                )
            )
            Path("/run/sshd").mkdir(exist_ok=True)
        except BaseException:
            self._remove()
            raise

    @staticmethod
    def _passable(folder: Path) -> None:
        """Let others pass through `folder` and every folder above it (``o+x``)."""
        for path in [folder, *folder.parents]:
            if path.exists() and not (mode := path.stat().st_mode) & stat.S_IXOTH:
                path.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)

    def url_for(self, name: str) -> str:
        """The repository ``root / name``, by absolute path (``git-shell`` takes no other),
        made readable by the server's user if it exists."""
        repository = self.root / name
        if repository.exists():
            subprocess.run(["chmod", "-R", "o+rX", str(repository)], check=True)
        return f"ssh://{self.user}@127.0.0.1:{self.port}{repository}"

    def authorize(self, public_key_line: str) -> None:
        """Let the key (an ``authorized_keys`` line: ``type base64 [comment]``) in, with
        ``restrict``."""
        with self.authorized_keys.open("a") as keys:
            keys.write(f"restrict {public_key_line.strip()}\n")

    def host_key(self) -> str:
        """The public host key line (``type base64``), as a client pins it."""
        return " ".join(self.host_key_file.with_suffix(".pub").read_text().split()[:2])

    def known_hosts(self) -> str:
        """The ``known_hosts`` line for this server (host, port and :meth:`host_key`)."""
        return f"[127.0.0.1]:{self.port} {self.host_key()}"

    def new_host_key(self) -> None:
        """Give the server another host key (a reinstalled server, or an impostor)."""
        running = self.process is not None
        self.stop()
        for suffix in ("", ".pub"):
            self.host_key_file.with_suffix(suffix).unlink(missing_ok=True)
        _keygen(self.host_key_file)
        if running:
            self.start()

    def start(self) -> None:
        """Start ``sshd`` (again) on its port and wait until it answers."""
        self.process = _start_sshd(self.config_file, self.port)

    def _remove(self) -> None:
        subprocess.run(["userdel", self.user], capture_output=True)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def close(self) -> None:
        self.stop()
        self._remove()


def git_ssh(root: Path) -> GitSsh:
    """A started :class:`GitSsh` of `root`; close it (or use it in ``with``): that removes
    its user."""
    server = GitSsh(root)
    try:
        server.start()
    except BaseException:
        server.close()
        raise
    return server


if __name__ == "__main__":
    _serve_http(sys.argv[1:])
