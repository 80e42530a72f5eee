"""What takes room on the engine, read from it, and the removals a prune is made of.

One `GET /system/df` gives every image (its size, the part shared with other images, how
many containers use it), every container (its writable layer's size, its mounts, its
networks), every volume (its size on disk, how many containers use it) and the build
cache; the networks come from their own list. Removals go object by object, by id (a
prune never asks the engine to prune "whatever is unused now": the engine's prune takes
what it finds at that moment, and on Docker 20.10 named volumes too)."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from stackyard.docker import sdk
from stackyard.docker.containers import PROJECT
from stackyard.docker.engine import Engine, explain, unreachable
from stackyard.errors import Conflict, NotFound, Unavailable


@dataclass(frozen=True)
class DfImage:
    id: str
    tags: tuple[str, ...]
    digests: tuple[str, ...]
    created: int  # Unix seconds
    size: int
    shared: int  # of `size`, what other images share (-1: not computed)
    containers: int  # containers that use it (-1: not computed)
    labels: dict[str, str]
    parent: str


@dataclass(frozen=True)
class DfContainer:
    id: str
    name: str
    image_id: str
    state: str
    size_rw: int
    labels: dict[str, str]
    volumes: tuple[str, ...]  # the names of the volumes it mounts
    networks: tuple[str, ...]  # the names of its networks

    @property
    def project(self) -> str | None:
        return self.labels.get(PROJECT)


@dataclass(frozen=True)
class DfVolume:
    name: str
    driver: str
    created: str | None
    size: int  # on disk (-1: not computed)
    refs: int  # containers that use it (-1: not computed)
    labels: dict[str, str]


@dataclass(frozen=True)
class DfBuildCache:
    id: str
    kind: str
    description: str
    size: int
    in_use: bool
    shared: bool
    last_used: str | None


@dataclass(frozen=True)
class DfNetwork:
    id: str
    name: str
    driver: str
    created: str | None
    labels: dict[str, str]
    builtin: bool  # bridge, host, none: the engine's own


@dataclass(frozen=True)
class DiskUsage:
    images: list[DfImage]
    containers: list[DfContainer]
    volumes: list[DfVolume]
    build_cache: list[DfBuildCache]
    networks: list[DfNetwork]
    #: What every image's layers take together (each layer once).
    layers_size: int
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


_BUILTIN_NETWORKS = frozenset({"bridge", "host", "none"})


#: The engine measures one `/system/df` at a time, refusing another meanwhile (a CLI's
#: `docker system df`, another service's): asked again this long at most.
DF_BUSY_WAIT = 60.0
_DF_BUSY = "a disk usage operation is already running"


def disk_usage(client: Engine) -> DiskUsage:
    """The engine's `/system/df` and its networks."""
    deadline = time.monotonic() + DF_BUSY_WAIT
    while True:
        try:
            df = client.api.df()
            networks = client.api.networks()
            break
        except sdk.APIError as exc:
            if _DF_BUSY not in explain(exc) or time.monotonic() > deadline:
                raise unreachable(exc) from exc
            time.sleep(0.2)
        except sdk.DockerException as exc:
            raise unreachable(exc) from exc
    return DiskUsage(
        images=[_image(i) for i in df.get("Images") or []],
        containers=[_container(c) for c in df.get("Containers") or []],
        volumes=[_volume(v) for v in df.get("Volumes") or []],
        build_cache=[_cache(b) for b in df.get("BuildCache") or []],
        networks=[_network(n) for n in networks or []],
        layers_size=int(df.get("LayersSize") or 0),
    )


def _image(raw: dict[str, Any]) -> DfImage:
    return DfImage(
        id=str(raw.get("Id") or ""),
        tags=tuple(t for t in raw.get("RepoTags") or () if t and t != "<none>:<none>"),
        digests=tuple(d for d in raw.get("RepoDigests") or () if d and "<none>" not in d),
        created=int(raw.get("Created") or 0),
        size=int(raw.get("Size") or 0),
        shared=int(raw.get("SharedSize", -1) if raw.get("SharedSize") is not None else -1),
        containers=int(raw.get("Containers", -1) if raw.get("Containers") is not None else -1),
        labels={str(k): str(v) for k, v in (raw.get("Labels") or {}).items()},
        parent=str(raw.get("ParentId") or ""),
    )


def _container(raw: dict[str, Any]) -> DfContainer:
    networks = (raw.get("NetworkSettings") or {}).get("Networks") or {}
    return DfContainer(
        id=str(raw.get("Id") or ""),
        name=str((raw.get("Names") or ["/?"])[0]).lstrip("/"),
        image_id=str(raw.get("ImageID") or ""),
        state=str(raw.get("State") or ""),
        size_rw=int(raw.get("SizeRw") or 0),
        labels={str(k): str(v) for k, v in (raw.get("Labels") or {}).items()},
        volumes=tuple(str(m["Name"]) for m in raw.get("Mounts") or () if m.get("Type") == "volume"),
        networks=tuple(str(n) for n in networks),
    )


def _volume(raw: dict[str, Any]) -> DfVolume:
    usage = raw.get("UsageData") or {}
    return DfVolume(
        name=str(raw.get("Name") or ""),
        driver=str(raw.get("Driver") or ""),
        created=raw.get("CreatedAt"),
        size=int(usage.get("Size", -1)),
        refs=int(usage.get("RefCount", -1)),
        labels={str(k): str(v) for k, v in (raw.get("Labels") or {}).items()},
    )


def _cache(raw: dict[str, Any]) -> DfBuildCache:
    return DfBuildCache(
        id=str(raw.get("ID") or ""),
        kind=str(raw.get("Type") or ""),
        description=str(raw.get("Description") or ""),
        size=int(raw.get("Size") or 0),
        in_use=bool(raw.get("InUse")),
        shared=bool(raw.get("Shared")),
        last_used=raw.get("LastUsedAt"),
    )


def _network(raw: dict[str, Any]) -> DfNetwork:
    name = str(raw.get("Name") or "")
    return DfNetwork(
        id=str(raw.get("Id") or ""),
        name=name,
        driver=str(raw.get("Driver") or ""),
        created=raw.get("Created"),
        labels={str(k): str(v) for k, v in (raw.get("Labels") or {}).items()},
        builtin=name in _BUILTIN_NETWORKS,
    )


def image_layers(client: Engine, image_id: str) -> list[tuple[str, int]]:
    """The image's layers, bottom first, each by its chain id with its size (from the
    image's history: its entries that made a layer, in order)."""
    try:
        inspected = client.api.inspect_image(image_id)  # type: ignore[no-untyped-call]
        history = client.api.history(image_id)  # type: ignore[no-untyped-call]
    except sdk.NotFound as exc:
        raise NotFound(f"No image {image_id[:19]}") from exc
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    diffs = [str(d) for d in (inspected.get("RootFS") or {}).get("Layers") or []]
    sizes = [int(h.get("Size") or 0) for h in reversed(history or [])]
    made = [s for s in sizes if s > 0]
    # The entries that made no layer have size 0; layers of size 0 exist too (a `mkdir`
    # of nothing): the sized entries go to the last layers, the rest are 0.
    layer_sizes = [0] * (len(diffs) - len(made)) + made[-len(diffs) :] if diffs else []
    chains: list[tuple[str, int]] = []
    chain = ""
    for diff, size in zip(diffs, layer_sizes, strict=False):
        digest = hashlib.sha256(f"{chain} {diff}".encode()).hexdigest()
        chain = f"sha256:{digest}" if chain else diff
        chains.append((chain, size))
    return chains


@contextlib.contextmanager
def _removing(what: str, in_use: str) -> Iterator[None]:
    """The engine's refusals of a removal, said: gone already is done; `in_use` for a
    conflict (409, or 403 for a network the engine keeps)."""
    try:
        yield
    except sdk.NotFound:
        return
    except sdk.APIError as exc:
        if exc.status_code in (403, 409):
            raise Conflict(f"{what} {in_use}: {explain(exc)}") from exc
        raise Unavailable(f"{what} could not be removed: {explain(exc)}") from exc
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc


def remove_image(client: Engine, image: DfImage) -> None:
    """The image removed: each of its tags, then the image itself (never forced: an image
    a container uses is refused; never its untagged parents, which a prune lists apart)."""
    short = image.tags[0] if image.tags else image.id.removeprefix("sha256:")[:12]
    with _removing(f"Image {short}", "is in use"):
        for tag in image.tags:
            client.api.remove_image(tag, noprune=True)
        if not image.tags or _exists(client, image.id):
            client.api.remove_image(image.id, noprune=True)


def _exists(client: Engine, image_id: str) -> bool:
    try:
        client.api.inspect_image(image_id)  # type: ignore[no-untyped-call]
    except sdk.NotFound:
        return False
    return True


def remove_container(client: Engine, container_id: str) -> None:
    """A stopped container removed (never forced: a running one is refused)."""
    with _removing(f"Container {container_id[:12]}", "runs"):
        client.api.remove_container(container_id)


def remove_network(client: Engine, network_id: str) -> None:
    with _removing(f"Network {network_id[:12]}", "is in use"):
        client.api.remove_network(network_id)


def remove_build_cache(client: Engine, ids: list[str]) -> int:
    """Build cache records removed by id (those in use are left by the engine); the bytes
    the engine says it reclaimed."""
    if not ids:
        return 0
    try:
        answer = client.api.prune_builds(filters=cast(Any, {"id": ids}))
    except sdk.DockerException as exc:
        raise Unavailable(f"The build cache could not be pruned: {explain(exc)}") from exc
    return int((answer or {}).get("SpaceReclaimed") or 0)
