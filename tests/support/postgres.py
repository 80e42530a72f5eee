"""A throwaway PostgreSQL 15 cluster for tests.

``postgres_url`` (session scope) runs Debian's ``initdb``/``pg_ctl`` from
``/usr/lib/postgresql/15/bin`` (as the ``postgres`` OS user when the tests run as
root, which PostgreSQL refuses), with its data and unix socket in a temp dir,
listening on 127.0.0.1:<free port> with trust auth, and yields
``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``. The cluster is stopped and
deleted at the end of the session.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import free_port

PG_BIN = Path(os.environ.get("STACKYARD_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_OS_USER = "postgres"


class PostgresCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.sockets = root / "sockets"
        self.log = root / "postgres.log"
        self.port = 0
        self._as_user: dict[str, object] = {}
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam(PG_OS_USER)
            except KeyError:
                pytest.fail(
                    f"OS user {PG_OS_USER!r} missing: run `scripts/setup.sh --test`",
                    pytrace=False,
                )
            os.chown(root, pw.pw_uid, pw.pw_gid)
            self._as_user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
            self._env_home = pw.pw_dir
        else:
            self._env_home = os.environ.get("HOME", str(root))

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{PG_BIN}:/usr/bin:/bin",
            "HOME": self._env_home,
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
        }
        return subprocess.run(
            list(args),
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **self._as_user,  # type: ignore[arg-type]
        )

    def _check(self, what: str, proc: subprocess.CompletedProcess[str]) -> None:
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            pytest.fail(
                f"PostgreSQL {what} failed ({proc.returncode}):\n"
                f"{proc.stdout}\n{proc.stderr}\n{log}",
                pytrace=False,
            )

    def start(self) -> None:
        for tool in ("initdb", "pg_ctl"):
            if not (PG_BIN / tool).exists():
                pytest.fail(
                    f"{PG_BIN / tool} not found: PostgreSQL 15 is not installed; "
                    "run `scripts/setup.sh --test`",
                    pytrace=False,
                )
        self._check(
            "initdb",
            self._run(
                str(PG_BIN / "initdb"),
                "-D",
                str(self.data),
                "--username=postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ),
        )
        self._run("mkdir", "-p", str(self.sockets))
        last = None
        for _attempt in range(3):  # another process may grab the free port first
            self.port = free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} "
                f"-c unix_socket_directories={self.sockets} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            last = self._run(
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            )
            if last.returncode == 0:
                return
        assert last is not None
        self._check("start", last)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """SQLAlchemy URL of a throwaway PostgreSQL 15 cluster on loopback."""
    root = Path(tempfile.mkdtemp(prefix="stackyard-pg-"))
    cluster = PostgresCluster(root)
    try:
        cluster.start()
        yield cluster.url
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
