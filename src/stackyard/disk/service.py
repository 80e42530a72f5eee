"""A host's disk: the report (what takes room, what uses it), the removals one by one
(refused with the reason while something uses the object), the prune with its preview,
and the history of prunes (the last `KEEP`, newest first, the one JSON store).

One prune at a time per host. The summary the fleet shows is the last one measured, again
in the background once `SUMMARY_AGE` old: the fleet dashboard asks every host often, and
the engine's `/system/df` measures every volume on disk."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from pydantic import TypeAdapter

from stackyard.disk import inventory, prune
from stackyard.disk.inventory import Guard
from stackyard.disk.model import (
    DiskReport,
    DiskSummary,
    PruneOptions,
    PrunePreview,
    PruneReport,
)
from stackyard.docker import disk, images, volumes
from stackyard.docker.disk import DiskUsage
from stackyard.errors import Conflict, Invalid, NotFound
from stackyard.events import Event, Sink
from stackyard.fs.jsonstore import JsonStore
from stackyard.sizes import size_text
from stackyard.stacks.machine import Machine

log = logging.getLogger(__name__)

KEEP = 50
SUMMARY_AGE = 300.0
_REPORTS = TypeAdapter(list[PruneReport])


class DiskService:
    def __init__(self, machine: Machine, events: Sink | None = None) -> None:
        self.machine = machine
        self.events = events
        self._history = JsonStore(machine.settings.data_dir / "prunes.json")
        self._pruning = threading.Lock()
        self._measuring = threading.Lock()
        self._measure_lock = threading.Lock()
        self._summary: tuple[float, DiskSummary] | None = None

    def _usage(self) -> DiskUsage:
        with self._measure_lock:  # (the engine measures one at a time)
            return disk.disk_usage(self.machine.docker)

    def _read(self) -> tuple[DiskUsage, Guard]:
        usage = self._usage()
        return usage, inventory.guard(self.machine, usage)

    # -- reading ------------------------------------------------------------------------
    async def report(self) -> DiskReport:
        def read() -> DiskReport:
            found = inventory.report(*self._read())
            self._summary = (time.monotonic(), found.summary)
            return found

        return await asyncio.to_thread(read)

    def summary(self) -> DiskSummary | None:
        """The last summary measured (its `measured_at` says when; None before the
        first), never waited for: one older than `SUMMARY_AGE` is measured again in the
        background (the engine's `/system/df` walks every volume)."""
        kept = self._summary
        if (kept is None or time.monotonic() - kept[0] >= SUMMARY_AGE) and (
            self._measuring.acquire(blocking=False)
        ):
            threading.Thread(target=self._measure, name="disk-summary", daemon=True).start()
        return kept[1] if kept is not None else None

    def _measure(self) -> None:
        try:
            found = inventory.report(*self._read()).summary
            self._summary = (time.monotonic(), found)
        except Exception:  # (the engine away: the fleet report says so apart)
            log.debug("The disk summary could not be measured", exc_info=True)
        finally:
            self._measuring.release()

    async def preview(self, options: PruneOptions) -> PrunePreview:
        def read() -> PrunePreview:
            usage, found = self._read()
            client = self.machine.docker
            cache: dict[str, list[tuple[str, int]]] = {}

            def layers(image_id: str) -> list[tuple[str, int]]:
                if image_id not in cache:
                    cache[image_id] = disk.image_layers(client, image_id)
                return cache[image_id]

            return prune.preview(usage, found, options, layers)

        return await asyncio.to_thread(read)

    def history(self) -> list[PruneReport]:
        try:
            return _REPORTS.validate_python(self._history.read([]) or [])
        except ValueError:
            return []

    # -- removing -----------------------------------------------------------------------
    async def prune(
        self, options: PruneOptions, wanted: list[str], origin: str | None = None
    ) -> PruneReport:
        """Remove the previewed objects `wanted` (`kind:id`, from the preview); the
        report, kept in the history and said as news."""

        def run() -> PruneReport:
            if not self._pruning.acquire(blocking=False):
                raise Conflict("A prune runs on this host already")
            try:
                done = prune.prune(self.machine.docker, self._read, options, set(wanted), origin)
            finally:
                self._pruning.release()
            self._summary = None
            kept = [done.model_dump(mode="json"), *(self._history.read([]) or [])][:KEEP]
            self._history.write(kept)
            return done

        done = await asyncio.to_thread(run)
        if self.events is not None:
            host = await asyncio.to_thread(self.machine.host_name)
            self.events(_news(done, host))
        return done

    async def remove_image(self, image_id: str) -> None:
        def run() -> None:
            usage = self._usage()
            image = next((i for i in usage.images if i.id == image_id), None)
            if image is None:
                raise NotFound(f"No image {image_id}")
            users = [c.name for c in usage.containers if c.image_id == image.id]
            if users:
                raise Conflict(f"Containers use this image: {', '.join(users[:5])}")
            disk.remove_image(self.machine.docker, image)
            self._summary = None

        await asyncio.to_thread(run)

    async def remove_volume(self, name: str, confirm: str) -> str | None:
        """The volume removed once `confirm` is its name; the stack it belonged to."""
        if confirm != name:
            raise Invalid(f"Type the volume's name ({name}) to remove it and its data")

        def run() -> str | None:
            usage, found = self._read()
            volume = next((v for v in usage.volumes if v.name == name), None)
            if volume is None:
                raise NotFound(f"No volume {name}")
            users = [c.name for c in usage.containers if name in c.volumes]
            if users:
                raise Conflict(f"Containers use this volume: {', '.join(users[:5])}")
            volumes.remove_volume(self.machine.docker, name)
            self._summary = None
            project = volume.labels.get("com.docker.compose.project")
            return found.stack_of(project) if project else None

        return await asyncio.to_thread(run)

    async def remove_network(self, network_id: str) -> None:
        def run() -> None:
            usage = self._usage()
            network = next((n for n in usage.networks if network_id in (n.id, n.name)), None)
            if network is None:
                raise NotFound(f"No network {network_id}")
            if network.builtin:
                raise Conflict(f"{network.name} is the engine's own network")
            users = [c.name for c in usage.containers if network.name in c.networks]
            if users:
                raise Conflict(f"Containers use this network: {', '.join(users[:5])}")
            disk.remove_network(self.machine.docker, network.id)

        await asyncio.to_thread(run)

    async def of_a_stack(self, image: str) -> bool:
        """Whether the image (an id, or a reference to pull) is of a repository one of
        this host's stacks names: what an operator may pull and remove."""

        def run() -> bool:
            usage, found = self._read()
            by_id = {i.id: i for i in usage.images}
            stack_repos = {
                inventory.repository_of(tag)
                for image_id in found.stack_images
                if image_id in by_id
                for tag in by_id[image_id].tags
            }
            stack_repos |= set(found.declared_repositories)
            named = by_id[image].tags if image in by_id else (image,)
            return any(inventory.repository_of(t) in stack_repos for t in named)

        return await asyncio.to_thread(run)

    async def pull(self, reference: str) -> None:
        await asyncio.to_thread(images.pull, self.machine.docker, reference)
        self._summary = None


def _news(report: PruneReport, host: str) -> Event:
    parts = [
        f"{size_text(b)} of {kind.replace('_', ' ')}s" for kind, b in report.freed.items() if b
    ]
    freed = ", ".join(parts) if parts else "nothing"
    by = f" ({report.origin})" if report.origin else ""
    removed = len(report.removed)
    text = f"Prune on {host}{by}: {removed} objects removed, {size_text(report.total)} freed"
    if parts:
        text += f" ({freed})"
    if report.left:
        text += f"; {len(report.left)} left"
    return Event("prune_finished", host, text)
