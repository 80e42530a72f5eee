"""What a pull (the `pull` and `update` actions) pulls: only the services whose image comes
from a registry. An image built or loaded here (the update checker calls it local) or one
that no registry has is never pulled: pulling it would fail, and fail the update."""

from __future__ import annotations

from dataclasses import dataclass

from stackyard.compose.project import Project
from stackyard.docker.images import local_images
from stackyard.errors import Invalid
from stackyard.registry.reference import ImageRef, parse_reference
from stackyard.stacks.machine import Machine


@dataclass(frozen=True)
class PullChoice:
    pull: tuple[str, ...]  # services whose image comes from a registry
    skipped: tuple[tuple[str, str], ...]  # (service, why it is not pulled)


def pull_choice(machine: Machine, project: Project) -> PullChoice:
    """The services to pull. Not pulled: services that build their image, images that are
    no registry reference, images present here with no registry digest (built or loaded
    here: the update checker calls them local), and images the registry said it has not
    (when present here)."""
    snapshot = machine.digests.snapshot()
    refs: dict[str, ImageRef | None] = {}
    for service in project.services:
        if service.image and not service.builds:
            try:
                refs[service.name] = parse_reference(service.image)
            except Invalid:
                refs[service.name] = None
    present = local_images(machine.docker, [r for r in refs.values() if r is not None])
    pull, skipped = [], []
    for service in project.services:
        if not service.image or service.builds:
            skipped.append((service.name, "builds its image"))
            continue
        ref = refs[service.name]
        if ref is None:
            skipped.append((service.name, "not a registry image"))
            continue
        local = present.get(ref.name)
        remote = snapshot.remote.get(ref.name)
        if local is not None and local.present and not local.digests:
            skipped.append((service.name, f"{service.image} was built or loaded here"))
        elif local is not None and local.present and remote and remote.status == "not_found":
            skipped.append((service.name, f"{service.image} is in no registry"))
        else:
            pull.append(service.name)
    return PullChoice(tuple(pull), tuple(skipped))
