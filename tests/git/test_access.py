"""How Stackyard signs in to a git server and what it trusts: an HTTPS token that is
never written anywhere, an SSH deploy key with the server's host key pinned at first
contact, and commits deployed only when signed by a trusted key; against real servers
(git http-backend behind Basic auth, OpenSSH's sshd, `git verify-commit`)."""

from __future__ import annotations

import logging
import secrets
import subprocess
from pathlib import Path

import pytest

from tests.git.conftest import app_compose
from tests.git.test_sync import add_repository, add_stack, running, sync
from tests.support.git_servers import git_http, git_ssh, ssh_signing_key

pytestmark = pytest.mark.docker


def every_byte_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_an_https_token_is_used_and_never_kept_in_the_clone_a_url_a_log_or_an_answer(
    admin_client,
    docker_client,
    docker_cleanup,
    quick_gate,
    work,
    git_root,
    unique,
    settings,
    caplog,
):
    token = f"tok-{secrets.token_hex(16)}"
    work.write("app/compose.yaml", app_compose("1"))
    work.commit("app")
    work.push()
    caplog.set_level(logging.DEBUG)
    with git_http(git_root, "deploy", token) as server:
        url = server.url_for("stacks.git")
        repo = add_repository(admin_client, url, auth="token", username="deploy", token=token)
        assert repo["has_token"] is True and "token" not in repo
        view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
        assert running(docker_client, view["stack"])[1] == "1"

        # A wrong token: refused with a reason a person can act on.
        server.stop()
        server.password = "another"
        server.start()
        report = sync(admin_client, repo["id"])
        assert "refused the credentials" in report["error"]
        assert running(docker_client, view["stack"])[1] == "1"
        requests = "\n".join(server.requests())

    answers = "".join(
        admin_client.get(path).text
        for path in ("/api/git/repositories", "/api/git/stacks", "/api/audit")
    )
    assert token not in answers
    assert token not in requests and "deploy" in requests  # sent as Basic auth, not in a URL
    assert token.encode() not in every_byte_under(settings.data_dir / "git" / "repositories")
    assert token not in caplog.text
    # Sealed at rest: not in any file of the data folder in clear.
    assert token.encode() not in every_byte_under(settings.data_dir)


def test_an_ssh_deploy_key_with_the_host_key_pinned_and_a_changed_key_refused(
    admin_client, docker_client, docker_cleanup, quick_gate, work, git_root, unique, settings
):
    work.write("app/compose.yaml", app_compose("1"))
    work.commit("app")
    work.push()
    with git_ssh(git_root) as server:
        repo = add_repository(admin_client, server.url_for("stacks.git"), auth="ssh_key")
        # The host key, pinned at first contact, is the server's; the public half is shown.
        assert repo["host_key"] == server.host_key()
        assert repo["host_key_fingerprint"].startswith("SHA256:")
        assert repo["public_key"].startswith("ssh-ed25519 ")
        # Not authorized at the git host yet: said so.
        refused = admin_client.post(
            "/api/git/stacks",
            json={"name": f"app-{unique}", "repository": repo["id"], "path": "app"},
        )
        assert refused.status_code == 502 and "refused the deploy key" in refused.json()["detail"]
        server.authorize(repo["public_key"])
        view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
        assert running(docker_client, view["stack"])[1] == "1"

        server.new_host_key()
        work.write("app/compose.yaml", app_compose("2"))
        work.commit("app 2")
        work.push()
        report = sync(admin_client, repo["id"])
        assert "not the pinned one" in report["error"], report
        assert running(docker_client, view["stack"])[1] == "1"
        # Pinned again once the admin forgot the old key: the change deploys.
        assert (
            admin_client.delete(f"/api/git/repositories/{repo['id']}/host-key").status_code == 200
        )
        pinned = admin_client.post(f"/api/git/repositories/{repo['id']}/host-key").json()
        assert pinned["host_key"] == server.host_key()
        assert sync(admin_client, repo["id"])["stacks"][view["stack"]]["outcome"] == "deployed"
        assert running(docker_client, view["stack"])[1] == "2"
    # The private half never leaves the sealed store: not in a file of the data folder.
    private = every_byte_under(settings.data_dir)
    assert b"OPENSSH PRIVATE KEY" not in private


def test_only_commits_signed_by_a_trusted_key_deploy(
    admin_client, docker_client, docker_cleanup, quick_gate, work, daemon, unique, tmp_path
):
    trusted_key, trusted = ssh_signing_key(tmp_path, "trusted")
    other_key, _ = ssh_signing_key(tmp_path, "other")
    work.write("app/compose.yaml", app_compose("1"))
    work.commit("app", signing_key=trusted_key)
    work.push()
    repo = add_repository(
        admin_client, daemon.url_for("stacks.git"), require_signed=True, trusted_keys=[trusted]
    )
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
    assert view["last_sync"]["outcome"] == "deployed"

    for version, key in (("2", None), ("3", other_key)):
        work.write("app/compose.yaml", app_compose(version))
        sha = work.commit(f"app {version}", signing_key=key)
        work.push()
        outcome = sync(admin_client, repo["id"])["stacks"][view["stack"]]
        assert outcome["outcome"] == "refused" and sha[:12] in outcome["detail"], outcome
        assert running(docker_client, view["stack"])[1] == "1"
        applied = admin_client.post(f"/api/git/stacks/{view['stack']}/apply", json={"commit": sha})
        assert applied.status_code == 502 and "refused" in applied.json()["detail"]

    work.write("app/compose.yaml", app_compose("4"))
    work.commit("app 4", signing_key=trusted_key)
    work.push()
    assert sync(admin_client, repo["id"])["stacks"][view["stack"]]["outcome"] == "deployed"
    assert running(docker_client, view["stack"])[1] == "4"


def test_a_token_in_the_address_or_a_local_transport_is_refused(admin_client, work, git_root):
    for url, why in (
        ("https://user:secret@example.invalid/r.git", "not in the address"),
        (f"file://{git_root}/stacks.git", "no git repository address"),
        ("ext::sh -c touch% /tmp/pwned", "no git repository address"),
        ("--upload-pack=touch /tmp/pwned", "no git repository address"),
    ):
        answer = admin_client.post(
            "/api/git/repositories", json={"name": "x", "url": url, "poll_seconds": 0}
        )
        assert answer.status_code in (400, 422) and why in answer.text, (url, answer.text)
    assert admin_client.get("/api/git/repositories").json() == []
    assert not Path("/tmp/pwned").exists()


def test_commits_signed_with_a_trusted_openpgp_key_deploy_and_others_do_not(
    admin_client,
    docker_client,
    docker_cleanup,
    quick_gate,
    work,
    daemon,
    unique,
    tmp_path,
    monkeypatch,
):
    gnupg = tmp_path / "gnupg"
    gnupg.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(gnupg))

    def new_key(email: str) -> str:
        subprocess.run(
            ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", f"T <{email}>",
             "ed25519", "sign", "never"],
            check=True, capture_output=True,
        )  # fmt: skip
        return subprocess.run(
            ["gpg", "--armor", "--export", email], check=True, capture_output=True, text=True
        ).stdout

    trusted = new_key("trusted@example.invalid")
    new_key("other@example.invalid")

    def signed_commit(message: str, email: str) -> str:
        work.git("add", "--all")
        work.git("-c", f"user.signingkey={email}", "commit", "-q", "-S", "-m", message)
        return work.head()

    work.write("app/compose.yaml", app_compose("1"))
    signed_commit("app", "trusted@example.invalid")
    work.push()
    repo = add_repository(
        admin_client, daemon.url_for("stacks.git"), require_signed=True, trusted_keys=[trusted]
    )
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
    assert view["last_sync"]["outcome"] == "deployed", view

    work.write("app/compose.yaml", app_compose("2"))
    other = signed_commit("app 2", "other@example.invalid")
    work.push()
    outcome = sync(admin_client, repo["id"])["stacks"][view["stack"]]
    assert outcome["outcome"] == "refused" and other[:12] in outcome["detail"], outcome
    assert running(docker_client, view["stack"])[1] == "1"

    work.write("app/compose.yaml", app_compose("3"))
    signed_commit("app 3", "trusted@example.invalid")
    work.push()
    assert sync(admin_client, repo["id"])["stacks"][view["stack"]]["outcome"] == "deployed"
    assert running(docker_client, view["stack"])[1] == "3"
