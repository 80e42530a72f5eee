"""Semantic version parsing and ordering (the running version and release tags)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


class SemVer(NamedTuple):
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    def sort_key(self) -> tuple[Any, ...]:
        # A release sorts after its pre-releases; numeric identifiers sort numerically.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, not self.prerelease, pre)


def parse_semver(text: str) -> SemVer:
    match = _SEMVER.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a semantic version (expected MAJOR.MINOR.PATCH)")
    major, minor, patch, pre = match.groups()
    return SemVer(int(major), int(minor), int(patch), tuple(pre.split(".")) if pre else ())
