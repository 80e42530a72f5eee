"""Push webhooks of the git hosts, checked before anything is read from them: GitHub's
`X-Hub-Signature-256` (HMAC-SHA256 of the body), Gitea's and Forgejo's
`X-Gitea-Signature` / `X-Forgejo-Signature` (the same HMAC, hex), GitLab's
`X-Gitlab-Token` (the secret itself); every comparison in constant time. A push names its
ref (`refs/heads/main`); a delivery without one (a ping, a release) is no push."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from stackyard.jsonmodel import parse_json

#: The headers a delivery is checked by (what a central passes on to an agent).
SIGNATURE_HEADERS = (
    "x-hub-signature-256",
    "x-gitea-signature",
    "x-forgejo-signature",
    "x-gogs-signature",
    "x-gitlab-token",
)
#: What a webhook's body may weigh (GitHub sends at most 25 MB; a push's is far less).
MAX_BODY = 5 * 1024 * 1024


def signed(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    """Whether the delivery carries a signature (or token) made with `secret`."""
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    github = headers.get("x-hub-signature-256")
    if github is not None:
        return hmac.compare_digest(github.strip().encode(), f"sha256={expected}".encode())
    for name in SIGNATURE_HEADERS[1:4]:
        sent = headers.get(name)
        if sent is not None:
            return hmac.compare_digest(sent.strip().encode(), expected.encode())
    token = headers.get("x-gitlab-token")
    if token is not None:
        return hmac.compare_digest(token.encode(), secret.encode())
    return False


def pushed_ref(body: bytes) -> str | None:
    """The ref a push delivery names (`refs/heads/main`), or None for any other delivery."""
    try:
        payload = parse_json(body)
    except ValueError:
        return None
    ref = payload.get("ref") if isinstance(payload, dict) else None
    return ref if isinstance(ref, str) else None


def names(pushed: str, ref: str) -> bool:
    """Whether the pushed ref is the repository's `ref` (a branch or a tag name)."""
    return pushed in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref)
