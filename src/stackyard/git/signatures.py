"""Signed commits: a commit deploys only when it is signed by a key the admin trusts, as
`git verify-commit` checks it: SSH signatures against an allowed-signers file of the
trusted SSH keys, OpenPGP signatures against a keyring of the trusted OpenPGP keys (made
for the one check in a private folder; the user's own keyring is never read)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from stackyard.errors import GitError, Invalid
from stackyard.process import children

_PGP = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
_SSH_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-", "sk-ssh-ed25519", "sk-ecdsa-sha2-")


class Unsigned(GitError):
    """The commit is not signed by a trusted key (unsigned, or by another key)."""


def check_keys(keys: list[str]) -> list[str]:
    """Each trusted key an SSH public key line or an OpenPGP public key block."""
    checked = []
    for key in (k.strip() for k in keys):
        if key.startswith(_PGP):
            checked.append(key)
        elif key.startswith(_SSH_TYPES) and "\n" not in key:
            from stackyard.sshkeys import fingerprint_of

            fingerprint_of(key)  # Invalid unless it reads as a key
            checked.append(key)
        else:
            raise Invalid(
                "A trusted key must be an SSH public key line (ssh-ed25519 AAAA...) or an "
                "OpenPGP public key block (-----BEGIN PGP PUBLIC KEY BLOCK-----)"
            )
    return checked


def verify(mirror: Path, sha: str, keys: tuple[str, ...], scratch: Path) -> None:
    """Unsigned unless commit `sha` carries a good signature by one of `keys`. Blocking."""
    if not keys:
        raise Unsigned("Signed commits are required but no key is trusted yet")
    scratch.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="verify-", dir=scratch))
    try:
        signers = folder / "allowed_signers"
        signers.write_text(
            "".join(f'trusted namespaces="git" {k}\n' for k in keys if not k.startswith(_PGP))
        )
        gnupg = folder / "gnupg"
        gnupg.mkdir(mode=0o700)
        env = {**children.child_env(), "GNUPGHOME": str(gnupg), "LC_ALL": "C"}
        env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
        armored = "\n".join(k for k in keys if k.startswith(_PGP))
        if armored:
            (folder / "keys.asc").write_text(armored + "\n")
            children.run(
                ["gpg", "--batch", "--quiet", "--import", str(folder / "keys.asc")],
                timeout=30,
                env=env,
            )
        done = children.run(
            [
                "git", "--git-dir", str(mirror),
                "-c", f"gpg.ssh.allowedSignersFile={signers}",
                "verify-commit", "--raw", sha,
            ],
            timeout=30,
            env=env,
        )  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.lower()
        if "no signature" in said or not done.stderr.strip():
            raise Unsigned(f"Commit {sha[:12]} is not signed: refused")
        raise Unsigned(f"Commit {sha[:12]} is not signed by a trusted key: refused")
