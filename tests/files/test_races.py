"""Confinement holds while a folder is swapped for a symlink to outside the root.

A background thread exchanges `web/box` (a real folder) and `web/trap` (a symlink to a
folder outside the root) atomically with renameat2(RENAME_EXCHANGE), over and over,
while one operation runs again and again on paths through `web/box`. Whatever the
timing, no answer may hold the outside content and nothing outside may change: no file
read, written, created (temporary files included), renamed or deleted there.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import pytest

from stackyard.errors import StackyardError
from stackyard.files import browse, download, upload
from stackyard.fs import beneath, syscalls
from tests.support.waiting import PATIENCE, wait_until

RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)
MIN_TRIES, MAX_SECONDS = 300, 3.0
SECRET = "OUTSIDE-SECRET"


class Swapper:
    """Swaps two names of one folder atomically until stopped."""

    def __init__(self, folder: Path, a: str, b: str) -> None:
        self.fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        self.a, self.b = a.encode(), b.encode()
        self.stop = threading.Event()
        self.swaps = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            if _libc.renameat2(self.fd, self.a, self.fd, self.b, RENAME_EXCHANGE) != 0:
                raise OSError(ctypes.get_errno(), "renameat2")
            self.swaps += 1
            if self.swaps % 8 == 0:
                time.sleep(0)  # let the requests' threads have the GIL too

    def __enter__(self) -> Swapper:
        self.thread.start()
        # Under load the thread may wait for a CPU: the race starts once it swaps.
        wait_until(lambda: self.swaps > 10, what="the swapper under way", interval=0.001)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()
        os.close(self.fd)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Everything in `folder`: names, kinds, contents, modification times."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        seen[str(path.relative_to(folder))] = (st.st_mode, st.st_mtime_ns, content)
    return seen


class Arena:
    """root/web/box (inside) and outside/ with the same names, so that an escape shows."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.root, self.outside = root, outside
        web = root / "web"
        (web / "box").mkdir(parents=True)
        outside.mkdir()
        for folder, text in ((web / "box", "inside"), (outside, SECRET)):
            for name in ("f.txt", "del.txt", "mv.txt"):
                (folder / name).write_text(text)
            (folder / "tree" / "sub").mkdir(parents=True)
            (folder / "tree" / "sub" / "inner.txt").write_text(text)
        (outside / "secret-only.txt").write_text(SECRET)
        os.symlink(outside, web / "trap")
        # The real folder, whatever its name at the moment: fixtures are reset through it.
        self.box = os.open(web / "box", os.O_RDONLY | os.O_DIRECTORY)
        self.before = snapshot(outside)

    def reset_file(self, name: str) -> None:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=self.box)
        os.write(fd, b"inside")
        os.close(fd)

    def remove(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self.box)
        except IsADirectoryError:
            os.rmdir(name, dir_fd=self.box)
        except FileNotFoundError:
            pass

    def reset_tree(self) -> None:
        for folder in ("tree", "tree/sub"):
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, dir_fd=self.box)
        self.reset_file("tree/sub/inner.txt")

    def close(self) -> None:
        os.close(self.box)
        assert snapshot(self.outside) == self.before, "something outside the root changed"


def hammer(arena: Arena, attempt) -> tuple[int, int, list[str]]:
    """Run `attempt` under the swapper: (tries, successes, leaks and surprises). It goes
    on until some attempts got through (a loaded machine may refuse many in a row), within
    PATIENCE seconds."""
    problems: list[str] = []
    tries = done = 0
    with Swapper(arena.root / "web", "box", "trap") as swapper:
        began = time.monotonic()
        while True:
            elapsed = time.monotonic() - began
            more = tries < MIN_TRIES or (elapsed < 0.5 and tries < 3 * MIN_TRIES)
            if (not more and done) or (elapsed > MAX_SECONDS and tries >= 50 and done):
                break
            if elapsed > PATIENCE:
                break
            tries += 1
            try:
                leaked = attempt()
            except StackyardError:
                continue
            except Exception as exc:  # anything else would be a 500
                problems.append(f"unexpected {type(exc).__name__}: {exc}")
                continue
            done += 1
            if leaked:
                problems.append(leaked)
        assert swapper.swaps > 10
    return tries, done, problems


def _body(data: bytes):
    async def chunks():
        yield data

    return chunks()


def _unzip_names(chunks) -> list[str]:
    return zipfile.ZipFile(io.BytesIO(b"".join(chunks))).namelist()


def operations(arena: Arena):
    root = arena.root

    def read():
        content = browse.read_text(root, "web/box/f.txt").content
        return SECRET in content and f"read leaked: {content}"

    def listing():
        names = [e.name for e in browse.list_folder(root, "web/box", True)[1]]
        return "secret-only.txt" in names and f"listing leaked: {names}"

    def download_file():
        prepared = download.prepare(root, "web/box/f.txt", 6)
        data = b"".join(prepared.chunks)
        return SECRET.encode() in data and f"download leaked: {data!r}"

    def download_zip():
        names = _unzip_names(download.prepare(root, "web/box", 0).chunks)
        names += _unzip_names(download.prepare(root, "web", 0).chunks)
        leaked = [n for n in names if "secret-only" in n]
        return leaked and f"zip leaked: {leaked}"

    def save():
        try:
            browse.save_text(root, "web/box/new.txt", "saved", None)
            browse.save_text(root, "web/box/f.txt", "x", _version(arena))
        finally:
            arena.remove("new.txt")
            arena.reset_file("f.txt")

    def upload_file():
        try:
            asyncio.run(upload.receive(root, "web/box/f.txt", _body(b"up"), True))
            asyncio.run(upload.receive(root, "web/box/up/deeper/x.bin", _body(b"up"), False))
        finally:
            arena.reset_file("f.txt")
            for name in ("up/deeper/x.bin", "up/deeper", "up"):
                arena.remove(name)

    def mkdir():
        try:
            browse.make_folder(root, "web/box/newdir")
        finally:
            arena.remove("newdir")

    def delete():
        try:
            browse.delete(root, "web/box/del.txt", recursive=False)
            browse.delete(root, "web/box/tree", recursive=True)
        finally:
            arena.reset_file("del.txt")
            arena.reset_tree()

    def move():
        try:
            browse.move(root, "web/box/mv.txt", "web/box/mv2.txt")
        finally:
            arena.remove("mv2.txt")
            arena.reset_file("mv.txt")

    return {
        "read": read,
        "list": listing,
        "download": download_file,
        "zip": download_zip,
        "save": save,
        "upload": upload_file,
        "mkdir": mkdir,
        "delete": delete,
        "move": move,
    }


def _version(arena: Arena) -> str:
    st = os.stat("f.txt", dir_fd=arena.box)
    return f"{st.st_mtime_ns:x}-{st.st_size:x}"


OPERATIONS = ["read", "list", "download", "zip", "save", "upload", "mkdir", "delete", "move"]


@pytest.fixture(params=["openat2", "walk"])
def resolver(request):
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param


@pytest.mark.parametrize("operation", OPERATIONS)
def test_no_operation_escapes_while_a_folder_is_swapped(tmp_path, resolver, operation):
    arena = Arena(tmp_path / "stacks", tmp_path / "outside")
    tries, done, problems = hammer(arena, operations(arena)[operation])
    arena.close()
    assert not problems, problems[:5]
    assert tries >= 50 and done > 0  # some attempts got through, none of them out


def upload_request(client, path, data, **params):
    return client.put(
        "/api/files/upload",
        params={"path": path, **params},
        content=data,
        headers={"Content-Type": "application/octet-stream"},
    )


def requests(client, arena: Arena):
    def read():
        yield client.get("/api/files/content", params={"path": "web/box/f.txt"})

    def download_file():
        yield client.get("/api/files/download", params={"path": "web/box/f.txt"})

    def listing():
        yield client.get("/api/files", params={"path": "web/box", "hidden": True})

    def upload_file():
        yield upload_request(client, "web/box/f.txt", b"up", overwrite=True)
        yield upload_request(client, "web/box/up/x.bin", b"up")
        arena.reset_file("f.txt")
        for name in ("up/x.bin", "up"):
            arena.remove(name)

    def delete():
        yield client.delete("/api/files", params={"path": "web/box/del.txt"})
        yield client.delete("/api/files", params={"path": "web/box/tree", "recursive": True})
        arena.reset_file("del.txt")
        arena.reset_tree()

    return {
        "read": read,
        "download": download_file,
        "list": listing,
        "upload": upload_file,
        "delete": delete,
    }


@pytest.mark.parametrize("operation", ["read", "download", "list", "upload", "delete"])
def test_no_request_escapes_while_a_folder_is_swapped(
    admin_client, stacks_dir, tmp_path, operation
):
    arena = Arena(stacks_dir, tmp_path / "outside")
    send = requests(admin_client, arena)[operation]

    def attempt():
        for answer in send():
            if answer.status_code >= 500:
                return f"{answer.status_code}: {answer.text[:200]}"
            if SECRET in answer.text or "secret-only" in answer.text:
                return f"leaked: {answer.text[:200]}"
            if answer.status_code >= 400 and not answer.json().get("detail"):
                return f"no detail: {answer.text[:200]}"
        return None

    _tries, done, problems = hammer(arena, attempt)
    arena.close()
    assert not problems, problems[:5]
    assert done > 0
