"""Repository destinations (restic) against plain archives: deduplication, backup and restore.

Against a real `stackyard serve` and the real Docker engine: one stack whose named volume
holds `BENCH_REPOSITORY_MIB` (default 200) MiB of random (incompressible) files of varied
sizes (16 KiB to 16 MiB, log-uniform, a fixed seed), written with the busybox test image.
The backups are the service's own (`POST /api/stacks/{id}/backups`, gzip level 1, its
default); the repository a real restic repository on a local folder
(`POST /api/destinations/repositories`), on the same disk as the service's data folder.

Each of `BENCH_ROUNDS` (default 3) rounds uses a new, empty repository:

1. Backup A as an archive (the host's archives folder), and the baseline's write of it:
   `cp --reflink=never` into a plain folder on the same disk, then `sync` of the copy
   (the service's archives are fsynced, and so are restic's files: a copy left in the
   page cache would not be the same work). Then the same data backed up straight into
   the repository (`POST /api/destinations/{id}/backups`, as a schedule into a
   repository does: the helpers' tars to restic as they are read, no archive on the
   host): the first backup, every byte new to the repository. Shown beside it, not
   judged: archive A pushed into a second, empty repository.
2. 3% of the data changed, spread: 512 KiB of random bytes written over a random place
   (4 KiB aligned) of as many randomly chosen files of at least 1 MiB (12 places for
   200 MiB), in place (`dd conv=notrunc`). Backup B as an archive, copied; B straight
   into the repository (which holds A).
3. Deduplication: the repository folder's size (`du -sb`) after B minus after A, against
   B's size as an archive. Goal (issue 40): at most 15%. Shown beside it, not judged: 3%
   changed as whole files rewritten (random files of at most 4 MiB, new random bytes,
   the same sizes), backup C into the repository, its growth against C's size as an
   archive; and, in round 0, restic itself on the volume's files (`restic backup <its
   mountpoint>` into a scratch repository, before and after B's change): what restic's
   chunking alone makes of the same change, without the archive's tar streams.
4. Restore: archive B deleted from the service's folder, copied back from the plain
   folder (`cp`, `sync`) and restored as a new stack; B of the repository pulled
   (`POST /api/destinations/{id}/archives/{name}/pull`: restic's dump, its parts written
   as plain tar members) and restored as another new stack (the two take turns going
   first, round by round).

Time goals (issue 40), judged round by round: a backup into the repository at most
1.3x of a backup as an archive + its copy (the same data, side by side), for the first
(all new) and for the next one (B: 3% new); pull + restore at most 1.3x copy back +
restore. Every service step is timed as its run records it (start to end); every timed
step starts after a `sync`. Round 0 checks that the volume restored from the repository
holds the original's files (their SHA-256s).

Why a folder and not SFTP: the baseline of "a tar archive to the same place" needs a
destination that writes plain files where a repository can live; there is no folder
destination, and a folder on the same disk is the strictest place: the copy costs next
to nothing there, so the ratio shows restic's own cost (over SFTP, ssh's encryption and
the round trips would be added to both sides and bring the ratio closer to 1).

Then, once, where a push's and a pull's time goes: the last round's archive A taken
apart by hand, each step alone (a 2-core machine: in the service the gunzip runs in a
thread beside restic, so the parts overlap): gunzip of its parts (zlib-ng, as the push
does), `restic backup --stdin` of their tars into an empty scratch repository and again
(all known), `restic dump` of them, gzip of them at level 6 (what a pull writes) and at
level 1 (what a backup writes); and the cost of opening a repository, which every
restic run pays (its key's scrypt): `restic unlock` in a scratch repository with two
keys made as the service makes them (the instance's, then the recovery key), opened
with the instance's key, and with `--key-hint` naming it.

Everything made (stacks' volumes, the destinations, the folders, the server) is removed
at the end, also when the bench fails.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from statistics import median

import httpx
from zlib_ng import zlib_ng

from bench.common import (
    ROUNDS,
    VENV_BIN,
    admin_token,
    free_port,
    goal,
    stackyard_env,
    start,
    wait_succeeded,
    workdir,
)
from stackyard.backups.archive import ArchiveReader

MIB = 2**20
TOTAL = int(os.environ.get("BENCH_REPOSITORY_MIB", "200")) * MIB
BUSYBOX = "stackyard-test/busybox:1"
HELPER = "stackyard-test/helper:1"
#: The goals (issue 40): growth after a 3% change, in % of a full archive; time ratios.
GROWTH_GOAL, BACKUP_GOAL, RESTORE_GOAL = 15.0, 1.3, 1.3
CHANGED = 0.03
PIECE = 512 * 1024
RUN = ["docker", "run", "--rm", "--log-driver", "none"]
RESTIC = ["restic", "--no-cache", "--quiet"]
DIGESTS = "cd /data && find . -type f | sort | xargs sha256sum | sha256sum"


def _sizes() -> list[int]:
    """File sizes, log-uniform from 16 KiB to 16 MiB, adding up to TOTAL (a fixed seed)."""
    rng = random.Random(40)
    sizes: list[int] = []
    while (left := TOTAL - sum(sizes)) > 0:
        size = int(math.exp(rng.uniform(math.log(16 * 1024), math.log(16 * MIB))))
        sizes.append(min(size, left))
    return sizes


def _busybox(volume: str, script: str) -> str:
    return subprocess.run(
        [*RUN, "-v", f"{volume}:/data", BUSYBOX, "sh", "-c", script],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _fill(volume: str, sizes: list[int]) -> None:
    lines = [f"head -c {size} /dev/urandom > /data/f{i}" for i, size in enumerate(sizes)]
    _busybox(volume, "set -e\n" + "\n".join(lines))


def _change(volume: str, sizes: list[int], seed: int) -> int:
    """CHANGED of the data overwritten in place, PIECE at a time: the bytes changed."""
    rng = random.Random(seed)
    pieces = math.ceil(TOTAL * CHANGED / PIECE)
    large = [i for i, size in enumerate(sizes) if size >= 2 * PIECE]
    chosen = rng.sample(large, pieces) if len(large) >= pieces else rng.choices(large, k=pieces)
    blocks = PIECE // 4096
    lines = [
        f"dd if=/dev/urandom of=/data/f{i} bs=4096 count={blocks} conv=notrunc "
        f"seek={rng.randrange((sizes[i] - PIECE) // 4096 + 1)} 2>/dev/null"
        for i in chosen
    ]
    _busybox(volume, "set -e\n" + "\n".join(lines))
    return pieces * PIECE


def _replace(volume: str, sizes: list[int], seed: int) -> int:
    """CHANGED of the data as whole files rewritten (new random bytes, the same sizes):
    the bytes changed."""
    rng = random.Random(seed)
    small = [i for i, size in enumerate(sizes) if size <= 4 * MIB]
    rng.shuffle(small)
    chosen: list[int] = []
    while sum(sizes[i] for i in chosen) < TOTAL * CHANGED:
        chosen.append(small.pop())
    lines = [f"head -c {sizes[i]} /dev/urandom > /data/f{i}" for i in chosen]
    _busybox(volume, "set -e\n" + "\n".join(lines))
    return sum(sizes[i] for i in chosen)


class FilesReference:
    """restic itself on the volume's files (its mountpoint, read on this host) in a
    scratch repository: the growth restic's chunking alone makes of a change."""

    def __init__(self, volume: str, folder: Path) -> None:
        self.env = {"PATH": "/usr/bin:/bin", "RESTIC_PASSWORD": "bench"}
        self.env["RESTIC_REPOSITORY"] = str(folder)
        self.folder = folder
        self.mountpoint = subprocess.run(
            ["docker", "volume", "inspect", "-f", "{{.Mountpoint}}", volume],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        self.readable = os.access(self.mountpoint, os.R_OK | os.X_OK)
        if self.readable:
            subprocess.run([*RESTIC, "init"], env=self.env, check=True, capture_output=True)

    def backup(self) -> int:
        """The volume's files backed up; the repository's size after."""
        subprocess.run(
            [*RESTIC, "backup", self.mountpoint], env=self.env, check=True, capture_output=True
        )
        return _du(self.folder)


def _sync() -> None:
    """Dirty pages written back before a timed step, so that it pays only for its own."""
    subprocess.run(["sync"], check=True)


def _copy(source: Path, target: Path) -> float:
    """`cp` of an archive and `sync` of the copy: the baseline's write of an archive."""
    _sync()
    began = time.perf_counter()
    subprocess.run(["cp", "--reflink=never", str(source), str(target)], check=True)
    subprocess.run(["sync", str(target)], check=True)
    return time.perf_counter() - began


def _du(path: Path) -> int:
    out = subprocess.run(["du", "-sb", str(path)], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0])


@dataclass
class Round:
    backup_a: float
    copy_a: float
    into_a: float  # A straight into the repository
    push_a: float  # the archive A pushed into a second, empty repository (shown, not judged)
    backup_b: float
    copy_b: float
    into_b: float
    size_a: int
    size_b: int
    growth: int  # the repository's, from B
    first: int  # the repository after A
    copy_back: float
    restore_plain: float
    pull: float
    restore_pulled: float
    growth_files: int  # the repository's, from C (whole files rewritten)
    size_c: int

    @property
    def files_percent(self) -> float:
        return 100 * self.growth_files / self.size_c

    @property
    def growth_percent(self) -> float:
        return 100 * self.growth / self.size_b

    @property
    def first_ratio(self) -> float:
        return self.into_a / (self.backup_a + self.copy_a)

    @property
    def next_ratio(self) -> float:
        return self.into_b / (self.backup_b + self.copy_b)

    @property
    def push_ratio(self) -> float:
        return (self.backup_a + self.push_a) / (self.backup_a + self.copy_a)

    @property
    def restore_ratio(self) -> float:
        return (self.pull + self.restore_pulled) / (self.copy_back + self.restore_plain)


class Service:
    def __init__(self, http: httpx.Client, root: Path, stack: str) -> None:
        self.http, self.root, self.stack = http, root, stack
        self.backups = root / "data" / "backups"

    def timed_run(self, path: str, body: dict | None, stack: str | None = None) -> float:
        """A run started by POST `path`, from its start to its end as the run records them."""
        return self.timed(path, body, stack)[0]

    def timed(self, path: str, body: dict | None, stack: str | None = None) -> tuple[float, dict]:
        """`timed_run`, and the run's final state."""
        _sync()
        self.http.post(path, json=body).raise_for_status()
        state = wait_succeeded(self.http, stack or self.stack, every=0.2)
        ended, began = (datetime.fromisoformat(state[k]) for k in ("finished_at", "started_at"))
        return (ended - began).total_seconds(), state

    def into(self, destination: int) -> tuple[float, str]:
        """A backup straight into the repository: its time and name."""
        path = f"/api/destinations/{destination}/backups"
        seconds, state = self.timed(path, {"stack": self.stack})
        return seconds, str(state["artifact"])

    def backup(self) -> tuple[float, str]:
        before = {b["name"] for b in self.http.get("/api/backups").json()}
        seconds = self.timed_run(f"/api/stacks/{self.stack}/backups", {})
        (name,) = [
            b["name"] for b in self.http.get("/api/backups").json() if b["name"] not in before
        ]
        return seconds, name

    def push(self, name: str, destination: int) -> float:
        return self.timed_run(f"/api/backups/{name}/push", {"destination_id": destination})

    def pull(self, name: str, destination: int) -> float:
        return self.timed_run(f"/api/destinations/{destination}/archives/{name}/pull", None)

    def restore(self, name: str, clone: str) -> float:
        return self.timed_run(f"/api/backups/{name}/restore", {"stack": clone}, stack=clone)

    def delete(self, name: str) -> None:
        self.http.delete(f"/api/backups/{name}").raise_for_status()

    def repository(self, folder: Path, label: str) -> int:
        made = self.http.post(
            "/api/destinations/repositories",
            json={
                "name": label,
                "settings": {
                    "type": "repository",
                    "location": {"type": "folder", "path": str(folder)},
                },
            },
        )
        made.raise_for_status()
        return int(made.json()["destination"]["id"])


def one_round(service: Service, n: int, sizes: list[int], made: list[str]) -> tuple[Round, str]:
    """A round (see the module's text); archive A's name (kept for the breakdown)."""
    root, stack = service.root, service.stack
    volume = f"{stack}_data"
    repo, plain, other = root / f"repo{n}", root / f"plain{n}", root / f"pushed{n}"
    plain.mkdir()
    destination = service.repository(repo, f"vault{n}")
    pushed_into = service.repository(other, f"pushed{n}")
    reference = FilesReference(volume, root / "files-reference") if n == 0 else None
    try:
        backup_a, a = service.backup()
        copy_a = _copy(service.backups / a, plain / a)
        into_a, _ = service.into(destination)
        first = _du(repo)
        push_a = service.push(a, pushed_into)
        files_first = reference.backup() if reference and reference.readable else 0

        _change(volume, sizes, seed=1000 + n)
        backup_b, b = service.backup()
        held_by_b = _busybox(volume, DIGESTS) if n == 0 else ""
        copy_b = _copy(service.backups / b, plain / b)
        into_b, b_kept = service.into(destination)
        second = _du(repo)
        growth = second - first
        if reference and reference.readable:
            grown = reference.backup() - files_first
            print(
                f"round 0: restic itself on the volume's files: {files_first / MIB:.1f} MiB "
                f"stored first, +{grown / MIB:.1f} MiB after the spread change "
                f"({100 * grown / files_first:.1f}% of the first)",
                flush=True,
            )
        elif reference:
            print(f"round 0: {reference.mountpoint} is not readable here: no files reference")

        _replace(volume, sizes, seed=2000 + n)
        _, c = service.backup()
        size_c = (service.backups / c).stat().st_size
        service.delete(c)
        into_c, _ = service.into(destination)
        growth_files = _du(repo) - second
        size_a, size_b = ((service.backups / x).stat().st_size for x in (a, b))

        plain_clone, pulled_clone = f"{stack}-p{n}", f"{stack}-r{n}"
        made += [f"{plain_clone}_data", f"{pulled_clone}_data"]

        def through_plain() -> tuple[float, float]:
            service.delete(b)
            copy_back = _copy(plain / b, service.backups / b)
            restored = service.restore(b, plain_clone)
            service.delete(b)
            return copy_back, restored

        def through_repository() -> tuple[float, float]:
            pull = service.pull(b_kept, destination)
            restored = service.restore(b_kept, pulled_clone)
            service.delete(b_kept)
            return pull, restored

        if n % 2 == 0:
            copy_back, restore_plain = through_plain()
            pull, restore_pulled = through_repository()
        else:
            pull, restore_pulled = through_repository()
            copy_back, restore_plain = through_plain()
        if n == 0:
            same = _busybox(f"{pulled_clone}_data", DIGESTS) == held_by_b
            print(
                "round 0: the volume restored from the repository "
                f"{'holds the same files as when B was made (SHA-256)' if same else 'DIFFERS'}",
                flush=True,
            )
            if not same:
                raise RuntimeError("the volume restored from the repository differs")
        subprocess.run(
            ["docker", "volume", "rm", "-f", f"{plain_clone}_data", f"{pulled_clone}_data"],
            capture_output=True,
        )
    finally:
        for kept in (destination, pushed_into):
            service.http.delete(f"/api/destinations/{kept}")
        for folder in (repo, plain, other, root / "files-reference"):
            shutil.rmtree(folder, ignore_errors=True)
    result = Round(
        backup_a, copy_a, into_a, push_a, backup_b, copy_b, into_b, size_a, size_b, growth,
        first, copy_back, restore_plain, pull, restore_pulled, growth_files, size_c,
    )  # fmt: skip
    print(
        f"round {n}: A {size_a / MIB:.1f} MiB: backup {backup_a:.1f} s + cp {copy_a:.2f} s "
        f"vs into the repository {into_a:.1f} s (repository {first / MIB:.1f} MiB; the "
        f"archive pushed: {push_a:.1f} s) | B {size_b / MIB:.1f} MiB: backup {backup_b:.1f} s "
        f"+ cp {copy_b:.2f} s vs into {into_b:.1f} s, repository +{growth / MIB:.1f} MiB "
        f"({result.growth_percent:.1f}%) | C (files rewritten): into {into_c:.1f} s, "
        f"repository +{growth_files / MIB:.1f} MiB ({result.files_percent:.1f}%) | restore: "
        f"pull {pull:.1f} s + restore {restore_pulled:.1f} s vs cp {copy_back:.2f} s + "
        f"restore {restore_plain:.1f} s",
        flush=True,
    )
    return result, a


# -- where the time goes -----------------------------------------------------------------
def _timed(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def breakdown(archive: Path, scratch: Path) -> None:
    """Each step of a push and of a pull alone, on the parts of `archive` (see above)."""
    scratch.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "RESTIC_PASSWORD": "the instance's key",
        "RESTIC_REPOSITORY": str(scratch / "repo"),
    }
    restic = RESTIC
    # As the service makes a repository: its own key first, then the recovery key.
    subprocess.run([*restic, "init"], env=env, check=True, capture_output=True)
    (scratch / "recovery").write_text("the recovery key")
    subprocess.run(
        [*restic, "key", "add", "--new-password-file", str(scratch / "recovery")],
        env=env,
        check=True,
        capture_output=True,
    )
    keys = subprocess.run(
        [*restic, "key", "list", "--json"], env=env, check=True, capture_output=True, text=True
    ).stdout
    own = next(k["id"] for k in json.loads(keys) if k["current"])
    raws: list[Path] = []
    gunzip = 0.0
    with ArchiveReader(archive) as reader:
        members = _gzip_members(reader)
        for i, member in enumerate(members):
            raw = scratch / f"part{i}.tar"
            raws.append(raw)
            inflate = zlib_ng.decompressobj(31)
            with raw.open("wb") as out:
                began = time.perf_counter()
                for chunk in reader.chunks(member):
                    data = inflate.decompress(chunk)
                    gunzip += time.perf_counter() - began
                    out.write(data)
                    began = time.perf_counter()
                out.write(inflate.flush())
    raw_bytes = sum(r.stat().st_size for r in raws)

    def backup() -> None:
        for raw in raws:
            with raw.open("rb") as stdin:
                subprocess.run(
                    [*restic, "backup", "--json", "--stdin", "--stdin-filename", raw.name],
                    env=env, stdin=stdin, check=True, stdout=subprocess.DEVNULL,
                )  # fmt: skip

    def dump() -> None:
        for raw in raws:
            subprocess.run(
                [*restic, "dump", "latest", f"/{raw.name}", "--path", f"/{raw.name}"],
                env=env, check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip

    def gzip(level: int) -> None:
        for raw in raws:
            deflate = zlib_ng.compressobj(level, zlib_ng.DEFLATED, 31)
            with raw.open("rb") as source:
                while chunk := source.read(MIB):
                    deflate.compress(chunk)
            deflate.flush()

    _sync()
    new = _timed(backup)
    _sync()
    known = _timed(backup)
    dumped = _timed(dump)
    gzip6 = _timed(lambda: gzip(6))
    gzip1 = _timed(lambda: gzip(1))

    def opened(key: str, *hint: str) -> float:
        keyed = {**env, "RESTIC_PASSWORD": key}
        return median(
            _timed(lambda: subprocess.run([*restic, *hint, "unlock"], env=keyed, check=True))
            for _ in range(3)
        )

    own_open, recovery_open = opened(env["RESTIC_PASSWORD"]), opened("the recovery key")
    hinted_open = opened(env["RESTIC_PASSWORD"], "--key-hint", own)
    print(
        f"breakdown of A ({raw_bytes / MIB:.0f} MiB of tar in {len(raws)} parts), each step "
        f"alone: push = gunzip {gunzip:.1f} s + restic backup {new:.1f} s (into an empty "
        f"repository; {known:.1f} s when every chunk is known) | pull = restic dump "
        f"{dumped:.1f} s + gzip level 6 {gzip6:.1f} s (level 1, the backups' own: "
        f"{gzip1:.1f} s)",
        flush=True,
    )
    print(
        f"opening a repository with two keys (restic unlock: each key tried costs its "
        f"scrypt), which every restic run pays: {min(own_open, recovery_open):.2f} s with "
        f"the key restic tries first, {max(own_open, recovery_open):.2f} s with the other "
        f"(restic tries them in the order of their ids: the instance's key is tried "
        f"{'first' if own_open <= recovery_open else 'second'} here), {hinted_open:.2f} s "
        f"with --key-hint naming the instance's key",
        flush=True,
    )


def _gzip_members(reader: ArchiveReader) -> list[str]:
    manifest = reader.manifest
    members = [manifest.stack_member] if manifest.stack_member else []
    members += [a.member for a in manifest.assets if a.captured and a.member]
    return [m for m in members if m.endswith(".gz")]


def run() -> None:
    root = workdir()
    stack = f"repobench-{uuid.uuid4().hex[:6]}"
    volume = f"{stack}_data"
    made = [volume]
    (root / "stacks" / stack).mkdir(parents=True)
    (root / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {BUSYBOX}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    server = None
    http = None
    try:
        subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
        sizes = _sizes()
        began = time.perf_counter()
        _fill(volume, sizes)
        print(
            f"setup: {len(sizes)} random files, {TOTAL / MIB:.0f} MiB, in {volume} in "
            f"{time.perf_counter() - began:.1f} s",
            flush=True,
        )
        env = stackyard_env(root)
        env["BACKUP_HELPER_IMAGE"] = HELPER
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(root, env)
        http = httpx.Client(
            base_url=server.url, timeout=600, headers={"Authorization": f"Bearer {token}"}
        )
        http.get("/api/stacks").raise_for_status()
        service = Service(http, root, stack)

        rounds: list[Round] = []
        for n in range(ROUNDS):
            result, last_a = one_round(service, n, sizes, made)
            rounds.append(result)
            if n < ROUNDS - 1:
                service.delete(last_a)
        mid = median
        print(
            f"deduplication: repository growth after a {CHANGED:.0%} change spread in place "
            f"{mid(r.growth for r in rounds) / MIB:.1f} MiB | full archive B "
            f"{mid(r.size_b for r in rounds) / MIB:.1f} MiB | ratio "
            f"{mid(r.growth_percent for r in rounds):.1f}% | {CHANGED:.0%} as whole files "
            f"rewritten: {mid(r.growth_files for r in rounds) / MIB:.1f} MiB, ratio "
            f"{mid(r.files_percent for r in rounds):.1f}% (not judged) | first push stored "
            f"{mid(r.first for r in rounds) / MIB:.1f} MiB for an archive of "
            f"{mid(r.size_a for r in rounds) / MIB:.1f} MiB",
            flush=True,
        )
        for label, ours, theirs, ratio in (
            ("first backup into an empty repository", lambda r: r.into_a,
             lambda r: r.backup_a + r.copy_a, lambda r: r.first_ratio),
            ("next backup (3% changed)", lambda r: r.into_b,
             lambda r: r.backup_b + r.copy_b, lambda r: r.next_ratio),
            ("an archive made before, pushed (not judged)", lambda r: r.backup_a + r.push_a,
             lambda r: r.backup_a + r.copy_a, lambda r: r.push_ratio),
            ("restore", lambda r: r.pull + r.restore_pulled,
             lambda r: r.copy_back + r.restore_plain, lambda r: r.restore_ratio),
        ):  # fmt: skip
            print(
                f"{label}: through the repository {mid(ours(r) for r in rounds):.1f} s | "
                f"as an archive copied {mid(theirs(r) for r in rounds):.1f} s | ratios "
                f"{', '.join(f'{ratio(r):.2f}' for r in rounds)}",
                flush=True,
            )
        goal(
            f"repository growth after a {CHANGED:.0%} change (spread) / full archive",
            [r.growth_percent for r in rounds],
            GROWTH_GOAL,
            "%",
        )
        goal(
            "first backup into an empty repository / backup + cp",
            [r.first_ratio for r in rounds],
            BACKUP_GOAL,
            "x",
        )
        goal(
            "backup into the repository after a 3% change / backup + cp",
            [r.next_ratio for r in rounds],
            BACKUP_GOAL,
            "x",
        )
        goal(
            "pull from the repository + restore / cp back + restore",
            [r.restore_ratio for r in rounds],
            RESTORE_GOAL,
            "x",
        )
        breakdown(service.backups / last_a, root / "breakdown")
        service.delete(last_a)
    finally:
        if http is not None:
            http.close()
        if server is not None:
            server.stop()
        subprocess.run(["docker", "volume", "rm", "-f", *made], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    run()
