"""Operations on (folder descriptor, name)."""

import errno
import os
import stat

import pytest

from stackyard.errors import Conflict, Forbidden, Invalid, NotFound
from stackyard.fs.at import (
    make_folders_at,
    remove_tree_at,
    rename_at,
    write_atomic_at,
)
from stackyard.fs.errors import as_error, converted
from tests.fs.trees import deep_tree

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY


@pytest.fixture
def folder(tmp_path):
    fd = os.open(tmp_path, DIRECTORY)
    yield fd
    os.close(fd)


def test_remove_tree_of_2500_levels(tmp_path, folder):
    deep_tree(tmp_path, "deep", 2500)
    os.symlink(str(tmp_path / "keep"), tmp_path / "deep" / "link-out")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "precious").write_text("x")
    before = len(os.listdir("/proc/self/fd"))
    remove_tree_at(folder, "deep")
    assert not os.path.lexists(tmp_path / "deep")
    assert (tmp_path / "keep" / "precious").read_text() == "x"  # links are not followed
    assert len(os.listdir("/proc/self/fd")) <= before  # none left open


def test_remove_tree_refuses_a_link(tmp_path, folder):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    with pytest.raises(OSError) as caught:
        remove_tree_at(folder, "link")
    assert caught.value.errno in (errno.ENOTDIR, errno.ELOOP)
    assert (tmp_path / "real").is_dir()


def test_write_atomic_keeps_the_mode_and_never_replaces_when_asked(tmp_path, folder):
    (tmp_path / "a.txt").write_text("old")
    os.chmod(tmp_path / "a.txt", 0o640)
    st = write_atomic_at(folder, "a.txt", b"new")
    assert (tmp_path / "a.txt").read_text() == "new" and stat.S_IMODE(st.st_mode) == 0o640
    with pytest.raises(FileExistsError):
        write_atomic_at(folder, "a.txt", b"newer", replace=False)
    assert (tmp_path / "a.txt").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]  # no temporary file left
    write_atomic_at(folder, "b.txt", b"b", 0o600, replace=False)
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o600


def test_rename_never_over_an_existing_entry(tmp_path, folder):
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    with pytest.raises(FileExistsError):
        rename_at(folder, "a", folder, "b", replace=False)
    rename_at(folder, "a", folder, "c", replace=False)
    assert sorted(os.listdir(tmp_path)) == ["b", "c"]
    (tmp_path / "dir").mkdir()
    with pytest.raises(OSError) as caught:
        rename_at(folder, "dir", folder, "dir/inside", replace=False)
    assert caught.value.errno == errno.EINVAL


def test_a_failed_chain_of_folders_is_undone(tmp_path, folder):
    chain = make_folders_at(folder, ["a", "b", "c"])
    assert (tmp_path / "a" / "b" / "c").is_dir()
    chain.undo()
    assert not (tmp_path / "a").exists()
    chain = make_folders_at(folder, ["a", "b"])
    (tmp_path / "a" / "other").write_text("someone else's")
    chain.undo()  # b goes; a is not empty any more and stays
    assert sorted(os.listdir(tmp_path / "a")) == ["other"]
    with pytest.raises(OSError) as caught:  # fails at the third: the first two go again
        make_folders_at(folder, ["new", "deeper", "y" * 300])
    assert caught.value.errno == errno.ENAMETOOLONG
    assert not (tmp_path / "new").exists()


def test_os_errors_become_typed_errors_without_host_paths(tmp_path):
    cases = {
        errno.ELOOP: Invalid,
        errno.ENAMETOOLONG: Invalid,
        errno.ENOTDIR: Invalid,
        errno.EEXIST: Conflict,
        errno.ENOENT: NotFound,
        errno.EACCES: Forbidden,
        errno.EXDEV: Forbidden,
    }
    for code, cls in cases.items():
        exc = OSError(code, os.strerror(code), str(tmp_path / "secret" / "host" / "path"))
        typed = as_error(exc, "web/app.ini")
        assert isinstance(typed, cls) and "web/app.ini" in typed.detail
        assert str(tmp_path) not in typed.detail
    with pytest.raises(Invalid) as caught, converted("a/b"):
        raise OSError(errno.ELOOP, "loop", "/host/path")
    assert isinstance(caught.value.__cause__, OSError)
    with pytest.raises(Invalid, match="x moved"), converted("a", EXDEV=Invalid("x moved")):
        raise OSError(errno.EXDEV, "cross")
