"""The git servers of tests.support.git_servers serve what a working clone pushed, to the
plain ``git`` command, and refuse what they should."""

from __future__ import annotations

import base64
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.git_servers import Work, git_daemon, git_http, git_ssh, ssh_signing_key


def git(
    *args: str, cwd: Path | None = None, ssh: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`git` as a client of the servers: no machine config, never a prompt; `ssh` is the
    ssh command it uses (`GIT_SSH_COMMAND`)."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            **({"GIT_SSH_COMMAND": ssh} if ssh else {}),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def remote_head(url: str, ssh: str | None = None) -> str:
    """The sha `main` has on the server, read with `git ls-remote`."""
    listed = git("ls-remote", url, "refs/heads/main", ssh=ssh)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.split()[0]


@pytest.fixture
def work(tmp_path: Path) -> Work:
    """A clone with two commits on `main` pushed to `tmp_path/root/app.git`."""
    work = Work.create(tmp_path / "work", tmp_path / "root" / "app.git")
    work.write("compose.yaml", "services: {}\n")
    work.commit("first")
    work.write("stacks/web/compose.yaml", "services:\n  web:\n    image: nginx\n")
    work.remove("compose.yaml")
    work.commit("second")
    work.push()
    return work


def test_work_commits_branches_and_pushes(work: Work) -> None:
    assert len(work.head()) == 40
    assert work.git("rev-parse", "main") == work.head()
    assert work.git("--git-dir", str(work.origin), "rev-parse", "main") == work.head()
    assert work.git("ls-tree", "-r", "--name-only", "HEAD") == "stacks/web/compose.yaml"

    work.checkout("feature", create=True)
    sha = work.commit("empty", allow_empty=True)
    work.push("feature")
    assert work.git("--git-dir", str(work.origin), "rev-parse", "feature") == sha
    work.checkout("main")
    assert work.head() != sha


def test_signed_commit_verifies_with_allowed_signers(work: Work, tmp_path: Path) -> None:
    key, public = ssh_signing_key(tmp_path / "keys", "signer")
    assert public.startswith("ssh-ed25519 ")
    work.write("signed.txt", "signed\n")
    signed = work.commit("signed", signing_key=key)
    work.write("unsigned.txt", "unsigned\n")
    unsigned = work.commit("unsigned")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{Work.EMAIL} {public}\n")

    def verify(sha: str, signers: Path) -> subprocess.CompletedProcess[str]:
        return git(
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", sha, cwd=work.folder
        )

    assert verify(signed, allowed).returncode == 0
    assert verify(unsigned, allowed).returncode != 0
    _, stranger = ssh_signing_key(tmp_path / "keys", "stranger")
    others = tmp_path / "other_signers"
    others.write_text(f"{Work.EMAIL} {stranger}\n")
    assert verify(signed, others).returncode != 0


def test_git_daemon_serves_and_goes_down_and_back(work: Work, tmp_path: Path) -> None:
    with git_daemon(work.origin.parent) as server:
        url = server.url_for("app.git")
        assert url == f"git://127.0.0.1:{server.port}/app.git"
        cloned = git("clone", "-q", url, str(tmp_path / "clone"))
        assert cloned.returncode == 0, cloned.stderr
        assert (tmp_path / "clone/stacks/web/compose.yaml").exists()

        server.stop()
        assert git("ls-remote", url).returncode != 0
        server.start()
        assert server.url_for("app.git") == url
        assert remote_head(url) == work.head()
    assert git("ls-remote", url).returncode != 0


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_git_http_needs_the_password_and_never_logs_it(work: Work, tmp_path: Path) -> None:
    password = "s3cret-token-value"
    with git_http(work.origin.parent, "deploy", password) as server:
        url = server.url_for("app.git")
        assert url == f"http://127.0.0.1:{server.port}/app.git"

        try:
            urllib.request.urlopen(f"{url}/info/refs?service=git-upload-pack", timeout=30)
        except urllib.error.HTTPError as error:
            assert error.code == 401
            assert error.headers["WWW-Authenticate"] == 'Basic realm="git"'
        else:
            pytest.fail("no credentials, yet not refused")

        # The credentials in a header (as a client that keeps them out of URLs does).
        header = f"http.extraHeader=Authorization: {basic('deploy', password)}"
        cloned = git("-c", header, "clone", "-q", url, str(tmp_path / "clone"))
        assert cloned.returncode == 0, cloned.stderr
        assert (tmp_path / "clone/stacks/web/compose.yaml").exists()
        # Git's own way: the credentials in the URL, sent as Basic after the 401.
        with_password = url.replace("http://", f"http://deploy:{password}@")
        assert remote_head(with_password) == work.head()

        wrong = url.replace("http://", "http://deploy:wrong@")
        refused = git("ls-remote", wrong)
        assert refused.returncode != 0
        assert "Authentication failed" in refused.stderr or "401" in refused.stderr
        bad_header = f"http.extraHeader=Authorization: {basic('deploy', 'wrong')}"
        assert git("-c", bad_header, "ls-remote", url).returncode != 0

        requests = server.requests()
        assert "GET /app.git/info/refs?service=git-upload-pack -" in requests
        assert "GET /app.git/info/refs?service=git-upload-pack deploy" in requests
        assert "POST /app.git/git-upload-pack deploy" in requests
        assert all(password not in line and "wrong" not in line for line in requests)

        server.stop()
        assert git("ls-remote", with_password).returncode != 0
        server.start()
        assert remote_head(with_password) == work.head()


def test_git_ssh_serves_authorized_keys_to_a_pinned_host(work: Work, tmp_path: Path) -> None:
    key, public = ssh_signing_key(tmp_path / "keys", "deploy")
    stranger, _ = ssh_signing_key(tmp_path / "keys", "stranger")
    with git_ssh(work.origin.parent) as server:
        url = server.url_for("app.git")
        assert url == f"ssh://{server.user}@127.0.0.1:{server.port}{work.origin.resolve()}"
        assert server.host_key().startswith("ssh-ed25519 ")
        assert len(server.host_key().split()) == 2
        known = tmp_path / "known_hosts"
        known.write_text(server.known_hosts() + "\n")

        def command(identity: Path) -> str:
            return (
                f"ssh -i {identity} -o IdentitiesOnly=yes -o BatchMode=yes"
                f" -o StrictHostKeyChecking=yes -o UserKnownHostsFile={known}"
            )

        refused = git("ls-remote", url, ssh=command(key))
        assert refused.returncode != 0  # not authorized yet
        server.authorize(public)
        assert "restrict " + public in server.authorized_keys.read_text()
        cloned = git("clone", "-q", url, str(tmp_path / "clone"), ssh=command(key))
        assert cloned.returncode == 0, cloned.stderr
        assert (tmp_path / "clone/stacks/web/compose.yaml").exists()
        assert git("ls-remote", url, ssh=command(stranger)).returncode != 0

        # A later push (files git writes with the umask) is served too.
        work.write("later.txt", "later\n")
        work.commit("later")
        work.push()
        assert remote_head(url, ssh=command(key)) == work.head()

        server.stop()
        assert git("ls-remote", url, ssh=command(key)).returncode != 0
        server.start()
        assert remote_head(url, ssh=command(key)) == work.head()

        server.new_host_key()
        changed = git("ls-remote", url, ssh=command(key))
        assert changed.returncode != 0
        assert "HOST IDENTIFICATION HAS CHANGED" in changed.stderr
        known.write_text(server.known_hosts() + "\n")
        assert remote_head(url, ssh=command(key)) == work.head()
    user = server.user
    assert subprocess.run(["id", user], capture_output=True).returncode != 0
