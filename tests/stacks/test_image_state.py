"""`image_state`: what the update indicator says for one image, from the caches only."""

import pytest

from stackyard.registry.digests import DigestSnapshot, LocalDigest, RemoteDigest
from stackyard.registry.reference import parse_reference
from stackyard.stacks.updates import image_state

OLD = "sha256:" + "1" * 64
NEW = "sha256:" + "2" * 64
NOW = "2025-01-01T00:00:00+00:00"
REF = parse_reference("ghcr.io/team/app:1")


def snapshot(local: LocalDigest | None = None, remote: RemoteDigest | None = None):
    return DigestSnapshot(
        remote={REF.name: remote} if remote else {},
        local={REF.name: local} if local else {},
    )


def present(*digests: str) -> LocalDigest:
    return LocalDigest(True, list(digests), NOW)


def test_no_registry_reference_is_local():
    assert image_state(None, snapshot()) == ("local", None)


def test_pinned_by_digest_is_never_an_update():
    pinned = parse_reference(f"ghcr.io/team/app@{OLD}")
    assert image_state(pinned, snapshot(remote=RemoteDigest("ok", NEW, NOW))) == ("pinned", None)


def test_built_or_loaded_here_is_local():
    """Present but with no registry digest: nothing to compare with."""
    assert image_state(REF, snapshot(present(), RemoteDigest("ok", NEW, NOW))) == ("local", None)


@pytest.mark.parametrize(
    ("local", "remote_digest", "state"),
    [
        (present(OLD), OLD, "up_to_date"),
        (present(OLD), NEW, "update_available"),
        (present(OLD, NEW), NEW, "up_to_date"),  # any of the local digests counts
    ],
)
def test_digests_compared(local, remote_digest, state):
    assert image_state(REF, snapshot(local, RemoteDigest("ok", remote_digest, NOW))) == (
        state,
        None,
    )


def test_not_checked_yet_is_unknown():
    assert image_state(REF, snapshot(present(OLD))) == ("unknown", None)


def test_not_pulled_yet_is_unknown():
    remote = RemoteDigest("ok", NEW, NOW)
    assert image_state(REF, snapshot(None, remote)) == ("unknown", None)
    assert image_state(REF, snapshot(LocalDigest(False, [], NOW), remote)) == ("unknown", None)


def test_not_in_the_registry_is_local_with_the_reason():
    remote = RemoteDigest("not_found", None, NOW, "ghcr.io/team/app: not found")
    assert image_state(REF, snapshot(present(OLD), remote)) == (
        "local",
        "ghcr.io/team/app: not found",
    )


def test_a_registry_failure_is_an_error_with_the_reason():
    remote = RemoteDigest("error", None, NOW, "cannot reach registry ghcr.io")
    assert image_state(REF, snapshot(present(OLD), remote)) == (
        "error",
        "cannot reach registry ghcr.io",
    )
