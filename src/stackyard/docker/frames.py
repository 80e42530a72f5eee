"""A container's output as the engine streams it: pieces, each of one stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StreamName = Literal["stdout", "stderr"]


@dataclass(frozen=True)
class Frame:
    """One piece of a container's output: which stream, and its bytes."""

    stream: StreamName
    data: bytes
