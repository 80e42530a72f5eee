"""Images on the engine: their local digests (what was pulled, whoever pulled it),
pulling one, and what an update's rollback does to them (the id a reference names, a tag
put back on the image that ran before, the digests an image was pulled by)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, explain
from stackyard.errors import Unavailable
from stackyard.registry.reference import ImageRef

VERSION_LABEL = "org.opencontainers.image.version"


@dataclass(frozen=True)
class LocalImage:
    present: bool
    digests: tuple[str, ...]  # repo digests of this repository (empty: built or loaded locally)
    version: str | None = None  # its version label


def local_images(client: Engine, refs: list[ImageRef]) -> dict[str, LocalImage]:
    """For each reference (by `ref.name`), whether it is present and its repo digests."""
    try:
        images = client.api.images()
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot list images: {exc}") from exc
    by_tag: dict[str, list[str]] = {}
    by_digest: set[str] = set()
    versions: dict[str, str] = {}
    for image in images:
        digests = [d for d in image.get("RepoDigests") or [] if "@" in d]
        by_digest.update(digests)
        version = (image.get("Labels") or {}).get(VERSION_LABEL)
        for tag in image.get("RepoTags") or []:
            by_tag.setdefault(tag, []).extend(digests)
            if isinstance(version, str):
                versions[tag] = version[:100]
    result = {}
    for ref in refs:
        if ref.pinned:
            present = any(f"{repo}@{ref.digest}" in by_digest for repo in ref.repo_names)
            result[ref.name] = LocalImage(present, (cast(str, ref.digest),) if present else ())
            continue
        tagged = [f"{repo}:{ref.tag}" for repo in ref.repo_names]
        present = any(t in by_tag for t in tagged)
        found = {
            d.split("@", 1)[1]
            for t in tagged
            for d in by_tag.get(t, [])
            if d.split("@", 1)[0] in ref.repo_names
        }
        version = next((versions[t] for t in tagged if t in versions), None)
        result[ref.name] = LocalImage(present, tuple(sorted(found)), version)
    return result


def pull(client: Engine, reference: str) -> None:
    """Pull `reference` (`repository:tag`) onto the engine; Unavailable with the engine's
    own words when it fails (its stream's error: "unknown blob", say; the SDK's own pull
    drops it and reports the missing image instead)."""
    repository, tag = sdk.parse_repository_tag(reference)
    try:
        for event in client.api.pull(repository, tag or "latest", stream=True, decode=True):
            if isinstance(event, dict) and event.get("error"):
                raise Unavailable(f"{reference} cannot be pulled: {event['error']}")
    except sdk.DockerException as exc:
        raise Unavailable(f"{reference} cannot be pulled: {explain(exc)}") from exc


def image_id_of(client: Engine, reference: str) -> str | None:
    """The id of the image `reference` names here; None when there is none."""
    try:
        found = client.api.inspect_image(reference)  # type: ignore[no-untyped-call]
        return str(found["Id"])
    except sdk.NotFound:
        return None
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot inspect image {reference}: {explain(exc)}") from exc


def put_tag(client: Engine, image_id: str, reference: str) -> None:
    """Point `reference` (`repository:tag`) at image `image_id` again."""
    repository, tag = sdk.parse_repository_tag(reference)
    try:
        client.api.tag(image_id, repository, tag or "latest", force=True)
    except sdk.DockerException as exc:
        raise Unavailable(f"Cannot tag {image_id[:19]} as {reference}: {explain(exc)}") from exc


def repo_digests(client: Engine, image_id: str, repositories: tuple[str, ...]) -> list[str]:
    """The registry digests of image `image_id` under `repositories` (the names one
    repository goes by): what was pulled."""
    try:
        image = client.api.inspect_image(image_id)  # type: ignore[no-untyped-call]
        found = image.get("RepoDigests") or []
    except sdk.DockerException:
        return []
    return sorted(
        {d.split("@", 1)[1] for d in found if "@" in d and d.split("@", 1)[0] in repositories}
    )
