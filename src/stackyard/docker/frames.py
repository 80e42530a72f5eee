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
    frame stays for its rest."""
    frames: list[Frame] = []
    offset = 0
    while len(pending) - offset >= _HEADER.size:
        kind, size = _HEADER.unpack_from(pending, offset)
        end = offset + _HEADER.size + size
        if end > len(pending):
            break
        frames.append(
            Frame(_STREAMS.get(kind, "stdout"), bytes(pending[offset + _HEADER.size : end]))
        )
        offset = end
    del pending[:offset]
    return frames
