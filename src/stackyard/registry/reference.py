"""Image references as the engine reads them: `[registry/]repository[:tag][@digest]`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackyard.errors import Invalid

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
_DIGEST = re.compile(r"^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPO = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")


@dataclass(frozen=True)
class ImageRef:
    registry: str  # "docker.io", "ghcr.io", "127.0.0.1:5000"
    repository: str  # "library/nginx"
    tag: str | None
    digest: str | None

    @property
    def pinned(self) -> bool:
        """Pinned by digest: what runs can never differ from what is named."""
        return self.digest is not None

    @property
    def api_host(self) -> str:
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def name(self) -> str:
        """`registry/repository:tag` (or `@digest`): one key per distinct reference."""
        base = f"{self.registry}/{self.repository}"
        if self.digest:
            return f"{base}@{self.digest}"
        return f"{base}:{self.tag}"

    @property
    def repo_names(self) -> tuple[str, ...]:
        """How the engine may spell the repository in RepoTags/RepoDigests."""
        if self.registry == DOCKER_HUB:
            short = self.repository.removeprefix("library/")
            return tuple(dict.fromkeys((short, self.repository, f"docker.io/{self.repository}")))
        return (f"{self.registry}/{self.repository}",)


def parse_reference(text: str) -> ImageRef:
    original = text
    text = text.strip()
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        if not _DIGEST.match(digest):
            raise Invalid(f"Invalid image reference {original!r}: bad digest")
    tag = None
    last = text.rsplit("/", 1)[-1]
    if ":" in last:
        text, tag = text.rsplit(":", 1)
        if not _TAG.match(tag):
            raise Invalid(f"Invalid image reference {original!r}: bad tag")
    first, _, rest = text.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, rest
    else:
        registry, path = DOCKER_HUB, text
    if registry in ("index.docker.io", "registry-1.docker.io"):
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    if not _REPO.match(path):
        raise Invalid(f"Invalid image reference {original!r}")
    if tag is None and digest is None:
        tag = "latest"
    return ImageRef(registry, path, tag, digest)
