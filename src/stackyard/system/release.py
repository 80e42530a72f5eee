"""Which tag of the service's image repository is the latest release: the highest full
`X.Y.Z` (an optional `v` allowed), pre-releases, floating tags (`1`, `1.1`, `latest`)
and anything else never chosen."""

from __future__ import annotations

import re
from collections.abc import Iterable

from stackyard.version import parse_semver

_RELEASE = re.compile(r"^v?(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$")


def latest_release(tags: Iterable[str]) -> str | None:
    """The tag of the highest release among `tags`, or None."""
    releases = [(parse_semver(tag), tag) for tag in tags if _RELEASE.match(tag)]
    if not releases:
        return None
    return max(releases, key=lambda pair: pair[0].sort_key())[1]


def newer(candidate: str, current: str) -> bool:
    try:
        theirs, ours = parse_semver(candidate), parse_semver(current)
    except ValueError:
        return False
    return theirs.sort_key() > ours.sort_key()
