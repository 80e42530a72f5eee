"""The check pass reads and hashes a part in a thread of its own, ahead of the
inflating: every byte in order, and no thread left however the check ends."""

from __future__ import annotations

import hashlib
import os
import threading

import pytest

from stackyard.backups.archive import AHEAD, _hashed_ahead


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "stackyard-archive-read"]


def test_every_chunk_comes_through_in_order_and_is_hashed():
    chunks = [os.urandom(1000 + n) for n in range(50)]
    digest = hashlib.sha256()
    assert list(_hashed_ahead(iter(chunks), digest)) == chunks
    assert digest.hexdigest() == hashlib.sha256(b"".join(chunks)).hexdigest()
    assert readers() == []


def test_a_consumer_that_stops_early_leaves_no_reader_and_closes_the_source():
    closed = threading.Event()
    produced = []

    def source():
        try:
            for n in range(10_000):
                produced.append(n)
                yield b"x" * 4096
        finally:
            closed.set()

    ahead = _hashed_ahead(source(), hashlib.sha256())
    assert next(ahead) == b"x" * 4096
    ahead.close()
    assert closed.is_set() and readers() == []
    assert len(produced) <= AHEAD + 3  # read ahead by a bounded number of chunks only


def test_an_error_while_reading_reaches_the_consumer():
    def source():
        yield b"first"
        raise OSError("the disk went away")

    ahead = _hashed_ahead(source(), hashlib.sha256())
    assert next(ahead) == b"first"
    with pytest.raises(OSError, match="the disk went away"):
        next(ahead)
    assert readers() == []
