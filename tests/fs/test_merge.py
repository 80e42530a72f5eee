"""Moving a staged tree into a folder: merged where both have a folder, replaced (the
old moved aside) elsewhere and under `replace`, untouched where the stage has nothing;
and `undo` puts every entry, and every folder's owner, mode and times, back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackyard.fs.merge import Meta, Step, move_in, undo_noted


def tree(root: Path) -> dict[str, tuple[str, int, int, str]]:
    """Every entry: type, mode, mtime (ns) and content or link target."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = path.lstat()
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = ("link", st.st_mode, 0, os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", st.st_mode, st.st_mtime_ns, "")
            else:
                found[rel] = ("file", st.st_mode, st.st_mtime_ns, path.read_text())
    st = root.stat()
    found["."] = ("dir", st.st_mode, st.st_mtime_ns, "")
    return found


@pytest.fixture
def roots(tmp_path):
    staged, target, aside = tmp_path / "staged", tmp_path / "target", tmp_path / "aside"
    for folder in (staged, target, aside):
        folder.mkdir()
    (target / "compose.yaml").write_text("old compose")
    (target / "config").mkdir()
    (target / "config" / "app.ini").write_text("old ini")
    (target / "config" / "local.ini").write_text("made after the backup")
    (target / "data").mkdir()
    (target / "data" / "new").write_text("made after the backup")
    (target / "link").symlink_to("/etc")
    (target / "was-a-folder").mkdir()
    (target / "was-a-folder" / "x").write_text("x")
    os.utime(target / "config", ns=(1, 1_000_000_000))

    (staged / "compose.yaml").write_text("new compose")
    (staged / "config").mkdir(mode=0o750)
    (staged / "config" / "app.ini").write_text("new ini")
    (staged / "data").mkdir()
    (staged / "data" / "old").write_text("from the backup")
    (staged / "link").mkdir()  # a folder where a link was: never written through
    (staged / "link" / "f").write_text("f")
    (staged / "was-a-folder").write_text("a file now")
    (staged / "fresh").mkdir()
    (staged / "fresh" / "f").write_text("new folder")
    os.utime(staged / "config", ns=(2, 2_000_000_000))
    os.utime(staged, ns=(3, 3_000_000_000))
    return staged, target, aside


def test_the_stage_is_moved_in_and_the_rest_kept(roots):
    _staged, target, aside = roots
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in roots]
    try:
        move = move_in(*fds, replace=frozenset({"data"}))
        assert (target / "compose.yaml").read_text() == "new compose"
        assert (target / "config" / "app.ini").read_text() == "new ini"
        assert (target / "config" / "local.ini").read_text() == "made after the backup"
        assert (target / "config").stat().st_mode & 0o777 == 0o750
        assert (target / "config").stat().st_mtime_ns == 2_000_000_000
        assert target.stat().st_mtime_ns == 3_000_000_000
        assert sorted(os.listdir(target / "data")) == ["old"]  # replaced whole
        assert not (target / "link").is_symlink() and (target / "link" / "f").is_file()
        assert Path("/etc/f").exists() is False
        assert (target / "was-a-folder").read_text() == "a file now"
        assert (target / "fresh" / "f").read_text() == "new folder"
        assert (aside / "data" / "new").read_text() == "made after the backup"
        move.finish()
        assert os.listdir(aside) == []
    finally:
        for fd in fds:
            os.close(fd)


def test_undo_puts_everything_back(roots):
    staged, target, _aside = roots
    before_target, before_staged = tree(target), tree(staged)
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in roots]
    try:
        move = move_in(*fds, replace=frozenset({"data"}))
        move.undo()
    finally:
        for fd in fds:
            os.close(fd)
    after = tree(target)
    # The root's and merged folders' own times are put back; entries moved in and out
    # of a folder change its mtime as they go, which undo sets again for merged ones.
    assert after == before_target
    assert {k: v[0] for k, v in tree(staged).items()} == {k: v[0] for k, v in before_staged.items()}


def test_a_failure_midway_is_undone(roots, monkeypatch):
    _staged, target, _aside = roots
    before = tree(target)
    calls = []
    real = os.rename

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, "rename", failing)
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in roots]
    try:
        with pytest.raises(OSError, match="No space"):
            move_in(*fds, replace=frozenset())
    finally:
        for fd in fds:
            os.close(fd)
    assert tree(target) == before


_KILLED_MIDWAY = """
import dataclasses, json, os, signal, sys
from stackyard.fs.merge import move_in
staged, target, aside, log = sys.argv[1:5]
after, taken = int(sys.argv[5]), sys.argv[6] == "taken"
fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in (staged, target, aside)]
out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
noted = 0
def note(step):
    global noted
    if noted == after and taken:  # every noted step was taken
        os.kill(os.getpid(), signal.SIGKILL)
    os.write(out, json.dumps(dataclasses.astuple(step)).encode() + b"\\n")
    noted += 1
    if noted == after and not taken:  # the last noted step was not
        os.kill(os.getpid(), signal.SIGKILL)
move_in(*fds, replace=frozenset({"data"}), note=note)
"""


@pytest.mark.parametrize("taken", ["taken", "noted"])
@pytest.mark.parametrize("after", [1, 2, 3, 6, 9, 12])
def test_a_move_killed_midway_is_undone_from_its_log(roots, tmp_path, after, taken):
    """SIGKILL of the process in the middle of a move (its last noted step taken, or
    noted only): what its log says is taken back, and the target is as it was."""

    staged, target, aside = roots
    before, before_staged = tree(target), tree(staged)
    log = tmp_path / "log"
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_MIDWAY, *map(str, roots), str(log), str(after), taken],
        capture_output=True,
    )
    assert done.returncode == -9, done.stderr  # killed: the move did not finish
    steps = []
    for line in log.read_bytes().splitlines():
        kind, path, meta = json.loads(line)
        steps.append(Step(kind, path, Meta(*meta) if meta else None))
    assert len(steps) == after
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in roots]
    try:
        undo_noted(*fds, steps)
    finally:
        for fd in fds:
            os.close(fd)
    assert tree(target) == before
    assert {k: v[0] for k, v in tree(staged).items()} == {k: v[0] for k, v in before_staged.items()}
    assert [name for _, _, files in os.walk(aside) for name in files] == []  # folders only
