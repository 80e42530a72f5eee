"""Counting what a folder holds: links not followed, skipped folders left out, the count
stopped at its limit and said to be incomplete."""

from __future__ import annotations

import os

from stackyard.fs.tally import Tally, tally


def test_files_and_bytes_under_a_folder_without_links_or_skipped_folders(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"x" * 10)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_bytes(b"y" * 5)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "big").write_bytes(b"z" * 1000)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "huge").write_bytes(b"w" * 5000)
    os.symlink(outside, tmp_path / "link")  # a file of its own, never followed
    os.mkfifo(tmp_path / "pipe")

    assert tally(tmp_path) == Tally(files=5, size=1015, complete=True)
    assert tally(tmp_path, skip={tmp_path / "data"}) == Tally(files=4, size=15, complete=True)


def test_the_count_stops_at_its_limit_and_says_so(tmp_path):
    for n in range(10):
        (tmp_path / f"f{n}").write_bytes(b"x")
    counted = tally(tmp_path, limit=4)
    assert counted.files == 4 and not counted.complete
