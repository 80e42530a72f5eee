"""The git CLI at the boundary: a repository fetched into this host's bare mirror of it,
the one place a git server is talked to, and where git's failures become typed errors.

What a git server is given never lands on disk or in an address: an HTTPS token reaches
git through a credential helper that reads it from the child's environment (never from
its arguments, never from `.git/config`, never in the URL); an SSH deploy key is a file
of a private folder for the one fetch, with the server's pinned host key as the only
known host (`StrictHostKeyChecking=yes`), no agent, no `~/.ssh/config`. Only the
https, http, ssh and git transports are allowed (no `file://`, no `ext::`). Every
message of git is scrubbed of the token before it is said anywhere."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from stackyard.errors import GitDenied, GitError, GitUnreachable, Invalid
from stackyard.git.model import Auth
from stackyard.process import children

#: How long a fetch may take in all; a server that stalls is given up on sooner (git's
#: low-speed limit for HTTP, ssh's connect time-out and keep-alives).
FETCH_SECONDS = 120.0
CONNECT_SECONDS = 15
#: The ref of the mirror that holds the last fetched commit of the repository's ref.
FETCHED = "refs/stackyard/fetched"
#: Git's own configuration is never read: neither the system's nor a user's.
_QUIET = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "LC_ALL": "C",
}
_TRANSPORTS = (
    "-c", "protocol.allow=never",
    "-c", "protocol.https.allow=always",
    "-c", "protocol.http.allow=always",
    "-c", "protocol.ssh.allow=always",
    "-c", "protocol.git.allow=always",
)  # fmt: skip
#: The credential helper: the user name and token from the child's environment.
_HELPER = (
    '!f() { test "$1" = get || exit 0; '
    'printf "username=%s\\npassword=%s\\n" "$STACKYARD_GIT_USER" "$STACKYARD_GIT_TOKEN"; }; f'
)
_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>.+)$")


@dataclass(frozen=True)
class Access:
    """How to reach a repository (with its secrets: never logged, never answered)."""

    url: str
    ref: str
    auth: Auth
    username: str = "git"
    token: str | None = None
    private_key: str | None = None
    host_key: str | None = None

    def __repr__(self) -> str:  # (never the secrets, should it be logged)
        return f"Access({self.url!r}, {self.ref!r}, {self.auth})"


def is_ssh(url: str) -> bool:
    return url.startswith("ssh://") or _SCP_LIKE.match(url) is not None


def ssh_address(url: str) -> tuple[str, int]:
    """(host, port) of an SSH repository address."""
    match = _SCP_LIKE.match(url)
    if match is not None:
        return match["host"], 22
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname:
        raise Invalid(f"{url!r} is no SSH address")
    return parts.hostname, parts.port or 22


def host_page(url: str, sha: str) -> str | None:
    """The commit's page at the git host, for the hosts whose pages have one shape
    (GitHub, GitLab, Gitea and Forgejo, Codeberg); None for any other."""
    match = _SCP_LIKE.match(url)
    if match is not None:
        host, path = match["host"], match["path"]
    else:
        parts = urlsplit(url)
        host, path = parts.hostname or "", parts.path
    path = path.strip("/").removesuffix(".git")
    if host in ("github.com", "codeberg.org", "gitea.com"):
        return f"https://{host}/{path}/commit/{sha}"
    if host == "gitlab.com":
        return f"https://{host}/{path}/-/commit/{sha}"
    return None


def fetch(mirror: Path, access: Access, scratch: Path) -> str:
    """The repository's ref fetched into `mirror` (a bare repository, made on first use)
    as FETCHED; the commit it names. `scratch`: a private folder for the deploy key and
    the known host of one fetch (removed after it, whatever happens). Blocking."""
    if not (mirror / "HEAD").exists():
        from dulwich.repo import Repo  # (in-process: one child less per first fetch)

        mirror.parent.mkdir(parents=True, exist_ok=True)
        Repo.init_bare(str(mirror), mkdir=True).close()
    with _secrets(access, scratch) as env:
        _git(
            [
                "--git-dir", str(mirror),
                *_TRANSPORTS,
                "-c", "credential.helper=",
                *(("-c", f"credential.helper={_HELPER}") if access.auth == "token" else ()),
                "-c", "http.lowSpeedLimit=1000",
                "-c", "http.lowSpeedTime=30",
                # The commits the stacks run are never pruned, whatever the ref does.
                "-c", "gc.pruneExpire=never",
                "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--",
                access.url, f"+{access.ref}:{FETCHED}",
            ],
            access,
            mirror,
            FETCH_SECONDS,
            env,
        )  # fmt: skip
    try:  # the ref as fetch wrote it (a loose ref), peeled to its commit in-process
        return peeled(mirror, (mirror / FETCHED).read_text().strip())
    except (OSError, ValueError, KeyError):
        return resolve(mirror, FETCHED, access)


def peeled(mirror: Path, sha: str) -> str:
    """The commit object `sha` is or names (an annotated tag's); ValueError when it is
    neither (KeyError when it is not in the mirror)."""
    from dulwich.objects import Commit, Tag
    from dulwich.repo import Repo

    repo = Repo(str(mirror))
    try:
        found = repo[sha.encode()]
        while isinstance(found, Tag):
            found = repo[found.object[1]]
        if not isinstance(found, Commit):
            raise ValueError(f"{sha[:12]} names no commit")
        return found.id.decode()
    finally:
        repo.close()


def resolve(mirror: Path, name: str, access: Access) -> str:
    """The commit `name` (a ref or a sha) names in the mirror."""
    done = _git(
        ["--git-dir", str(mirror), "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"],
        access,
        mirror,
        30,
    )
    return done.strip()


def _git(
    args: list[str],
    access: Access,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> str:
    """git run to its end; its output. Its failures classified, scrubbed of the token."""
    try:
        done = children.run(
            ["git", *args],
            timeout=timeout,
            cwd=cwd if cwd.exists() else None,
            env=env or {**children.child_env(), **_QUIET},
            what=f"git {args[-3] if len(args) > 2 else args[0]}",
        )
    except children.TimedOut as exc:
        raise GitUnreachable(
            f"{_where(access)} did not answer within {timeout:g} s: the stacks keep running "
            "what they run"
        ) from exc
    except OSError as exc:
        raise GitError(f"git cannot be run on this host: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        raise classified(_scrubbed(done.stderr, access), access)
    return done.stdout


@contextlib.contextmanager
def _secrets(access: Access, scratch: Path) -> Iterator[dict[str, str]]:
    """The environment of a fetch: the token for the credential helper; or for SSH, the
    deploy key and the pinned host key in a private folder, removed afterwards."""
    env = {**children.child_env(), **_QUIET}
    if access.auth == "token":
        env["STACKYARD_GIT_USER"] = access.username or "git"
        env["STACKYARD_GIT_TOKEN"] = access.token or ""
    if not is_ssh(access.url):
        yield env
        return
    if access.host_key is None:
        raise GitDenied(f"The SSH host key of {_where(access)} is not pinned yet")
    scratch.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="fetch-", dir=scratch))
    try:
        key = folder / "key"
        known = folder / "known_hosts"
        if access.private_key:
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(access.private_key.strip() + "\n")
        known.write_text(f"stackyard-pinned {access.host_key.strip()}\n")
        env["GIT_SSH_COMMAND"] = shlex.join(
            [
                "ssh", "-F", "/dev/null",
                "-o", "HostKeyAlias=stackyard-pinned",
                "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={known}",
                "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "UpdateHostKeys=no",
                "-o", "BatchMode=yes",
                "-o", "IdentitiesOnly=yes",
                "-o", "IdentityAgent=none",
                "-o", f"ConnectTimeout={CONNECT_SECONDS}",
                "-o", "ServerAliveInterval=15",
                "-o", "ServerAliveCountMax=2",
                *(("-i", str(key)) if access.private_key else ()),
            ]
        )  # fmt: skip
        env["GIT_SSH_VARIANT"] = "ssh"
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _where(access: Access) -> str:
    return access.url or "the repository"


def _scrubbed(text: str, access: Access) -> str:
    if access.token:
        text = text.replace(access.token, "***")
    return text


_UNREACHABLE = (
    "could not resolve host",
    "could not resolve hostname",
    "connection refused",
    "connection timed out",
    "timed out",
    "unable to connect",
    "failed to connect",
    "network is unreachable",
    "no route to host",
    "connection reset",
    "connection closed",
    "the remote end hung up unexpectedly",
    "operation too slow",
    "returned error: 50",
)


def classified(stderr: str, access: Access) -> GitError:
    """git's failure as what the user can do about it."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    said = "; ".join(line.removeprefix("fatal: ").removeprefix("error: ") for line in lines[-3:])
    said = said[:500] or "git failed and said nothing"
    low = stderr.lower()
    where = _where(access)
    if "host key verification failed" in low or "remote host identification has changed" in low:
        return GitDenied(
            f"The SSH host key of {where} is not the pinned one: the server changed its key, "
            "or something else answers in its place. Check the new fingerprint with the "
            "server's owner, then forget the pinned key and connect again"
        )
    if "permission denied (publickey" in low:
        return GitDenied(
            f"{where} refused the deploy key: add its public half to the repository at the "
            "git host (read access)"
        )
    if (
        "authentication failed" in low
        or "could not read username" in low
        or "could not read password" in low
        or "returned error: 401" in low
        or "returned error: 403" in low
    ):
        return GitDenied(f"{where} refused the credentials: check the token and the user name")
    if "couldn't find remote ref" in low or "invalid refspec" in low:
        return GitError(f"{where} has no branch or tag {access.ref!r}")
    if (
        "not found" in low
        or "does not appear to be a git repository" in low
        or "access denied or repository not exported" in low
    ):
        return GitError(f"{where} is no repository we can read: {said}")
    if any(sign in low for sign in _UNREACHABLE):
        return GitUnreachable(
            f"{where} cannot be reached ({said}): the stacks keep running what they run"
        )
    return GitError(f"git failed for {where}: {said}")
