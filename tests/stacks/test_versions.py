"""Version tags: which newer tag an image may move to within a range, the size of a step,
and the compose file edited to the new tag (pure logic: the real moves are in
test_rollback.py)."""

import pytest

from stackyard.errors import Invalid
from stackyard.stacks.versions import jump, newer_tag, retagged

TAGS = [
    "latest", "1", "1.4", "1.4.2", "1.4.3", "1.4.10", "1.5.0", "1.5.1-rc.1", "2.0.0",
    "2.1.0-beta", "v1.9.9", "1.4.3-alpine", "1.6.0-alpine", "3.0.0-alpine", "1.4.2-alpine",
]  # fmt: skip


@pytest.mark.parametrize(
    ("current", "track", "prereleases", "expected"),
    [
        ("1.4.2", "patch", False, "1.4.10"),  # numeric, not textual order
        ("1.4.2", "minor", False, "1.5.0"),
        ("1.4.2", "major", False, "2.0.0"),
        ("1.4.2", "minor", True, "1.5.1-rc.1"),  # pre-releases only when asked
        ("1.4.2", "major", True, "2.1.0-beta"),
        ("2.0.0", "major", False, None),  # the newest already
        ("1.4.2-alpine", "major", False, "3.0.0-alpine"),  # a variant stays a variant
        ("1.4.2-alpine", "minor", False, "1.6.0-alpine"),
        ("v1.9.0", "patch", False, "v1.9.9"),  # the v prefix as written
        ("latest", "major", False, None),  # a floating tag follows no version
        ("1.4", "major", False, None),
    ],
)
def test_the_newest_tag_within_the_range(current, track, prereleases, expected):
    assert newer_tag(current, TAGS, track, prereleases) == expected


def test_a_release_sorts_after_its_pre_releases():
    assert newer_tag("1.5.0-rc.2", ["1.5.0-rc.10", "1.5.0"], "patch", True) == "1.5.0"
    assert newer_tag("1.5.0-rc.2", ["1.5.0-rc.10"], "patch", True) == "1.5.0-rc.10"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("1.4.2", "1.4.3", "patch"),
        ("1.4.2", "1.5.0", "minor"),
        ("v1.4.2", "2.0.0", "major"),
        ("1.4", "1.4.1", "patch"),
        ("1.4.2", "1.4.2", None),
        ("2.0.0", "1.9.0", None),
        (None, "1.0.0", None),
        ("stable", "1.0.0", None),
    ],
)
def test_the_size_of_a_version_step(old, new, expected):
    assert jump(old, new) == expected


def test_the_compose_file_is_edited_where_it_names_the_image_and_nowhere_else():
    compose = (
        "services:\n"
        "  web:\n"
        "    image: registry.local:5000/team/web:1.4.2  # pinned by hand\n"
        "  worker:\n"
        '    image: "registry.local:5000/team/web:1.4.2"\n'
        "  db:\n"
        "    image: postgres:16.1.0\n"
        "    environment:\n"
        "      NOTE: registry.local:5000/team/web:1.4.2\n"
    )
    edited = retagged(
        compose, "registry.local:5000/team/web:1.4.2", "registry.local:5000/team/web:1.5.0"
    )
    assert edited == compose.replace(
        "    image: registry.local:5000/team/web:1.4.2",
        "    image: registry.local:5000/team/web:1.5.0",
    ).replace('"registry.local:5000/team/web:1.4.2"', '"registry.local:5000/team/web:1.5.0"')
    assert "NOTE: registry.local:5000/team/web:1.4.2" in edited


def test_an_image_set_through_a_variable_is_left_to_the_user():
    compose = "services:\n  web:\n    image: team/web:${TAG}\n"
    with pytest.raises(Invalid, match="edit its tag by hand"):
        retagged(compose, "team/web:1.4.2", "team/web:1.5.0")
