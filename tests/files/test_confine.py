import os

import pytest

from stackyard.errors import Forbidden, Invalid, NotFound
from stackyard.files.confine import confine


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    (root / "app" / "conf").mkdir(parents=True)
    (root / "app" / "compose.yaml").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    os.symlink(tmp_path / "outside", root / "app" / "out-dir")
    os.symlink(tmp_path / "outside" / "secret", root / "app" / "out-file")
    os.symlink("conf", root / "app" / "in-dir")
    return root


@pytest.mark.parametrize(
    "path",
    ["..", "../outside/secret", "app/../../outside", "a/../..", "app/./../../outside/secret"],
)
def test_dot_dot_is_refused(root, path):
    with pytest.raises(Forbidden):
        confine(root, path)
    with pytest.raises(Forbidden):
        confine(root, path, must_exist=False)


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "//etc"])
def test_absolute_paths_are_refused(root, path):
    with pytest.raises(Forbidden):
        confine(root, path)


@pytest.mark.parametrize("path", ["app/out-dir", "app/out-dir/secret", "app/out-file"])
def test_symlinks_pointing_out_are_refused(root, path):
    with pytest.raises(Forbidden):
        confine(root, path)
    with pytest.raises(Forbidden):
        confine(root, f"{path}/new" if "dir" in path else path, must_exist=False)


def test_links_inside_are_followed_and_links_themselves_can_be_named(root):
    assert confine(root, "app/in-dir") == (root / "app" / "conf").resolve()
    assert confine(root, "app/out-file", follow=False) == (root / "app" / "out-file").absolute()


def test_encoded_and_odd_paths_stay_inside(root):
    with pytest.raises(NotFound):
        confine(root, "%2e%2e/outside")  # a literal name, inside the root, not found
    with pytest.raises(Invalid):
        confine(root, "app\\..\\..")
    with pytest.raises(Invalid):
        confine(root, "app/\x00")
    assert confine(root, "") == root.resolve()
    assert confine(root, "./app/") == (root / "app").resolve()
    with pytest.raises(NotFound):
        confine(root, "nope/new", must_exist=False)
