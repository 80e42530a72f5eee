"""The project directories compose gets: the host's path of the stacks folder, made to
lead to it where that is safe (pure file-system logic; the deployment test shows compose
binding the host's folders through it)."""

from __future__ import annotations

from pathlib import Path

from stackyard.stacks.project_dirs import project_dirs


def test_same_path_needs_nothing(tmp_path: Path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    dirs = project_dirs(stacks, stacks, in_container=True)
    assert dirs.host_dir is None and dirs.problem is None
    assert dirs.project_dir(stacks / "app") == stacks / "app"


def test_in_a_container_the_host_path_is_linked_to_the_mounted_folder(tmp_path: Path):
    stacks = tmp_path / "stacks"
    (stacks / "app").mkdir(parents=True)
    host = tmp_path / "srv" / "host-stacks"
    dirs = project_dirs(stacks, host, in_container=True)
    assert dirs.usable and dirs.problem is None
    assert host.is_symlink() and host.resolve() == stacks.resolve()
    assert dirs.project_dir(stacks / "app") == host / "app"
    (stacks / "app" / "compose.yaml").write_text("services: {}\n")
    assert (dirs.project_dir(stacks / "app") / "compose.yaml").read_text() == "services: {}\n"
    # A second start finds the link and keeps it.
    again = project_dirs(stacks, host, in_container=True)
    assert again.usable and host.is_symlink()


def test_an_existing_path_is_never_replaced(tmp_path: Path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    host = tmp_path / "taken"
    host.mkdir()
    (host / "keep.txt").write_text("mine\n")
    dirs = project_dirs(stacks, host, in_container=True)
    assert not dirs.usable and dirs.problem and str(host) in dirs.problem
    assert (host / "keep.txt").read_text() == "mine\n" and not host.is_symlink()
    assert dirs.project_dir(stacks / "app") == stacks.resolve() / "app"


def test_outside_a_container_nothing_is_made(tmp_path: Path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    host = tmp_path / "elsewhere"
    dirs = project_dirs(stacks, host, in_container=False)
    assert not dirs.usable and dirs.problem and "outside a container" in dirs.problem
    assert not host.exists()


def test_a_host_path_that_already_leads_to_the_folder_is_used(tmp_path: Path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    host = tmp_path / "bind-of-stacks"
    host.symlink_to(stacks)
    dirs = project_dirs(stacks, host, in_container=False)
    assert dirs.usable and dirs.project_dir(stacks / "x") == host / "x"
