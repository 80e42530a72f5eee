"""A prune that shows exactly what it will free, then frees exactly that.

The engine's prune APIs have no dry run, and take whatever is unused when they run (on
Docker 20.10 named volumes too). So the preview lists the candidates itself, from one
reading of the engine, in the order the prune will go (stopped containers of no stack
first: what they held becomes unused; then images, volumes, networks, build cache), and
computes what each frees the way the removal frees it: an image's layers that no image
kept uses (each layer by its chain id, with its size), a container's writable layer, a
volume's size on disk. The prune reads the engine again, takes only the previewed objects
that are still candidates (by id), removes them one by one, and reports what the engine's
own figures say was freed, and each previewed object it did not remove, with why.

Never a candidate: what `inventory` guards (a stack's volumes and images, rollback images,
Stackyard's own, protected objects), anything in use. Blocking (a thread)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from stackyard.disk.inventory import (
    Guard,
    anonymous,
    container_protected,
    image_protected,
    network_protected,
    volume_protected,
)
from stackyard.disk.model import (
    KINDS,
    Kind,
    PruneItem,
    PruneKept,
    PruneOptions,
    PrunePreview,
    PruneReport,
)
from stackyard.docker import disk
from stackyard.docker.disk import DfImage, DiskUsage
from stackyard.docker.engine import Engine
from stackyard.docker.volumes import remove_volume
from stackyard.errors import StackyardError

#: Stopped states a prune may remove a container in.
_STOPPED = frozenset({"exited", "created", "dead"})


@dataclass(frozen=True)
class Candidates:
    items: list[PruneItem]
    kept: list[PruneKept]
    #: The image objects among the items, by id (a removal needs their tags).
    images: dict[str, DfImage]


def candidates(
    usage: DiskUsage,
    found: Guard,
    options: PruneOptions,
    layers: Callable[[str], list[tuple[str, int]]],
) -> Candidates:
    """What a prune with `options` removes now, each with what it frees (`layers`: an
    image's layers by chain id, with their sizes)."""
    items: list[PruneItem] = []
    kept: list[PruneKept] = []
    gone_containers: set[str] = set()
    if options.containers:
        for c in usage.containers:
            if c.project or c.state not in _STOPPED:
                continue
            if reason := container_protected(c):
                kept.append(PruneKept(kind="container", id=c.id, name=c.name, reason=reason))
                continue
            gone_containers.add(c.id)
            items.append(PruneItem(kind="container", id=c.id, name=c.name, bytes=c.size_rw))
    left = [c for c in usage.containers if c.id not in gone_containers]
    used_images = {c.image_id for c in left}
    used_volumes = {v for c in left for v in c.volumes}
    used_networks = {n for c in left for n in c.networks}

    chosen: dict[str, DfImage] = {}
    if options.images != "none":
        for image in usage.images:
            if image.id in used_images or (options.images == "dangling" and image.tags):
                continue
            if reason := image_protected(image, found):
                kept.append(PruneKept(kind="image", id=image.id, name=_name(image), reason=reason))
                continue
            chosen[image.id] = image
    items += _image_items(usage, chosen, layers)

    if options.volumes != "none":
        for volume in usage.volumes:
            if volume.name in used_volumes or volume.refs > 0:
                continue
            if reason := volume_protected(volume, found):
                kept.append(
                    PruneKept(kind="volume", id=volume.name, name=volume.name, reason=reason)
                )
                continue
            if options.volumes == "anonymous" and not anonymous(volume):
                continue
            size = max(volume.size, 0)
            items.append(PruneItem(kind="volume", id=volume.name, name=volume.name, bytes=size))

    if options.networks:
        for network in usage.networks:
            if network.name in used_networks or network.builtin:
                continue
            if reason := network_protected(network, found):
                kept.append(
                    PruneKept(kind="network", id=network.id, name=network.name, reason=reason)
                )
                continue
            items.append(PruneItem(kind="network", id=network.id, name=network.name, bytes=0))

    if options.build_cache:
        for record in usage.build_cache:
            if record.in_use:
                continue
            size = 0 if record.shared else record.size
            name = record.description or record.kind
            items.append(PruneItem(kind="build_cache", id=record.id, name=name, bytes=size))
    return Candidates(items, kept, chosen)


def _name(image: DfImage) -> str:
    return image.tags[0] if image.tags else image.id.removeprefix("sha256:")[:12]


def _image_items(
    usage: DiskUsage,
    chosen: dict[str, DfImage],
    layers: Callable[[str], list[tuple[str, int]]],
) -> list[PruneItem]:
    """The chosen images, children before parents, each with the bytes of the layers it
    frees: those no kept image uses, each counted once (for the first image that has it).
    An image that shares nothing frees its size; only images that share layers are
    looked into."""
    if not chosen:
        return []
    sharing = [i for i in usage.images if i.shared != 0]
    kept_chains = {
        chain for image in sharing if image.id not in chosen for chain, _ in layers(image.id)
    }
    counted: set[str] = set()
    items = []
    for image in _children_first(chosen):
        if image.shared == 0:
            freed = image.size
        else:
            freed = 0
            for chain, size in layers(image.id):
                if chain not in kept_chains and chain not in counted:
                    counted.add(chain)
                    freed += size
        items.append(PruneItem(kind="image", id=image.id, name=_name(image), bytes=freed))
    return items


def _children_first(chosen: dict[str, DfImage]) -> list[DfImage]:
    """The images in an order the engine removes them in: an image before its parent."""
    parents = {i.parent for i in chosen.values() if i.parent}
    ordered: list[DfImage] = []
    pending = sorted(chosen.values(), key=lambda i: (-i.created, i.id))
    while pending:
        ready = [i for i in pending if i.id not in parents]
        if not ready:  # (a loop cannot be: the rest as they come)
            ready = pending
        ordered += ready
        done = {i.id for i in ready}
        pending = [i for i in pending if i.id not in done]
        parents = {i.parent for i in pending if i.parent}
    return ordered


def preview(
    usage: DiskUsage,
    found: Guard,
    options: PruneOptions,
    layers: Callable[[str], list[tuple[str, int]]],
) -> PrunePreview:
    found_now = candidates(usage, found, options, layers)
    per_kind = dict.fromkeys(KINDS, 0)
    for item in found_now.items:
        per_kind[item.kind] += item.bytes
    return PrunePreview(
        options=options,
        items=found_now.items,
        bytes=dict(per_kind),
        total=sum(per_kind.values()),
        kept=found_now.kept,
    )


def key(kind: Kind, object_id: str) -> str:
    return f"{kind}:{object_id}"


def prune(
    client: Engine,
    read: Callable[[], tuple[DiskUsage, Guard]],
    options: PruneOptions,
    wanted: set[str],
    origin: str | None = None,
) -> PruneReport:
    """Remove the previewed objects `wanted` (`kind:id`) that are candidates still;
    what was freed, by the engine's figures, and what was left and why."""
    usage, found = read()
    now = candidates(usage, found, options, lambda image: disk.image_layers(client, image))
    by_key = {key(i.kind, i.id): i for i in now.items}
    left = [
        PruneKept(kind=_kind(k), id=k.partition(":")[2], name=k.partition(":")[2],
                  reason="not removed: it is in use now, protected, or gone")
        for k in sorted(wanted - by_key.keys())
    ]  # fmt: skip
    removed: list[PruneItem] = []
    freed = dict.fromkeys(KINDS, 0)
    before_layers = usage.layers_size
    caches: list[PruneItem] = []
    for item in now.items:
        if key(item.kind, item.id) not in wanted:
            continue
        try:
            if item.kind == "container":
                disk.remove_container(client, item.id)
            elif item.kind == "image":
                disk.remove_image(client, now.images[item.id])
            elif item.kind == "volume":
                remove_volume(client, item.id)
            elif item.kind == "network":
                disk.remove_network(client, item.id)
            else:
                caches.append(item)
                continue
        except StackyardError as exc:
            left.append(PruneKept(kind=item.kind, id=item.id, name=item.name, reason=exc.detail))
            continue
        removed.append(item)
        if item.kind != "image":
            freed[item.kind] += item.bytes
    if caches:
        freed["build_cache"] = disk.remove_build_cache(client, [c.id for c in caches])
        removed += caches
    if any(i.kind == "image" for i in removed):
        freed["image"] = max(0, before_layers - disk.disk_usage(client).layers_size)
    return PruneReport(
        removed=removed,
        freed=freed,
        total=sum(freed.values()),
        left=left,
        at=datetime.now(UTC),
        origin=origin,
    )


def _kind(text: str) -> Kind:
    kind = text.partition(":")[0]
    return next((k for k in KINDS if k == kind), "image")
