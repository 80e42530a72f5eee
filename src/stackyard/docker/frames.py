"""A container's output as the engine streams it: pieces, each of one stream."""

from __future__ import annotations

import struct
from typing import Literal, NamedTuple

StreamName = Literal["stdout", "stderr"]

_HEADER = struct.Struct(">BxxxL")
_STREAMS: dict[int, StreamName] = {0: "stdout", 1: "stdout", 2: "stderr"}


class Frame(NamedTuple):
    """One piece of a container's output: which stream, and its bytes (a tuple: a
    followed log makes thousands a second)."""

    stream: StreamName
    data: bytes


def split(pending: bytearray) -> list[Frame]:
    """The whole frames at the start of `pending`, an engine's multiplexed stream (an
    8-byte header: stream and length, then the payload), taken out of it; a partial
    frame stays for its rest. Frames that follow one another on one stream come as one
    (their payloads joined): the engine frames each log line, and a followed log brings
    hundreds together, which are read as one text."""
    frames: list[Frame] = []
    offset = 0
    stream: StreamName = "stdout"  # of the payloads in `run`
    run: list[memoryview] = []
    with memoryview(pending) as view:  # (released before `pending` shrinks)
        while len(pending) - offset >= _HEADER.size:
            kind, size = _HEADER.unpack_from(pending, offset)
            end = offset + _HEADER.size + size
            if end > len(pending):
                break
            this = _STREAMS.get(kind, "stdout")
            if this != stream and run:
                frames.append(Frame(stream, b"".join(run)))
                run = []
            stream = this
            run.append(view[offset + _HEADER.size : end])
            offset = end
        if run:
            frames.append(Frame(stream, b"".join(run)))
        run.clear()  # (the slices go before the view is released)
    del pending[:offset]
    return frames
