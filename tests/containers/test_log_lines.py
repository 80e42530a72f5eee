"""A batch of a followed log's lines decoded in one go reads as each line decoded apart
(pure: the engine's bytes in, log lines out)."""

from __future__ import annotations

import random

from stackyard.containers.logs import MAX_LINE, Target, _line, _whole_lines

TARGET = Target("c0ffee", "app-web-1", "web")
STAMP = b"2026-11-29T06:00:00.123456789Z"


def _apart(data: bytes) -> list:
    return [_line(TARGET, "stdout", raw[:MAX_LINE]) for raw in data.split(b"\n")]


def test_lines_decoded_together_are_the_lines_decoded_apart():
    pieces = [
        b"plain text",
        b"",
        b"ends with a carriage return\r",
        "caf\u00e9 \u2603".encode(),
        b"broken \xc3 utf-8 \xff\xfe here",
        b"cut in the middle of a character \xe2\x98",
        b"\t tabs and  spaces ",
        b"x" * (MAX_LINE + 10),  # over-long: cut, as when decoded apart
    ]
    rng = random.Random(43)
    for _ in range(300):
        lines = [STAMP + b" " + rng.choice(pieces) for _ in range(rng.randint(1, 12))]
        data = b"\n".join(lines)
        assert _whole_lines(TARGET, "stdout", data) == _apart(data), data[:200]


def test_a_line_without_a_timestamp_keeps_its_text():
    data = STAMP + b" first\nno-stamp-here"
    assert [(line.time, line.text) for line in _whole_lines(TARGET, "stderr", data)] == [
        (STAMP.decode(), "first"),
        ("no-stamp-here", ""),
    ]
