"""Version tags: which newer tag of a repository an image may move to within a range
(`1.4.2` finding `1.4.3`, `1.5.0`, `2.0.0`), how big a version jump is, and the compose
file edited to the new tag.

Only full `X.Y.Z` tags count (optionally `v`-prefixed, as the running one is); floating
tags (`1`, `1.4`, `latest`) never. A tag with a suffix is a variant (`1.4.2-alpine` moves
to `1.5.0-alpine` only) unless the suffix reads as a pre-release (`-rc.1`, `-beta`), which
counts only when asked."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from stackyard.errors import Invalid

Jump = Literal["patch", "minor", "major"]
Track = Literal["patch", "minor", "major"]
_TAG = re.compile(
    r"^(v?)(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z][0-9A-Za-z.-]*))?$"
)
_LOOSE = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_PRERELEASE = re.compile(r"^(alpha|beta|rc|pre|preview|dev|canary|nightly|next)", re.IGNORECASE)


@dataclass(frozen=True)
class TagVersion:
    prefix: str
    numbers: tuple[int, int, int]
    suffix: str | None

    @property
    def prerelease(self) -> bool:
        return self.suffix is not None and bool(_PRERELEASE.match(self.suffix))

    def key(self) -> tuple[tuple[int, int, int], bool, tuple[tuple[int, int | str], ...]]:
        parts = tuple(
            (0, int(p)) if p.isdigit() else (1, p) for p in (self.suffix or "").split(".") if p
        )
        return (self.numbers, not self.prerelease, parts)


def tag_version(tag: str) -> TagVersion | None:
    match = _TAG.match(tag)
    if not match:
        return None
    prefix, major, minor, patch, suffix = match.groups()
    return TagVersion(prefix, (int(major), int(minor), int(patch)), suffix)


def newer_tag(current: str, tags: Iterable[str], track: Track, prereleases: bool) -> str | None:
    """The newest tag of `tags` above `current` within `track`; None when there is none
    (or `current` is no version tag)."""
    now = tag_version(current)
    if now is None:
        return None
    variant = now.suffix if now.suffix and not now.prerelease else None
    best: tuple[TagVersion, str] | None = None
    for tag in tags:
        found = tag_version(tag)
        if found is None or found.prefix != now.prefix:
            continue
        if variant is not None:
            if found.suffix != variant:
                continue
        elif found.suffix is not None and not (prereleases and found.prerelease):
            continue
        if not _within(now.numbers, found.numbers, track) or found.key() <= now.key():
            continue
        if best is None or found.key() > best[0].key():
            best = (found, tag)
    return best[1] if best else None


def _within(now: tuple[int, int, int], found: tuple[int, int, int], track: Track) -> bool:
    if track == "patch":
        return found[:2] == now[:2]
    if track == "minor":
        return found[0] == now[0]
    return True


def jump(old: str | None, new: str | None) -> Jump | None:
    """How big the step from version `old` to `new` is; None when either is no version
    or it is no step up."""
    a, b = _loose(old), _loose(new)
    if a is None or b is None or b <= a:
        return None
    if b[0] != a[0]:
        return "major"
    return "minor" if b[1] != a[1] else "patch"


def _loose(text: str | None) -> tuple[int, int, int] | None:
    match = _LOOSE.match(text or "")
    if not match:
        return None
    return (int(match[1]), int(match[2] or 0), int(match[3] or 0))


def retagged(compose: str, image: str, new_image: str) -> str:
    """The compose file with each `image: <image>` line naming `new_image` instead
    (quotes and comments kept); Invalid when no line names it as it is written (set
    through a variable, say): that file is edited by hand."""
    line = re.compile(
        rf"^(?P<head>\s*(?:-\s+)?image:\s*)(?P<quote>[\"']?){re.escape(image)}(?P=quote)"
        r"(?P<tail>\s*(?:#.*)?)$",
        re.MULTILINE,
    )
    edited, count = line.subn(
        lambda m: f"{m['head']}{m['quote']}{new_image}{m['quote']}{m['tail']}", compose
    )
    if count == 0:
        raise Invalid(
            f"The compose file does not name {image} as it is written (a variable?): "
            "edit its tag by hand"
        )
    return edited
