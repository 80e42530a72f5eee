"""Which tag is the latest release (pure logic; the real registry is in tests/deploy)."""

from stackyard.system.release import latest_release, newer


def test_only_full_semver_releases_are_chosen():
    tags = ["1", "1.1", "latest", "1.0.0", "1.1.0", "v1.2.0-rc.1", "2.0.0-beta", "nightly"]
    assert latest_release(tags) == "1.1.0"
    assert latest_release([*tags, "v1.10.0", "1.9.0"]) == "v1.10.0"  # numeric, not text order
    assert latest_release(["01.2.3", "1.2", "1.2.3.4", "1.2.3+build"]) is None
    assert latest_release([]) is None


def test_newer_compares_versions_not_text():
    assert newer("1.10.0", "1.9.0") and newer("v1.1.0", "1.0.0")
    assert not newer("1.0.0", "1.0.0") and not newer("0.9.9", "1.0.0")
    assert not newer("not-a-version", "1.0.0")
