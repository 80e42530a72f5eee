"""A stack's compose file, `.env` and `.secrets` stay confined while the stack's folder is
swapped for a symlink to a folder outside the stacks folder (the swapper and the arena of
the Files race test; here the swapped folder is the stack's own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackyard.fs import beneath, syscalls
from stackyard.stacks.store import StackStore
from tests.files.test_races import SECRET, Arena, hammer, snapshot

COMPOSE = "services:\n  web:\n    image: stackyard-test/busybox:1\n"


@pytest.fixture(params=["openat2", "walk"])
def resolver(request):
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param


@pytest.mark.parametrize("operation", ["read", "secrets", "save"])
def test_stack_files_never_escape_while_the_stack_folder_is_swapped(
    tmp_path: Path, resolver, operation
):
    arena = Arena(tmp_path / "stacks", tmp_path / "outside")
    # `web` holds the stacks; its stack `box` trades places with `trap` (-> outside).
    for folder, text in ((arena.root / "web" / "box", "inside"), (arena.outside, SECRET)):
        (folder / "compose.yaml").write_text(COMPOSE + f"# {text}\n")
        (folder / ".env").write_text(f"TEXT={text}\n")
        (folder / ".secrets").write_text(f"TOKEN={text}\n")
    arena.before = snapshot(arena.outside)
    store = StackStore(arena.root / "web", lambda folder, files, env: None)

    def attempt() -> str | None:
        if operation == "read":
            files = store.read("box")
            text = files.compose + files.env
        elif operation == "secrets":
            text = store.read_secrets("box")
        else:
            store.write("box", "secrets", "TOKEN=saved\n")
            text = ""
        return f"leaked: {text[:100]}" if SECRET in text else None

    tries, done, problems = hammer(arena, attempt)
    arena.close()  # nothing outside changed
    assert not problems, problems[:5]
    assert tries >= 50 and done > 0
