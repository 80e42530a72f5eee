"""Bytes said to people: decimal units, as the UI and Docker say them."""

from __future__ import annotations

import math


def size_text(size: int) -> str:
    """ "512 B", "12.3 MB"."""
    if size < 1000:
        return f"{size} B"
    units = ("kB", "MB", "GB", "TB")
    step = min(int(math.log(size, 1000)), len(units))
    return f"{size / 1000**step:.1f} {units[step - 1]}"
