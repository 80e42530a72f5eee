"""Resolution beneath a folder descriptor: both implementations, the same answers."""

import contextlib
import errno
import os
import stat

import pytest

from stackyard.fs import beneath
from stackyard.fs.beneath import open_beneath, open_parent, open_parent_following

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY


@pytest.fixture
def root(tmp_path):
    """root/app/{conf/app.ini, compose.yaml} and links of every kind; outside/secret."""
    root = tmp_path / "root"
    (root / "app" / "conf").mkdir(parents=True)
    (root / "app" / "conf" / "app.ini").write_text("[app]")
    (root / "app" / "compose.yaml").write_text("services: {}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    links = {
        "app/in-dir": "conf",
        "app/in-file": "conf/app.ini",
        "app/up-and-in": "../app/conf/app.ini",
        "app/chain": "in-dir/../in-file",
        "app/out-rel": "../../outside/secret",
        "app/out-dir": "../../outside",
        "app/out-abs": str(tmp_path / "outside" / "secret"),
        "app/abs-inside": str(root / "app" / "conf"),
        "app/loop-a": "loop-b",
        "app/loop-b": "loop-a",
        "app/self": "self",
        "app/dangling": "conf/missing",
        "app/dotdot": "..",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    fd = os.open(root, DIRECTORY)
    yield fd
    os.close(fd)


def read(fd):
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


def errno_of(call):
    with pytest.raises(OSError) as caught:
        os.close(call())
    return caught.value.errno


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("app/compose.yaml", b"services: {}"),
        ("app/in-file", b"[app]"),
        ("app/in-dir/app.ini", b"[app]"),
        ("app/up-and-in", b"[app]"),  # ".." in a link target that stays inside
        ("app/chain", b"[app]"),
        ("app/dotdot/app/conf/app.ini", b"[app]"),
        ("./app//conf/app.ini", b"[app]"),
    ],
)
def test_links_inside_are_followed(root, resolver, path, content):
    assert read(open_beneath(root, path, os.O_RDONLY)) == content


@pytest.mark.parametrize(
    "path",
    [
        "app/out-rel",
        "app/out-dir",
        "app/out-dir/secret",
        "app/out-abs",
        "app/abs-inside",  # absolute links are refused even when they point inside
        "app/abs-inside/app.ini",
        "..",
        "app/../..",
        "app/dotdot/..",
        "/etc/passwd",
    ],
)
def test_links_and_dot_dot_leading_out_are_refused(root, resolver, path):
    assert errno_of(lambda: open_beneath(root, path, os.O_RDONLY)) == errno.EXDEV


@pytest.mark.parametrize("path", ["app/loop-a", "app/self", "app/loop-a/x"])
def test_loops_give_eloop(root, resolver, path):
    assert errno_of(lambda: open_beneath(root, path, os.O_RDONLY)) == errno.ELOOP


def test_missing_and_not_a_folder(root, resolver):
    assert errno_of(lambda: open_beneath(root, "app/nope", os.O_RDONLY)) == errno.ENOENT
    assert errno_of(lambda: open_beneath(root, "app/dangling", os.O_RDONLY)) == errno.ENOENT
    assert errno_of(lambda: open_beneath(root, "app/compose.yaml/x", os.O_RDONLY)) == errno.ENOTDIR
    assert errno_of(lambda: open_beneath(root, "app/compose.yaml", DIRECTORY)) == errno.ENOTDIR


def test_o_path_follows_links_too_unless_nofollow(root, resolver):
    fd = open_beneath(root, "app/in-file", os.O_PATH)
    assert stat.S_ISREG(os.fstat(fd).st_mode)
    os.close(fd)
    fd = open_beneath(root, "app/in-file", os.O_PATH | os.O_NOFOLLOW)
    assert stat.S_ISLNK(os.fstat(fd).st_mode)
    os.close(fd)
    assert errno_of(lambda: open_beneath(root, "app/out-abs", os.O_PATH)) == errno.EXDEV
    assert errno_of(lambda: open_beneath(root, "app/loop-a", os.O_PATH)) == errno.ELOOP


def test_nofollow_and_folders(root, resolver):
    assert errno_of(lambda: open_beneath(root, "app/in-file", os.O_RDONLY | os.O_NOFOLLOW)) in (
        errno.ELOOP,
    )
    fd = open_beneath(root, "app/in-dir", DIRECTORY)
    assert sorted(os.listdir(fd)) == ["app.ini"]
    os.close(fd)
    fd = open_beneath(root, "", DIRECTORY)
    assert "app" in os.listdir(fd)
    os.close(fd)


def test_create_through_a_dangling_link_inside_creates_its_target(root, resolver):
    fd = open_beneath(root, "app/dangling", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"made")
    os.close(fd)
    assert read(open_beneath(root, "app/conf/missing", os.O_RDONLY)) == b"made"


def test_parents(root, resolver):
    parent, name = open_parent(root, "app/in-dir/app.ini")
    assert name == "app.ini" and sorted(os.listdir(parent)) == ["app.ini"]
    os.close(parent)
    parent, name = open_parent(root, "app/out-abs")  # the link itself: not followed
    assert name == "out-abs" and os.readlink(name, dir_fd=parent).endswith("secret")
    os.close(parent)
    parent, name = open_parent_following(root, "app/in-file")
    assert name == "app.ini" and sorted(os.listdir(parent)) == ["app.ini"]
    os.close(parent)
    parent, name = open_parent_following(root, "app/dangling")
    assert name == "missing"
    os.close(parent)
    with pytest.raises(OSError) as caught:
        open_parent_following(root, "app/out-abs")
    assert caught.value.errno == errno.EXDEV
    with pytest.raises(OSError) as caught:
        open_parent_following(root, "app/out-rel")
    assert caught.value.errno == errno.EXDEV
    with pytest.raises(OSError) as caught:
        open_parent_following(root, "app/loop-a")
    assert caught.value.errno == errno.ELOOP


def test_the_walk_holds_no_descriptor_afterwards(root):
    with beneath.using("walk"):
        before = len(os.listdir("/proc/self/fd"))
        for path in ["app/chain", "app/out-dir/secret", "app/loop-a", "app/in-dir/app.ini"]:
            with contextlib.suppress(OSError):
                os.close(open_beneath(root, path, os.O_RDONLY))
        assert len(os.listdir("/proc/self/fd")) <= before  # none left open
