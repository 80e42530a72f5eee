import pytest

from stackyard.errors import Invalid
from stackyard.registry.reference import parse_reference

DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest", "api_host"),
    [
        ("nginx", "docker.io", "library/nginx", "latest", None, "registry-1.docker.io"),
        ("nginx:1.27", "docker.io", "library/nginx", "1.27", None, "registry-1.docker.io"),
        ("grafana/grafana:11", "docker.io", "grafana/grafana", "11", None, "registry-1.docker.io"),
        (
            "docker.io/library/redis:7",
            "docker.io",
            "library/redis",
            "7",
            None,
            "registry-1.docker.io",
        ),
        ("ghcr.io/home/app:v1.2", "ghcr.io", "home/app", "v1.2", None, "ghcr.io"),
        ("127.0.0.1:5000/team/app", "127.0.0.1:5000", "team/app", "latest", None, "127.0.0.1:5000"),
        ("localhost/app:dev", "localhost", "app", "dev", None, "localhost"),
        (f"nginx@{DIGEST}", "docker.io", "library/nginx", None, DIGEST, "registry-1.docker.io"),
        (
            f"nginx:1.27@{DIGEST}",
            "docker.io",
            "library/nginx",
            "1.27",
            DIGEST,
            "registry-1.docker.io",
        ),
    ],
)
def test_references_are_read_as_the_engine_reads_them(
    text, registry, repository, tag, digest, api_host
):
    ref = parse_reference(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        registry,
        repository,
        tag,
        digest,
    )
    assert ref.api_host == api_host
    assert ref.pinned is (digest is not None)


def test_one_name_per_distinct_reference():
    assert parse_reference("nginx").name == parse_reference("docker.io/library/nginx:latest").name
    assert parse_reference("nginx").repo_names == (
        "nginx",
        "library/nginx",
        "docker.io/library/nginx",
    )


@pytest.mark.parametrize("text", ["UPPER/case", "nginx:bad tag", "nginx@sha256:short", "a//b", ""])
def test_bad_references_are_refused(text):
    with pytest.raises(Invalid):
        parse_reference(text)
