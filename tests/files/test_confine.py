"""Cleaning and confining user paths under their root (on both resolvers)."""

import os

import pytest

from stackyard.errors import Forbidden, Invalid, NotFound
from stackyard.files import browse
from stackyard.files.confine import clean, open_in, opened_root, parent_in
from stackyard.fs import beneath, syscalls


@pytest.fixture(params=["openat2", "walk"])
def resolver(request):
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param


@pytest.fixture
def root(tmp_path, resolver):
    root = tmp_path / "root"
    (root / "app" / "conf").mkdir(parents=True)
    (root / "app" / "compose.yaml").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    os.symlink(tmp_path / "outside", root / "app" / "out-dir")
    os.symlink(tmp_path / "outside" / "secret", root / "app" / "out-file")
    os.symlink("../../outside/secret", root / "app" / "out-rel")
    os.symlink("conf", root / "app" / "in-dir")
    os.symlink(root / "app" / "conf", root / "app" / "abs-in")
    return root


def opens(root, path, flags=os.O_RDONLY):
    with opened_root(root) as fd:
        os.close(open_in(fd, clean(path), flags))


@pytest.mark.parametrize(
    "path",
    ["..", "../outside/secret", "app/../../outside", "a/../..", "app/./../../outside/secret"],
)
def test_dot_dot_is_refused(root, path):
    with pytest.raises(Forbidden):
        clean(path)


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "//etc"])
def test_absolute_paths_are_refused(root, path):
    with pytest.raises(Forbidden):
        clean(path)


@pytest.mark.parametrize(
    "path",
    ["app/out-dir", "app/out-dir/secret", "app/out-file", "app/out-rel", "app/abs-in"],
)
def test_symlinks_pointing_out_are_refused(root, path):
    with pytest.raises(Forbidden):
        opens(root, path)
    with pytest.raises(Forbidden), opened_root(root) as fd:
        parent_in(fd, clean(f"{path}/new" if "dir" in path else path), follow=True)


def test_links_inside_are_followed_and_links_themselves_can_be_named(root):
    assert [e.name for e in browse.list_folder(root, "app/in-dir", True)[1]] == []
    (root / "app" / "conf" / "a.ini").write_text("a")
    assert browse.read_text(root, "app/in-dir/a.ini").content == "a"
    with opened_root(root) as fd:
        parent, name = parent_in(fd, clean("app/out-file"))  # the link itself
        assert name == "out-file" and os.readlink(name, dir_fd=parent).endswith("secret")
        os.close(parent)


def test_encoded_and_odd_paths_stay_inside(root):
    with pytest.raises(NotFound):
        opens(root, "%2e%2e/outside")  # a literal name, inside the root, not found
    with pytest.raises(Invalid):
        clean("app\\..\\..")
    with pytest.raises(Invalid):
        clean("app/\x00")
    assert clean("").parts == () and clean("./app/").as_posix() == "app"
    opens(root, "")
    with pytest.raises(NotFound), opened_root(root) as fd:
        parent_in(fd, clean("nope/new"))


@pytest.mark.parametrize(
    "path",
    ["a" * 256, "app/" + "é" * 128, "/".join(["abcdefg"] * 600), "x/" * 2047 + "yz"],
)
def test_too_long_names_and_paths_are_invalid_before_anything_happens(root, path):
    with pytest.raises(Invalid) as caught:
        clean(path)
    assert "too long" in caught.value.detail
    clean("a" * 255)
    clean("/".join(["a" * 255] * 16))  # 4095 bytes
