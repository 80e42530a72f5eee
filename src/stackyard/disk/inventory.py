"""A host's disk as the page shows it: every image, volume and network with its size and
what uses it (the stacks' services through compose's labels and their compose files,
other containers), the containers no stack owns, the build cache, a summary; and why a
prune never takes each object it must not take (`Guard`).

Never taken by a prune, on any engine version: a volume of any stack (running, stopped,
or whose folder is gone: compose's project label says so), an image a stack's service
names (also of a stopped stack), an image an update keeps for its rollback
(`stackyard/rollback:*`), Stackyard's own image and its backup helper's, a network of a
stack or one a stack names as external, the engine's own networks, and anything labelled
`stackyard.protect=true`. Blocking (a thread)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from stackyard.disk.model import (
    BuildCacheView,
    ContainerView,
    DiskReport,
    DiskSummary,
    ImageView,
    NetworkView,
    User,
    VolumeView,
)
from stackyard.docker.disk import DfContainer, DfImage, DfNetwork, DfVolume, DiskUsage
from stackyard.docker.helper import HELPER_LABEL
from stackyard.docker.own import own_container
from stackyard.errors import StackyardError
from stackyard.registry.reference import parse_reference
from stackyard.stacks.guarded import KEEP_REPOSITORY
from stackyard.stacks.machine import Machine

PROTECT_LABEL = "stackyard.protect"
VOLUME_LABEL = "com.docker.compose.volume"
ANONYMOUS_LABEL = "com.docker.volume.anonymous"
NETWORK_LABEL = "com.docker.compose.network"
_ANONYMOUS = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Guard:
    """What this host's stacks and Stackyard itself hold on to."""

    #: Image id -> the first stack service that names it (`stack/service`).
    stack_images: dict[str, str] = field(default_factory=dict)
    #: Network names the stacks declare as external.
    external_networks: dict[str, str] = field(default_factory=dict)
    #: Image id -> what of Stackyard's own it is.
    own_images: dict[str, str] = field(default_factory=dict)
    #: Compose project -> stack id (None: its folder is gone).
    stacks: dict[str, str | None] = field(default_factory=dict)
    #: The image references the stacks' services name, as written.
    declared_repositories: list[str] = field(default_factory=list)

    def stack_of(self, project: str) -> str:
        found = self.stacks.get(project)
        return found if found else f"{project} (its folder is gone)"


def guard(machine: Machine, usage: DiskUsage) -> Guard:
    """What must stay, read from the stacks' compose files and the engine."""
    found = Guard()
    by_ref = _image_index(usage.images)
    ids = machine.store.ids()
    for stack_id, project in machine.listed_projects(ids).items():
        if isinstance(project, StackyardError):
            continue
        found.stacks[project.name] = stack_id
        for service in project.services:
            image = service.image or f"{project.name}-{service.name}"
            found.declared_repositories.append(repository_of(image))
            for image_id in _ids_of(image, by_ref):
                found.stack_images.setdefault(image_id, f"{stack_id}/{service.name}")
        for name, spec in (project.raw.get("networks") or {}).items():
            if isinstance(spec, dict) and spec.get("external"):
                found.external_networks.setdefault(str(spec.get("name") or name), stack_id)
    for stack_id in ids:
        found.stacks.setdefault(stack_id, stack_id)
    labelled = [c.labels for c in usage.containers]
    labelled += [v.labels for v in usage.volumes] + [n.labels for n in usage.networks]
    for labels in labelled:
        name = labels.get("com.docker.compose.project")
        if name and name not in found.stacks:
            found.stacks[name] = machine.stack_of(name)
    helper = machine.settings.backup_helper_image
    for image_id in _ids_of(helper, by_ref):
        found.own_images[image_id] = "the backup helper's image"
    own = own_container(machine.docker)
    if own is not None:
        found.own_images[own.image_id] = "Stackyard's own image"
    return found


def repository_of(reference: str) -> str:
    """`nginx:1.25` -> `nginx` (a digest or a tag cut off; a registry's port kept)."""
    name = reference.split("@", 1)[0]
    head, _, tail = name.rpartition(":")
    return head if head and "/" not in tail else name


def _image_index(images: Iterable[DfImage]) -> dict[str, str]:
    """Tag and digest -> image id."""
    index: dict[str, str] = {}
    for image in images:
        for name in (*image.tags, *image.digests):
            index[name] = image.id
    return index


def _ids_of(reference: str, by_ref: dict[str, str]) -> list[str]:
    """The local images a compose `image:` names (however the engine spells it)."""
    try:
        ref = parse_reference(reference)
    except (StackyardError, ValueError):
        return [by_ref[reference]] if reference in by_ref else []
    names = [f"{repo}@{ref.digest}" for repo in ref.repo_names] if ref.digest else []
    names += [f"{repo}:{ref.tag or 'latest'}" for repo in ref.repo_names]
    return [by_ref[n] for n in names if n in by_ref]


# -- what uses what --------------------------------------------------------------------
def _user(container: DfContainer, found: Guard) -> User:
    project = container.project
    return User(
        stack=found.stack_of(project) if project else None,
        service=container.labels.get("com.docker.compose.service"),
        container=container.name,
    )


def anonymous(volume: DfVolume) -> bool:
    """Made by the engine for a container's unnamed mount."""
    if ANONYMOUS_LABEL in volume.labels:
        return True
    return bool(_ANONYMOUS.match(volume.name)) and VOLUME_LABEL not in volume.labels


def image_protected(image: DfImage, found: Guard) -> str | None:
    if image.labels.get(PROTECT_LABEL) == "true":
        return f"labelled {PROTECT_LABEL}=true"
    if image.id in found.own_images:
        return found.own_images[image.id]
    if any(t.startswith(f"{KEEP_REPOSITORY}:") for t in image.tags):
        return "kept by an update for its rollback"
    if image.id in found.stack_images:
        return f"an image of {found.stack_images[image.id]}"
    return None


def volume_protected(volume: DfVolume, found: Guard) -> str | None:
    if volume.labels.get(PROTECT_LABEL) == "true":
        return f"labelled {PROTECT_LABEL}=true"
    project = volume.labels.get("com.docker.compose.project")
    if project:
        return f"a volume of the stack {found.stack_of(project)}"
    return None


def network_protected(network: DfNetwork, found: Guard) -> str | None:
    if network.builtin:
        return "the engine's own"
    if network.labels.get(PROTECT_LABEL) == "true":
        return f"labelled {PROTECT_LABEL}=true"
    project = network.labels.get("com.docker.compose.project")
    if project:
        return f"a network of the stack {found.stack_of(project)}"
    if network.name in found.external_networks:
        return f"the stack {found.external_networks[network.name]} names it as external"
    return None


def container_protected(container: DfContainer) -> str | None:
    if container.labels.get(PROTECT_LABEL) == "true":
        return f"labelled {PROTECT_LABEL}=true"
    if HELPER_LABEL in container.labels:
        return "Stackyard's helper (removed when its work ends)"
    return None


# -- the report --------------------------------------------------------------------------
def report(usage: DiskUsage, found: Guard, now: datetime | None = None) -> DiskReport:
    users_of_image: dict[str, list[User]] = {}
    users_of_volume: dict[str, list[User]] = {}
    users_of_network: dict[str, list[User]] = {}
    for container in usage.containers:
        user = _user(container, found)
        users_of_image.setdefault(container.image_id, []).append(user)
        for name in container.volumes:
            users_of_volume.setdefault(name, []).append(user)
        for name in container.networks:
            users_of_network.setdefault(name, []).append(user)
    for image_id, named in found.stack_images.items():
        stack, _, service = named.partition("/")
        declared = User(stack=stack, service=service)
        if not any(u.stack == stack for u in users_of_image.get(image_id, [])):
            users_of_image.setdefault(image_id, []).append(declared)
    images = [
        ImageView(
            id=i.id,
            tags=list(i.tags),
            created=datetime.fromtimestamp(i.created, UTC),
            size=i.size,
            shared=i.shared,
            unique=max(0, i.size - max(i.shared, 0)),
            dangling=not i.tags,
            used_by=users_of_image.get(i.id, []),
            protected=image_protected(i, found),
        )
        for i in usage.images
    ]
    volumes = [
        VolumeView(
            name=v.name,
            driver=v.driver,
            created=_when(v.created),
            size=v.size,
            anonymous=anonymous(v),
            stack=(
                found.stack_of(project)
                if (project := v.labels.get("com.docker.compose.project"))
                else None
            ),
            used_by=users_of_volume.get(v.name, []),
            protected=volume_protected(v, found),
        )
        for v in usage.volumes
    ]
    networks = [
        NetworkView(
            id=n.id,
            name=n.name,
            driver=n.driver,
            created=_when(n.created),
            stack=(
                found.stack_of(project)
                if (project := n.labels.get("com.docker.compose.project"))
                else None
            ),
            used_by=users_of_network.get(n.name, []),
            protected=network_protected(n, found),
        )
        for n in usage.networks
    ]
    by_id = {i.id: i for i in usage.images}
    containers = [
        ContainerView(
            id=c.id,
            name=c.name,
            image=(by_id[c.image_id].tags[:1] or [c.image_id])[0]
            if c.image_id in by_id
            else c.image_id,
            state=c.state,
            size=c.size_rw,
            protected=container_protected(c),
        )
        for c in usage.containers
        if not c.project
    ]
    cache = [
        BuildCacheView(
            id=b.id,
            kind=b.kind,
            description=b.description,
            size=b.size,
            in_use=b.in_use,
            shared=b.shared,
            last_used=_when(b.last_used),
        )
        for b in usage.build_cache
    ]
    summary = DiskSummary(
        images=usage.layers_size,
        images_count=len(images),
        containers=sum(c.size_rw for c in usage.containers),
        containers_count=len(usage.containers),
        volumes=sum(max(v.size, 0) for v in usage.volumes),
        volumes_count=len(volumes),
        build_cache=sum(b.size for b in usage.build_cache if not b.shared),
        reclaimable=(
            sum(i.unique for i in images if not i.used_by and i.protected is None)
            + sum(c.size for c in containers if c.state != "running" and c.protected is None)
            + sum(
                max(v.size, 0)
                for v in volumes
                if v.anonymous and not v.used_by and v.protected is None
            )
            + sum(b.size for b in cache if not b.in_use and not b.shared)
        ),
        measured_at=now or datetime.now(UTC),
    )
    return DiskReport(
        summary=summary,
        images=images,
        volumes=volumes,
        networks=networks,
        containers=containers,
        build_cache=cache,
    )


def _when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)
