"""The pure pieces of stacks from git: webhook signatures, a pushed ref, the layered
`.env`, the addresses and refs accepted, git's failures as what a person can do."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from stackyard.errors import GitDenied, GitError, GitUnreachable, Invalid
from stackyard.git import hooks, remote
from stackyard.git.env import MARK, layered_env
from stackyard.git.model import RepositoryIn, check_folder, check_ref
from stackyard.stacks.tree import checked_path

BODY = b'{"ref": "refs/heads/main", "after": "abc"}'
SECRET = "s3cret-of-the-hook"
MAC = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("headers", "ok"),
    [
        ({"x-hub-signature-256": f"sha256={MAC}"}, True),
        ({"x-gitea-signature": MAC}, True),
        ({"x-forgejo-signature": MAC}, True),
        ({"x-gitlab-token": SECRET}, True),
        ({"x-hub-signature-256": MAC}, False),  # without its sha256= prefix
        ({"x-hub-signature-256": f"sha256={MAC[:-1]}0"}, False),
        ({"x-gitlab-token": SECRET + " "}, False),
        ({"x-hub-signature": "sha1=00"}, False),  # the old SHA-1 header is not enough
        ({}, False),
    ],
)
def test_a_delivery_counts_only_when_signed_with_the_secret(headers, ok):
    assert hooks.signed(headers, BODY, SECRET) is ok


def test_a_push_names_its_ref_and_other_deliveries_none():
    assert hooks.pushed_ref(BODY) == "refs/heads/main"
    assert hooks.pushed_ref(b'{"zen": "x"}') is None
    assert hooks.pushed_ref(b"[1]") is None and hooks.pushed_ref(b"not json") is None
    assert hooks.names("refs/heads/main", "main") and hooks.names("refs/tags/v1", "v1")
    assert not hooks.names("refs/heads/main-2", "main")


def test_the_hosts_env_keeps_its_values_over_the_repositorys_template():
    template = b"A=1\nB=2\n# a comment\nexport C=3\n"
    first = layered_env(template, None)
    assert first == MARK + b"\nA=1\nB=2\nexport C=3\n"
    mine = b"B=mine\n"
    layered = layered_env(template, mine)
    assert layered is not None and layered.startswith(b"B=mine\n\n" + MARK)
    assert b"B=2" not in layered and b"A=1" in layered
    # Layered again (a later commit): the repository's part is made anew, the host's kept.
    again = layered_env(b"A=9\n", layered)
    assert again == b"B=mine\n\n" + MARK + b"\nA=9\n"
    assert layered_env(None, b"X=1\n") == b"X=1\n" and layered_env(None, None) is None


@pytest.mark.parametrize("ref", ["main", "release/2.x", "v1.4.0", "feature_x-1"])
def test_branch_and_tag_names(ref):
    assert check_ref(ref) == ref


@pytest.mark.parametrize(
    "ref", ["", "-upload-pack", "a..b", "a//b", "/a", "a/", "x.lock", "a b", "a@{1}"]
)
def test_what_is_no_ref(ref):
    with pytest.raises(Invalid):
        check_ref(ref)


def test_folders_of_a_repository_and_paths_in_a_stack():
    assert check_folder("/stacks/web/") == "stacks/web" and check_folder("") == ""
    for bad in ("../x", "a/../b", ".git", "a/.git/b"):
        with pytest.raises(Invalid):
            check_folder(bad)
    assert checked_path("a//b") == "a/b"
    for bad in ("../x", "/etc/passwd", ".secrets", ".git/config", "a/", ""):
        with pytest.raises(Invalid):
            checked_path(bad)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/o/r.git",
        "ssh://git@host:2222/o/r.git",
        "git@github.com:o/r.git",
        "git://h/r",
    ],
)
def test_addresses_a_repository_may_have(url):
    assert RepositoryIn(name="r", url=url).url == url


def test_commit_pages_of_known_hosts_only():
    sha = "a" * 40
    assert remote.host_page("git@github.com:o/r.git", sha) == f"https://github.com/o/r/commit/{sha}"
    assert (
        remote.host_page("https://gitlab.com/g/r", sha) == f"https://gitlab.com/g/r/-/commit/{sha}"
    )
    assert remote.host_page("https://git.example.internal/o/r.git", sha) is None


@pytest.mark.parametrize(
    ("stderr", "kind", "said"),
    [
        (
            "fatal: Authentication failed for 'https://h/r.git/'",
            GitDenied,
            "refused the credentials",
        ),
        ("git@h: Permission denied (publickey).", GitDenied, "refused the deploy key"),
        ("Host key verification failed.", GitDenied, "not the pinned one"),
        ("fatal: couldn't find remote ref nope", GitError, "no branch or tag"),
        (
            "fatal: unable to connect to 127.0.0.1:\nConnection refused",
            GitUnreachable,
            "cannot be reached",
        ),
        ("fatal: repository 'https://h/x.git/' not found", GitError, "no repository we can read"),
    ],
)
def test_gits_failures_say_what_to_do(stderr, kind, said):
    access = remote.Access("https://h/r.git", "main", "token", token="tok-123")
    error = remote.classified(stderr, access)
    assert type(error) is kind and said in error.detail


def test_a_token_never_reaches_a_message():
    access = remote.Access("https://h/r.git", "main", "token", token="tok-123")
    assert "tok-123" not in remote._scrubbed("fatal: bad tok-123 here", access)
    assert "tok-123" not in repr(access)
