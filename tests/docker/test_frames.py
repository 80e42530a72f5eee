"""The engine's multiplexed stream cut into frames (pure: bytes in, frames out)."""

from __future__ import annotations

import struct

from stackyard.docker.frames import Frame, split


def _framed(stream: int, data: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


def test_frames_that_follow_one_another_on_one_stream_come_joined_in_order():
    pending = bytearray(
        _framed(1, b"a\n")
        + _framed(1, b"b\n")
        + _framed(2, b"oops\n")
        + _framed(1, b"c\n")
        + _framed(0, b"d\n")  # (stdin's number: shown as stdout, as the engine means it)
    )
    assert split(pending) == [
        Frame("stdout", b"a\nb\n"),
        Frame("stderr", b"oops\n"),
        Frame("stdout", b"c\nd\n"),
    ]
    assert pending == bytearray()


def test_a_partial_frame_stays_for_its_rest():
    whole, partial = _framed(1, b"one\n"), _framed(2, b"two\n")
    pending = bytearray(whole + partial[:5])
    assert split(pending) == [Frame("stdout", b"one\n")]
    assert pending == bytearray(partial[:5])
    pending += partial[5:]
    assert split(pending) == [Frame("stderr", b"two\n")]
    assert split(pending) == [] and pending == bytearray()
