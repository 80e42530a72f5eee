"""restic at the boundary: the one place a repository is talked to, and where restic's
failures become typed errors (restic 0.14 exits 1 for every failure: its stderr says
which).

A repository is opened with a key given to restic in its own environment
(`RESTIC_PASSWORD`), never in its arguments; a new key reaches `key add` through a file
of a private folder removed right after. Over SFTP, restic's ssh knows the pinned host
key only and signs in with the destination's key or password (ssh reads the password
through an askpass program from the child's environment).

Locks: before the first run of a transfer that writes, and when any run finds the
repository locked, `restic unlock` removes the locks restic knows to be stale (their
process gone from this host, or older than 30 minutes): a run killed mid-way (a prune's
exclusive lock too, which stops even a listing) never wedges the next. A lock held by
a live run makes the next one wait for it, up to `LOCK_WAIT`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackyard.errors import (
    Conflict,
    DestinationDenied,
    DestinationError,
    DestinationUnreachable,
    StackyardError,
)
from stackyard.jsonmodel import parse_json
from stackyard.process import children

#: How long a run waits for a lock another live run holds.
LOCK_WAIT = 600.0
LOCK_RETRY = 5.0
#: What a run that reads or lists may take; a backup or a dump has no limit (its data
#: stalls are the caller's to watch).
QUICK = 300.0
_ASKPASS = "#!/bin/sh\nprintf '%s\\n' \"$STACKYARD_SSH_PASSWORD\"\n"


@dataclass(frozen=True)
class Snapshot:
    id: str
    time: str
    host: str
    tags: tuple[str, ...]
    paths: tuple[str, ...]

    def tag(self, key: str) -> str | None:
        """The value of a `key:value` tag."""
        return next((t.split(":", 1)[1] for t in self.tags if t.startswith(f"{key}:")), None)


@dataclass
class Ssh:
    """How restic's ssh reaches an SFTP server (with its pinned host key)."""

    host: str
    port: int
    username: str
    host_key: str
    private_key: str | None = None
    password: str | None = None


@dataclass
class Restic:
    """A repository at `repository` (restic's location: a folder, `sftp:...`, `s3:...`),
    opened with `key`."""

    repository: str
    key: str
    scratch: Path
    env: dict[str, str] = field(default_factory=dict)
    ssh: Ssh | None = None
    where: str = "the repository"
    #: The id of the key `key` is (restic tries it first).
    key_id: str | None = None
    _unlocked: bool = field(default=False, repr=False)

    # -- what a repository does ---------------------------------------------------------
    async def init(self) -> None:
        """A new repository here; Conflict when one is there already."""
        await self._run(["init"], lock=False)

    async def add_key(self, new_key: str) -> str:
        """Another key that opens the repository; its id."""
        before = {str(k["id"]) for k in await self.keys()}
        with self._private() as folder:
            path = folder / "new-key"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(new_key)
            await self._run(["key", "add", "--new-password-file", str(path)], lock=False)
        return next((str(k["id"]) for k in await self.keys() if str(k["id"]) not in before), "")

    async def keys(self) -> list[dict[str, Any]]:
        """The repository's keys, the newest first."""
        out = await self._run(["key", "list", "--json"], lock=False)
        found = parse_json(out or b"[]")
        keys = [k for k in found if isinstance(k, dict)] if isinstance(found, list) else []
        return sorted(keys, key=lambda k: str(k.get("created", "")), reverse=True)

    async def current_key(self) -> str:
        keys = await self.keys()
        return next((str(k["id"]) for k in keys if k.get("current")), "")

    async def snapshots(self, *tags: str) -> list[Snapshot]:
        args = ["snapshots", "--json", *(arg for t in tags for arg in ("--tag", t))]
        found = parse_json(await self._run(args, lock=False) or b"[]")
        return [
            Snapshot(
                str(s.get("id", "")),
                str(s.get("time", "")),
                str(s.get("hostname", "")),
                tuple(str(t) for t in s.get("tags") or ()),
                tuple(str(p) for p in s.get("paths") or ()),
            )
            for s in (found if isinstance(found, list) else [])
            if isinstance(s, dict)
        ]

    async def backup(
        self, filename: str, data: AsyncIterator[bytes], tags: list[str], host: str
    ) -> dict[str, Any]:
        """One stream stored as `filename` in a new snapshot; restic's summary."""
        args = ["backup", "--json", "--stdin", "--stdin-filename", filename, "--host", host]
        args += [arg for t in tags for arg in ("--tag", t)]
        out = await self._run(args, stdin=data, timeout=None)
        for line in reversed(out.splitlines()):
            with contextlib.suppress(ValueError):
                message = parse_json(line)
                if isinstance(message, dict) and message.get("message_type") == "summary":
                    return message
        raise DestinationError(f"restic stored {filename} in {self.where} without a summary")

    async def dump(self, snapshot: str, filename: str, to: Callable[[bytes], None]) -> None:
        """The file `filename` of a snapshot, each chunk to `to`."""
        await self._run(["dump", snapshot, f"/{filename}"], lock=False, out=to, timeout=None)

    async def tag(self, snapshot: str, tags: list[str]) -> None:
        """Tags added to a snapshot (restic writes it anew, under a new id)."""
        await self._run(["tag", *(arg for t in tags for arg in ("--add", t)), snapshot])

    async def forget(self, snapshots: list[str], prune: bool) -> None:
        if snapshots:
            await self._run(["forget", *(["--prune"] if prune else []), *snapshots])

    async def raw_size(self) -> int:
        """What the repository holds on its storage, in bytes (deduplicated, compressed)."""
        out = await self._run(["stats", "--mode", "raw-data", "--json"], lock=False)
        found = parse_json(out or b"{}")
        return int(found.get("total_size", 0)) if isinstance(found, dict) else 0

    # -- running restic ------------------------------------------------------------------
    async def _run(
        self,
        args: list[str],
        *,
        lock: bool = True,
        stdin: AsyncIterator[bytes] | None = None,
        out: Callable[[bytes], None] | None = None,
        timeout: float | None = QUICK,
    ) -> bytes:
        """restic run to its end; its stdout (when `out` does not take it). A run that
        writes removes stale locks first and waits while a live run holds the lock."""
        if lock and not self._unlocked:  # (once for all the runs of one transfer)
            await self._run(["unlock"], lock=False)
            self._unlocked = True
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                return await self._once(args, stdin, out, timeout)
            except _Locked as exc:
                if not self._unlocked:  # (a read meets a killed prune's exclusive lock)
                    await self._run(["unlock"], lock=False)
                    self._unlocked = True
                    if stdin is None:
                        continue
                if stdin is not None or time.monotonic() >= deadline:
                    raise Conflict(
                        f"{self.where} is locked by another run: it was not released "
                        f"within {LOCK_WAIT:g} s ({exc})"
                    ) from exc
                await asyncio.sleep(LOCK_RETRY)

    async def _once(
        self,
        args: list[str],
        stdin: AsyncIterator[bytes] | None,
        out: Callable[[bytes], None] | None,
        timeout: float | None,
    ) -> bytes:
        stdout, stderr = bytearray(), bytearray()
        with self._environment() as env:
            try:
                code = await children.stream(
                    ["restic", "--no-cache", "--quiet", *self._options(env), *args],
                    out or stdout.extend,
                    env=env,
                    timeout=timeout,
                    what=f"restic {args[0]}",
                    stdin=stdin,
                    on_errors=stderr.extend,
                )
            except OSError as exc:
                raise DestinationError(f"restic cannot be run here: {exc.strerror or exc}") from exc
        if code != 0:
            raise self._classified(stderr.decode(errors="replace"))
        return bytes(stdout)

    def _options(self, env: dict[str, str]) -> list[str]:
        if self.ssh is None:
            return []
        return ["-o", f"sftp.command={env.pop('STACKYARD_SFTP_COMMAND')}"]

    @contextlib.contextmanager
    def _environment(self) -> Iterator[dict[str, str]]:
        env = {
            **children.child_env(),
            **self.env,
            "RESTIC_REPOSITORY": self.repository,
            "RESTIC_PASSWORD": self.key,
            "LC_ALL": "C",
        }
        if self.key_id:
            env["RESTIC_KEY_HINT"] = self.key_id
        if self.ssh is None:
            yield env
            return
        with self._private() as folder:
            ssh = self.ssh
            known = folder / "known_hosts"
            known.write_text(f"stackyard-pinned {ssh.host_key.strip()}\n")
            command = [
                "ssh", "-F", "/dev/null",
                "-o", "HostKeyAlias=stackyard-pinned",
                "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={known}",
                "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "IdentityAgent=none",
                "-o", "ConnectTimeout=15",
                "-o", "ServerAliveInterval=15",
                "-p", str(ssh.port), "-l", ssh.username,
            ]  # fmt: skip
            if ssh.private_key:
                key = folder / "key"
                fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(ssh.private_key.strip() + "\n")
                command += ["-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-i", str(key)]
            else:
                askpass = folder / "askpass"
                askpass.write_text(_ASKPASS)
                askpass.chmod(0o700)
                env |= {
                    "SSH_ASKPASS": str(askpass),
                    "SSH_ASKPASS_REQUIRE": "force",
                    "DISPLAY": "none",
                    "STACKYARD_SSH_PASSWORD": ssh.password or "",
                }
                command += ["-o", "PubkeyAuthentication=no", "-o", "NumberOfPasswordPrompts=1"]
            env["STACKYARD_SFTP_COMMAND"] = shlex.join([*command, ssh.host, "-s", "sftp"])
            yield env

    @contextlib.contextmanager
    def _private(self) -> Iterator[Path]:
        self.scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = Path(tempfile.mkdtemp(prefix="restic-", dir=self.scratch))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _classified(self, stderr: str) -> StackyardError:
        low = stderr.lower()
        said = "; ".join(
            line.strip().removeprefix("Fatal: ")
            for line in stderr.strip().splitlines()[-3:]
            if line.strip()
        )[:500]
        if "already locked" in low or "unable to create lock" in low:
            return _Locked(said)
        if "wrong password or no key found" in low:
            return DestinationDenied(
                f"The key does not open the repository at {self.where}: give the recovery "
                "key (or a key the repository knows)"
            )
        if "config file already exists" in low:
            return Conflict(
                f"{self.where} holds a repository already: recover it with its recovery key"
            )
        if (
            "is there a repository at the following location" in low
            or "unable to open config file" in low
        ):
            return DestinationError(f"There is no repository at {self.where}")
        if "host key verification failed" in low:
            return DestinationDenied(
                f"The host key of {self.where} is not the pinned one: the server changed its "
                "key, or something else answers in its place"
            )
        if "permission denied" in low or "access denied" in low or "signaturedoesnotmatch" in low:
            return DestinationDenied(f"{self.where} refused the credentials: {said}")
        if any(
            sign in low
            for sign in ("connection refused", "dial tcp", "no route to host", "timed out",
                         "connection reset", "connection closed", "broken pipe", "eof")
        ):  # fmt: skip
            return DestinationUnreachable(f"{self.where} cannot be reached: {said}")
        return DestinationError(f"restic failed on {self.where}: {said or 'it said nothing'}")


class _Locked(DestinationError):
    """Another run holds the repository's lock."""
