"""`fs.atomic.write_atomic`: the one path-based atomic replace every writer of the data
folder uses (caches, stores, run files, the secret key)."""

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from stackyard.fs import at, atomic


def test_writes_whole_files_with_the_mode_asked_or_kept(tmp_path):
    target = tmp_path / "deep" / "er" / "file.json"
    atomic.write_atomic(target, b"one", mode=0o600)  # parents are created
    assert target.read_bytes() == b"one"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    atomic.write_atomic(target, b"two")  # no mode: the replaced file's
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh"
    atomic.write_atomic(fresh, b"")
    assert stat.S_IMODE(fresh.stat().st_mode) == atomic.NEW_FILE_MODE
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]  # no leftovers


def test_the_file_and_then_its_folder_are_fsynced(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def spy(fd):
        st = os.fstat(fd)
        synced.append("folder" if stat.S_ISDIR(st.st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    atomic.write_atomic(tmp_path / "f", b"data")
    assert synced == ["file", "folder"]  # the data before the rename, the rename after


def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "f"
    atomic.write_atomic(target, b"old contents")

    def broken(fd, data):
        os.write(fd, bytes(data)[:3])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(at, "write_all", broken)
    with pytest.raises(OSError):
        atomic.write_atomic(target, b"new contents that never land")
    assert target.read_bytes() == b"old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def _crash_mid_write(path: str) -> None:
    def half_then_die(fd, data):
        os.write(fd, bytes(data)[: len(data) // 2])
        os._exit(9)  # the process dies: no cleanup, no rename

    at.write_all = half_then_die
    atomic.write_atomic(Path(path), b"N" * 100_000)


def test_a_crash_mid_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "f"
    atomic.write_atomic(target, b"O" * 1000)
    child = multiprocessing.get_context("spawn").Process(
        target=_crash_mid_write, args=(str(target),)
    )
    child.start()
    child.join(60)
    assert child.exitcode == 9
    assert target.read_bytes() == b"O" * 1000  # whole, and the old one
