"""One update check's requests to the registries: a HEAD per distinct image (its digest),
a tag list per repository followed by version (once per check), and each new image's
labels (its manifests and config blob, once per digest: never again, never its layers).
Bounded concurrency; a registry that is down this pass is not asked again in it; the rate
limit each registry announces is kept, and a registry whose quota is low is left alone by
the background check until its window has passed."""

from __future__ import annotations

import asyncio
import logging
import platform
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from stackyard.errors import NotInRegistry, RegistryError, RegistryUnreachable
from stackyard.registry.digests import DigestSnapshot, RegistryLimit, RemoteDigest
from stackyard.registry.reference import ImageRef
from stackyard.registry.releases import Release, release_of
from stackyard.stacks.versions import tag_version

if TYPE_CHECKING:  # (httpx loads with the first check: a start needs none)
    from stackyard.registry.client import RegistryClient

log = logging.getLogger(__name__)

CONCURRENCY = 8  # registry requests in flight
#: Tags kept per repository (the newest by version).
TAG_LIMIT = 2000
#: A registry is left alone by the background check when fewer than this share of its
#: quota remains (and at least LOW_FLOOR requests).
LOW_SHARE = 0.1
LOW_FLOOR = 10
#: When a registry says no window, its quota is taken to refill in this time.
DEFAULT_WINDOW = 6 * 3600
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def platform_here() -> tuple[str, str]:
    """(os, architecture) as image indexes name this host's."""
    machine = platform.machine().lower()
    return ("linux", _ARCH.get(machine, machine))


def repository_key(ref: ImageRef) -> str:
    return f"{ref.registry}/{ref.repository}"


def low(limit: RegistryLimit, now: datetime) -> bool:
    """Whether a registry's quota is too low to spend on a background check now."""
    try:
        seen = datetime.fromisoformat(limit.seen_at)
    except ValueError:
        return False
    window = timedelta(seconds=limit.window_seconds or DEFAULT_WINDOW)
    floor = min(max(LOW_FLOOR, int(limit.limit * LOW_SHARE)), limit.limit // 2)
    return limit.remaining <= floor and now - seen < window


class RegistryPass:
    def __init__(self, client: RegistryClient, before: DigestSnapshot, now: datetime) -> None:
        self.client = client
        self.before = before
        self.now = now
        self.remote: dict[str, RemoteDigest] = {}
        self.tags: dict[str, dict[str, str]] = {}
        self.releases: dict[str, Release] = {}
        self._down: dict[str, str] = {}  # registry -> why it failed this pass
        self._semaphore = asyncio.Semaphore(CONCURRENCY)

    def limits(self) -> dict[str, RegistryLimit]:
        seen = self.now.isoformat()
        return {
            host: RegistryLimit(limit.limit, limit.remaining, limit.window_seconds, seen)
            for host, limit in self.client.limits.items()
        }

    async def digests(self, refs: list[ImageRef]) -> None:
        """Each reference's digest now, with when this host first saw it."""
        await asyncio.gather(*(self._digest(ref) for ref in refs))
        for host, why in self._down.items():
            log.warning("Registry %s unreachable during the update check: %s", host, why)

    async def _digest(self, ref: ImageRef) -> None:
        at = self.now.isoformat()
        async with self._semaphore:
            if ref.api_host in self._down:
                self.remote[ref.name] = RemoteDigest("error", None, at, self._down[ref.api_host])
                return
            try:
                digest = await self.client.manifest_digest(ref)
            except NotInRegistry as exc:
                self.remote[ref.name] = RemoteDigest("not_found", None, at, str(exc))
                return
            except RegistryUnreachable as exc:
                # Retry later: the rest of this registry's images wait for the next pass.
                self._down[ref.api_host] = exc.detail
                self.remote[ref.name] = RemoteDigest("error", None, at, exc.detail)
                return
            except RegistryError as exc:  # denied, or an answer we cannot use
                self.remote[ref.name] = RemoteDigest("error", None, at, exc.detail)
                return
        known = self.before.remote.get(ref.name)
        same = known is not None and known.digest == digest and known.first_seen
        first_seen = known.first_seen if same and known else at
        self.remote[ref.name] = RemoteDigest("ok", digest, at, first_seen=first_seen)

    async def version_tags(self, refs: list[ImageRef]) -> None:
        """Each repository's version tags (one tag list per repository)."""
        await asyncio.gather(*(self._tags(ref) for ref in refs))

    async def _tags(self, ref: ImageRef) -> None:
        key = repository_key(ref)
        async with self._semaphore:
            if ref.api_host in self._down:
                return
            try:
                listed = await self.client.tags(ref.api_host, ref.repository)
            except RegistryUnreachable as exc:
                self._down[ref.api_host] = exc.detail
                return
            except RegistryError as exc:
                log.info("Tags of %s not listed: %s", key, exc.detail)
                return
        versions = sorted((v.key(), tag) for tag in listed if (v := tag_version(tag)) is not None)[
            -TAG_LIMIT:
        ]
        known = self.before.tags.get(key, {})
        at = self.now.isoformat()
        self.tags[key] = {tag: known.get(tag, at) for _, tag in versions}

    async def labels(self, wanted: dict[str, tuple[ImageRef, str]]) -> None:
        """The release of each image named (key -> (its repository, a tag or digest))
        that was never read: a failure is kept too (not asked again), unless the registry
        could not be reached."""
        await asyncio.gather(
            *(self._release(key, ref, reference) for key, (ref, reference) in wanted.items())
        )

    async def _release(self, key: str, ref: ImageRef, reference: str) -> None:
        async with self._semaphore:
            if ref.api_host in self._down:
                return
            try:
                _, config = await self.client.image_config(ref, reference, platform_here())
            except RegistryUnreachable as exc:
                self._down[ref.api_host] = exc.detail
                return
            except RegistryError as exc:  # also not found, denied
                self.releases[key] = Release(error=exc.detail)
                return
        self.releases[key] = release_of(config)
