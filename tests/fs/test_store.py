"""`fs.jsonstore.JsonStore`: the one locked JSON store (digest cache, stack preferences,
registry credentials, last runs, the project cache)."""

import json
import multiprocessing
import stat
import threading
from pathlib import Path

import pytest

from stackyard.fs import at
from stackyard.fs.jsonstore import JsonStore, StoreCorrupt

ROUNDS = 100


def test_a_missing_or_corrupt_file_reads_as_the_default(tmp_path):
    store = JsonStore(tmp_path / "s.json")
    assert store.read({"empty": True}) == {"empty": True}
    (tmp_path / "s.json").write_text("{not json")
    assert store.read({}) == {}
    with pytest.raises(StoreCorrupt):
        store.read({}, strict=True)
    (tmp_path / "s.json").write_bytes(b"\xff\xfe\x00")
    assert store.read([]) == []


def test_updates_are_written_private_and_whole(tmp_path):
    store = JsonStore(tmp_path / "s.json")
    assert store.update(lambda doc: {**doc, "a": 1}, {}) == {"a": 1}
    assert store.update(lambda doc: {**doc, "b": 2}, {}) == {"a": 1, "b": 2}
    assert json.loads((tmp_path / "s.json").read_text()) == {"a": 1, "b": 2}
    assert stat.S_IMODE((tmp_path / "s.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(store.lock_path.stat().st_mode) & 0o077 == 0
    store.remove()
    assert store.read("gone") == "gone"
    assert not store.lock_path.exists()


class _Reversed:
    def encode(self, data: bytes) -> bytes:
        return data[::-1]

    def decode(self, data: bytes) -> bytes:
        if not data.endswith(b"{"):
            raise ValueError("not sealed by us")
        return data[::-1]


def test_a_codec_seals_the_bytes_on_disk(tmp_path):
    store = JsonStore(tmp_path / "s", codec=_Reversed())
    store.write({"k": "v"})
    assert (tmp_path / "s").read_bytes() == b'{"k": "v"}'[::-1]
    assert store.read() == {"k": "v"}
    (tmp_path / "s").write_bytes(b'{"k": "v"}')  # not sealed: the codec refuses
    assert store.read({}) == {}
    with pytest.raises(StoreCorrupt):
        store.read({}, strict=True)


def _count(path: str, rounds: int, key: str) -> None:
    store = JsonStore(Path(path))
    for _ in range(rounds):
        store.update(lambda doc: {**doc, key: doc.get(key, 0) + 1, "n": doc.get("n", 0) + 1}, {})


def test_two_processes_updating_at_once_lose_no_write(tmp_path):
    path = str(tmp_path / "counter.json")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_count, args=(path, ROUNDS, k)) for k in ("a", "b")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert JsonStore(Path(path)).read() == {"a": ROUNDS, "b": ROUNDS, "n": 2 * ROUNDS}


def test_threads_updating_at_once_lose_no_write(tmp_path):
    threads = [
        threading.Thread(target=_count, args=(str(tmp_path / "c.json"), ROUNDS, k))
        for k in ("a", "b", "c")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert JsonStore(tmp_path / "c.json").read()["n"] == 3 * ROUNDS


def _crash_while_writing(path: str) -> None:
    def half_then_die(fd, data):
        import os

        os.write(fd, bytes(data)[:5])
        os._exit(9)

    at.write_all = half_then_die
    JsonStore(Path(path)).update(lambda doc: {**doc, "big": "x" * 10_000}, {})


def test_a_crash_mid_write_leaves_the_old_document_and_frees_the_lock(tmp_path):
    store = JsonStore(tmp_path / "s.json")
    store.write({"old": True})
    child = multiprocessing.get_context("spawn").Process(
        target=_crash_while_writing, args=(str(store.path),)
    )
    child.start()
    child.join(60)
    assert child.exitcode == 9
    assert store.read() == {"old": True}
    assert store.update(lambda doc: {**doc, "after": 1}, {}) == {"old": True, "after": 1}
