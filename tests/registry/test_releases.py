"""An image's release from its OCI labels: each label checked (whoever pushed the image
wrote them), and the releases page of a known forge."""

import pytest

from stackyard.registry.releases import Release, release_of, releases_page

OCI = "org.opencontainers.image."


def config(**labels: object) -> dict:
    return {"config": {"Labels": {OCI + k: v for k, v in labels.items()}}}


def test_the_labels_of_a_release_on_github():
    release = release_of(
        config(
            version="1.5.0",
            source="https://github.com/team/web.git",
            url="https://web.example.org",
            revision="0123456789abcdef0123456789abcdef01234567",
            created="2026-11-20T10:00:00Z",
        )
    )
    assert release == Release(
        version="1.5.0",
        source="https://github.com/team/web.git",
        url="https://web.example.org",
        revision="0123456789abcdef0123456789abcdef01234567",
        created="2026-11-20T10:00:00Z",
        link="https://github.com/team/web/releases",
    )


@pytest.mark.parametrize(
    ("source", "page"),
    [
        ("https://gitlab.com/group/sub/app", "https://gitlab.com/group/sub/app/-/releases"),
        ("https://codeberg.org/forgejo/forgejo/", "https://codeberg.org/forgejo/forgejo/releases"),
        ("https://gitea.com/gitea/tea", "https://gitea.com/gitea/tea/releases"),
        ("https://github.com/team", None),  # no repository
        ("https://git.example.org/team/app", None),  # a forge we do not know
    ],
)
def test_the_releases_page_of_known_forges(source, page):
    assert releases_page(source) == page


@pytest.mark.parametrize(
    "hostile",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://",
        "https://example.org/\x1b[31mred",
        "https://example.org/" + "a" * 400,
        42,
        ["https://github.com/a/b"],
    ],
)
def test_a_label_that_is_no_web_address_is_left_out(hostile):
    release = release_of(config(source=hostile, url=hostile))
    assert (release.source, release.url, release.link) == (None, None, None)


def test_an_image_without_labels_has_an_empty_release():
    assert release_of({"config": {}}) == Release()
    assert release_of({}) == Release()
    assert release_of(config(revision="not a commit; rm -rf /")).revision is None
